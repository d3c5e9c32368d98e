// Causal sliding-window attention (Mistral): query q sees keys
// q - 128 <= kv <= q. Written as a mask_mod; attn-infer-mask-bounds proves it
// is a band, so only KV blocks inside the window are visited.
attn.attention @sliding_window {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
  mask_mod(%b: index, %h: index, %q: index, %kv: index) {
    %window = arith.constant 128 : index
    %dist = arith.subi %q, %kv : index
    %causal = arith.cmpi sle, %kv, %q : index
    %near = arith.cmpi sle, %dist, %window : index
    %keep = arith.andi %causal, %near : i1
    attn.yield %keep : i1
  }
