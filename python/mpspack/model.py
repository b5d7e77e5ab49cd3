"""A model loaded in this process through the C API: `mpspack.load()` gives a Model that runs on NumPy arrays (or
torch tensors, by DLPack) with the same loader, checks and shim as `mpspack run`, reused across calls."""

from __future__ import annotations

import ctypes
import json
import os
import sys
import threading
from typing import Any, Iterable, Mapping, NamedTuple, Sequence, Union

import numpy as np

from . import _capi, _dlpack, _dtypes
from .cli import _scratch, _tensors
from .container import Container
from .errors import InvalidArgument

PathLike = Union[str, "os.PathLike[str]"]


class TensorSpec(NamedTuple):
    """An input or output of a model: `name` ("input0", "output1": AOTInductor libraries carry no other names),
    `dtype` as mpspack names it ("f32", "bf16") and `shape`, both None when the container records no example for
    the library (they are then known only from what is passed and returned)."""
    name: str
    dtype: str | None
    shape: tuple | None


class _Outputs:
    """Owns one mpspack_outputs: the arrays viewing its buffers hold it, and it is freed when the last is gone."""

    __slots__ = ("ptr", "__weakref__")

    def __init__(self, ptr: int):
        self.ptr = ptr

    def __del__(self) -> None:
        ptr, self.ptr = self.ptr, None
        if ptr and _capi._lib is not None:
            _capi._lib.mpspack_outputs_free(ptr)


def _spec(t: _capi.Tensor) -> TensorSpec:
    known = t.ndim >= 0
    return TensorSpec(_capi.text(t.name), _dtypes.name(t.dtype) if known and t.dtype >= 0 else None,
                      tuple(t.shape[i] for i in range(t.ndim)) if known else None)


def _load_options(library, device, verify_weights: bool, copy_weights: bool, threads: int,
                  tf32: bool) -> _capi.LoadOptions:
    o = _capi.LoadOptions()
    _capi.check(_capi.library().mpspack_load_options_init(ctypes.byref(o)))
    if library is not None:
        o.library = str(library).encode()
    if device is not None:
        o.device = str(device).encode()
    o.verify_weights = int(bool(verify_weights))
    o.copy_weights = int(bool(copy_weights))
    if threads < 0:
        raise InvalidArgument(f"threads: {threads} is negative")
    o.threads = int(threads)
    o.tf32_convolutions = int(bool(tf32))
    return o


def _torch():
    """torch when it is already imported (inputs that are torch tensors imply it); never imports it."""
    return sys.modules.get("torch")


