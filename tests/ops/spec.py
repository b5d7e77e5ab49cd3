"""How a shim function's cases are written: @op registers a generator of Case objects.

A case is the function's arguments in the order of its C signature (the aten schema's order; the C side's
*_len_ parameters are implied by the lists), and what torch does with them: its results, or its error. The
C++ runner (op_conformance.cpp) calls mpspack's shim function with the same arguments and compares.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Iterator, Optional

import torch

OPS: dict[str, "OpSpec"] = {}


@dataclasses.dataclass
class Case:
    name: str
    args: list
    mutated: list = dataclasses.field(default_factory=list)  # arg positions whose state after the call is compared
    strides: bool = True       # compare the results' strides (dims of size > 1)
    check: str = "values"      # or "moments" (mean and std only), "shape", "permutation"
    rtol: Optional[float] = None
    atol: Optional[float] = None
    error: bool = False         # torch must raise, and so must the shim
    min_torch: Optional[str] = None  # the case only from this torch on (older ones lack the dtype or behaviour)
    ignore: list = dataclasses.field(default_factory=list)  # results not compared (a random seed torch returns)


def err(name: str, args: list, **kw) -> Case:
    """A case torch refuses: the shim must fail too, with a message naming the op."""
    return Case(name, args, error=True, **kw)


@dataclasses.dataclass
class OpSpec:
    name: str                   # the C function's name after aoti_torch_<device>_ ("topk")
    function: str               # the C function, "{device}" where the device goes
    cases: Callable[["Gen"], Iterator[Case]]
    torch_op: Optional[str]     # "aten.topk.default"
    call: Optional[Callable]
    min_torch: Optional[str]
    devices: tuple
    reference: Optional[str]    # where torch computes the cases whatever the recording's device ("cpu"), or None


def op(name: str, torch_op: Optional[str] = None, call: Optional[Callable] = None, min_torch: Optional[str] = None,
       function: Optional[str] = None, devices: tuple = ("cpu", "cuda"), reference: Optional[str] = None):
    """Registers the decorated generator as the cases of aoti_torch_<device>_<name>; names starting with "aten_"
    are the device-generic aoti_torch_aten_* functions; `function` names any other (a core shim.h function).
    reference="cpu": torch has no GPU kernel for the op, so the CUDA function's cases are torch's CPU results."""
    if (torch_op is None) == (call is None):
        raise ValueError(f"{name}: give exactly one of torch_op and call")

    def register(gen: Callable[["Gen"], Iterator[Case]]):
        if name in OPS:
            raise ValueError(f"{name}: registered twice")
        fn = function or (f"aoti_torch_{name}" if name.startswith("aten_") else f"aoti_torch_{{device}}_{name}")
        OPS[name] = OpSpec(name, fn, gen, torch_op, call, min_torch, devices, reference)
        return gen

    return register


class Gen:
    """Seeded inputs: the same cases on every run of one torch version."""

    def __init__(self, seed: int, device: str = "cpu"):
        self.g = torch.Generator().manual_seed(seed)
        self.device = device  # where torch runs the op: inputs only some device can make (packed weights) use it

    def randn(self, *shape, dtype=torch.float32) -> torch.Tensor:
        return torch.randn(*shape, generator=self.g, dtype=torch.float64).to(dtype)

    def rand(self, *shape, dtype=torch.float32) -> torch.Tensor:
        return torch.rand(*shape, generator=self.g, dtype=torch.float64).to(dtype)

    def randint(self, low: int, high: int, shape, dtype=torch.int64) -> torch.Tensor:
        return torch.randint(low, high, tuple(shape), generator=self.g, dtype=torch.int64).to(dtype)

    def distinct(self, *shape, dtype=torch.float32) -> torch.Tensor:
        """Values without ties (a shuffled range, scaled), so orders and indices are defined."""
        n = 1
        for s in shape:
            n *= s
        perm = torch.randperm(n, generator=self.g).to(torch.float64)
        return ((perm - n / 2) / 4).reshape(shape).to(dtype)

    @staticmethod
    def strided(x: torch.Tensor) -> torch.Tensor:
        """The same values in a non-contiguous tensor (every other element of a larger buffer)."""
        y = torch.zeros(*x.shape, 2, dtype=x.dtype).select(-1, 0)
        y.copy_(x)
        return y
