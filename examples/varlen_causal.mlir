// A packed training batch (FlashAttention's varlen layout): sequences of
// different lengths one after another in Q, K, V [T, H, D], each causal on
// its own (top-left: query i of a sequence sees its keys 0..i), no padding.
// cu_seqlens_q / cu_seqlens_kv say where each sequence starts; run it with
// `kiln run examples/varlen_causal.mlir --seqlens 700,33,1200`, or from
// PyTorch with kiln.varlen_attention.
attn.attention @varlen_causal {qk_head_dim = 128, v_head_dim = 128,
                               element_type = bf16,
                               causal = #attn.causal<top_left>, varlen}