class Model:
    """A model library of a container, loaded on a device by the C API (the loader `mpspack run` uses: hashes,
    device, machine and shim checks, then the weights by flavour). Made by mpspack.load().

    Calling it runs the model once: `model(x)` or `model(x, y)` with one array per input, in order, returns the
    list of outputs; `model.run({"input0": x})` takes them by name and returns {name: output}. Inputs are NumPy
    arrays (or anything np.asarray takes), or tensors of a library that speaks DLPack (torch): those are read in
    place where they are dense and row-major, on the CPU or, for a CUDA model, on its GPU. Outputs are NumPy arrays
    over the memory the C API returned them in (no copy), or torch tensors (by DLPack) when any input was one. bf16
    comes as uint16 arrays holding the bit patterns (the output's spec says "bf16"); torch gets torch.bfloat16.

    The GIL is released while the model runs (ctypes.CDLL releases it for every foreign call), so other Python
    threads go on meanwhile. Calls on one Model are serialised (an AOTInductor model runs one call at a time);
    different Models run concurrently.

    `inputs` and `outputs` are TensorSpecs; `device` ("cpu", "cuda:0"), `library` (its name in the container) and
    `weights_mode` (how the weights reached it, as `mpspack run` reports) say what was loaded. close() unloads it
    (also on leaving a `with` block); a closed model refuses to run with InvalidArgument (a ValueError)."""

    def __init__(self, source: PathLike | Container, *, device: str | None = None, library: str | int | None = None,
                 verify_weights: bool = True, copy_weights: bool = False, threads: int = 0, tf32: bool = True):
        lib = _capi.library()
        self._options = _load_options(library, device, verify_weights, copy_weights, threads, tf32)
        handle = ctypes.c_void_p()
        if isinstance(source, Container):
            self.path = source.path
            status = lib.mpspack_model_load(source._ptr(), ctypes.byref(self._options), ctypes.byref(handle))
        else:
            self.path = os.fspath(source)
            status = lib.mpspack_model_load_file(os.fsencode(self.path), ctypes.byref(self._options),
                                                 ctypes.byref(handle))
        if status != _capi.OK:
            raise _capi.error(status, os.fsdecode(self.path))
        self._ptr: int | None = handle.value
        self._lock = threading.Lock()
        try:
            n_in, n_out = ctypes.c_size_t(), ctypes.c_size_t()
            _capi.check(lib.mpspack_model_io_count(self._ptr, ctypes.byref(n_in), ctypes.byref(n_out)))
            t = _capi.Tensor()
            self.inputs: list[TensorSpec] = []
            for i in range(n_in.value):
                _capi.check(lib.mpspack_model_input(self._ptr, i, ctypes.byref(t)))
                self.inputs.append(_spec(t))
            self.outputs: list[TensorSpec] = []
            for i in range(n_out.value):
                _capi.check(lib.mpspack_model_output(self._ptr, i, ctypes.byref(t)))
                self.outputs.append(_spec(t))
            dev, name, mode = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_char_p()
            _capi.check(lib.mpspack_model_info(self._ptr, ctypes.byref(dev), ctypes.byref(name), ctypes.byref(mode)))
            self.device, self.library, self.weights_mode = _capi.text(dev.value), _capi.text(name.value), \
                _capi.text(mode.value)
        except BaseException:
            self.close()
            raise
        self._on_gpu = not self.device.startswith("cpu")
        self._gpu_index = int(self.device.split(":")[1]) if ":" in self.device else 0
        self._index = {s.name: i for i, s in enumerate(self.inputs)}
        self._expected_codes = [_dtypes_code(s.dtype) for s in self.inputs]
        self._expected_numpy = [_dtypes.get(c).numpy if c is not None else None for c in self._expected_codes]
        # Per call, the C structs are reused: the inputs' array, and each input's shape array while its shape stays.
        self._in = (_capi.Tensor * max(len(self.inputs), 1))()
        self._shapes: list[tuple[tuple, Any] | None] = [None] * len(self.inputs)
        self._run = lib.mpspack_model_run
        self._run_into_c = lib.mpspack_model_run_into
        self._run_device = lib.mpspack_model_run_device
        self._out = ctypes.c_void_p()
        self._out_ref = ctypes.byref(self._out)
        self._n_in = len(self.inputs)
        self._out_table = (_capi.Tensor * max(len(self.outputs), 1))()
        # Each input's last array (array, shape, dtype, strides), while it was used in place; None otherwise.
        self._last: list[tuple | None] = [None] * self._n_in
        self._codes: list[tuple | None] = [None] * self._n_in  # each input's last NumPy dtype and its code
        # Input shapes -> the outputs' (shape, NumPy dtype, code, nbytes) a call with them gives: such calls copy
        # their outputs straight into new arrays (mpspack_model_run_into), fewer steps than wrapping the C API's.
        self._predictions: dict[tuple, list] = {}
        self._predicted: list | None = None
        self._shapes_key: tuple | None = None  # the inputs' shapes of the call in progress (or the last one)
        self._static: list | None = None  # the outputs the recorded example says, when it says them all
        self._table_holds: list | None = None  # the prediction whose sizes _out_table holds
        if all(s.shape is not None for s in self.inputs + self.outputs):
            self._static = [_prediction(s.shape, _dtypes_code(s.dtype)) for s in self.outputs]
            if any(p is None for p in self._static):
                self._static = None
            else:
                self._predictions[tuple(s.shape for s in self.inputs)] = self._static
        self._run_into_raw = _unchecked(lib, "mpspack_model_run_into")
        self._ptr_arg = ctypes.c_void_p(self._ptr)
        self._in_ref = ctypes.byref(self._in)
        self._out_table_ref = ctypes.byref(self._out_table)
        self._n_in_arg = ctypes.c_size_t(len(self.inputs))
        self._n_out_arg = ctypes.c_size_t(len(self.outputs))
        self._raw_args = (self._ptr_arg, self._in_ref, self._n_in_arg, self._out_table_ref, self._n_out_arg)
        # Each input's and output's `data` field as a c_void_p over the struct's own bytes: one attribute store
        # per call instead of a struct proxy and its field.
        data_at = _capi.Tensor.data.offset
        self._in_data = [ctypes.c_void_p.from_address(ctypes.addressof(t) + data_at) for t in self._in]
        self._out_data = [ctypes.c_void_p.from_address(ctypes.addressof(t) + data_at) for t in self._out_table]
        # The short way of __call__: set (_arm_fast) after a call whose inputs were NumPy arrays used in place and
        # whose outputs were predicted, for the calls with arrays of the same shapes, dtypes and strides, which
        # need nothing but their addresses. Per input (shape, dtype, strides, its data field); per output an
        # _OutputBlock.
        self._fast_in: list | None = None
        self._fast_out: list | None = None
        self._direct = False  # the last _fill passed every input in place, as a NumPy array

    # ---- running ---------------------------------------------------------------------------

    def run(self, inputs: Mapping[str, Any] | Sequence[Any]) -> dict | list:
        """Runs the model on {input name: array} (returning {output name: array}), or on a sequence of arrays
        (returning a list, as calling the model does)."""
        if isinstance(inputs, Mapping):
            ordered: list[Any] = [None] * len(self.inputs)
            for name, value in inputs.items():
                i = self._index.get(name)
                if i is None:
                    raise InvalidArgument(f"{self._what()}: no input named '{name}' (it takes "
                                          f"{', '.join(self._index) or 'none'})")
                ordered[i] = value
            missing = [s.name for s, v in zip(self.inputs, ordered) if v is None]
            if missing:
                raise InvalidArgument(f"{self._what()}: input {', '.join(missing)} not given")
            return dict(zip((s.name for s in self.outputs), self(*ordered)))
        if isinstance(inputs, (str, bytes, np.ndarray)) or not isinstance(inputs, Sequence):
            raise InvalidArgument(f"{self._what()}: run() takes a dict of inputs by name or a sequence of them, "
                                  f"not a {type(inputs).__name__}")
        return self(*inputs)

    def _what(self) -> str:
        """What the package's own messages about this model start with, as the C API's do."""
        return f"{os.fsdecode(self.path)}: library '{self.library}'"

    def __call__(self, *args) -> list:
        """Runs the model on one array per input, in order; returns its outputs as a list."""
        n = len(args)
        if n != self._n_in:
            # The C API refuses it too; said here with the model's name, before anything is converted.
            raise InvalidArgument(f"{self._what()}: takes {self._n_in} input{'s' if self._n_in != 1 else ''}, {n} "
                                  f"given")
        # The C structs are the model's, reused from call to call: filled and used under its lock.
        with self._lock:
            if self._ptr is None:
                raise InvalidArgument(f"{self._what()}: the model is closed")
            fast = self._fast_in
            if fast is not None:
                # Arrays laid out as the last ones (same shape, the very dtype object, same strides: dense, native
                # byte order): only their addresses go into the structs.
                for a, (shape, dtype, strides, data) in zip(args, fast):
                    if type(a) is not _ndarray or a.dtype is not dtype or a.shape != shape or a.strides != strides:
                        break
                    data.value = _data(a)
                else:
                    outs = [b.take() for b in self._fast_out]
                    status = self._run_into_raw(*self._raw_args)
                    if status == 0 and self._predicted is self._static:
                        return outs
                    outputs = self._finish(status, self._predicted, outs)
                    if outputs is not None:
                        return outputs
                # Some structs may hold addresses the fast path wrote: none is the array _last remembers.
                self._fast_in = self._fast_out = None
                self._last = [None] * self._n_in
            keep, torch_out, shapes = self._fill(args)
            if not torch_out:
                if shapes is not None:  # not the very arrays of the last call: look up the outputs' shapes
                    self._shapes_key = shapes
                    self._predicted = self._predictions.get(shapes)
                if self._predicted is not None:
                    outputs = self._run_into(n, self._predicted)
                    if outputs is not None:
                        if self._direct:
                            self._arm_fast(args, self._predicted)
                        return outputs
            # torch in, torch out: a GPU model's outputs stay on its GPU, handed out by DLPack without a copy back.
            run = self._run_device if torch_out and self._on_gpu else self._run
            status = run(self._ptr, self._in, n, self._out_ref)
            if status != _capi.OK:
                raise _capi.error(status, what=os.fsdecode(self.path))
            owner = _Outputs(self._out.value)
            del keep
            return self._wrap(owner, torch_out)

    def _fill(self, args: Sequence[Any]) -> tuple[list, bool, tuple | None]:
        """Points the inputs' C structs at `args`. Returns what they point at that must live until the run
        (converted copies, DLPack capsules), whether torch tensors were given, and the inputs' shapes, or None when
        every input is the very array of the last call, unchanged in shape, dtype and layout (its struct is then
        already right, and so are the shapes)."""
        keep: list = []
        torch_out = False
        same = True
        direct = True
        table = self._in
        last = self._last
        for i, a in enumerate(args):
            c = last[i]
            # The same ndarray object (held in _last, so its id cannot have been reused) with the same shape, dtype
            # and strides has the same data pointer: nothing to fill.
            if c is not None and c[0] is a and a.shape == c[1] and a.dtype is c[2] and a.strides == c[3]:
                continue
            same = False
            t = table[i]
            direct = False if type(a) is not np.ndarray else direct
            if type(a) is not np.ndarray and hasattr(a, "__dlpack__"):
                borrowed = self._borrow(i, a)
                torch_out = torch_out or _is_torch(a)
                keep.append(borrowed)
                self._set(i, t, borrowed.code, borrowed.shape, borrowed.data, borrowed.nbytes, borrowed.memory)
                last[i] = None
                continue
            arr = a
            if type(a) is not np.ndarray:
                try:
                    # A list or scalar has no dtype of its own: it takes the input's, when the example says it.
                    arr = np.asarray(a, dtype=None if isinstance(a, np.ndarray) else self._expected_numpy[i])
                except Exception as e:
                    raise InvalidArgument(f"{self._what()}: input {i} ('{self.inputs[i].name}') is a "
                                          f"{type(a).__name__}, not an array: {e}") from None
            dt = arr.dtype
            if dt.byteorder == ">" or not arr.flags.c_contiguous:
                arr = np.ascontiguousarray(arr, dtype=dt.newbyteorder("<"))
                dt = arr.dtype
            known = self._codes[i]
            if known is not None and known[0] is dt:
                code = known[1]
            else:
                code = self._code(i, dt)
                self._codes[i] = (dt, code)
            shape = arr.shape
            self._set(i, t, code, shape, _address(arr), arr.nbytes, _capi.MEMORY_HOST)
            if arr is a:
                last[i] = (a, shape, dt, a.strides)
            else:
                keep.append(arr)
                last[i] = None
                direct = False
        if torch_out:
            for i in range(len(args)):
                last[i] = None
        self._direct = direct and not torch_out
        if same:
            return keep, torch_out, None
        return keep, torch_out, tuple(self._shapes[i][0] for i in range(len(args)))

    def _run_into(self, n: int, predicted: list) -> list | None:
        """Runs the model with its outputs copied into new NumPy arrays of the shapes and dtypes the last call with
        these input shapes returned (or the recorded example says). None when the outputs came out otherwise (the
        caller then runs it again the general way)."""
        outs = []
        table = self._out_table
        refill = predicted is not self._table_holds
        for k, (shape, dtype, code, nbytes) in enumerate(predicted):
            o = np.empty(shape, dtype)
            t = table[k]
            t.data = _addressof(_Byte.from_buffer(o)) if nbytes else 0  # a new array: writable, dense
            if refill:
                t.nbytes = nbytes
            outs.append(o)
        self._table_holds = predicted
        # Every argument a ready ctypes object, for a call without argument conversions.
        return self._finish(self._run_into_raw(*self._raw_args), predicted, outs)

    def _arm_fast(self, args: Sequence[Any], predicted: list) -> None:
        """After a call through _run_into with every input a NumPy array used in place: what the short way of
        __call__ needs for the next calls with arrays laid out the same way."""
        self._fast_in = [(a.shape, a.dtype, a.strides, self._in_data[i]) for i, a in enumerate(args)]
        self._fast_out = [_OutputBlock(shape, dtype, nbytes, self._out_data[k])
                          for k, (shape, dtype, code, nbytes) in enumerate(predicted)]

    def _finish(self, status: int, predicted: list, outs: list) -> list | None:
        """`outs`, once the run into them succeeded and gave the predicted outputs; None (the prediction
        forgotten) when they came out otherwise."""
        if status != _capi.OK:
            msg = _capi.message()
            if status == _capi.ERR_INVALID_ARGUMENT and "output" in msg:
                self._forget_prediction()
                return None
            raise _capi.error(status, what=os.fsdecode(self.path))
        if predicted is not self._static:
            # Predicted from an earlier call: the sizes matched (the C API checked), the shapes must too. (With a
            # recorded example the C API held the inputs to it, so the outputs are the example's.)
            table = self._out_table
            for k, (shape, dtype, code, nbytes) in enumerate(predicted):
                t = table[k]
                if t.dtype != code or t.shape[:t.ndim] != list(shape):
                    self._forget_prediction()
                    return None
        return outs

    def _forget_prediction(self) -> None:
        self._predictions.pop(self._shapes_key, None)
        self._predicted = None
        self._fast_in = self._fast_out = None

    def _remember(self, outputs: list) -> None:
        """After a general run: the outputs' shapes and dtypes for the inputs' shapes of this call."""
        if len(self._predictions) > 64:  # a model called with ever new shapes: keep the table small
            self._predictions.clear()
        self._predictions[self._shapes_key] = outputs
        self._predicted = outputs

    def _set(self, i: int, t: _capi.Tensor, code: int, shape: tuple, data: int, nbytes: int, memory: int) -> None:
        cached = self._shapes[i]
        if cached is None or cached[0] != shape:
            cached = (shape, (ctypes.c_int64 * max(len(shape), 1))(*shape))
            self._shapes[i] = cached
            t.shape = ctypes.cast(cached[1], ctypes.POINTER(ctypes.c_int64))
            t.ndim = len(shape)
        t.dtype = code
        t.data = data
        t.nbytes = nbytes
        t.memory = memory

    def _code(self, i: int, dtype: np.dtype) -> int:
        """The c10 code an array of `dtype` is passed as for input i: its own type, or the model's raw-bits type
        (bf16, float8) for an unsigned array of that size."""
        want = self._expected_codes[i]
        if want is not None and dtype.kind == "u":
            d = _dtypes.get(want)
            if d is not None and d.raw_bits and d.itemsize == dtype.itemsize:
                return want
        code = _dtypes.from_numpy(dtype)
        if code is None:
            raise InvalidArgument(f"{self._what()}: input {i} ('{self.inputs[i].name}') is a NumPy array of dtype "
                                  f"{dtype}, which mpspack has no dtype for")
        return code

    def _borrow(self, i: int, a) -> "_BorrowedInput | None":
        """A DLPack tensor used in place: on the model's GPU (a CUDA model), or dense on the host. None where NumPy
        should read it instead (host memory it can view) and for layouts that need a copy first."""
        torch = _torch() if _is_torch(a) else None
        if torch is not None:
            if not a.is_contiguous():
                a = a.contiguous()
            if a.is_cuda:
                # The model's stream does not wait for torch's: finish the work that writes the input first.
                torch.cuda.current_stream(a.device).synchronize()
            elif a.requires_grad:
                a = a.detach()
        try:
            b = _dlpack.Borrowed(a.__dlpack__())
        except (TypeError, BufferError, RuntimeError) as e:
            raise InvalidArgument(f"{self._what()}: input {i} ('{self.inputs[i].name}'): its DLPack export failed: "
                                  f"{e}") from None
        if b.lanes != 1:
            raise InvalidArgument(f"{self._what()}: input {i} ('{self.inputs[i].name}') has {b.lanes} lanes per "
                                  f"element; mpspack takes one")
        if not b.contiguous:
            raise InvalidArgument(f"{self._what()}: input {i} ('{self.inputs[i].name}') is not dense and row-major")
        if b.device_type in (_dlpack.KDL_CPU, _dlpack.KDL_CUDA_HOST):
            memory = _capi.MEMORY_HOST
        elif b.device_type == _dlpack.KDL_CUDA:
            if not self._on_gpu or b.device_id != self._gpu_index:
                raise InvalidArgument(f"{self._what()}: input {i} ('{self.inputs[i].name}') is on cuda:{b.device_id}, "
                                      f"the model on {self.device}")
            memory = _capi.MEMORY_DEVICE
        else:
            raise InvalidArgument(f"{self._what()}: input {i} ('{self.inputs[i].name}') is on DLPack device type "
                                  f"{b.device_type}, which mpspack cannot read")
        code = _dtypes.from_dlpack(b.code, b.bits)
        want = self._expected_codes[i]
        if code is not None and want is not None and want != code:
            d = _dtypes.get(want)
            if d is not None and d.raw_bits and b.code == 1 and d.itemsize * 8 == b.bits:
                code = want  # raw bit patterns of a type DLPack does not name (float8) given as unsigned
        if code is None:
            raise InvalidArgument(f"{self._what()}: input {i} ('{self.inputs[i].name}') has DLPack type code "
                                  f"{b.code} of {b.bits} bits, which mpspack has no dtype for")
        n = 1
        for d in b.shape:
            n *= d
        return _BorrowedInput(b, code, n * (b.bits // 8), memory)

    def _wrap(self, outputs: _Outputs, torch_out: bool) -> list:
        lib = _capi._lib
        count = ctypes.c_size_t()
        _capi.check(lib.mpspack_outputs_count(outputs.ptr, ctypes.byref(count)))
        t = _capi.Tensor()
        result = []
        torch = _torch() if torch_out else None
        seen = []
        for i in range(count.value):
            _capi.check(lib.mpspack_outputs_get(outputs.ptr, i, ctypes.byref(t)))
            shape = tuple(t.shape[k] for k in range(t.ndim))
            seen.append(_prediction(shape, t.dtype) if t.memory == _capi.MEMORY_HOST else None)
            if torch is not None:
                result.append(self._torch_output(torch, t, shape, outputs))
                continue
            if t.memory != _capi.MEMORY_HOST:
                raise InvalidArgument(f"{self._what()}: output {i} is in device memory; pass torch tensors to "
                                      f"get it as a torch tensor")
            d = _dtypes.get(t.dtype)
            if d is None:
                raise InvalidArgument(f"{self._what()}: output {i} has dtype code {t.dtype}, which this package "
                                      f"does not know")
            if t.nbytes == 0 or not t.data:
                result.append(np.empty(shape, d.numpy))
                continue
            buffer = (ctypes.c_char * t.nbytes).from_address(t.data)
            buffer.owner = outputs
            result.append(np.frombuffer(buffer, d.numpy).reshape(shape))
        if torch is None and all(p is not None for p in seen):
            self._remember(seen)
        return result

    def _torch_output(self, torch, t: _capi.Tensor, shape: tuple, owner: _Outputs):
        dl = _dtypes.to_dlpack(t.dtype)
        if dl is None:
            raise InvalidArgument(f"{self._what()}: an output of dtype {_dtypes.name(t.dtype)} has no torch "
                                  f"dtype to hand it out as")
        if t.memory == _capi.MEMORY_DEVICE:
            device = (_dlpack.KDL_CUDA, self._gpu_index)
        else:
            device = (_dlpack.KDL_CPU, 0)
        if t.nbytes == 0 or not t.data:
            d = _dtypes.get(t.dtype)
            return torch.utils.dlpack.from_dlpack(np.empty(shape, d.numpy)) if d and not d.raw_bits else \
                torch.empty(shape, dtype=getattr(torch, d.torch_name if d else "uint8"))
        cap = _dlpack.capsule(t.data, shape, dl[0], dl[1], device[0], device[1], owner)
        return torch.utils.dlpack.from_dlpack(cap)

    # ---- benchmark -------------------------------------------------------------------------

    def bench(self, *, iterations: int | None = None, warmup: int | None = None, duration_s: float | None = None,
              warmup_ms: float | None = None, repetitions: int | None = None, percentiles: Iterable[float] = (),
              cold: bool = False, include_transfers: bool = False, cuda_graph: bool = False,
              inputs: Iterable = (), seed: int | None = None, expect: Iterable = ()) -> dict:
        """`mpspack run --bench --json`'s report for this model's container, library and load options: loads a
        second copy (the load phases are part of the report), warms up, times the runs. `inputs` and `expect` are
        paths (.npy, or raw with (path, dtype, shape)) or NumPy arrays (written to temporary .npy files, removed
        after); without inputs the recorded example's, or generated from `seed`. Raises CheckFailed (with
        `report`) when the first run does not match `expect` or the recorded outputs. Process-wide: it times the
        whole process's work, so do not run models meanwhile."""
        o = _capi.BenchOptions()
        lib = _capi.library()
        _capi.check(lib.mpspack_bench_options_init(ctypes.byref(o)))
        if iterations is not None:
            o.iterations = int(iterations)
        if warmup is not None:
            o.warmup = int(warmup)
        if duration_s is not None:
            o.duration_s = float(duration_s)
        if warmup_ms is not None:
            o.warmup_ms = float(warmup_ms)
        if repetitions is not None:
            o.repetitions = int(repetitions)
        extra = [float(p) for p in percentiles]
        pct = (ctypes.c_double * len(extra))(*extra) if extra else None
        o.percentiles, o.n_percentiles = pct, len(extra)
        o.cold, o.include_transfers, o.cuda_graph = int(bool(cold)), int(bool(include_transfers)), int(bool(cuda_graph))
        if seed is not None:
            o.has_seed, o.seed = 1, int(seed)
        with _scratch() as scratch:
            ins, o.n_inputs = _capi.strings(_tensors(inputs, "bench() inputs", scratch))
            exp, o.n_expects = _capi.strings(_tensors(expect, "bench() expect", scratch))
            o.inputs, o.expects = ins, exp
            report = ctypes.c_void_p()
            with self._lock:
                if self._ptr is None:
                    raise InvalidArgument(f"{self._what()}: the model is closed")
                status = lib.mpspack_model_bench(self._ptr, ctypes.byref(o), ctypes.byref(report))
        text = _capi.take_string(report) if status in (_capi.OK, _capi.ERR_CHECK_FAILED) else ""
        if status != _capi.OK:
            err = _capi.error(status, what=os.fsdecode(self.path))
            if text:
                err.report = json.loads(text)
            raise err
        return json.loads(text)

    # ---- lifetime --------------------------------------------------------------------------

    def close(self) -> None:
        """Unloads the model (waiting for a call in progress on another thread). Outputs already returned stay
        valid. Closing twice is fine."""
        lock = getattr(self, "_lock", None)
        if lock is None:
            ptr, self._ptr = getattr(self, "_ptr", None), None
        else:
            with lock:
                ptr, self._ptr = self._ptr, None
        if ptr and _capi._lib is not None:
            _capi._lib.mpspack_model_close(ptr)

    def __enter__(self) -> Model:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._ptr is None else f"{len(self.inputs)} inputs, {len(self.outputs)} outputs"
        return f"<mpspack.Model {os.fsdecode(self.path)!r} {getattr(self, 'library', '')} on " \
               f"{getattr(self, 'device', '?')}: {state}>"


def _unchecked(lib: ctypes.CDLL, name: str):
    """A second function object for `name` without argtypes: called with ready ctypes objects only, it skips the
    per-argument conversions of the bound one."""
    f = type(getattr(lib, name))((name, lib))
    f.restype = ctypes.c_int32
    return f


def _prediction(shape: tuple, code: int | None) -> tuple | None:
    d = _dtypes.get(code) if code is not None else None
    if d is None:
        return None
    n = d.itemsize
    for k in shape:
        n *= k
    return (tuple(shape), d.numpy, code, n)


_Byte = ctypes.c_char
_addressof = ctypes.addressof
_ndarray = np.ndarray


def _address(a: np.ndarray) -> int:
    """The address of a dense array's first element. Through ctypes' buffer interface where the array is writable
    (a few times cheaper than __array_interface__, which builds a dict per call)."""
    if a.flags.writeable and a.nbytes:
        return _addressof(_Byte.from_buffer(a))
    return a.__array_interface__["data"][0]


def _data_from_object() -> Any:
    """A function giving an array's data address from the array object itself, or None where it cannot be
    trusted. CPython's id() is the object's address, and NumPy's PyArrayObject starts with PyObject_HEAD and then
    `char *data` (numpy/ndarraytypes.h, unchanged since NumPy 1.7): one read of a pointer, a few times cheaper than
    the buffer interface. Checked here against _address() on a writable and a read-only array."""
    if sys.implementation.name != "cpython":
        return None
    at = object.__basicsize__
    read = ctypes.c_void_p.from_address

    def data(a: np.ndarray) -> int:
        return read(id(a) + at).value or 0
    probe = np.arange(6, dtype=np.float64)
    view = probe[2:]
    view.flags.writeable = False
    if data(probe) != _address(probe) or data(view) != view.__array_interface__["data"][0]:
        return None
    return data


_data = _data_from_object() or _address


class _OutputBlock:
    """New output arrays of one shape and dtype, handed out as consecutive rows of a block allocated for up to
    BLOCK_BYTES of them: one allocation and one address lookup per block instead of per call. A row keeps its
    whole block alive, so a caller holding one output of a small model holds at most BLOCK_BYTES; an output larger
    than half of that gets an array of its own each call."""

    BLOCK_BYTES = 256 * 1024
    ROWS_MAX = 64
    __slots__ = ("shape", "dtype", "nbytes", "slot", "rows", "block", "base", "next", "scalar")

    def __init__(self, shape: tuple, dtype: np.dtype, nbytes: int, slot: ctypes.c_void_p):
        self.shape, self.dtype, self.nbytes, self.slot = shape, dtype, nbytes, slot
        self.rows = max(1, min(self.ROWS_MAX, self.BLOCK_BYTES // nbytes)) if nbytes else 1
        self.scalar = len(shape) == 0
        self.block, self.base, self.next = None, 0, self.rows

    def take(self) -> np.ndarray:
        """A new array for the output, its address put in the output's struct."""
        if self.rows == 1:
            o = np.empty(self.shape, self.dtype)
            self.slot.value = _addressof(_Byte.from_buffer(o)) if self.nbytes else 0
            return o
        i = self.next
        if i == self.rows:
            self.block = np.empty((self.rows,) + self.shape, self.dtype)
            self.base = _addressof(_Byte.from_buffer(self.block))
            i = 0
        self.next = i + 1
        self.slot.value = self.base + i * self.nbytes
        return self.block[i, ...] if self.scalar else self.block[i]


class _BorrowedInput:
    __slots__ = ("capsule", "code", "shape", "data", "nbytes", "memory")

    def __init__(self, b: _dlpack.Borrowed, code: int, nbytes: int, memory: int):
        self.capsule, self.code, self.shape, self.data, self.nbytes, self.memory = b, code, b.shape, b.data, \
            nbytes, memory


def _is_torch(a) -> bool:
    torch = _torch()
    return torch is not None and isinstance(a, torch.Tensor)


def _dtypes_code(name: str | None) -> int | None:
    if name is None:
        return None
    for code, d in _dtypes.table().items():
        if d.name == name:
            return code
    return None


def load(source: PathLike | Container, device: str | None = None, library: str | int | None = None, *,
         verify_weights: bool = True, copy_weights: bool = False, threads: int = 0, tf32: bool = True) -> Model:
    """Loads a model library of a container (a path, or an open Container) in this process.

    device: "cpu", "cuda" or "cuda:N"; None: the kind the library was compiled for (index 0).
    library: the library's name or index in the container; None: the only one (a container holding several is
    refused, naming them).
    verify_weights: check the weights against their hashes beside the load (the first call returns only once the
    check passed); copy_weights: copy external-blob weights into the model instead of using them in place;
    threads: the CPU team's size (0: as it is; process-wide, as `run --bench --threads`); tf32: False runs float32
    convolutions on a GPU without TF32 (process-wide).

    Errors: FileNotFoundError and the other OpenErrors for a path that cannot be opened, FormatError for a file
    that is not a container or is damaged, UnsupportedError for a library this machine or build cannot run,
    InvalidArgument for an unknown library or device, ModelError when the library fails to load."""
    return Model(source, device=device, library=library, verify_weights=verify_weights, copy_weights=copy_weights,
                 threads=threads, tf32=tf32)
