// Speculative decoding, verify step: a tree of up to 64 draft tokens per
// sequence is checked against the KV cache in one call. The drafts' own K and
// V are appended to the cache, after `cache_len[b]` committed entries (per
// sequence: a batch of ragged caches shares one launch). A draft sees every
// committed entry and, among the drafts, its ancestors in the tree and
// itself: bit j of `ancestors[b, q]` (two 32-bit words, j = 0..63) says
// whether draft q sees draft j — the tree kept as a bitmask, as the seeds'
// tree-attention kernels do. Bits of drafts that do not exist must be 0; keys
// past a sequence's drafts are then unseen. GQA 4:1 as in Llama 3 8B. Every
// draft's ancestors precede it, so the mask lies inside bottom-right causal
// (cache_len[b] + Lq <= Lk), which bounds the KV loop.
attn.attention @tree_verify {qk_head_dim = 128, v_head_dim = 128, element_type = bf16,
                             gqa_group = 4, causal = #attn.causal<bottom_right>,
                             captures = [#attn.capture<"ancestors", memref<?x?x2xi32>, ["batch", "seq_q", 2]>,
                                         #attn.capture<"cache_len", memref<?xi32>, ["batch"]>]}
  mask_mod(%b: index, %h: index, %q: index, %kv: index,
           %ancestors: memref<?x?x2xi32>, %cache_len: memref<?xi32>) {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %c63 = arith.constant 63 : index
    %c64 = arith.constant 64 : index
    %one = arith.constant 1 : i32
    %zero = arith.constant 0 : i32
    %len32 = memref.load %cache_len[%b] : memref<?xi32>
    %len = arith.index_cast %len32 : i32 to index
    // The key's position among the drafts (negative: a committed entry).
    %j = arith.subi %kv, %len : index
    %committed = arith.cmpi slt, %j, %c0 : index
    %isDraft = arith.cmpi slt, %j, %c64 : index
    %jLow = arith.maxsi %j, %c0 : index
    %jIn = arith.minsi %jLow, %c63 : index
    %word = arith.divui %jIn, %c32 : index
    %bit = arith.remui %jIn, %c32 : index
    %bits = memref.load %ancestors[%b, %q, %word] : memref<?x?x2xi32>
    %shift = arith.index_cast %bit : index to i32
    %shifted = arith.shrui %bits, %shift : i32
    %low = arith.andi %shifted, %one : i32
    %set = arith.cmpi ne, %low, %zero : i32
    %ancestor = arith.andi %isDraft, %set : i1
    %visible = arith.ori %committed, %ancestor : i1
    attn.yield %visible : i1
  }
