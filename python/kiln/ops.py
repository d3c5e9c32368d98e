"""Kiln attention as PyTorch custom ops (torch.library): `kiln::attention`
and `kiln::attention_backward`, with fake (meta) implementations and
autograd, so they trace under torch.compile(fullgraph=True).

Layout as Kiln's (and FlashAttention's): q [B, Lq, H, D], k and v
[B, Lk, H / G, D] and [..., Dv], out [B, Lq, H, Dv], lse [B, H, Lq] (f32,
natural log); with `cu_seqlens` [cu_seqlens_q, cu_seqlens_kv] (int32
[B + 1]), a varlen batch as FlashAttention's varlen API packs it: q [T_q, H,
D], k and v [T_kv, H / G, D], out [T_q, H, Dv], lse [H, T_q]. `kiln::paged_attention` (forward only) takes k and v as a paged
KV cache's pools [pages, page_size, H / G, D] with block_table [B, max_pages]
and kv_lens [B] (i32), as vLLM and FlashInfer keep them. CPU tensors run the variant's tile program on the CPU backend
(a host program); CUDA tensors run its GPU kernels through the runtime.
Programs are compiled once per (variant, head dims, dtype, device) and kept:
the kernels take any batch, lengths and heads.
"""
import ctypes
import functools
import json
from typing import List, Tuple

import torch

from . import _capi

# kiln::attention, kiln::attention_backward and kiln::paged_attention are C++
# ops (python/csrc/: their CPU, CUDA and autograd kernels); their fake
# kernels are below.
# libkiln.so first: kiln._C links it by its soname (python/setup.py).
_capi.lib()
from . import _C  # noqa: E402,F401

_DTYPES = {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "f32", torch.float64: "f64",
           torch.int32: "i32", torch.int64: "i64"}


def _element_type(q):
    if q.dtype not in (torch.bfloat16, torch.float16):
        raise _capi.KilnError(f"kiln.attention takes bf16 or fp16 q, k, v; got {q.dtype}")
    return _DTYPES[q.dtype]


_CODES = {dtype: _capi.DTYPE_CODES[name] for dtype, name in _DTYPES.items()}


@functools.lru_cache(maxsize=None)
def _encoded(name):
    return name.encode() if name else None


def _ctensor(name, t, keep):
    """A kiln_tensor over `t`'s memory; `keep` holds the shape arrays. On
    every launch's path: no per-call casts or encodes."""
    code = _CODES.get(t.dtype)
    if code is None:
        raise _capi.KilnError(f"{name or 'capture'}: Kiln takes {list(_DTYPES)}, got {t.dtype}")
    rank = t.dim()
    array = ctypes.c_longlong * rank
    sizes, strides = array(*t.shape), array(*t.stride())
    keep.append((sizes, strides))
    return _capi.CTensor(_encoded(name), t.data_ptr(), code, rank, sizes, strides)


@functools.lru_cache(maxsize=None)
def _host_program(text, name, head_dim, head_dim_v, dtype, page_size=0, dropout_p=0.0, capture_gradients=False,
                  varlen=False, block_sparse=(0, 0), build_block_mask=False):
    return _capi.HostProgram(_capi.variant_options(text, name, head_dim, head_dim_v, dtype, page_size, dropout_p,
                                                   capture_gradients, varlen, block_sparse, build_block_mask))


def _arch(device):
    major, minor = torch.cuda.get_device_capability(device)
    if major == 9 and minor == 0:
        return "sm_90a"
    if major == 8:
        return "sm_80"
    raise _capi.KilnError(f"{torch.cuda.get_device_name(device)} has compute capability {major}.{minor}; "
                          "Kiln supports 8.x (sm_80) and 9.0 (sm_90a)")


