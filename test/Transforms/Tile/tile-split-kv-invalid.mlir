// RUN: kiln-opt %s -tile-split-kv -split-input-file -verify-diagnostics
// RUN: not kiln-opt %s -tile-split-kv="max-splits=0" -split-input-file 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: tile-split-kv: max-splits, min-blocks and combine-rows must be positive, ctas-per-sm, combine-splits and combine-rows-steps not negative
// RUN: not kiln-opt %s -tile-split-kv="combine-rows-steps=-1" -split-input-file 2>&1 | FileCheck %s --check-prefix=OPTION

// Forward kernels the pass cannot split are refused with the reason.

// expected-error @+1 {{tile-split-kv: forward kernel 'no_outputs' needs 'tile.variant', tensors 'out' and 'lse', 'tile.block_m', 'tile.block_n' and a grid whose z axis is "batch"}}
func.func @no_outputs() attributes {tile.kernel, tile.variant = "v", tile.grid = [1, "heads", "batch"], tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  return
}

// -----

// expected-error @+1 {{tile-split-kv: forward kernel 'no_loop' has no KV loop ('tile.kv_loop') or stores no output}}
func.func @no_loop(%o: memref<?x?x?x64xbf16> {tile.tensor = "out", tile.shape = ["batch", "seq_q", "heads", 64]},
                   %l: memref<?x?x?xf32> {tile.tensor = "lse", tile.shape = ["batch", "heads", "seq_q"]})
    attributes {tile.kernel, tile.variant = "v", tile.grid = [1, "heads", "batch"], tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  return
}

// -----

func.func @nested_store(%o: memref<?x?x?x64xbf16> {tile.tensor = "out", tile.shape = ["batch", "seq_q", "heads", 64]},
                        %l: memref<?x?x?xf32> {tile.tensor = "lse", tile.shape = ["batch", "heads", "seq_q"]},
                        %c: i1)
    attributes {tile.kernel, tile.variant = "v", tile.grid = [1, "heads", "batch"], tile.block_m = 64 : i64, tile.block_n = 64 : i64} {
  %b = tile.program_id 2
  %h = tile.program_id 1
  %c0 = arith.constant 0 : index
  %lv = tile.view %l[%b, %h] keep [2] : memref<?x?x?xf32> -> !tile.desc<?xf32>
  %z = arith.constant 0.0 : f32
  %t = tile.splat %z : f32 -> tensor<64xf32>
  scf.if %c {
    // expected-error @+1 {{tile-split-kv: the store of an output must be in the kernel's entry block}}
    tile.store %t, %lv[%c0] : tensor<64xf32>, !tile.desc<?xf32>
  }
  return
}
