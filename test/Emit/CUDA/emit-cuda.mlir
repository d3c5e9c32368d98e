// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-fwd-pipeline="wave-chunks=false static-max=false arch=sm_80" | kiln-translate --emit-cuda | FileCheck %s
// RUN: kiln-opt %examples/alibi.mlir -kiln-cuda-fwd-pipeline="wave-chunks=false arch=sm_80 overlap-copies=false" | kiln-translate --emit-cuda | FileCheck %s --check-prefix=ALIBI
// RUN: kiln-opt %examples/plain.mlir -kiln-fwd-tile-pipeline | not kiln-translate --emit-cuda 2>&1 | FileCheck %s --check-prefix=UNSCHEDULED
// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-fwd-pipeline="wave-chunks=false arch=sm_80 fast-math=false" | kiln-translate --emit-cuda | FileCheck %s --check-prefix=PRECISE
// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-fwd-pipeline="wave-chunks=false warp-specialize=false" | kiln-translate --emit-cuda | FileCheck %s --check-prefix=WGMMA
// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-fwd-pipeline="wave-chunks=false persistent=false" | kiln-translate --emit-cuda | FileCheck %s --check-prefix=WS
// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-fwd-pipeline="wave-chunks=false persistent=false tma-stores=false" | kiln-translate --emit-cuda | FileCheck %s --check-prefix=NOTMA
// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-fwd-pipeline="wave-chunks=false double-tile-buffers=false" | kiln-translate --emit-cuda | FileCheck %s --check-prefix=WSP
// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-fwd-pipeline="wave-chunks=false" | kiln-translate --emit-cuda | FileCheck %s --check-prefix=WSP2
// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-fwd-pipeline="wave-chunks=false pipeline-products=true warp-specialize=false" | kiln-translate --emit-cuda | FileCheck %s --check-prefix=PIPELINED
// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-fwd-pipeline="wave-chunks=false pipeline-products=true" | kiln-translate --emit-cuda | FileCheck %s --check-prefix=WSPIPE
// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-fwd-pipeline="wave-chunks=false pack-lhs-first=false" | kiln-translate --emit-cuda | FileCheck %s --check-prefix=PERSTEP
// RUN: kiln-opt %examples/causal_softcap.mlir -kiln-cuda-fwd-pipeline="wave-chunks=false pipeline-products=true order-before-waits=true" | kiln-translate --emit-cuda | FileCheck %s --check-prefix=ORDERED
// (wave-chunks=false: the program ids as the grid numbers them; the order
// tgpu-longest-first gives causal kernels is tested in
// test/Transforms/TileGPU/tgpu-longest-first.mlir and the pipeline tests.)

