// Input of gqa-pack.test: GQA 4:1 decoding whose mods depend on the query
// head — an ALiBi slope per query head (a capture indexed by h) and a mask
// that hides every third key from odd heads — so a packed decode program
// must give each row its own head.
attn.attention @gqa_head_mods {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                               gqa_group = 4, causal = #attn.causal<bottom_right>,
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
  mask_mod(%b: index, %h: index, %q: index, %kv: index, %slopes: memref<?xf32>) {
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c0 = arith.constant 0 : index
    %parity = arith.remui %h, %c2 : index
    %even = arith.cmpi eq, %parity, %c0 : index
    %third = arith.remui %kv, %c3 : index
    %kept = arith.cmpi ne, %third, %c0 : index
    %keep = arith.ori %even, %kept : i1
    attn.yield %keep : i1
  }
