"""tessera from Python: parse, tune for the CPU, run on NumPy without copies,
check against NumPy in float64 within the rounding bound, save and load,
every exception type; the GPU target up to the cubin where NVRTC is built,
and measured, on PyTorch CUDA tensors, where a GPU is (the device bundle runs
these on its GPU machine, from a build without the LLVM JIT: the CPU target's
tests skip there)."""
import json
import math
import os
import pathlib
import subprocess
import textwrap

import numpy as np
import pytest

import tessera

ROOT = pathlib.Path(__file__).resolve().parents[2]

SOFTMAX = textwrap.dedent(
    """\
    # from tvm.script import tir as T

    @T.prim_func
    def softmax(var_A: T.handle, var_B: T.handle) -> None:
        T.func_attr({"tir.noalias": True})
        rows = T.int64()
        A = T.match_buffer(var_A, (rows, T.int64(256)), "float32")
        B = T.match_buffer(var_B, (rows, T.int64(256)), "float32")
        A_max = T.alloc_buffer((rows,), "float32")
        A_exp = T.alloc_buffer((rows, T.int64(256)), "float32")
        A_sum = T.alloc_buffer((rows,), "float32")
        for i, k in T.grid(rows, T.int64(256)):
            with T.block("max"):
                v_i, v_k = T.axis.remap("SR", [i, k])
                with T.init():
                    A_max[v_i] = T.min_value("float32")
                A_max[v_i] = T.max(A_max[v_i], A[v_i, v_k])
        for i, j in T.grid(rows, T.int64(256)):
            with T.block("exp"):
                v_i, v_j = T.axis.remap("SS", [i, j])
                A_exp[v_i, v_j] = T.exp(A[v_i, v_j] - A_max[v_i])
        for i, k in T.grid(rows, T.int64(256)):
            with T.block("sum"):
                v_i, v_k = T.axis.remap("SR", [i, k])
                with T.init():
                    A_sum[v_i] = T.float32(0)
                A_sum[v_i] = A_sum[v_i] + A_exp[v_i, v_k]
        for i, j in T.grid(rows, T.int64(256)):
            with T.block("normalize"):
                v_i, v_j = T.axis.remap("SS", [i, j])
                B[v_i, v_j] = A_exp[v_i, v_j] / A_sum[v_i]
    """
)

ADD = textwrap.dedent(
    """\
    @T.prim_func
    def add(A: T.Buffer((T.int64(33), T.int64(70)), "float16"), bias: T.Buffer((T.int64(70),), "float16"),
            C: T.Buffer((T.int64(33), T.int64(70)), "float16")) -> None:
        T.func_attr({"tir.noalias": True})
        for i, j in T.grid(T.int64(33), T.int64(70)):
            with T.block("C"):
                v_i, v_j = T.axis.remap("SS", [i, j])
                C[v_i, v_j] = A[v_i, v_j] + bias[v_j]
    """
)