// sm_90a (tgpu-warpgroup-mma, tgpu-double-buffer): two warpgroups,
// swizzled tiles at 1024-byte aligned offsets (K and V twice, Q last),
// cp.async into them, a proxy fence after each wait, the step's buffers
// picked by parity, and both products on wgmma (K read K-major, V MN-major).
// WGMMA: extern "C" __global__ void __launch_bounds__(384)
// WGMMA: extern __shared__ __align__(1024) unsigned char kiln_smem[];
// WGMMA: const kiln::SwizzledTile<kiln::bf16, 128, 64, 128> {{v[0-9]+}}{reinterpret_cast<kiln::bf16 *>(kiln_smem + 49152)};
// WGMMA-NEXT: // tgpu.shared_alloc
// WGMMA-NEXT: const kiln::SwizzledTile<kiln::bf16, 192, 64, 128> [[Q:v[0-9]+]]{reinterpret_cast<kiln::bf16 *>(kiln_smem + 65536)};
// WGMMA: kiln::copy_async<384>([[Q]],
// WGMMA-NEXT: // tgpu.async_wait
// WGMMA-NEXT: kiln::cp_async_wait<0>();
// WGMMA-NEXT: // tgpu.fence_async_shared
// WGMMA-NEXT: kiln::fence_async_shared();
// A ring's stage is chosen by its offset in the dynamic shared memory (so
// that the compiler keeps the shared address space).
// WGMMA: const kiln::SwizzledTile<kiln::bf16, 128, 64, 128> [[V:v[0-9]+]] = kiln::SwizzledTile<kiln::bf16, 128, 64, 128>{reinterpret_cast<kiln::bf16 *>(kiln_smem + ([[ODD:v[0-9]+]] ? {{[0-9]+}} : {{[0-9]+}}))};
// WGMMA: const kiln::SwizzledTile<kiln::bf16, 128, 64, 128> {{v[0-9]+}} = kiln::SwizzledTile<kiln::bf16, 128, 64, 128>{reinterpret_cast<kiln::bf16 *>(kiln_smem + ([[ODD]] ? {{[0-9]+}} : {{[0-9]+}}))};
// WGMMA: const kiln::SwizzledTile<kiln::bf16, 128, 64, 128> [[K:v[0-9]+]] = kiln::SwizzledTile<kiln::bf16, 128, 64, 128>{reinterpret_cast<kiln::bf16 *>(kiln_smem + ([[ODD]] ? {{[0-9]+}} : {{[0-9]+}}))};
// WGMMA: kiln::cp_async_wait<2>();
// Q K^T starts from zeros: the first wgmma step ignores the accumulator
// (scale-d 0), so no zero tile is copied in. The full steps come first.
// WGMMA: // tgpu.warpgroup_mma
// WGMMA-NEXT: kiln::Frag<float, 192, 128, 12> [[S:v[0-9]+]];
// WGMMA-NEXT: kiln::wgmma<true, true>([[S]], [[Q]], [[K]]);
// WGMMA: kiln::wgmma<false>({{v[0-9]+}}, {{v[0-9]+}}, [[V]]);
// The masked steps' key positions are computed while the product runs
// (tgpu-overlap-products), S waited for at its first use.
// WGMMA: // KV loop: trailing_partial
// WGMMA: kiln::wgmma_async<true, true>([[S2:v[0-9]+]], [[Q]], {{v[0-9]+}});
// WGMMA: kiln::wgmma_wait<0>([[S2]]);
// WGMMA-NOT: kiln::mma<

// tgpu-warp-specialize: 12 consumer warps and a producer warpgroup, one CTA
// per multiprocessor (the register cap setmaxnreg needs at entry); tensor
// maps in the parameter space; thread 0 initialises the ring's barriers;
// one if/else on the role, the producer's first warp issuing TMA loads (lane 0)
// (Q once, then K and V per step after waiting for the slot to be empty),
// the consumers waiting for Q and then for each step's K before Q K^T and
// releasing it after.
// Persistent CTAs (the default): the producer loops over its own tile and
// those it draws from the counter, publishing each tile's program ids with
// Q's copy; the consumers read them after Q's barrier and stop at x = -1,
// which the producer publishes with an arrival of its own.
// The default, two copies of Q used by turns: the producer waits for its
// tile's copy to be free, publishes the ids in that copy's words and loads
// Q into it, all at indices of the tile's slot (round mod 2).
// WSP2: kiln::setmaxnreg_dec<24>();
// WSP2: const bool [[SECOND:v[0-9]+]] = ([[SLOT:v[0-9]+]] == {{v[0-9]+}});
// WSP2-NEXT: // arith.select
// WSP2-NEXT: const kiln::SwizzledTile<kiln::bf16, 192, 64, 128> [[Q:v[0-9]+]] = kiln::SwizzledTile<kiln::bf16, 192, 64, 128>{reinterpret_cast<kiln::bf16 *>(kiln_smem + ([[SECOND]] ? [[Q1:[0-9]+]] : [[Q0:[0-9]+]]))};
// WSP2: const int [[FREE:v[0-9]+]] = ({{v[0-9]+}} + [[SLOT]]);
// WSP2-NEXT: // tgpu.mbarrier_wait
// WSP2-NEXT: kiln::mbarrier_wait([[BARS:v[0-9]+]] + [[FREE]], {{v[0-9]+}});
// WSP2: kiln::publish_tile([[BARS]] + {{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}});
// WSP2: const int [[FULL:v[0-9]+]] = ({{v[0-9]+}} + [[SLOT]]);
// WSP2-NEXT: // tgpu.tma_load
// WSP2-NEXT: if (kiln::lane_id() == 0) kiln::tma_load_tile([[Q]], {{v[0-9]+}}, [[BARS]] + [[FULL]],
// The consumers read the copy of their tile's slot.
// WSP2: kiln::setmaxnreg_inc<160>();
// WSP2: (kiln_smem + ({{v[0-9]+}} ? [[Q1]] : [[Q0]]))};

