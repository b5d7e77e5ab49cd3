"""DLPack (dlpack.h, the unversioned DLManagedTensor of v0.6-0.8 that torch 1.13 and later speak) through ctypes:
reading a tensor another library hands out (an input: its pointer, device, dtype and shape, used without a copy),
and handing one out (an output: a DLManagedTensor whose deleter releases the mpspack memory it points at)."""

from __future__ import annotations

import ctypes
import threading
from ctypes import POINTER, Structure, c_char_p, c_int32, c_int64, c_uint8, c_uint16, c_uint64, c_void_p

KDL_CPU = 1
KDL_CUDA = 2
KDL_CUDA_HOST = 3
_NAME = b"dltensor"
_USED = b"used_dltensor"


class Device(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device", Device), ("ndim", c_int32), ("dtype", DataType),
                ("shape", POINTER(c_int64)), ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


_Deleter = ctypes.CFUNCTYPE(None, c_void_p)


class ManagedTensor(Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", _Deleter)]


_api = ctypes.pythonapi
_api.PyCapsule_GetPointer.restype = c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, c_char_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, c_char_p]
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [c_void_p, c_char_p, c_void_p]
# The same two calls on a raw PyObject*, for the capsule destructor: its capsule is being freed, so it must not be
# wrapped in a py_object (that would take and drop a reference to it, freeing it a second time).
_is_valid_raw = ctypes.PYFUNCTYPE(ctypes.c_int, c_void_p, c_char_p)(("PyCapsule_IsValid", _api))
_get_pointer_raw = ctypes.PYFUNCTYPE(c_void_p, c_void_p, c_char_p)(("PyCapsule_GetPointer", _api))


class Borrowed:
    """A tensor read from a DLPack capsule: `data` (first element), `device_type`/`device_id`, `code`/`bits`/
    `lanes`, `shape`, and whether it is dense row-major (`contiguous`). Holds the capsule: the producer frees its
    tensor when this object is gone (its capsule destructor calls the deleter of an unconsumed capsule)."""

    __slots__ = ("capsule", "data", "device_type", "device_id", "code", "bits", "lanes", "shape", "contiguous")

    def __init__(self, capsule):
        if not _api.PyCapsule_IsValid(capsule, _NAME):
            raise TypeError("__dlpack__() did not return a DLPack capsule named 'dltensor'")
        self.capsule = capsule
        m = ManagedTensor.from_address(_api.PyCapsule_GetPointer(capsule, _NAME))
        t = m.dl_tensor
        self.data = (t.data or 0) + t.byte_offset
        self.device_type, self.device_id = t.device.device_type, t.device.device_id
        self.code, self.bits, self.lanes = t.dtype.code, t.dtype.bits, t.dtype.lanes
        self.shape = tuple(t.shape[i] for i in range(t.ndim))
        self.contiguous = True
        if t.strides:
            expected = 1
            for i in reversed(range(t.ndim)):
                if self.shape[i] != 1 and t.strides[i] != expected:
                    self.contiguous = False
                    break
                expected *= self.shape[i]


# Output tensors handed out and not yet released by their consumer, by the address of their DLManagedTensor.
_live: dict[int, tuple] = {}
_live_lock = threading.Lock()


@_Deleter
def _release(address):
    # Called by the consumer (torch) when its tensor is freed, possibly on another thread; ctypes takes the GIL.
    with _live_lock:
        _live.pop(address, None)


@ctypes.CFUNCTYPE(None, c_void_p)
def _capsule_destructor(capsule_address):
    # A capsule nobody consumed (its name still "dltensor"): release its tensor, as the protocol asks the producer.
    if _is_valid_raw(capsule_address, _NAME):
        _release(_get_pointer_raw(capsule_address, _NAME))


def capsule(data: int, shape: tuple, code: int, bits: int, device_type: int, device_id: int, owner) -> object:
    """A DLPack capsule of a dense row-major tensor at `data` that keeps `owner` alive until its consumer releases
    it."""
    m = ManagedTensor()
    dims = (c_int64 * max(len(shape), 1))(*shape)
    t = m.dl_tensor
    t.data = data
    t.device = Device(device_type, device_id)
    t.ndim = len(shape)
    t.dtype = DataType(code, bits, 1)
    t.shape = ctypes.cast(dims, POINTER(c_int64))
    t.strides = None  # dense, row-major
    t.byte_offset = 0
    m.deleter = _release
    address = ctypes.addressof(m)
    with _live_lock:
        _live[address] = (m, dims, owner)
    return _api.PyCapsule_New(address, _NAME, ctypes.cast(_capsule_destructor, c_void_p))
