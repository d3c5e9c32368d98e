"""ctypes bindings of libkiln.so: the compiler's C API (kiln/kiln_jit_c.h) and
the runtime's (kiln/kiln_c.h). Nothing here knows torch; kiln.ops does."""
import ctypes
import os
import threading

LL = ctypes.POINTER(ctypes.c_longlong)

# kiln_c.h's element type codes, by name.
DTYPE_CODES = {"bf16": 0, "fp16": 1, "f32": 2, "f64": 3, "i32": 4, "i64": 5}


class VariantOptions(ctypes.Structure):
    _fields_ = [("mlir", ctypes.c_char_p), ("name", ctypes.c_char_p), ("head_dim", ctypes.c_longlong),
                ("head_dim_v", ctypes.c_longlong), ("dtype", ctypes.c_char_p), ("page_size", ctypes.c_longlong),
                ("dropout_p", ctypes.c_double), ("capture_gradients", ctypes.c_int),
                ("varlen", ctypes.c_int), ("block_sparse", ctypes.c_longlong * 2),
                ("build_block_mask", ctypes.c_int)]


class CTensor(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("data", ctypes.c_void_p), ("dtype", ctypes.c_int),
                ("rank", ctypes.c_int), ("sizes", LL), ("strides", LL)]


class KilnError(RuntimeError):
    """A message from Kiln: bad input, or a failed compile or launch."""


def _library_path():
    """$KILN_LIBRARY, else libkiln.so beside this package (an installed
    package), else the repository's build folder (a source checkout)."""
    if os.environ.get("KILN_LIBRARY"):
        return os.environ["KILN_LIBRARY"]
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.path.join(here, "libkiln.so"),
                      os.path.join(here, "..", "..", "build", "lib", "libkiln.so")):
        if os.path.exists(candidate):
            return candidate
    raise KilnError("libkiln.so not found: build it (make build) or set KILN_LIBRARY")


_lib = None


def lib():
    """libkiln.so with its signatures, loaded once."""
    global _lib
    if _lib is not None:
        return _lib
    l = ctypes.CDLL(_library_path())
    err = [ctypes.c_char_p, ctypes.c_int]
    l.kiln_compile_spec.argtypes = [ctypes.POINTER(VariantOptions), ctypes.c_char_p, ctypes.c_char_p,
                                    ctypes.POINTER(ctypes.c_void_p)] + err
    l.kiln_string_free.argtypes = [ctypes.c_void_p]
    l.kiln_host_program_compile.argtypes = [ctypes.POINTER(VariantOptions), ctypes.POINTER(ctypes.c_void_p)] + err
    l.kiln_host_program_plan.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    l.kiln_host_program_plan.restype = ctypes.c_char_p
    l.kiln_host_program_run.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(CTensor), ctypes.c_int,
                                        ctypes.POINTER(CTensor), ctypes.c_int] + err
    l.kiln_host_program_free.argtypes = [ctypes.c_void_p]
    l.kiln_program_load.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)] + err
    l.kiln_program_run.argtypes = [ctypes.c_void_p, ctypes.POINTER(CTensor), ctypes.c_int,
                                   ctypes.POINTER(CTensor), ctypes.c_int, ctypes.c_void_p] + err
    l.kiln_program_free.argtypes = [ctypes.c_void_p]
    _lib = l
    return l


_errors = threading.local()


def call(fn, *args):
    """Calls a C API function that ends in (error, error_size); raises its
    message. The error buffer is the thread's own, made once (not per call:
    this is on every launch's path)."""
    buffer = getattr(_errors, "buffer", None)
    if buffer is None:
        buffer = _errors.buffer = ctypes.create_string_buffer(8192)
    if fn(*args, buffer, len(buffer)):
        raise KilnError(buffer.value.decode())


def variant_options(text, name, head_dim, head_dim_v, dtype, page_size=0, dropout_p=0.0, capture_gradients=False,
                    varlen=False, block_sparse=(0, 0), build_block_mask=False):
    return VariantOptions(text.encode(), name.encode() if name else None, head_dim, head_dim_v,
                          dtype.encode() if dtype else None, page_size, dropout_p, int(capture_gradients),
                          int(varlen), (ctypes.c_longlong * 2)(*block_sparse), int(build_block_mask))


def compile_spec(options, program, arch):
    """The spec (JSON text) of `program` (forward, backward) for `arch`."""
    out = ctypes.c_void_p()
    call(lib().kiln_compile_spec, ctypes.byref(options), program.encode(), arch.encode(), ctypes.byref(out))
    try:
        return ctypes.string_at(out).decode()
    finally:
        lib().kiln_string_free(out)


class HostProgram:
    """A variant JIT-compiled for the host: run("forward" | "backward", ...)."""

    def __init__(self, options):
        self.handle = ctypes.c_void_p()
        call(lib().kiln_host_program_compile, ctypes.byref(options), ctypes.byref(self.handle))

    def run(self, which, tensors, captures):
        named = (CTensor * len(tensors))(*tensors)
        caps = (CTensor * len(captures))(*captures)
        call(lib().kiln_host_program_run, self.handle, which.encode(), named, len(tensors), caps, len(captures))

    def plan(self, which):
        """The launch plan (JSON text) of "forward" or "backward"."""
        return lib().kiln_host_program_plan(self.handle, which.encode()).decode()

    def __del__(self):
        if getattr(self, "handle", None):
            lib().kiln_host_program_free(self.handle)
            self.handle = None


class DeviceProgram:
    """A spec loaded on a GPU: run(tensors, captures, stream)."""

    def __init__(self, spec_json, device):
        self.handle = ctypes.c_void_p()
        call(lib().kiln_program_load, spec_json.encode(), device, ctypes.byref(self.handle))

    def run(self, tensors, captures, stream):
        named = (CTensor * len(tensors))(*tensors)
        caps = (CTensor * len(captures))(*captures)
        call(lib().kiln_program_run, self.handle, named, len(tensors), caps, len(captures), ctypes.c_void_p(stream))

    def __del__(self):
        if getattr(self, "handle", None):
            lib().kiln_program_free(self.handle)
            self.handle = None