def softmax_float64(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def within_softmax_bound(got, x):
    """Every element within what float32 rounding of a 256-term sum, an exp and a
    division explains: (256 + 4) units of float32 roundoff relative to the exact value."""
    exact = softmax_float64(x)
    bound = (256 + 4) * 2.0**-24 * np.abs(exact) + 1e-30
    return float(np.max(np.abs(got.astype(np.float64) - exact) / bound))


needs_llvm = pytest.mark.skipif(not tessera._tessera.llvm_available(),
                                reason="built without the LLVM JIT (the CPU target)")
needs_nvrtc = pytest.mark.skipif(not tessera._tessera.nvrtc_available(), reason="built without NVRTC")
needs_gpu = pytest.mark.skipif(not (tessera._tessera.nvrtc_available() and tessera._tessera.cuda_device()),
                               reason="no CUDA device here")


@pytest.fixture(scope="module")
def cpu_softmax():
    if not tessera._tessera.llvm_available():
        pytest.skip("built without the LLVM JIT (the CPU target)")
    return tessera.tune(SOFTMAX, "cpu", dims={"rows": 100}, progress=False)


def test_parse_prints_canonical_tvmscript_that_reads_back():
    mod = tessera.parse(SOFTMAX, "softmax.py")
    assert len(mod) == 1
    f = mod.funcs[0]
    assert f.name == "softmax" and f.symbols == ["rows"]
    again = tessera.parse(f.script())
    assert again["softmax"].script() == f.script()
    with pytest.raises(KeyError):
        mod["nope"]


def test_parse_takes_anything_with_script():
    class FakeTvmModule:
        def script(self):
            return SOFTMAX

    assert tessera.parse(FakeTvmModule()).funcs[0].name == "softmax"
    with pytest.raises(TypeError):
        tessera.parse(42)


def test_cpu_kernel_matches_numpy_in_place(cpu_softmax):
    k = cpu_softmax
    assert k.target.is_cpu and k.name == "softmax" and k.symbols == []
    rng = np.random.default_rng(3)
    x = rng.uniform(-4, 4, (100, 256)).astype(np.float32)
    y = np.full_like(x, np.nan)
    address = y.ctypes.data
    k(x, y)
    # The output landed in the caller's own memory: DLPack, no copy.
    assert y.ctypes.data == address
    assert within_softmax_bound(y, x) <= 1.0
    report = k.report()
    assert report.rule == "cpu" and report.measured
    assert report.candidates[0]["status"] == "ok" and report.candidates[0]["time_us"] > 0
    assert "rank" in report.table() and "*" in str(report)


def test_a_view_with_strides_is_refused_not_misread(cpu_softmax):
    x = np.zeros((100, 512), np.float32)[:, ::2]
    y = np.empty((100, 256), np.float32)
    with pytest.raises(tessera.UserError, match="not compact row-major"):
        cpu_softmax(x, y)


def test_wrong_arguments_are_user_errors(cpu_softmax):
    x = np.zeros((100, 256), np.float32)
    with pytest.raises(tessera.UserError, match="'softmax' takes 2 tensors, not 1"):
        cpu_softmax(x)
    with pytest.raises(tessera.UserError, match="is float64; the kernel takes float32"):
        cpu_softmax(x.astype(np.float64), x)
    with pytest.raises(tessera.UserError, match="a kernel takes arrays"):
        cpu_softmax(x, "y")


def test_save_and_load_give_the_same_bits(cpu_softmax, tmp_path):
    x = np.random.default_rng(5).uniform(-1, 1, (100, 256)).astype(np.float32)
    a, b = np.empty_like(x), np.empty_like(x)
    cpu_softmax(x, a)
    path = tmp_path / "softmax.tsk"
    cpu_softmax.save(str(path))
    loaded = tessera.load(path)
    loaded(x, b)
    assert np.array_equal(a, b)
    assert loaded.script == cpu_softmax.script
    assert len(loaded.report().candidates) == len(cpu_softmax.report().candidates)


@needs_llvm
def test_float16_kernel_on_numpy_float16():
    k = tessera.tune(ADD, "cpu", progress=False)
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (33, 70)).astype(np.float16)
    bias = rng.uniform(-1, 1, (70,)).astype(np.float16)
    c = np.empty_like(a)
    k(a, bias, c)
    # One float16 addition each: correctly rounded.
    assert np.array_equal(c, (a.astype(np.float32) + bias.astype(np.float32)).astype(np.float16))


