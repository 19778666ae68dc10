"""A tessera kernel as a PyTorch operator, where PyTorch is installed::

    import tessera, tessera.torch
    k = tessera.tune(SOFTMAX, "auto", dims={"rows": 4096})
    softmax = tessera.torch.op("mylib::softmax", k)
    softmax(x, y)                  # y written in place, on x's device and current stream
    torch.ops.mylib.softmax(x, y)  # the same operator, as torch.compile and export see it

The operator takes the kernel's buffer parameters in order and returns
nothing; the ones the kernel writes are declared mutated (``Tensor(a!)``),
so tracing and ``torch.compile`` know what changes. Its fake (meta)
implementation checks nothing and returns nothing, as a mutating operator's
must. CUDA tensors run on the kernel's GPU on PyTorch's current stream,
without copies; CPU tensors on a CPU kernel.
"""
from __future__ import annotations

import atexit
from typing import Callable

from . import Kernel


def _schema(kernel: Kernel) -> str:
    args = []
    for i, p in enumerate(kernel.parameters()):
        name = p.name if p.name.isidentifier() else f"arg{i}"
        args.append(f"Tensor({chr(ord('a') + i % 26)}!) {name}" if p.written else f"Tensor {name}")
    return "(" + ", ".join(args) + ") -> ()"


def op(qualname: str, kernel: Kernel) -> Callable[..., None]:
    """Registers ``kernel`` as the PyTorch operator ``qualname`` ("namespace::name") with
    torch.library and returns it (``torch.ops.namespace.name``). A CPU kernel serves CPU
    tensors; a GPU kernel CUDA tensors. Raises ImportError without PyTorch, ValueError for a
    name without a namespace."""
    import torch

    namespace, sep, name = qualname.partition("::")
    if not sep or not namespace or not name:
        raise ValueError(f"a PyTorch operator is named 'namespace::name', not {qualname!r}")
    lib = torch.library.Library(namespace, "FRAGMENT")
    lib.define(name + _schema(kernel))

    _kernels[qualname] = kernel

    def run(*tensors):
        kernel = _kernels[qualname]
        stream = 0
        if kernel.target.is_gpu and tensors and tensors[0].is_cuda:
            stream = torch.cuda.current_stream(tensors[0].device).cuda_stream
        kernel(*tensors, stream=stream)

    def fake(*tensors):
        return None

    lib.impl(name, run, "CPU" if kernel.target.is_cpu else "CUDA")
    lib.impl(name, fake, "Meta")
    # The registration lives as long as the library object: kept until exit.
    _registered.append(lib)
    return getattr(getattr(torch.ops, namespace), name)


_registered: list = []
#: The kernel of each operator. PyTorch keeps an operator's Python kernel until
#: the process ends, so the operator looks its kernel up here, and the kernels
#: are released at exit, while the extension can still free them.
_kernels: dict = {}


@atexit.register
def _unregister() -> None:
    _kernels.clear()
    while _registered:
        _registered.pop()._destroy()