@functools.lru_cache(maxsize=None)
def _device_program(text, name, head_dim, head_dim_v, dtype, page_size, dropout_p, capture_gradients, varlen,
                    block_sparse, build_block_mask, program, device_index):
    options = _capi.variant_options(text, name, head_dim, head_dim_v, dtype, page_size, dropout_p,
                                    capture_gradients, varlen, block_sparse, build_block_mask)
    spec = _capi.compile_spec(options, program, _arch(device_index))
    loaded = _capi.DeviceProgram(spec, device_index)
    loaded.plan = json.loads(spec)
    return loaded


def _key(q, v, variant, name, page_size, dropout_p, capture_gradients, varlen=False, block_sparse=(0, 0),
         build_block_mask=False):
    # int(): head dims specialise the program (symbolic under tracing).
    return (variant, name, int(q.shape[-1]), int(v.shape[-1]), _element_type(q), page_size, dropout_p,
            capture_gradients, varlen, tuple(block_sparse), build_block_mask)


def _plan(q, key, program):
    """The launch plan (JSON as a dict) of `program` for `key` on q's device."""
    if q.device.type == "cuda":
        device = q.device.index if q.device.index is not None else torch.cuda.current_device()
        with torch.cuda.device(device):
            return _device_program(*key, program, device).plan
    return json.loads(_host_program(*key).plan(program))


def _gradient_captures(q, v, variant, name, dropout_p, varlen=False, block_sparse=(0, 0)):
    """Which captures the backward with capture gradients differentiates
    (the float ones its score_mod reads): (index, name) pairs, in order."""
    plan = _plan(q, _key(q, v, variant, name, 0, dropout_p, True, varlen, block_sparse), "backward")
    names = [c["name"] for c in plan["captures"]]
    return [(names.index(t["name"][len("grad_"):]), t["name"][len("grad_"):]) for t in plan["tensors"]
            if t["name"].startswith("grad_")]


def _capture_gradient_tensors(q, v, captures, variant, name, dropout_p, **program):
    """The f32 gradients the backward with capture gradients adds into, one
    per capture: zeros of its shape for each one the score_mod reads
    (_gradient_captures), an empty tensor [0] for the others (no gradient);
    and the read ones by tensor name."""
    read = dict(_gradient_captures(q, v, variant, name, dropout_p, **program))
    grads = [torch.zeros(c.shape if i in read else (0,), dtype=torch.float32, device=q.device)
             for i, c in enumerate(captures)]
    return grads, {f"grad_{read[i]}": grads[i] for i in read}


def _capture_gradients_fake(q, v, captures, variant, name, dropout_p, **program):
    """The fake kernels' _capture_gradient_tensors (shapes only)."""
    read = dict(_gradient_captures(q, v, variant, name, dropout_p, **program))
    return [torch.empty(c.shape if i in read else (0,), dtype=torch.float32, device=q.device)
            for i, c in enumerate(captures)]


def _capture_grads_of(captures, grads):
    """The autograd gradients of the captures from a backward's one-per-
    capture list: each that requires grad and has one, in its dtype."""
    return [g.to(c.dtype) if c.requires_grad and g.shape == c.shape else None for c, g in zip(captures, grads)]


def _capture_gradients_mode(deterministic):
    """kiln_variant_options.capture_gradients: 1 adds the captures'
    gradients by f32 atomics, 2 deterministically (the same bits in every
    run: under torch.use_deterministic_algorithms(True))."""
    return 2 if deterministic else 1