// WSP: extern "C" __global__ void __launch_bounds__(512, 1)
// WSP: kiln::Tensor<int, 1> [[TILES:v[0-9]+]],
// WSP-NEXT: const __grid_constant__ kiln::TensorMap {{v[0-9]+}}) {
// WSP: unsigned long long *const [[BARS:v[0-9]+]] = reinterpret_cast<unsigned long long *>(kiln_smem + {{[0-9]+}});
// WSP: const int [[FIRST:v[0-9]+]] = blockIdx.x;
// WSP: kiln::setmaxnreg_dec<24>();
// WSP: int [[T:v[0-9]+]] = [[FIRST]];
// WSP-NEXT: int [[PBASE:v[0-9]+]] = [[ZERO:v[0-9]+]];
// WSP-NEXT: int [[PROUND:v[0-9]+]] = [[ZERO]];
// WSP: while (true) {
// WSP: break;
// WSP: kiln::publish_tile([[BARS]] + [[SLOT:v[0-9]+]], {{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}});
// WSP-NEXT: // tgpu.tma_load
// WSP-NEXT: if (kiln::lane_id() == 0) kiln::tma_load_tile({{v[0-9]+}}, {{v[0-9]+}}, [[BARS]] + [[QFULL:v[0-9]+]],
// The producer's loop carries (tile, ring position, round) through
// temporaries.
// WSP: const int [[NEXT:v[0-9]+]] = kiln::next_tile([[TILES]].ptr, {{v[0-9]+}}, {{v[0-9]+}});
// WSP: auto carried0 = [[NEXT]];
// WSP-NEXT: auto carried1 = {{v[0-9]+}};
// WSP-NEXT: auto carried2 = {{v[0-9]+}};
// WSP-NEXT: [[T]] = carried0;
// WSP-NEXT: [[PBASE]] = carried1;
// WSP-NEXT: [[PROUND]] = carried2;
// WSP: kiln::publish_tile([[BARS]] + [[SLOT]], {{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}, [[BARS]] + [[QFULL]]);
// WSP: kiln::setmaxnreg_inc<160>();
// WSP: while (true) {
// WSP: kiln::mbarrier_wait([[BARS]] + [[QFULL]], {{v[0-9]+}});
// WSP-NEXT: // tgpu.read_tile
// WSP-NEXT: const int [[X:v[0-9]+]] = kiln::read_tile([[BARS]] + [[SLOT]] + 0);
// WSP: const int {{v[0-9]+}} = kiln::read_tile([[BARS]] + [[SLOT]] + 2);
// WSP: const bool [[MORE:v[0-9]+]] = ([[X]] >= {{v[0-9]+}});
// WSP-NEXT: if (![[MORE]]) {
// WSP-NEXT: [[RX:v[0-9]+]] = [[X]];
// WSP: break;
// WSP: kiln::wgmma_async<true, true>(

