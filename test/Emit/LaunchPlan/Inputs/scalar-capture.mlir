// A variant whose mask reads a rank-0 capture: a sliding window whose width
// comes at run time.
attn.attention @runtime_window {qk_head_dim = 32, v_head_dim = 32, element_type = bf16,
                                causal = #attn.causal<top_left>,
                                captures = [#attn.capture<"window", memref<i64>, []>]}
  mask_mod(%b: index, %h: index, %q: index, %kv: index, %window: memref<i64>) {
    %w = memref.load %window[] : memref<i64>
    %wi = arith.index_cast %w : i64 to index
    %d = arith.subi %q, %kv : index
    %in = arith.cmpi sle, %d, %wi : index
    attn.yield %in : i1
  }