def _run(program, q, v, tensors, captures, variant, name, page_size=0, dropout_p=0.0, capture_gradients=False,
         varlen=False, block_sparse=(0, 0), build_block_mask=False):
    """Runs the forward or the backward (program) of the variant on the
    tensors' device; page_size > 0: k and v are a paged KV cache's pools;
    dropout_p > 0: the variant with that dropout (tensors has dropout_rng);
    capture_gradients: the backward that adds into grad_<capture> (1: by
    f32 atomics, 2: deterministically, _capture_gradients_mode); varlen:
    a packed batch (tensors has cu_seqlens_q and cu_seqlens_kv);
    block_sparse (QB, KB): the lists of a block mask (tensors has
    kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices)."""
    key = _key(q, v, variant, name, page_size, dropout_p, capture_gradients, varlen, block_sparse, build_block_mask)
    # The backward's faster schedule adds dQ atomically where that wins
    # (D = 64 and 128 on sm_90a); torch.use_deterministic_algorithms(True) asks for
    # the same bits in every run: the faster deterministic schedule (ordered
    # dQ adds at D >= 128 on sm_90a but for GQA, two kernels elsewhere).
    if q.device.type == "cuda" and program == "backward" and torch.are_deterministic_algorithms_enabled():
        program = "backward-deterministic"
    if tuple(block_sparse) != (0, 0):
        # The lists the program reads: the atomic backward has no dQ kernel,
        # so it takes the transposed lists only.
        wanted = {t["name"] for t in _plan(q, key, program)["tensors"]}
        tensors = {n: t for n, t in tensors.items() if n not in _BLOCK_LISTS or n in wanted}
    keep = []
    named = [_ctensor(n, t, keep) for n, t in tensors.items()]
    caps = [_ctensor(None, c, keep) for c in captures]
    if q.device.type == "cpu":
        _host_program(*key).run(program, named, caps)
        return
    if q.device.type == "cuda":
        current = torch.cuda.current_device()
        device = q.device.index if q.device.index is not None else current
        stream = torch.cuda.current_stream(device).cuda_stream
        if device == current:
            _device_program(*key, program, device).run(named, caps, stream)
            return
        # The runtime loads and launches in the current CUDA context: make it
        # the tensors' device's (custom ops get no device guard).
        with torch.cuda.device(device):
            _device_program(*key, program, device).run(named, caps, stream)
    else:
        raise _capi.KilnError(f"Kiln runs on CPU and CUDA tensors, got {q.device}")


def _check_devices(tensors):
    devices = {t.device for t in tensors}
    if len(devices) > 1:
        raise _capi.KilnError(f"all tensors must be on one device, got {sorted(map(str, devices))}")


def _check_fake_devices(tensors):
    """The fake kernels' device check. The dispatcher sends a call with any
    meta tensor to the fake kernel, which would return uninitialised tensors
    on q's device: a call mixing meta and real tensors is refused, as the
    real kernels refuse mixed devices."""
    _check_devices(tensors)


def _dropout_tensors(dropout_p, dropout_rngs):
    """The named dropout_rng tensor when the call has one (a variant whose
    text has dropout_p needs it even with dropout_p = 0 here). The ops take
    it as a list of zero or one tensors: a None tensor argument would not
    survive torch's autograd structure checks in every version."""
    if len(dropout_rngs) > 1:
        raise _capi.KilnError(f"dropout_rng is one tensor, got {len(dropout_rngs)}")
    dropout_rng = dropout_rngs[0] if dropout_rngs else None
    if dropout_p > 0 and dropout_rng is None:
        raise _capi.KilnError("dropout_p > 0 needs dropout_rng: an int64 tensor [2] (seed, offset)")
    if dropout_rng is None:
        return {}
    if dropout_rng.dtype != torch.int64 or dropout_rng.shape != (2,):
        raise _capi.KilnError(f"dropout_rng must be an int64 tensor [2] (seed, offset), got {dropout_rng.dtype} "
                              f"{list(dropout_rng.shape)}")
    return {"dropout_rng": dropout_rng.contiguous()}


def _check_offsets(name, t):
    if t.dtype != torch.int32 or t.dim() != 1 or t.shape[0] < 2:
        raise _capi.KilnError(f"{name} must be an int32 tensor [B + 1] with B >= 1, got {t.dtype} {list(t.shape)}")