// WS: // Warp-specialized: 4 producer warps after them.
// WS-NEXT: extern "C" __global__ void __launch_bounds__(512, 1)
// WS: const __grid_constant__ kiln::TensorMap [[QMAP:v[0-9]+]],
// WS-NEXT: const __grid_constant__ kiln::TensorMap [[KMAP:v[0-9]+]],
// WS-NEXT: const __grid_constant__ kiln::TensorMap [[VMAP:v[0-9]+]],
// WS-NEXT: const __grid_constant__ kiln::TensorMap [[OMAP:v[0-9]+]]) {
// WS: unsigned long long *const [[BARS:v[0-9]+]] = reinterpret_cast<unsigned long long *>(kiln_smem + {{[0-9]+}});
// WS: if (threadIdx.x == 0) kiln::mbarrier_init([[BARS]] + {{v[0-9]+}}, 384);
// WS: __syncthreads();
// WS: if (threadIdx.x >= 384) {
// WS-NEXT: kiln::setmaxnreg_dec<24>();
// WS-NEXT: if (threadIdx.x < 416) {
// WS: if (kiln::lane_id() == 0) kiln::tma_load_tile({{v[0-9]+}}, [[QMAP]], [[BARS]] + [[QBAR:v[0-9]+]],
// WS: // KV loop: full
// WS: kiln::mbarrier_wait([[BARS]] + {{v[0-9]+}}, {{v[0-9]+}});
// WS: if (kiln::lane_id() == 0) kiln::tma_load_tile({{v[0-9]+}}, [[KMAP]], [[BARS]] +
// WS: kiln::mbarrier_wait([[BARS]] + {{v[0-9]+}}, {{v[0-9]+}});
// WS: if (kiln::lane_id() == 0) kiln::tma_load_tile({{v[0-9]+}}, [[VMAP]], [[BARS]] +
// WS: return;
// WS: kiln::setmaxnreg_inc<160>();
// WS-NEXT: // tgpu.mbarrier_wait
// WS-NEXT: kiln::mbarrier_wait([[BARS]] + [[QBAR]], {{v[0-9]+}});
// WS: // KV loop: full
// WS: kiln::mbarrier_wait([[BARS]] + [[KFULL:v[0-9]+]], {{v[0-9]+}});
// WS-NEXT: // tgpu.warpgroup_mma
// WS-NEXT: kiln::Frag<float, 192, 128, 12> [[S0:v[0-9]+]];
// WS-NEXT: kiln::wgmma<true, true>([[S0]],
// The masked steps' key positions are computed while Q K^T runs
// (tgpu-overlap-products); K's slot is released once it completed.
// WS: // KV loop: trailing_partial
// WS: kiln::mbarrier_wait([[BARS]] + {{v[0-9]+}}, [[PARITY:v[0-9]+]]);
// WS-NEXT: // tgpu.warpgroup_mma
// WS-NEXT: kiln::Frag<float, 192, 128, 12> [[S:v[0-9]+]];
// WS-NEXT: kiln::wgmma_async<true, true>([[S]],
// WS: kiln::wgmma_wait<0>([[S]]);
// WS-NEXT: kiln::Frag<float, 192, 128, 12> {{v[0-9]+}} = [[S]];
// WS-NEXT: // tgpu.mbarrier_arrive
// WS-NEXT: kiln::mbarrier_arrive([[BARS]] + {{v[0-9]+}});
// WS: kiln::mbarrier_wait([[BARS]] + {{v[0-9]+}}, [[PARITY]]);
// WS: kiln::wgmma<false>(
// WS-NEXT: // tgpu.mbarrier_arrive
// The output tile leaves by TMA (tgpu-tma-stores): each warp stages its rows
// and stores them through O's map; the consumers wait for the stores last.
// WS: kiln::tma_store([[OMAP]], {{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}});
// WS: kiln::bulk_wait();
// WS-NOT: copy_async
// WS-NOT: __syncthreads
// The short program (128-row blocks, short-rows; run where seq_kv <= 4096):
// two consumer warpgroups and the producer.
// WS: // Kernel causal_softcap_fwd_short: 8 warps, {{[0-9]+}} bytes of shared memory, one 128-row query block per CTA.
// WS-NEXT: // Warp-specialized: 4 producer warps after them.
// WS-NEXT: extern "C" __global__ void __launch_bounds__(384, 1)
// The decode program (64-row blocks, decode-rows): one consumer warpgroup and
// the producer, two CTAs per multiprocessor.
// WS: // Kernel causal_softcap_fwd_decode: 4 warps, {{[0-9]+}} bytes of shared memory, one 64-row query block per CTA.
// WS-NEXT: // Warp-specialized: 4 producer warps after them.
// WS-NEXT: extern "C" __global__ void __launch_bounds__(256, 2)

