// Scores that rise along the keys by 0.05 per key (3.2 per 64-key block,
// 4.6 in base 2): tile-lazy-rescale's reference (threshold 2^8) moves in
// about every second KV step and lags the maximum in the others, where the
// exponentials exceed 1 (up to 2^8).
attn.attention @slow_rising {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index) {
    %rate = arith.constant 0.05 : f32
    %kv_i = arith.index_cast %kv : index to i64
    %kv_f = arith.sitofp %kv_i : i64 to f32
    %bias = arith.mulf %rate, %kv_f : f32
    %s = arith.addf %score, %bias : f32
    attn.yield %s : f32
  }
