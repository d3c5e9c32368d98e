attn.attention @broken {qk_head_dim = 64, v_head_dim = 64, element_type = f32}
