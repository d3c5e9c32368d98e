// Causal attention, the diagonal aligned to the bottom-right corner (query i
// sees keys j <= i + Lk - Lq), as FlashAttention >= 2.1 and KV-cache decoding.
attn.attention @causal {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                        causal = #attn.causal<bottom_right>}
