// Grouped-query attention (Llama 2/3, Mistral): 4 query heads share each KV
// head; causal, with the diagonal at the top-left corner.
attn.attention @gqa_causal {qk_head_dim = 128, v_head_dim = 128, element_type = bf16,
                            gqa_group = 4, causal = #attn.causal<top_left>}
