// Plain (full, non-causal) attention: softmax(Q K^T / sqrt(d)) V.
attn.attention @plain {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
