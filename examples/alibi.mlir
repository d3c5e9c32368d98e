// ALiBi (Press et al.): score + slope[h] * (kv - q), the per-head slopes
// read from a captured tensor of shape [heads].
attn.attention @alibi {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                       causal = #attn.causal<top_left>,
                       captures = [#attn.capture<"slopes", memref<?xf32>, ["heads"]>]}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index,
            %slopes: memref<?xf32>) {
    %slope = memref.load %slopes[%h] : memref<?xf32>
    %dist = arith.subi %kv, %q : index
    %dist_i = arith.index_cast %dist : index to i64
    %dist_f = arith.sitofp %dist_i : i64 to f32
    %bias = arith.mulf %slope, %dist_f : f32
    %biased = arith.addf %score, %bias : f32
    attn.yield %biased : f32
  }
