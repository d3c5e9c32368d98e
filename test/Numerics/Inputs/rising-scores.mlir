// Scores that rise along the keys by `rate` per key (0.1: 6.4 per 64-key
// block, 9.2 in base 2): a row's maximum grows in every KV step, by more
// than tile-lazy-rescale's threshold of 2^8, so the reference moves in
// every step (with --seqlen-kv large enough also in the masked ones).
attn.attention @rising {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                        causal = #attn.causal<top_left>}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index) {
    %rate = arith.constant 0.1 : f32
    %kv_i = arith.index_cast %kv : index to i64
    %kv_f = arith.sitofp %kv_i : i64 to f32
    %bias = arith.mulf %rate, %kv_f : f32
    %s = arith.addf %score, %bias : f32
    attn.yield %s : f32
  }
