// Document masking for packed sequences: a query sees only keys of its own
// document (ids captured per position), causally. The mask is data
// dependent, so only the causal part bounds the KV loop.
attn.attention @document_mask {qk_head_dim = 64, v_head_dim = 64, element_type = bf16,
                               causal = #attn.causal<top_left>,
                               captures = [#attn.capture<"doc_q", memref<?xi32>, ["seq_q"]>,
                                           #attn.capture<"doc_kv", memref<?xi32>, ["seq_kv"]>]}
  mask_mod(%b: index, %h: index, %q: index, %kv: index,
           %doc_q: memref<?xi32>, %doc_kv: memref<?xi32>) {
    %dq = memref.load %doc_q[%q] : memref<?xi32>
    %dk = memref.load %doc_kv[%kv] : memref<?xi32>
    %same = arith.cmpi eq, %dq, %dk : i32
    attn.yield %same : i1
  }