// tgpu-pipeline-products: Q K_j^T and then P_{j-1} V_{j-1} go out as
// groups (the latter only after the first step), the wait for Q K^T leaves
// one in flight, V's copy follows the wait for P V and a barrier, and the
// loop's last P V runs after it when the loop ran.
// PIPELINED: kiln::wgmma_async<true, true>([[S:v[0-9]+]],
// PIPELINED-NEXT: // tgpu.warpgroup_mma
// PIPELINED-NEXT: kiln::Frag<float, 192, 64, 12> [[O:v[0-9]+]] = {{v[0-9]+}};
// PIPELINED-NEXT: kiln::wgmma_async<false>([[O]], {{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}});
// PIPELINED-NEXT: // tgpu.warpgroup_wait
// PIPELINED-NEXT: kiln::wgmma_wait<1>([[S]]);
// PIPELINED: kiln::wgmma_wait<0>([[O]]);
// PIPELINED: __syncthreads();
// PIPELINED-NEXT: // tgpu.copy_async
// PIPELINED-NEXT: kiln::copy_async<384>(
// PIPELINED: kiln::wgmma<false>({{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}});

// tgpu-pipeline-products on the warp-specialized form: P V of the previous
// step waits for its V slot (ring wait in an if: none in a loop's first
// step), the softmax results are pinned before the wait for P V, the
// carried P stays live past it, and both slots are released only after
// it (an mbarrier arrive would make the compiler complete the products in
// flight); the loop's last P V follows the loop with its own wait.
// WSPIPE: kiln::wgmma_async<true, true>([[S:v[0-9]+]],
// WSPIPE-NEXT: // scf.if
// WSPIPE-NEXT: if ([[NOTFIRST:v[0-9]+]]) {
// WSPIPE-NEXT: // tgpu.mbarrier_wait
// WSPIPE-NEXT: kiln::mbarrier_wait(
// WSPIPE-NEXT: }
// WSPIPE: kiln::wgmma_async<false>([[O:v[0-9]+]], [[P:v[0-9]+]], {{v[0-9]+}}, [[NOTFIRST]]);
// WSPIPE: kiln::wgmma_wait<1>([[S]]);
// WSPIPE-NOT: mbarrier_arrive
// WSPIPE: kiln::pin_tile(
// WSPIPE: kiln::wgmma_wait<0>([[O]]);
// WSPIPE-NEXT: kiln::pin_tile([[P]]);
// WSPIPE: kiln::mbarrier_arrive(
// WSPIPE: if ([[NOTFIRST]]) {
// WSPIPE-NEXT: // tgpu.mbarrier_arrive
// WSPIPE-NEXT: kiln::mbarrier_arrive(
// WSPIPE: kiln::wgmma<false>({{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}});

// P is packed into wgmma's fragments by the primitive, before the products'
// fence (kiln::pack_a); the ablation (pack-lhs-first=false) marks the
// kernel and the emitter hands P over to be packed at each k16 step.
// WSP-NOT: packed_per_step
// PERSTEP: kiln::wgmma<false>({{v[0-9]+}}, kiln::packed_per_step({{v[0-9]+}}), {{v[0-9]+}});

// order-before-waits (opt-in): the softmax results computed under P V are
// kept before its wait in a form ptxas sees (kiln::settle_tile); the carried
// P after the wait stays an ordinary pin.
// ORDERED: kiln::wgmma_wait<1>([[S:v[0-9]+]]);
// ORDERED-NOT: kiln::pin_tile(
// ORDERED: kiln::settle_tile(
// ORDERED: kiln::wgmma_wait<0>([[O:v[0-9]+]]);
// ORDERED-NEXT: kiln::pin_tile(

