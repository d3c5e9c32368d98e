attn.attention @first {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
attn.attention @second {qk_head_dim = 32, v_head_dim = 32, element_type = f16}
