"""tessera: a tensor program in, a fast, verified kernel out.

A thin layer over tessera's C++ facade (``tessera/tessera.h``)::

    import numpy as np, tessera

    k = tessera.tune(SOFTMAX_TVMSCRIPT, target="cpu", dims={"rows": 4096})
    x = np.random.rand(4096, 256).astype("float32")
    y = np.empty_like(x)
    k(x, y)                      # outputs are written in place, as TVM's kernels do
    print(k.report())            # every candidate, ranked
    k.save("softmax.tsk")        # tessera.load("softmax.tsk") runs it again without compiling

Arrays reach the kernels through DLPack without copies: NumPy arrays on the
CPU target, PyTorch CUDA tensors (anything with ``__dlpack__``) on a GPU;
host arrays given to a GPU kernel are copied to the device and back.

Errors are :class:`Error` subclasses carrying tessera's messages:
:class:`ParseError` (with ``file``, ``line``, ``col``), :class:`ScheduleError`,
:class:`TuneError`, :class:`CompileError`, :class:`InterpretError`,
:class:`DeviceError`, and :class:`UserError` / :class:`InternalError` for the
rest. Ctrl-C stops a tune after the candidates in flight.
"""
from __future__ import annotations

import sys
from typing import Any, Callable, Mapping, Optional, Sequence, Tuple, Union

from . import _tessera
from ._tessera import (  # noqa: F401  (re-exported)
    Block,
    CompileError,
    DeviceError,
    DynamicKernel,
    Error,
    Function,
    InternalError,
    InterpretError,
    Kernel,
    Loop,
    Module,
    ParseError,
    Report,
    Schedule,
    ScheduleError,
    SizeRange,
    Target,
    TuneError,
    UserError,
)

__version__ = _tessera.version()

__all__ = [
    "Block", "Loop", "Schedule",
    "CompileError", "DeviceError", "DynamicKernel", "Error", "Function", "InternalError", "InterpretError",
    "Kernel", "Module", "ParseError", "Report", "ScheduleError", "SizeRange", "Target", "TuneError", "UserError",
    "as_target", "dynamic", "load", "parse", "tune",
]

TargetLike = Union[str, Target]
FunctionLike = Union[str, Function, Any]


def as_target(name: TargetLike = "auto") -> Target:
    """A :class:`Target`: ``"auto"`` (the GPU here, else this CPU), ``"cpu"``, or a GPU
    preset (``"h100"``, ``"a100"``, ...) or arch ``.json`` file; a Target is returned as it is."""
    if isinstance(name, Target):
        return name
    if not isinstance(name, str):
        raise TypeError(f"target must be a str or a tessera.Target, not {type(name).__name__}")
    return Target.parse(name)


def _text_of(obj: Any) -> Optional[str]:
    """TVMScript text of a str, or of anything TVM can print (``mod.script()``)."""
    if isinstance(obj, str):
        return obj
    script = getattr(obj, "script", None)
    if callable(script) and not isinstance(obj, (Function, Module)):
        text = script()
        if isinstance(text, str):
            return text
    return None


def parse(text: Union[str, Any], file: str = "<text>") -> Module:
    """The functions of TVMScript ``text`` (or of a TVM ``IRModule``/``PrimFunc``,
    through its ``script()``) as a :class:`Module`: ``mod.funcs``, ``mod["main"]``,
    ``mod.script()``. Raises :class:`ParseError` with FILE:LINE:COL."""
    source = _text_of(text)
    if source is None:
        raise TypeError(f"parse takes TVMScript text or a TVM module, not {type(text).__name__}")
    return _tessera.parse(source, file)


def _progress_printer(enabled: bool) -> Optional[Callable[[str, int, int], None]]:
    if not enabled:
        return None

    def show(phase: str, done: int, total: int) -> None:
        if total <= 0:
            return
        width = 30
        filled = done * width // total
        sys.stderr.write(f"\r[{'#' * filled}{' ' * (width - filled)}] {phase} {done}/{total}")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