// The kernel is named after the variant, includes only the device library,
// and every statement is preceded by the op it comes from.
// CHECK: #include "kiln/kiln.cuh"
// CHECK: // Kernel causal_softcap_fwd: 4 warps, {{[0-9]+}} bytes of shared memory
// CHECK: extern "C" __global__ void __launch_bounds__(128)
// CHECK-NEXT: causal_softcap_fwd(kiln::Tensor<kiln::bf16, 4> [[Q:v[0-9]+]],
// CHECK: kiln::Tensor<float, 3> [[LSE:v[0-9]+]],
// The split-KV arguments (tile-split-kv): the partial outputs and the split
// count, a 64-bit scalar; z is batch * kv_splits + split.
// CHECK-NEXT: kiln::Tensor<float, 4> [[OP:v[0-9]+]],
// CHECK-NEXT: kiln::Tensor<float, 3> [[LSEP:v[0-9]+]],
// CHECK-NEXT: long long [[SPLITS:v[0-9]+]]) {
// CHECK: extern __shared__ __align__(1024) unsigned char kiln_smem[];
// CHECK: // tgpu.shared_alloc loc(
// CHECK: const kiln::SmemTile<kiln::bf16, 64, 64, 72> [[QS:v[0-9]+]]{reinterpret_cast<kiln::bf16 *>(kiln_smem + 0)};
// CHECK: const int [[NS:v[0-9]+]] = static_cast<int>([[SPLITS]]);
// CHECK: const int [[Z:v[0-9]+]] = blockIdx.z;
// CHECK: const int [[BB:v[0-9]+]] = static_cast<int>(static_cast<unsigned>([[Z]]) / static_cast<unsigned>([[NS]]));
// CHECK: const int [[BH:v[0-9]+]] = blockIdx.y;
// A tensor's innermost stride is the literal 1 (the launch plan has the
// runtime check it), so the kernel's address arithmetic folds.
// CHECK: const kiln::Desc<kiln::bf16> [[QD:v[0-9]+]] = {[[Q]].ptr + static_cast<long long>([[BB]]) * [[Q]].stride[0] + static_cast<long long>([[BH]]) * [[Q]].stride[2], static_cast<int>([[Q]].size[1]), static_cast<int>([[Q]].size[3]), [[Q]].stride[1], 1, 0};
// CHECK: kiln::copy_async<128>([[QS]], [[QD]],
// CHECK: kiln::cp_async_wait<0>();
// CHECK: __syncthreads();
// The two KV loops of the causal split (no lower bound: the full blocks
// start at the first key, no leading partial loop). K for the first step is issued
// before the loop; each step issues V, waits for K only, and prefetches the
// next step's K once every warp is done with this one's.
// CHECK: kiln::copy_async<128>([[KS:v[0-9]+]], [[KD:v[0-9]+]], {{v[0-9]+}}, {{v[0-9]+}});
// CHECK-NOT: // KV loop: leading_partial
// CHECK: // KV loop: full
// CHECK-NEXT: for (int [[J:v[0-9]+]] = {{v[0-9]+}}; [[J]] < {{v[0-9]+}}; [[J]] += [[STEP:v[0-9]+]]) {
// CHECK: kiln::copy_async<128>([[VS:v[0-9]+]], {{v[0-9]+}}, [[J]],
// CHECK: kiln::cp_async_wait<1>();
// CHECK: kiln::mma<false, true>([[S:v[0-9]+]], [[QS]], [[KS]]);
// The score_mod, inlined elementwise over the thread's fragment.
// The mod's s / cap: a reciprocal and a multiply under fast math.
// CHECK: // arith.divf loc(
// CHECK-NEXT: kiln::Frag<float, 64, {{[0-9]+}}, 4> {{v[0-9]+}};
// CHECK-NEXT: #pragma unroll
// CHECK-NEXT: for (int e = 0; e < kiln::Frag<float, 64, {{[0-9]+}}, 4>::kSize; ++e) {{v[0-9]+}}.x[e] = __fdividef({{v[0-9]+}}.x[e], {{v[0-9]+}}.x[e]);
// CHECK: // math.tanh loc(
// The schedule is tgpu.fast_math by default: the mod's tanh runs on the
// SFU's tanh.approx; with fast-math=false, on the precise tanhf.
// CHECK: for (int e = 0; e < kiln::Frag<float, 64, {{[0-9]+}}, 4>::kSize; ++e) {{v[0-9]+}}.x[e] = kiln::tanh_fast({{v[0-9]+}}.x[e]);
// PRECISE: // math.tanh loc(
// PRECISE: for (int e = 0; e < kiln::Frag<float, 64, {{[0-9]+}}, 4>::kSize; ++e) {{v[0-9]+}}.x[e] = tanhf({{v[0-9]+}}.x[e]);
// PRECISE-NOT: tanh_fast
// PRECISE-NOT: __fdividef
// CHECK: kiln::reduce_rows<true>(
// CHECK: kiln::exp2_fast(
// CHECK: kiln::reduce_rows<false>(
// CHECK: kiln::to_bf16(
// CHECK: kiln::cp_async_wait<0>();
// CHECK: __syncthreads();
// CHECK: const int [[NEXT:v[0-9]+]] = ([[J]] + [[STEP]]);
// CHECK: kiln::copy_async<128>([[KS]], [[KD]], [[NEXT]],
// CHECK: kiln::mma<false, false>({{v[0-9]+}}, {{v[0-9]+}}, [[VS]]);
// The last prefetch is drained before the next loop reuses the buffer.
// CHECK: kiln::cp_async_wait<0>();
// CHECK: // KV loop: trailing_partial
// Epilogue: stores check the descriptor's bounds. Unsplit, O and LSE;
// split, the f32 output before rounding and the LSE, at row z of the
// partial arrays.
// CHECK: if ({{v[0-9]+}}) {
// CHECK: kiln::store(
// CHECK: kiln::store(
// CHECK: } else {
// CHECK: const kiln::Desc<float> [[OPD:v[0-9]+]] = {[[OP]].ptr + static_cast<long long>([[Z]]) * [[OP]].stride[0]
// CHECK: kiln::store([[OPD]],
// CHECK: const kiln::Desc<float> [[LSEPD:v[0-9]+]] = {[[LSEP]].ptr + static_cast<long long>([[Z]]) * [[LSEP]].stride[0]
// CHECK: kiln::store([[LSEPD]],
// CHECK: return;
// The combine kernel merges the splits in a loop over blocks of them, the
// partials read transposed (rows of the head dim, 16 per warp; columns of
// splits: one split per column slot), the LSE stored by the first row only.
// CHECK: // Kernel causal_softcap_fwd_combine: 4 warps, 0 bytes of shared memory
// CHECK: const kiln::Desc<float> [[OT:v[0-9]+]] = {{{.*}}.size[3]), static_cast<int>({{.*}}.size[0]), 1, {{.*}}.stride[0], 0};
// CHECK: for (int [[S:v[0-9]+]] = {{v[0-9]+}}; [[S]] < {{v[0-9]+}}; [[S]] += {{v[0-9]+}}) {
// CHECK: kiln::Frag<float, 64, 16, 4> [[O:v[0-9]+]];
// CHECK-NEXT: kiln::load([[O]], [[OT]],
// CHECK: kiln::ColFrag<float, 16, 4> [[X:v[0-9]+]];
// CHECK-NEXT: kiln::load([[X]],
// CHECK: kiln::broadcast_cols<kiln::Frag<float, 64, 16, 4>>([[X]])
// CHECK: kiln::reduce_rows<true>(
// CHECK: kiln::exp2_fast(
// CHECK: kiln::reduce_rows<false>(
// CHECK: }
// CHECK: kiln::store({{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}});
// CHECK: kiln::RowFrag<bool, 64, 4> [[FIRST:v[0-9]+]];
// CHECK: kiln::store({{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}, [[FIRST]]);
// CHECK: return;

// ALIBI: alibi_fwd(
// ALIBI: kiln::Tensor<float, 1> [[SLOPES:v[0-9]+]],
// The slope read at the head index is one scalar load per program.
// ALIBI: const float {{v[0-9]+}} = [[SLOPES]].ptr[0 + static_cast<long long>({{v[0-9]+}}) * [[SLOPES]].stride[0]];
// Without overlap-copies, each copy waits alone.
// ALIBI-NOT: cp_async_wait<1>
// ALIBI: kiln::mma<false, true>(

// UNSCHEDULED: error: no scheduled kernel to emit (run kiln-cuda-fwd-pipeline)

// tma-stores=false (the ablation): three tensor maps (Q, K, V), the output
// stored by every lane.
// NOTMA: const __grid_constant__ kiln::TensorMap {{v[0-9]+}}) {
// NOTMA-NOT: tma_store
// NOTMA-NOT: bulk_wait
