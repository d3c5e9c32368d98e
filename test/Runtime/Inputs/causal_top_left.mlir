// Causal attention aligned to the top-left corner (query i sees keys j <= i).
attn.attention @causal_top_left {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                                 causal = #attn.causal<top_left>}
