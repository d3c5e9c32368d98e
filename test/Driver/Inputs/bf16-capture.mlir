// A bf16 capture: the dialect allows it, the driver cannot fill it.
attn.attention @bf16_capture {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                              captures = [#attn.capture<"x", memref<?xbf16>, ["heads"]>]}
  score_mod(%s: f32, %b: index, %h: index, %q: index, %kv: index, %x: memref<?xbf16>) {
    %v = memref.load %x[%h] : memref<?xbf16>
    %f = arith.extf %v : bf16 to f32
    %r = arith.mulf %s, %f : f32
    attn.yield %r : f32
  }
