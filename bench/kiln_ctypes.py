"""Kiln's runtime C API (runtime/include/kiln/kiln_c.h) from Python, for the
benchmarks: load kernel specs written by `kiln compile` (forward, or
`--backward`) and launch them on torch tensors on torch's current stream."""
import ctypes, json

import torch

LL = ctypes.POINTER(ctypes.c_longlong)


class Entry(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("num_threads", ctypes.c_int), ("shared_bytes", ctypes.c_int)]


class BackwardSpec(ctypes.Structure):
    _fields_ = [("source", ctypes.c_char_p), ("variant", ctypes.c_char_p), ("arch", ctypes.c_char_p)] + [
        (f, ctypes.c_int) for f in ("atomic_dq", "block_m", "block_n", "head_dim_qk", "head_dim_v",
                                    "gqa_group", "dtype", "num_captures")] + [
        (f, Entry) for f in ("preprocess", "dq", "dkdv", "convert")]


class Runtime:
    def __init__(self, path):
        lib = self.lib = ctypes.CDLL(path)
        lib.kiln_forward_load.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_int] * 9 + [
            ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_int]
        lib.kiln_forward_run.argtypes = [ctypes.c_void_p] + [ctypes.c_void_p, LL, LL] * 5 + [
            ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        lib.kiln_backward_load.argtypes = [ctypes.POINTER(BackwardSpec), ctypes.c_int,
                                           ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_int]
        lib.kiln_backward_run.argtypes = [ctypes.c_void_p] + [ctypes.c_void_p, LL, LL] * 9 + [
            ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]

    def load_forward(self, path):
        spec = json.load(open(path))
        handle, err = ctypes.c_void_p(), ctypes.create_string_buffer(4096)
        if self.lib.kiln_forward_load(spec["source"].encode(), spec["kernel"].encode(), spec["arch"].encode(),
                                      spec["threads"], spec["shared_bytes"], spec["block_m"],
                                      spec["head_dim_qk"], spec["head_dim_v"], spec["gqa_group"],
                                      spec["dtype"], spec["captures"], 0, ctypes.byref(handle), err, len(err)):
            raise RuntimeError(err.value.decode())
        return handle

    def load_backward(self, path):
        spec = json.load(open(path))
        entry = lambda e: Entry(e["name"].encode(), e["threads"], e["shared_bytes"])
        c = BackwardSpec(spec["source"].encode(), spec["variant"].encode(), spec["arch"].encode(),
                         spec["atomic_dq"], spec["block_m"], spec["block_n"], spec["head_dim_qk"],
                         spec["head_dim_v"], spec["gqa_group"], spec["dtype"], spec["captures"],
                         *(entry(spec[k]) for k in ("preprocess", "dq", "dkdv", "convert")))
        handle, err = ctypes.c_void_p(), ctypes.create_string_buffer(4096)
        if self.lib.kiln_backward_load(ctypes.byref(c), 0, ctypes.byref(handle), err, len(err)):
            raise RuntimeError(err.value.decode())
        return handle

    @staticmethod
    def _tensors(*ts):
        arr = lambda values: (ctypes.c_longlong * len(values))(*values)
        parts = []
        for t in ts:
            parts += [ctypes.c_void_p(t.data_ptr()), arr(t.shape), arr(t.stride())]
        return parts

    def _call(self, fn, handle, tensors):
        err = ctypes.create_string_buffer(4096)
        if fn(handle, *self._tensors(*tensors), ctypes.c_void_p(torch.cuda.current_stream().cuda_stream),
              err, len(err)):
            raise RuntimeError(err.value.decode())

    def forward(self, handle, q, k, v, o, lse):
        self._call(self.lib.kiln_forward_run, handle, (q, k, v, o, lse))

    def backward(self, handle, q, k, v, o, do, lse, dq, dk, dv):
        self._call(self.lib.kiln_backward_run, handle, (q, k, v, o, do, lse, dq, dk, dv))