def test_the_package_carries_its_measuring_worker():
    # fast_tune measures GPU candidates in this program (beside the module);
    # with no request on its standard input it exits cleanly.
    worker = pathlib.Path(tessera.__file__).parent / "tessera-measure-worker"
    assert worker.is_file() and os.access(worker, os.X_OK), worker
    done = subprocess.run([str(worker)], stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_every_exception_type():
    assert issubclass(tessera.ParseError, tessera.UserError)
    assert issubclass(tessera.UserError, tessera.Error) and issubclass(tessera.Error, Exception)
    for cls in (tessera.ScheduleError, tessera.TuneError, tessera.CompileError, tessera.InterpretError):
        assert issubclass(cls, tessera.UserError)
    assert issubclass(tessera.DeviceError, tessera.Error)
    with pytest.raises(tessera.ParseError) as e:
        tessera.parse("@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\")):\n    A[0] = )\n", "bad.py")
    assert e.value.file == "bad.py" and e.value.line == 3 and e.value.col == 12
    assert "bad.py:3:" in str(e.value) and e.value.message
    with pytest.raises(tessera.UserError, match="unknown GPU 'v100'"):
        tessera.tune(SOFTMAX, "v100")
    with pytest.raises(TypeError):
        tessera.tune(3.5, "cpu")
    if not tessera._tessera.llvm_available():
        with pytest.raises(tessera.UserError, match="the CPU target needs the LLVM JIT"):
            tessera.tune(ADD, "cpu")
        return
    with pytest.raises(tessera.UserError, match="no function named 'nope'"):
        tessera.tune(SOFTMAX, "cpu", name="nope")
    with pytest.raises(tessera.UserError, match="bind 'rows'"):
        tessera.tune(SOFTMAX, "cpu")  # the CPU target times at sizes it is given
    with pytest.raises(tessera.UserError, match="tessera::dynamic plans GPU kernels"):
        tessera.dynamic(SOFTMAX, {"rows": (1, 64)}, "cpu")
    with pytest.raises(tessera.UserError, match="not a whole tessera kernel package"):
        path = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / "tessera-not-a-package.tsk"
        path.write_text("hello\n")
        tessera.load(path)


@needs_nvrtc
def test_gpu_target_compiles_and_saves_without_a_device(tmp_path):
    k = tessera.tune(SOFTMAX, "h100", dims={"rows": 300}, topk=3, measure=False, progress=False)
    assert k.target.is_gpu and k.target.arch_name == "h100_sxm"
    report = k.report()
    assert report.rule == "general_reduction" and not report.measured
    assert "__global__" in k.cuda_source
    k.save(str(tmp_path / "softmax.tsk"))
    loaded = tessera.load(str(tmp_path / "softmax.tsk"))
    assert loaded.cuda_source == k.cuda_source
    if not tessera._tessera.cuda_device():
        with pytest.raises(tessera.Error, match="no CUDA device"):
            k(np.zeros((300, 256), np.float32), np.zeros((300, 256), np.float32))


@needs_nvrtc
def test_dynamic_kernel_picks_a_kernel_per_size(tmp_path):
    d = tessera.dynamic(SOFTMAX, {"rows": (1, 4096, [1])}, "h100", max_kernels=2,
                        kernel_cache=str(tmp_path / "kernels"))
    assert not d.warm and d.symbols == ["rows"]
    for rows in (1, 7, 4096):
        assert 0 <= d.kernel_for([rows]) < 2
    assert '"cells"' in d.plan()
    again = tessera.dynamic(SOFTMAX, {"rows": (1, 4096, [1])}, "h100", max_kernels=2,
                            kernel_cache=str(tmp_path / "kernels"))
    assert again.warm and "0 NVRTC compiles" in again.counters()
    with pytest.raises(TypeError, match="must be \\(lo, hi\\)"):
        tessera.dynamic(SOFTMAX, {"rows": 7}, "h100")


def test_progress_callback_sees_every_phase():
    if not tessera._tessera.nvrtc_available():
        pytest.skip("built without NVRTC")
    seen = []
    tessera.tune(ADD, "h100", topk=2, measure=False, progress=lambda phase, done, total: seen.append((phase, done, total)))
    assert seen and seen[-1][0] == "compile" and seen[-1][1] == seen[-1][2]


def test_an_exception_in_the_progress_callback_stops_the_tune():
    if not tessera._tessera.nvrtc_available():
        pytest.skip("built without NVRTC")

    def interrupt(phase, done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tessera.tune(ADD, "h100", topk=4, measure=False, progress=interrupt)


@needs_llvm
def test_the_readme_python_example_runs(tmp_path, monkeypatch):
    readme = (ROOT / "README.md").read_text()
    start = readme.index("```python\n") + len("```python\n")
    code = readme[start:readme.index("```", start)]
    monkeypatch.chdir(ROOT)
    # Writes softmax.tsk where it runs: into the test's folder, not the repository.
    code = code.replace('k.save("softmax.tsk")', f'k.save({str(tmp_path / "softmax.tsk")!r})')
    exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    assert (tmp_path / "softmax.tsk").exists()


MATMUL = textwrap.dedent(
    """\
    @T.prim_func
    def matmul(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 80), "float32"), C: T.Buffer((64, 80), "float32")) -> None:
        T.func_attr({"tir.noalias": True})
        for i, j, k in T.grid(64, 80, 48):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    """
)


def test_schedule_primitives_trace_and_replay():
    f = tessera.parse(MATMUL)["matmul"]
    sch = tessera.Schedule(f)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    assert [l.name for l in (i, j, k)] == ["i", "j", "k"]
    i0, i1 = sch.split(i, [None, 16])
    j0, j1 = sch.split(j, [None, 16], names=["j_outer", "j_inner"])
    sch.reorder(i0, j0, i1, j1)
    fused = sch.fuse(i0, j0, name="ij")
    sch.bind(fused, "blockIdx.x")
    sch.bind(i1, "threadIdx.y")
    sch.bind(j1, "threadIdx.x")
    sch.annotate(k, "pragma_unroll_explicit", 1)
    assert "blockIdx.x" in sch.script() and "j_inner" in sch.script()
    # The trace replays on a fresh schedule to the same function.
    again = tessera.Schedule(f)
    again.replay(sch.trace())
    assert again.script() == sch.script()
    # The scheduled function compiles for a GPU as it is (a scheduled function is not re-scheduled).
    if tessera._tessera.nvrtc_available():
        k2 = tessera.tune(sch.func, "a100", measure=False, progress=False)
        assert k2.report().rule == "" and "__global__" in k2.cuda_source


def test_a_refused_primitive_says_why_and_changes_nothing():
    sch = tessera.Schedule(tessera.parse(MATMUL)["matmul"])
    before = sch.script()
    i, j, k = sch.get_loops(sch.get_block("C"))
    with pytest.raises(tessera.ScheduleError, match="split"):
        sch.split(i, [5, 5])  # 25 iterations cannot cover 64
    with pytest.raises(tessera.ScheduleError):
        sch.get_block("nope")
    with pytest.raises(tessera.UserError, match="an annotation value is"):
        sch.annotate(i, "key", {"a": 1})
    assert sch.script() == before
    assert "split" not in sch.trace() and "annotate" not in sch.trace()


@needs_llvm
def test_torch_operator_on_cpu_tensors():
    torch = pytest.importorskip("torch")
    import tessera.torch

    k = tessera.tune(SOFTMAX, "cpu", dims={"rows": 8}, progress=False)
    softmax = tessera.torch.op("tessera_test::softmax", k)
    x = torch.rand(8, 256)
    y = torch.empty_like(x)
    softmax(x, y)
    assert within_softmax_bound(y.numpy(), x.numpy()) <= 1.0
    y.fill_(float("nan"))
    torch.ops.tessera_test.softmax(x, y)
    assert within_softmax_bound(y.numpy(), x.numpy()) <= 1.0
    with pytest.raises(ValueError):
        tessera.torch.op("no_namespace", k)


@needs_gpu
def test_gpu_kernel_on_torch_cuda_tensors_without_copies():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("this PyTorch sees no GPU")
    import tessera.torch

    k = tessera.tune(SOFTMAX, "auto", dims={"rows": 512}, topk=4, progress=False)
    report = k.report()
    assert report.measured and report.candidates[0]["time_us"] > 0, report.table()
    x = torch.rand(512, 256, device="cuda") * 8 - 4
    y = torch.full((512, 256), float("nan"), device="cuda")
    address = y.data_ptr()
    k(x, y)
    torch.cuda.synchronize()
    assert y.data_ptr() == address  # written where PyTorch put it
    assert within_softmax_bound(y.cpu().numpy(), x.cpu().numpy()) <= 1.0
    # The same kernel as a PyTorch operator, on PyTorch's current stream.
    op = tessera.torch.op("tessera_test::softmax_cuda", k)
    z = torch.full_like(y, float("nan"))
    op(x, z)
    torch.ops.tessera_test.softmax_cuda(x, z)
    torch.cuda.synchronize()
    assert torch.equal(y, z)
    # A host array goes to the GPU and back.
    h = np.empty((512, 256), np.float32)
    k(x.cpu().numpy(), h)
    assert np.array_equal(h, y.cpu().numpy())


def test_tune_many_on_ray_requeues_the_work_of_a_lost_actor(tmp_path):
    ray = pytest.importorskip("ray")
    import tessera.distributed as td

    if not tessera._tessera.nvrtc_available():
        pytest.skip("built without NVRTC: nothing to compile on the actors")
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    try:
        workloads = [
            {"name": "softmax", "func": SOFTMAX, "dims": {"rows": 64}},
            # Its first actor dies while tuning it: the workload is queued again on a fresh one.
            {"name": "add", "func": ADD, "_test_crash_marker": str(tmp_path / "crashed")},
            {"name": "broken", "func": "def f(:\n"},
        ]
        seen = []
        results = td.tune_many(workloads, db=str(tmp_path / "tuning.jsonl"), target="h100", topk=2,
                               progress=lambda done, total, name: seen.append((done, total)))
    finally:
        ray.shutdown()
    by_name = {r.name: r for r in results}
    assert [r.name for r in results] == ["softmax", "add", "broken"]
    assert by_name["softmax"].ok and by_name["softmax"].report["rule"] == "general_reduction"
    assert by_name["add"].ok and by_name["add"].attempts == 2, by_name["add"]
    assert (tmp_path / "crashed").exists()
    assert not by_name["broken"].ok and by_name["broken"].error.startswith("ParseError")
    assert by_name["broken"].attempts == 1
    assert all(r.where.startswith("node ") for r in results if r.ok)
    assert seen[-1] == (3, 3)
    # Nothing was measured (no GPU), so nothing was stored.
    assert not (tmp_path / "tuning.jsonl").exists() or (tmp_path / "tuning.jsonl").read_text() == ""


@needs_llvm
def test_tune_many_on_ray_merges_what_the_actors_measured(tmp_path):
    ray = pytest.importorskip("ray")
    import tessera.distributed as td

    db = tmp_path / "tuning.jsonl"
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    try:
        workloads = [
            {"name": "softmax", "func": SOFTMAX, "dims": {"rows": 16}},
            {"name": "add", "func": ADD},
        ]
        results = td.tune_many(workloads, db=str(db), target="cpu", topk=2, progress=lambda *a: None)
    finally:
        ray.shutdown()
    assert all(r.ok and r.report["measured"] for r in results), results
    # Both actors' records are in the one database, and tessera answers from it without tuning.
    records = [json.loads(line) for line in db.read_text().splitlines()]
    assert len(records) >= 2
    k = tessera.tune(SOFTMAX, "cpu", dims={"rows": 16}, db=str(db), progress=False)
    assert k.report().from_database
