// Decoding with grouped-query attention: new query tokens appended to a KV
// cache see every cached key and each other causally, so the diagonal sits at
// the bottom-right corner (with one query token: the whole cache). 4 and 8
// query heads per KV head (Llama 3 8B and 70B); pick one with --variant.
// tile-split-kv splits the cache across CTAs when batch x heads cannot fill
// the GPU.
attn.attention @gqa4_decode {qk_head_dim = 128, v_head_dim = 128, element_type = bf16,
                             gqa_group = 4, causal = #attn.causal<bottom_right>}

attn.attention @gqa8_decode {qk_head_dim = 128, v_head_dim = 128, element_type = bf16,
                             gqa_group = 8, causal = #attn.causal<bottom_right>}
