// Block-sparse document attention (FlexAttention's BlockMask, the seeds'
// Algorithm 5): documents packed in one sequence, each query seeing the keys
// of its own document up to itself. The run passes, per block of 128 queries,
// the blocks of 128 keys to visit, partial (the mask_mod evaluated) or full
// (not), and their transposes for the backward: `kiln run` makes them from
// this mask, Python takes a BlockMask from torch's create_block_mask. Blocks
// across documents are never visited.
attn.attention @block_sparse_document {qk_head_dim = 128, v_head_dim = 128, element_type = bf16,
                                       causal = #attn.causal<top_left>,
                                       block_sparse = array<i64: 128, 128>,
                                       captures = [#attn.capture<"doc_q", memref<?xi32>, ["seq_q"]>,
                                                   #attn.capture<"doc_kv", memref<?xi32>, ["seq_kv"]>]}
  mask_mod(%b: index, %h: index, %q: index, %kv: index,
           %doc_q: memref<?xi32>, %doc_kv: memref<?xi32>) {
    %dq = memref.load %doc_q[%q] : memref<?xi32>
    %dk = memref.load %doc_kv[%kv] : memref<?xi32>
    %same = arith.cmpi eq, %dq, %dk : i32
    attn.yield %same : i1
  }
