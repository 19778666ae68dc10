#!/usr/bin/env python3
"""The memory-bound workloads in PyTorch eager, timed on the GPU.

Issue 13's targets compare each memory-bound workload with "the same operation
in PyTorch eager on the same GPU" (PyTorch is on the GPU machine, not on ours).
This runs those operations at the workloads' full sizes (workloads.json) and
writes, per workload, the median time of one call and the bandwidth of the
bytes the operation must move (inputs read once, outputs written once):

    torch-baseline.py WORKLOADS_JSON OUT_JSON [--repeat N] [--device cuda]

Times come from CUDA events around each call after warm-up (a median over N
calls, each between its own pair of events); the L2 is not flushed, as in
tessera_bench_workloads. Workloads with no single eager equivalent (the int4
gemv: eager would dequantise the whole matrix first) are listed with the
reason instead of a time. Without PyTorch or a GPU it says so and exits 3, so
that run-gpu.sh records a skip, not a failure.
"""
import argparse
import json
import statistics
import sys


def ops(torch, dims, device):
    """Per workload: (what, the call, the bytes it must move). Each call binds its
    tensors as default arguments: a closure would see the names' last values."""
    f16, f32 = torch.float16, torch.float32

    def t(*shape, dtype=f16):
        return torch.randn(*shape, device=device, dtype=dtype)

    def nbytes(*xs):
        return sum(x.numel() * x.element_size() for x in xs)

    F = torch.nn.functional
    out = {}
    if "copy_f16" in dims:
        n = dims["copy_f16"]["n"]
        a, b = t(n), t(n)
        out["copy_f16"] = ("b.copy_(a)", lambda a=a, b=b: b.copy_(a), nbytes(a, b))
    if "add_f16" in dims:
        r, c = dims["add_f16"]["rows"], dims["add_f16"]["cols"]
        a, bias, o = t(r, c), t(c), t(r, c)
        out["add_f16"] = ("torch.add(a, bias, out=o)", lambda a=a, bias=bias, o=o: torch.add(a, bias, out=o), nbytes(a, bias, o))
    if "transpose_f32" in dims:
        r, c = dims["transpose_f32"]["rows"], dims["transpose_f32"]["cols"]
        a, o = t(r, c, dtype=f32), t(c, r, dtype=f32)
        out["transpose_f32"] = ("o.copy_(a.t())", lambda a=a, o=o: o.copy_(a.t()), nbytes(a, o))
    if "reduce_sum_f32" in dims:
        r, c = dims["reduce_sum_f32"]["rows"], dims["reduce_sum_f32"]["cols"]
        a, o = t(r, c, dtype=f32), t(r, dtype=f32)
        out["reduce_sum_f32"] = ("torch.sum(a, 1, out=o)", lambda a=a, o=o: torch.sum(a, 1, out=o), nbytes(a, o))
    if "reduce_max_f16" in dims:
        r, c = dims["reduce_max_f16"]["rows"], dims["reduce_max_f16"]["cols"]
        a, o = t(r, c), t(r)
        out["reduce_max_f16"] = ("torch.amax(a, 1, out=o)", lambda a=a, o=o: torch.amax(a, 1, out=o), nbytes(a, o))
    if "reduce_sum_outer_f32" in dims:
        r, c = dims["reduce_sum_outer_f32"]["rows"], dims["reduce_sum_outer_f32"]["cols"]
        a, o = t(r, c, dtype=f32), t(c, dtype=f32)
        out["reduce_sum_outer_f32"] = ("torch.sum(a, 0, out=o)", lambda a=a, o=o: torch.sum(a, 0, out=o), nbytes(a, o))
    if "softmax_f16" in dims:
        r, c = dims["softmax_f16"]["rows"], dims["softmax_f16"]["cols"]
        a = t(r, c)
        out["softmax_f16"] = ("torch.softmax(a, 1)", lambda a=a: torch.softmax(a, 1), 2 * nbytes(a))
    if "rmsnorm_f16" in dims:
        r, c = dims["rmsnorm_f16"]["rows"], dims["rmsnorm_f16"]["cols"]
        a, w = t(r, c), t(c)
        if hasattr(F, "rms_norm"):
            call, what = (lambda a=a, c=c, w=w: F.rms_norm(a, (c,), w, 1e-6)), "F.rms_norm(a, (cols,), w, 1e-6)"
        else:  # the composite an eager model runs
            call = lambda a=a, w=w: (a.float() * torch.rsqrt(a.float().pow(2).mean(-1, keepdim=True) + 1e-6)).half() * w
            what = "(a * rsqrt(mean(a^2) + eps)) * w, composite"
        out["rmsnorm_f16"] = (what, call, 2 * nbytes(a) + nbytes(w))
    if "layernorm_f16" in dims:
        r, c = dims["layernorm_f16"]["rows"], dims["layernorm_f16"]["cols"]
        a, g, b = t(r, c), t(c), t(c)
        out["layernorm_f16"] = ("F.layer_norm(a, (cols,), g, b, 1e-5)",
                                lambda a=a, c=c, g=g, b=b: F.layer_norm(a, (c,), g, b, 1e-5), 2 * nbytes(a) + nbytes(g, b))
    if "gemv_f16" in dims:
        m, k = dims["gemv_f16"]["m"], dims["gemv_f16"]["k"]
        w, x = t(m, k), t(k)
        out["gemv_f16"] = ("torch.mv(W, x)", lambda w=w, x=x: torch.mv(w, x), nbytes(w, x) + m * 2)
    return out


def median_us(torch, call, repeat):
    for _ in range(5):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)
    return statistics.median(times)


def main(argv):
    parser = argparse.ArgumentParser(description="The memory-bound workloads in PyTorch eager, timed on the GPU.")
    parser.add_argument("workloads", help="workloads.json (full sizes)")
    parser.add_argument("out", help="the JSON to write")
    parser.add_argument("--repeat", type=int, default=50, help="timed calls per workload (median)")
    opts = parser.parse_args(argv[1:])
    repeat = opts.repeat
    args = [opts.workloads, opts.out]
    try:
        import torch
    except ImportError as err:
        print(f"no PyTorch here: {err}")
        return 3
    if not torch.cuda.is_available():
        print("PyTorch sees no CUDA device")
        return 3
    with open(args[0]) as f:
        dims = {w["name"]: w["full"] for w in json.load(f)}
    rows = []
    for name, (what, call, moved) in ops(torch, dims, "cuda").items():
        us = median_us(torch, call, repeat)
        rows.append({"workload": name, "torch": what, "median_us": round(us, 2),
                     "bytes": moved, "gbps": round(moved / us / 1e3, 1)})
    if "gemv_int4" in dims:
        rows.append({"workload": "gemv_int4", "torch": None,
                     "note": "no single eager op: eager dequantises the whole matrix before torch.mv"})
    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
              "cuda": torch.version.cuda, "repeat": repeat, "rows": rows}
    with open(args[1], "w") as f:
        json.dump(result, f, indent=1)
    print(f"| workload | PyTorch eager | median us | GB/s |  ({result['device']}, torch {result['torch']})")
    for r in rows:
        print(f"| {r['workload']} | {r['torch'] or r['note']} | {r.get('median_us', '')} | {r.get('gbps', '')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
