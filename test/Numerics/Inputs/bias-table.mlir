// Input of capture-gradients.test: a learnable relative-position bias table
// (T5-style buckets: |q - kv| clamped to 31, one row per head) next to a
// learnable per-head temperature, both read by the score_mod, so the
// backward's gradients of captured tensors meet a gather (per-element
// indices), a uniform read, and a product of two captured values.
attn.attention @bias_table {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                            causal = #attn.causal<bottom_right>,
                            captures = [#attn.capture<"bias", memref<?x?xf32>, ["heads", 32]>,
                                        #attn.capture<"temperature", memref<?xf32>, ["heads"]>]}
  score_mod(%score: f32, %b: index, %h: index, %q: index, %kv: index,
            %bias: memref<?x?xf32>, %temperature: memref<?xf32>) {
    %dist = arith.subi %q, %kv : index
    %zero = arith.constant 0 : index
    %neg = arith.subi %zero, %dist : index
    %abs = arith.maxsi %dist, %neg : index
    %last = arith.constant 31 : index
    %bucket = arith.minsi %abs, %last : index
    %t = memref.load %temperature[%h] : memref<?xf32>
    %scaled = arith.mulf %score, %t : f32
    %bias_v = memref.load %bias[%h, %bucket] : memref<?x?xf32>
    %r = arith.addf %scaled, %bias_v : f32
    attn.yield %r : f32
  }