def tune(
    func: FunctionLike,
    target: TargetLike = "auto",
    *,
    topk: int = 20,
    dims: Optional[Mapping[str, int]] = None,
    db: Optional[str] = None,
    rule: str = "",
    threads: int = 0,
    measure: bool = True,
    kernel_cache: Optional[str] = None,
    name: str = "",
    file: str = "<text>",
    progress: Union[bool, Callable[[str, int, int], None], None] = None,
) -> Kernel:
    """Tunes a function and returns its fastest verified :class:`Kernel`.

    ``func``: TVMScript text, a :class:`Function`, or a TVM module (through ``script()``);
    ``name`` picks one function of several. ``dims`` binds symbolic sizes (those left
    symbolic are read from the arguments' shapes at every call). On a GPU target the
    policy's ``topk`` configs (and the rule's default) are compiled with NVRTC, verified
    against the float64 reference and timed when there is a device (``measure``); without
    one nothing is timed and ``kernel.report().why_unmeasured`` says so. On the CPU target
    every CPU schedule is built by the LLVM JIT, verified and timed. ``db``: a tuning
    database file (answered from, appended to); ``kernel_cache``: a directory of compiled
    kernels (``"default"``: ``~/.cache/tessera/kernels``). ``progress``: True for a bar on
    stderr (the default on a terminal), or a callable ``(phase, done, total)``.
    """
    if progress is None:
        progress = sys.stderr.isatty()
    report = progress if callable(progress) else _progress_printer(bool(progress))
    text = _text_of(func)
    subject: Any = text if text is not None else func
    if text is None and not isinstance(func, Function):
        raise TypeError(f"tune takes TVMScript text, a tessera.Function or a TVM module, not {type(func).__name__}")
    return _tessera.tune(
        subject, as_target(target), dims=dict(dims or {}), topk=topk, rule=rule, threads=threads,
        measure=measure, database=db or "", kernel_cache=kernel_cache or "", name=name, file=file, progress=report)


RangeLike = Union[Tuple[int, int], Tuple[int, int, Sequence[int]], SizeRange]


def _size_range(name: str, r: RangeLike) -> SizeRange:
    if isinstance(r, SizeRange):
        return r
    if isinstance(r, (tuple, list)) and len(r) in (2, 3):
        hot = list(r[2]) if len(r) == 3 else []
        return SizeRange(int(r[0]), int(r[1]), [int(h) for h in hot])
    raise TypeError(f"the range of '{name}' must be (lo, hi) or (lo, hi, [hot sizes]), not {r!r}")


def dynamic(
    func: FunctionLike,
    ranges: Mapping[str, RangeLike],
    target: TargetLike = "auto",
    *,
    max_kernels: int = 16,
    dims: Optional[Mapping[str, int]] = None,
    threads: int = 0,
    kernel_cache: Optional[str] = "default",
    db: Optional[str] = None,
    name: str = "",
) -> DynamicKernel:
    """A function's kernels for ranges of its symbolic sizes (``{"m": (1, 4096)}`` or
    ``{"m": (1, 4096, [1])}`` with hot sizes): a few kernels that together serve every size,
    compiled once and kept in ``kernel_cache`` (the next start reads them back). Calling it
    picks the kernel for the arguments' shapes. GPU targets only."""
    f = func
    if not isinstance(func, Function):
        mod = parse(func)
        f = mod[name] if name else (mod.funcs[0] if len(mod) == 1 else mod["main"])
    return _tessera.dynamic(
        f, as_target(target), {k: _size_range(k, v) for k, v in ranges.items()}, max_kernels=max_kernels,
        dims=dict(dims or {}), threads=threads, kernel_cache=kernel_cache or "", database=db or "")


def load(path: str) -> Kernel:
    """A kernel saved by ``Kernel.save``, ready to run (a GPU one as it was built, a CPU one
    compiled by the LLVM JIT)."""
    return _tessera.load(str(path))
