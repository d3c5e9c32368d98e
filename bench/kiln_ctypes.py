"""Kiln's runtime C API (runtime/include/kiln/kiln_c.h) from Python: load a
program spec written by `kiln compile` (a forward, or a backward with
`--backward`) and run it on torch tensors, by name, on torch's current
stream. The spec's launch plan decides the kernels; nothing here knows them.

    rt = Runtime("build/lib/libkiln_runtime.so")
    fwd = rt.load("alibi.cubin.json")
    fwd(q=q, k=k, v=v, out=o, lse=lse, captures=[slopes])
"""
import ctypes, json

import torch

LL = ctypes.POINTER(ctypes.c_longlong)

# kiln_c.h's element type codes.
DTYPES = {torch.bfloat16: 0, torch.float16: 1, torch.float32: 2, torch.float64: 3,
          torch.int32: 4, torch.int64: 5}


class CTensor(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("data", ctypes.c_void_p), ("dtype", ctypes.c_int),
                ("rank", ctypes.c_int), ("sizes", LL), ("strides", LL)]


class Program:
    """A loaded program: call it with its tensors by name and its captures."""

    def __init__(self, runtime, handle, spec):
        self.runtime, self.handle, self.spec = runtime, handle, spec
        self.tensor_names = [t["name"] for t in spec["tensors"]]
        self.capture_names = [c["name"] for c in spec["captures"]]

    def __call__(self, captures=(), **tensors):
        keep = []  # the size/stride arrays live until the call returns

        def c_tensor(name, t):
            if t.dtype not in DTYPES:
                raise TypeError(f"{name}: Kiln takes {list(DTYPES)}, got {t.dtype}")
            sizes = (ctypes.c_longlong * t.dim())(*t.shape)
            strides = (ctypes.c_longlong * t.dim())(*t.stride())
            keep.append((sizes, strides))
            return CTensor(name.encode() if name else None, t.data_ptr(), DTYPES[t.dtype], t.dim(),
                           ctypes.cast(sizes, LL), ctypes.cast(strides, LL))

        named = (CTensor * len(tensors))(*(c_tensor(n, t) for n, t in tensors.items()))
        caps = (CTensor * len(captures))(*(c_tensor(n, t) for n, t in zip(self.capture_names, captures)))
        err = ctypes.create_string_buffer(4096)
        if self.runtime.lib.kiln_program_run(self.handle, named, len(tensors), caps, len(captures),
                                             ctypes.c_void_p(torch.cuda.current_stream().cuda_stream),
                                             err, len(err)):
            raise RuntimeError(err.value.decode())

    def set_symbol(self, name, value):
        """Runs with a derived symbol of the plan set (kv_splits: the number of
        KV splits); a value below 1 restores the plan's own choice."""
        err = ctypes.create_string_buffer(4096)
        if self.runtime.lib.kiln_program_set_symbol(self.handle, name.encode(), value, err, len(err)):
            raise RuntimeError(err.value.decode())

    def workspace_bytes(self):
        return self.runtime.lib.kiln_program_workspace_bytes(self.handle)

    def __del__(self):
        if getattr(self, "handle", None):
            self.runtime.lib.kiln_program_free(self.handle)
            self.handle = None


class Runtime:
    def __init__(self, path):
        lib = self.lib = ctypes.CDLL(path)
        lib.kiln_program_load_file.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p),
                                               ctypes.c_char_p, ctypes.c_int]
        lib.kiln_program_run.argtypes = [ctypes.c_void_p, ctypes.POINTER(CTensor), ctypes.c_int,
                                         ctypes.POINTER(CTensor), ctypes.c_int, ctypes.c_void_p,
                                         ctypes.c_char_p, ctypes.c_int]
        lib.kiln_program_workspace_bytes.argtypes = [ctypes.c_void_p]
        lib.kiln_program_workspace_bytes.restype = ctypes.c_longlong
        lib.kiln_program_free.argtypes = [ctypes.c_void_p]
        lib.kiln_program_set_symbol.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_longlong,
                                                ctypes.c_char_p, ctypes.c_int]

    def load(self, path, device=0):
        handle, err = ctypes.c_void_p(), ctypes.create_string_buffer(4096)
        if self.lib.kiln_program_load_file(path.encode(), device, ctypes.byref(handle), err, len(err)):
            raise RuntimeError(err.value.decode())
        with open(path) as f:
            spec = json.load(f)  # for its tensor and capture names
        return Program(self, handle, spec)

    # The attention programs' tensor names, for callers that pass positions.
    @staticmethod
    def forward(program, q, k, v, o, lse, captures=()):
        program(q=q, k=k, v=v, out=o, lse=lse, captures=captures)

    @staticmethod
    def backward(program, q, k, v, o, do, lse, dq, dk, dv, captures=()):
        program(q=q, k=k, v=v, out=o, dout=do, lse=lse, dq=dq, dk=dk, dv=dv, captures=captures)
