// Logit soft-capping (Gemma 2, Grok): score = cap * tanh(score / cap).
attn.attention @softcap {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index) {
    %cap = arith.constant 20.0 : f32
    %x = arith.divf %score, %cap : f32
    %t = math.tanh %x : f32
    %capped = arith.mulf %t, %cap : f32
    attn.yield %capped : f32
  }
