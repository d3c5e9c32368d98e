// A variant whose text declares a paged KV cache (page_size), run by
// run-errors.test without --page-size.
attn.attention @paged_plain {qk_head_dim = 64, v_head_dim = 64, element_type = bf16, page_size = 16}