def _offset_tensors(q, cu_seqlens):
    """The named cu_seqlens_q / cu_seqlens_kv of a varlen call (a list of
    none or both, as dropout_rng): int32 [B + 1] each, q [T, H, D]."""
    if not cu_seqlens:
        if q.dim() != 4:
            raise _capi.KilnError(f"q must be [B, Lq, H, D] (or [T, H, D] with cu_seqlens), got {list(q.shape)}")
        return {}
    if len(cu_seqlens) != 2:
        raise _capi.KilnError(f"cu_seqlens is [cu_seqlens_q, cu_seqlens_kv], got {len(cu_seqlens)} tensors")
    if q.dim() != 3:
        raise _capi.KilnError(f"a varlen q is [T, H, D], got {list(q.shape)}")
    cu_q, cu_kv = cu_seqlens
    _check_offsets("cu_seqlens_q", cu_q)
    _check_offsets("cu_seqlens_kv", cu_kv)
    if cu_q.shape != cu_kv.shape:
        raise _capi.KilnError(f"cu_seqlens_q and cu_seqlens_kv must both be [B + 1], got {list(cu_q.shape)} and "
                              f"{list(cu_kv.shape)}")
    return {"cu_seqlens_q": cu_q.contiguous(), "cu_seqlens_kv": cu_kv.contiguous()}


def _lse_shape(q, varlen):
    # [B, H, Lq]; varlen [H, T_q].
    return (q.shape[1], q.shape[0]) if varlen else (q.shape[0], q.shape[2], q.shape[1])


@torch.library.register_fake("kiln::attention")
def _(q, k, v, captures, variant, name, dropout_p, dropout_rng, cu_seqlens):
    _check_fake_devices([q, k, v, *captures, *dropout_rng, *cu_seqlens])
    out = q.new_empty(q.shape[:-1] + v.shape[-1:])
    lse = q.new_empty(_lse_shape(q, bool(cu_seqlens)), dtype=torch.float32)
    return out, lse


@torch.library.register_fake("kiln::attention_backward")
def _(dout, q, k, v, out, lse, captures, variant, name, dropout_p, dropout_rng, cu_seqlens):
    _check_fake_devices([dout, q, k, v, out, lse, *captures, *dropout_rng, *cu_seqlens])
    # Contiguous, as the real op's (empty_like of the contiguous inputs).
    return tuple(torch.empty(t.shape, dtype=t.dtype, device=t.device) for t in (q, k, v))


@torch.library.custom_op("kiln::attention_backward_captures", mutates_args=())
def attention_backward_captures_op(dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                                   out: torch.Tensor, lse: torch.Tensor, captures: List[torch.Tensor], variant: str,
                                   name: str, dropout_p: float, dropout_rng: List[torch.Tensor],
                                   cu_seqlens: List[torch.Tensor], deterministic: bool = False
                                   ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, List[torch.Tensor]]:
    """attention_backward and the captures' gradients, one per capture
    (_capture_gradient_tensors: f32 for each float capture the variant's
    score_mod reads, an empty tensor for the others); deterministic: the
    same bits in every run (fixed-point sums, one more kernel per capture)
    instead of f32 atomics. The C++ autograd of kiln::attention calls it."""
    rng = _dropout_tensors(dropout_p, dropout_rng)
    offsets = _offset_tensors(q, cu_seqlens)
    _check_devices([dout, q, k, v, out, lse, *captures, *rng.values(), *offsets.values()])
    q, k, v, out, dout, lse = (t.contiguous() for t in (q, k, v, out, dout, lse))
    captures = [c.contiguous() for c in captures]
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    grads, names = _capture_gradient_tensors(q, v, captures, variant, name, dropout_p, varlen=bool(offsets))
    _run("backward", q, v, {"q": q, "k": k, "v": v, "out": out, "dout": dout, "lse": lse, "dq": dq, "dk": dk,
                            "dv": dv, **rng, **offsets, **names}, captures, variant, name, dropout_p=dropout_p,
         capture_gradients=_capture_gradients_mode(deterministic), varlen=bool(offsets))
    return dq, dk, dv, grads


