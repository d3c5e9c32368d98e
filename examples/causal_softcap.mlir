// Causal attention with logit soft-capping: a score_mod composed with a
// causal mask, both from the DSL alone.
attn.attention @causal_softcap {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                                causal = #attn.causal<top_left>}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index) {
    %cap = arith.constant 20.0 : f32
    %x = arith.divf %score, %cap : f32
    %t = math.tanh %x : f32
    %capped = arith.mulf %t, %cap : f32
    attn.yield %capped : f32
  }
