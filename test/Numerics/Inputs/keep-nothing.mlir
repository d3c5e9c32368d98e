// Input of fully-masked-rows.test: a mask that keeps no key.
attn.attention @nothing {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %false = arith.constant false
    attn.yield %false : i1
  }