@attention_backward_captures_op.register_fake
def _(dout, q, k, v, out, lse, captures, variant, name, dropout_p, dropout_rng, cu_seqlens, deterministic=False):
    _check_fake_devices([dout, q, k, v, out, lse, *captures, *dropout_rng, *cu_seqlens])
    return (*(torch.empty(t.shape, dtype=t.dtype, device=t.device) for t in (q, k, v)),
            _capture_gradients_fake(q, v, captures, variant, name, dropout_p, varlen=bool(cu_seqlens)))




@torch.library.register_fake("kiln::paged_attention")
def _(q, k_pages, v_pages, block_table, kv_lens, captures, variant, name, cu_seqlens_q):
    _check_fake_devices([q, k_pages, v_pages, block_table, kv_lens, *captures, *cu_seqlens_q])
    out = q.new_empty(q.shape[:-1] + v_pages.shape[-1:])
    lse = q.new_empty(_lse_shape(q, bool(cu_seqlens_q)), dtype=torch.float32)
    return out, lse


_BLOCK_LISTS = ("kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices", "q_num_blocks", "q_indices",
                "full_q_num_blocks", "full_q_indices")


def _block_mask_tensors(q, k, lists, block_q, block_kv):
    """The named lists of a block-sparse call (the forward's four, or with
    the backward's transposed ones, eight), int32, their batch and head dims
    expanded to q's (stride 0: FlexAttention's masks are often [1, 1, ...]);
    q [B, Lq, H, D], k [B, Lk, H / G, D]."""
    if q.dim() != 4:
        raise _capi.KilnError(f"block-sparse q must be [B, Lq, H, D], got {list(q.shape)}")
    if block_q <= 0 or block_kv <= 0 or block_q % 16 or block_kv % 16:
        raise _capi.KilnError(f"block sizes must be positive multiples of 16, got ({block_q}, {block_kv})")
    if len(lists) not in (4, 8):
        raise _capi.KilnError(f"a block mask is 4 lists (or 8 with the transposed ones), got {len(lists)}")
    batch, heads = q.shape[0], q.shape[2]
    rows = (q.shape[1] + block_q - 1) // block_q
    cols = (k.shape[1] + block_kv - 1) // block_kv
    named = {}
    for name, t in zip(_BLOCK_LISTS, lists):
        count = name.endswith("num_blocks")
        first, second = (rows, cols) if name[0] != "q" and not name.startswith("full_q") else (cols, rows)
        want = (first,) if count else (first, second)
        if t.dtype != torch.int32 or t.dim() != 2 + len(want) or tuple(t.shape[2:]) != want or \
                t.shape[0] not in (1, batch) or t.shape[1] not in (1, heads):
            raise _capi.KilnError(f"{name} must be int32 [B or 1, H or 1, {', '.join(map(str, want))}] for q "
                                  f"{list(q.shape)}, k {list(k.shape)} and blocks ({block_q}, {block_kv}); got "
                                  f"{t.dtype} {list(t.shape)}")
        # (Contiguous in the last dimension, as the runtime requires.)
        named[name] = (t if t.stride(-1) == 1 else t.contiguous()).expand(batch, heads, *want)
    return named


@torch.library.custom_op("kiln::block_sparse_attention", mutates_args=())
def block_sparse_attention_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, lists: List[torch.Tensor],
                              captures: List[torch.Tensor], variant: str, name: str, block_q: int, block_kv: int,
                              dropout_p: float, dropout_rng: List[torch.Tensor]) -> Tuple[torch.Tensor, torch.Tensor]:
    named = _block_mask_tensors(q, k, lists, block_q, block_kv)
    kv_lists = {n: named[n] for n in _BLOCK_LISTS[:4]}
    rng = _dropout_tensors(dropout_p, dropout_rng)
    _check_devices([q, k, v, *named.values(), *captures, *rng.values()])
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    out = q.new_empty(q.shape[:-1] + v.shape[-1:])
    lse = torch.empty(_lse_shape(q, False), device=q.device, dtype=torch.float32)
    _run("forward", q, v, {"q": q, "k": k, "v": v, "out": out, "lse": lse, **kv_lists, **rng},
         [c.contiguous() for c in captures], variant, name, dropout_p=dropout_p, block_sparse=(block_q, block_kv))
    return out, lse


