# torch's runtime on a zoo package without torch's package loader (which crashes on the device image): the model
# library's own C API driven from Python, with libtorch's C shim (the aoti_torch_* functions it imports) made
# global first, as bench/device/torch_runner.py measured it there. Steps, as torch's AOTIModelPackageLoader takes
# them: extract the package's model folder (data/aotinductor/model/: the .so, a *_weights.blob if the weights are
# not embedded, *.cubin files if the kernels are not embedded), load the .so, CreateWithDevice with that folder
# as cubin_dir (a library built without embedded kernels names its cubins by the paths of its build folder),
# UpdateConstantsFromBlob for an external blob (the file mapped), then Run with tensors passed as AtenTensorHandles
# through torch._C._aoti's capsule helpers. Any number of inputs and outputs, any dtype.
import ctypes
import os
import shutil
import zipfile

NAME = "torch's runtime (libtorch shim, the library's C API)"
MODEL_FOLDER = "data/aotinductor/model/"

_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype, _capsule_new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def _pointer(handle):
    """torch's pybind11 bindings hand void* out as capsules (None for null)."""
    if handle is None or isinstance(handle, int):
        return handle
    return _capsule_pointer(handle, None)


def extract(pt2, folder):
    """The package's model files into FOLDER: (the .so, the weights blob or None)."""
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    with zipfile.ZipFile(pt2) as z:
        entries = [e for e in z.namelist() if MODEL_FOLDER in e and not e.endswith("/")]
        for e in entries:
            with z.open(e) as src, open(os.path.join(folder, os.path.basename(e)), "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 22)
    names = [os.path.basename(e) for e in entries]
    libraries = [n for n in names if n.endswith(".so")]
    blobs = [n for n in names if n.endswith("_weights.blob")]
    if len(libraries) != 1:
        raise RuntimeError(f"{pt2}: {len(libraries)} .so files under {MODEL_FOLDER} (one expected): {libraries}")
    if len(blobs) > 1:
        raise RuntimeError(f"{pt2}: several weights blobs under {MODEL_FOLDER}: {blobs}")
    return os.path.join(folder, libraries[0]), (os.path.join(folder, blobs[0]) if blobs else None)


def load_libtorch_globally(torch, device):
    """libtorch's libraries with RTLD_GLOBAL, so that the model library finds the aoti_torch_* shim (and, for a
    library linked with libtorch, its NEEDED libtorch*.so by soname)."""
    lib_dir = os.path.join(os.path.dirname(torch.__file__), "lib")
    optional = [n for n in ["libtorch.so"] if os.path.exists(os.path.join(lib_dir, n))]
    for name in optional + ["libtorch_cpu.so"] + (["libtorch_cuda.so"] if device == "cuda" else []):
        ctypes.CDLL(os.path.join(lib_dir, name), mode=os.RTLD_GLOBAL)


def _checked(what, status):
    if status != 0:
        raise RuntimeError(f"{what} returned {status} (the library printed why on stderr)")


class CApiModel:
    def __init__(self, torch, case_dir, device):
        import numpy as np
        self.torch, self.device = torch, device
        load_libtorch_globally(torch, device)
        folder = os.path.join(case_dir, "torch_capi")
        so, blob = extract(os.path.join(case_dir, "model.pt2"), folder)
        self.lib = ctypes.CDLL(so, mode=os.RTLD_LOCAL)
        self.handle = ctypes.c_void_p()
        _checked("AOTInductorModelContainerCreateWithDevice", self.lib.AOTInductorModelContainerCreateWithDevice(
            ctypes.byref(self.handle), ctypes.c_size_t(1), device.encode(), folder.encode()))
        if blob:
            self.weights = np.memmap(blob, dtype=np.uint8, mode="r")   # kept mapped while the model lives
            _checked("AOTInductorModelUpdateConstantsFromBlob", self.lib.AOTInductorModelUpdateConstantsFromBlob(
                self.handle, ctypes.c_void_p(self.weights.ctypes.data)))
        self.n_in, self.n_out = self._count("Inputs"), self._count("Outputs")
        self.stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream if device == "cuda" else None)
        self.weights_note = "external weights blob" if blob else "weights in the .so"

    def _count(self, what):
        n = ctypes.c_size_t()
        _checked(f"AOTInductorModelContainerGetNum{what}",
                 getattr(self.lib, f"AOTInductorModelContainerGetNum{what}")(self.handle, ctypes.byref(n)))
        return n.value

    def run(self, inputs):
        """One Run: the model takes ownership of new handles to INPUTS; the outputs' handles become tensors."""
        if len(inputs) != self.n_in:
            raise RuntimeError(f"the library takes {self.n_in} inputs, the case has {len(inputs)}")
        aoti = self.torch._C._aoti
        ins = (ctypes.c_void_p * self.n_in)(*[_pointer(h) for h in aoti.unsafe_alloc_void_ptrs_from_tensors(inputs)])
        outs = (ctypes.c_void_p * self.n_out)()
        _checked("AOTInductorModelContainerRun", self.lib.AOTInductorModelContainerRun(
            self.handle, ins, ctypes.c_size_t(self.n_in), outs, ctypes.c_size_t(self.n_out), self.stream, None))
        return aoti.alloc_tensors_by_stealing_from_void_ptrs([_capsule_new(outs[i], None, None)
                                                              for i in range(self.n_out)])


def runner(torch, case_dir, device, inputs):
    model = CApiModel(torch, case_dir, device)
    return (lambda xs=inputs: model.run(xs)), f"{NAME}, {model.weights_note}"