@block_sparse_attention_op.register_fake
def _(q, k, v, lists, captures, variant, name, block_q, block_kv, dropout_p, dropout_rng):
    _check_fake_devices([q, k, v, *lists, *captures, *dropout_rng])
    return q.new_empty(q.shape[:-1] + v.shape[-1:]), q.new_empty(_lse_shape(q, False), dtype=torch.float32)


@torch.library.custom_op("kiln::block_sparse_attention_backward", mutates_args=())
def block_sparse_attention_backward_op(dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                                       out: torch.Tensor, lse: torch.Tensor, lists: List[torch.Tensor],
                                       captures: List[torch.Tensor], variant: str, name: str, block_q: int,
                                       block_kv: int, dropout_p: float, dropout_rng: List[torch.Tensor]
                                       ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    if len(lists) != 8:
        raise _capi.KilnError("the block-sparse backward needs the transposed lists (q_num_blocks, q_indices, "
                              "full_q_num_blocks, full_q_indices)")
    named = _block_mask_tensors(q, k, lists, block_q, block_kv)
    rng = _dropout_tensors(dropout_p, dropout_rng)
    _check_devices([dout, q, k, v, out, lse, *named.values(), *captures, *rng.values()])
    q, k, v, out, dout, lse = (t.contiguous() for t in (q, k, v, out, dout, lse))
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    _run("backward", q, v, {"q": q, "k": k, "v": v, "out": out, "dout": dout, "lse": lse, "dq": dq, "dk": dk,
                            "dv": dv, **named, **rng}, [c.contiguous() for c in captures], variant, name,
         dropout_p=dropout_p, block_sparse=(block_q, block_kv))
    return dq, dk, dv


@block_sparse_attention_backward_op.register_fake
def _(dout, q, k, v, out, lse, lists, captures, variant, name, block_q, block_kv, dropout_p, dropout_rng):
    _check_fake_devices([dout, q, k, v, out, lse, *lists, *captures, *dropout_rng])
    return tuple(torch.empty(t.shape, dtype=t.dtype, device=t.device) for t in (q, k, v))


@torch.library.custom_op("kiln::block_sparse_attention_backward_captures", mutates_args=())
def block_sparse_attention_backward_captures_op(dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                                                v: torch.Tensor, out: torch.Tensor, lse: torch.Tensor,
                                                lists: List[torch.Tensor], captures: List[torch.Tensor],
                                                variant: str, name: str, block_q: int, block_kv: int,
                                                dropout_p: float, dropout_rng: List[torch.Tensor],
                                                deterministic: bool = False
                                                ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, List[torch.Tensor]]:
    """block_sparse_attention_backward and the captures' gradients, one per
    capture, as attention_backward_captures."""
    named = _block_mask_tensors(q, k, lists, block_q, block_kv)
    rng = _dropout_tensors(dropout_p, dropout_rng)
    _check_devices([dout, q, k, v, out, lse, *named.values(), *captures, *rng.values()])
    q, k, v, out, dout, lse = (t.contiguous() for t in (q, k, v, out, dout, lse))
    captures = [c.contiguous() for c in captures]
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    blocks = (block_q, block_kv)
    grads, grad_names = _capture_gradient_tensors(q, v, captures, variant, name, dropout_p, block_sparse=blocks)
    _run("backward", q, v, {"q": q, "k": k, "v": v, "out": out, "dout": dout, "lse": lse, "dq": dq, "dk": dk,
                            "dv": dv, **named, **rng, **grad_names}, captures, variant, name, dropout_p=dropout_p,
         capture_gradients=_capture_gradients_mode(deterministic), block_sparse=blocks)
    return dq, dk, dv, grads


@block_sparse_attention_backward_captures_op.register_fake
def _(dout, q, k, v, out, lse, lists, captures, variant, name, block_q, block_kv, dropout_p, dropout_rng,
      deterministic=False):
    _check_fake_devices([dout, q, k, v, out, lse, *lists, *captures, *dropout_rng])
    return (*(torch.empty(t.shape, dtype=t.dtype, device=t.device) for t in (q, k, v)),
            _capture_gradients_fake(q, v, captures, variant, name, dropout_p, block_sparse=(block_q, block_kv)))


def _block_sparse_setup(ctx, inputs, output):
    q, k, v, lists, captures, variant, name, block_q, block_kv, dropout_p, dropout_rng = inputs
    ctx.save_for_backward(q, k, v, *output, *lists, *dropout_rng, *captures)
    ctx.variant, ctx.name, ctx.blocks, ctx.dropout_p = variant, name, (block_q, block_kv), dropout_p
    ctx.num_lists, ctx.num_rngs = len(lists), len(dropout_rng)
    ctx.capture_grads = any(c.requires_grad and c.is_floating_point() for c in captures)
    ctx.mark_non_differentiable(output[1])


def _block_sparse_backward(ctx, dout, dlse):
    q, k, v, out, lse, *rest = ctx.saved_tensors
    lists, rest = rest[:ctx.num_lists], rest[ctx.num_lists:]
    rngs, captures = rest[:ctx.num_rngs], rest[ctx.num_rngs:]
    capture_grads = [None] * len(captures)
    if ctx.capture_grads:
        dq, dk, dv, grads = block_sparse_attention_backward_captures_op(
            dout, q, k, v, out, lse, lists, captures, ctx.variant, ctx.name, *ctx.blocks, ctx.dropout_p, rngs,
            torch.are_deterministic_algorithms_enabled())
        capture_grads = _capture_grads_of(captures, grads)
    else:
        dq, dk, dv = block_sparse_attention_backward_op(dout, q, k, v, out, lse, lists, captures, ctx.variant,
                                                        ctx.name, *ctx.blocks, ctx.dropout_p, rngs)
    return (dq, dk, dv, [None] * ctx.num_lists, capture_grads, None, None, None, None, None,
            [None] * ctx.num_rngs)


block_sparse_attention_op.register_autograd(_block_sparse_backward, setup_context=_block_sparse_setup)


def build_block_mask(q, k, captures, variant, name, block_q, block_kv):
    """The eight lists of the variant's own mask (kv_num_blocks, kv_indices,
    full_kv_*, then the transposed q_ ones), built by the generated program
    on q's device: q [B, Lq, H, D], k [B, Lk, H / G, D] (read for their
    shapes only); [B, 1, ...] when the mask does not read the head."""
    _check_devices([q, k, *captures])
    if q.dim() != 4 or k.dim() != 4:
        raise _capi.KilnError(f"q and k must be [B, L, H, D], got {list(q.shape)} and {list(k.shape)}")
    batch, heads = q.shape[0], q.shape[2]
    # A mask that does not read the head is built once per batch: its plan's
    # lists are [batch, 1, ...] (they broadcast in block_sparse_attention).
    plan = _plan(q, _key(q, q, variant, name, 0, 0.0, False, False, (block_q, block_kv), True), "forward")
    if next(t for t in plan["tensors"] if t["name"] == "kv_num_blocks")["shape"][1] == 1:
        heads = 1
    rows, cols = -(-q.shape[1] // block_q), -(-k.shape[1] // block_kv)
    shapes = [(rows,), (rows, cols), (rows,), (rows, cols), (cols,), (cols, rows), (cols,), (cols, rows)]
    lists = [torch.empty(batch, heads, *shape, dtype=torch.int32, device=q.device) for shape in shapes]
    _run("forward", q, q, {"q": q, "k": k, **dict(zip(_BLOCK_LISTS, lists))}, [c.contiguous() for c in captures],
         variant, name, block_sparse=(block_q, block_kv), build_block_mask=True)
    return lists
