//===- RuntimeChecksTest.cpp - the runtime's host-side argument checks ----===//
//
// The forward and backward launchers refuse bad tensors before any launch,
// with a message naming the tensor and what is supported. The checks that
// need no GPU (dtype, rank, shape, strides, alignment, capture declarations)
// and the kernel-parameter packing are tested here, so CI covers them.
//
//===----------------------------------------------------------------------===//

#include "Launch.h"
#include "RunShapes.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>

using namespace kiln;
using namespace kiln::detail;

namespace {

alignas(16) char kDeviceLikeStorage[64];

TensorRef tensor(DType dtype, std::vector<int64_t> sizes,
                 std::vector<int64_t> strides,
                 void *data = kDeviceLikeStorage) {
  return TensorRef{data, dtype, std::move(sizes), std::move(strides)};
}

TensorRef contiguousBf16(std::vector<int64_t> sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (int i = static_cast<int>(sizes.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * sizes[i + 1];
  return tensor(DType::BF16, sizes, strides);
}

TEST(RuntimeChecks, AcceptsAMatchingTensor) {
  TensorRef q = contiguousBf16({2, 128, 8, 64});
  EXPECT_TRUE(checkTensor("q", q, DType::BF16, {2, 128, 8, 64}).ok());
  EXPECT_TRUE(checkAligned("q", q, 16).ok());
}

TEST(RuntimeChecks, NamesTheWrongDtype) {
  TensorRef q = contiguousBf16({1, 4, 1, 64});
  Status s = checkTensor("q", q, DType::F16, {1, 4, 1, 64});
  EXPECT_EQ(s.message(), "q must be fp16, got bf16");
}

TEST(RuntimeChecks, NamesTheWrongRankAndShape) {
  TensorRef lse = tensor(DType::F32, {1, 2}, {2, 1});
  EXPECT_EQ(checkTensor("lse", lse, DType::F32, {1, 2, 3}).message(),
            "lse must have rank 3 (sizes and strides), got 2 sizes and 2 "
            "strides");
  TensorRef dq = contiguousBf16({1, 4, 2, 64});
  EXPECT_EQ(checkTensor("dq", dq, DType::BF16, {1, 4, 2, 128}).message(),
            "dq has shape [1, 4, 2, 64], expected [1, 4, 2, 128]");
}

TEST(RuntimeChecks, RefusesNegativeStridesHugeDimsAndNull) {
  TensorRef k = tensor(DType::BF16, {1, 4, 1, 64}, {256, -64, 64, 1});
  EXPECT_EQ(checkTensor("k", k, DType::BF16, {1, 4, 1, 64}).message(),
            "k has a negative stride; strides must be >= 0");
  int64_t huge = int64_t{1} << 31;
  TensorRef big = tensor(DType::F32, {1, 1, huge}, {huge, huge, 1});
  EXPECT_EQ(checkTensor("lse", big, DType::F32, {1, 1, huge}).message(),
            "lse has a dimension of 2147483648; dimensions must be below 2^31");
  TensorRef null = tensor(DType::BF16, {1, 1, 1, 64}, {64, 64, 64, 1}, nullptr);
  EXPECT_EQ(checkTensor("dv", null, DType::BF16, {1, 1, 1, 64}).message(),
            "dv is a null pointer");
}

TEST(RuntimeChecks, CopiedTensorsNeedUnitInnerStrideAndAlignedRows) {
  TensorRef strided = tensor(DType::BF16, {1, 4, 1, 64}, {512, 128, 128, 2});
  EXPECT_EQ(checkAligned("dout", strided, 16).message(),
            "dout must be contiguous in its last dimension, got stride 2");
  TensorRef misaligned = tensor(DType::BF16, {1, 4, 1, 64}, {256, 64, 64, 1},
                                kDeviceLikeStorage + 2);
  EXPECT_EQ(checkAligned("q", misaligned, 16).message(),
            "q must be 16-byte aligned (its rows are copied in 16-byte "
            "chunks)");
  // Rows 67 bf16 elements apart are not 16-byte aligned.
  TensorRef padded = tensor(DType::BF16, {1, 4, 1, 64}, {268, 67, 67, 1});
  EXPECT_EQ(checkAligned("v", padded, 16).message(),
            "v stride 268 of dimension 0 must be a multiple of 8 elements "
            "(16-byte aligned rows)");
  // fp32 would need multiples of 4; bf16 rows padded by 8 are fine.
  TensorRef ok = tensor(DType::BF16, {1, 4, 1, 64}, {288, 72, 72, 1});
  EXPECT_TRUE(checkAligned("v", ok, 16).ok());
}

// Every other tensor is aligned to its element size: contiguous in its last
// dimension (which the kernels index with a literal stride of 1), unless
// that dimension holds one element; any other strides.
TEST(RuntimeChecks, OtherTensorsNeedUnitInnerStride) {
  TensorRef lse = tensor(DType::F32, {2, 3, 5}, {15, 5, 1});
  EXPECT_TRUE(checkAligned("lse", lse, 4).ok());
  TensorRef strided = tensor(DType::F32, {2, 3, 5}, {30, 10, 2});
  EXPECT_EQ(checkAligned("lse", strided, 4).message(),
            "lse must be contiguous in its last dimension, got stride 2");
  TensorRef single = tensor(DType::BF16, {4, 3, 1}, {3, 1, 3});
  EXPECT_TRUE(checkAligned("out", single, 2).ok());
  TensorRef odd = tensor(DType::BF16, {1, 4, 1, 64}, {256, 64, 64, 1},
                         kDeviceLikeStorage + 1);
  EXPECT_EQ(checkAligned("out", odd, 2).message(),
            "out must be 2-byte aligned (its element size)");
  TensorRef padded = tensor(DType::BF16, {1, 4, 1, 64}, {268, 67, 67, 1});
  EXPECT_TRUE(checkAligned("out", padded, 2).ok());
}

/// A forward plan as the compiler writes it: q, k, v, out, lse, one kernel
/// over query blocks, GQA group `group`, the given captures.
ProgramSpec forwardPlan(int64_t group, std::vector<CaptureSpec> captures = {}) {
  auto sym = SizeExpr::named;
  auto c = SizeExpr::constant;
  ProgramSpec p;
  p.variant = "gqa";
  p.kind = "forward";
  p.tensors = {
      {"q", DType::BF16, {sym("batch"), sym("seq_q"), sym("heads"), c(64)}, 16},
      {"k",
       DType::BF16,
       {sym("batch"), sym("seq_kv"), sym("kv_heads"), c(64)},
       16},
      {"v",
       DType::BF16,
       {sym("batch"), sym("seq_kv"), sym("kv_heads"), c(64)},
       16},
      {"out",
       DType::BF16,
       {sym("batch"), sym("seq_q"), sym("heads"), c(64)},
       0},
      {"lse", DType::F32, {sym("batch"), sym("heads"), sym("seq_q")}, 0}};
  p.captures = std::move(captures);
  p.constraints.push_back(
      {sym("heads"),
       SizeExpr::apply(SizeExpr::Op::Mul, {sym("kv_heads"), c(group)})});
  KernelLaunch k;
  k.name = "gqa_fwd";
  k.grid = {SizeExpr::apply(SizeExpr::Op::CeilDiv, {sym("seq_q"), c(64)}),
            sym("heads"), sym("batch")};
  for (const char *name : {"q", "k", "v", "out"})
    k.args.push_back({KernelArg::Kind::Tensor, name, 0, 4});
  k.args.push_back({KernelArg::Kind::Tensor, "lse", 0, 3});
  for (size_t i = 0; i < p.captures.size(); ++i)
    k.args.push_back({KernelArg::Kind::Capture, "", int64_t(i), 1});
  p.kernels.push_back(k);
  return p;
}

std::vector<NamedTensor> forwardTensors(TensorRef q, TensorRef k) {
  TensorRef out = contiguousBf16(q.sizes);
  TensorRef lse = tensor(DType::F32, {q.sizes[0], q.sizes[2], q.sizes[1]},
                         {q.sizes[2] * q.sizes[1], q.sizes[1], 1});
  return {{"q", q}, {"k", k}, {"v", k}, {"out", out}, {"lse", lse}};
}

TEST(RuntimeChecks, SymbolsComeFromTheTensorsAndConstraintsHold) {
  ASSERT_TRUE(verifyPlan(forwardPlan(4)).ok());
  TensorRef q = contiguousBf16({2, 100, 8, 64});
  TensorRef k = contiguousBf16({2, 300, 2, 64});
  BoundRun bound;
  ASSERT_TRUE(
      bindRun(forwardPlan(4), forwardTensors(q, k), {}, 132, bound).ok());
  EXPECT_EQ(bound.symbols["batch"], 2);
  EXPECT_EQ(bound.symbols["heads"], 8);
  EXPECT_EQ(bound.symbols["kv_heads"], 2);
  EXPECT_EQ(bound.symbols["seq_q"], 100);
  EXPECT_EQ(bound.symbols["seq_kv"], 300);
  EXPECT_EQ(bound.symbols["num_sms"], 132);
  // The device's occupancy of each kernel; 1 where it gives none (CPU).
  EXPECT_EQ(bound.symbols[ctasPerSmSymbol("gqa_fwd")], 1);
  DeviceSymbols device(132);
  device.ctasPerSm["gqa_fwd"] = 3;
  ASSERT_TRUE(
      bindRun(forwardPlan(4), forwardTensors(q, k), {}, device, bound).ok());
  EXPECT_EQ(bound.symbols[ctasPerSmSymbol("gqa_fwd")], 3);
  EXPECT_EQ(
      bindRun(forwardPlan(2), forwardTensors(q, k), {}, 132, bound).message(),
      "variant 'gqa' needs heads = mul(kv_heads, 2), got 8 and 4 "
      "(batch = 2, heads = 8, kv_heads = 2, seq_kv = 300, seq_q = 100)");
  TensorRef empty = contiguousBf16({2, 0, 8, 64});
  EXPECT_EQ(bindRun(forwardPlan(4), forwardTensors(empty, k), {}, 132, bound)
                .message(),
            "every size must be at least 1, got q [2, 0, 8, 64]");
}

// A spec of an older compiler declares `out` with no alignment; its kernels
// read strides, but the runtime requires the unit innermost stride of every
// tensor all the same (the kernels of this one print it as 1).
TEST(RuntimeChecks, EveryTensorContiguousInItsLastDimension) {
  TensorRef q = contiguousBf16({1, 16, 2, 64});
  std::vector<NamedTensor> tensors = forwardTensors(q, q);
  tensors[3].tensor = tensor(DType::BF16, {1, 16, 2, 64}, {4096, 256, 128, 2});
  BoundRun bound;
  EXPECT_EQ(bindRun(forwardPlan(1), tensors, {}, 1, bound).message(),
            "out must be contiguous in its last dimension, got stride 2");
}

TEST(RuntimeChecks, TensorsByNameEachOnce) {
  TensorRef q = contiguousBf16({1, 16, 2, 64});
  std::vector<NamedTensor> tensors = forwardTensors(q, q);
  BoundRun bound;
  tensors.pop_back();
  EXPECT_EQ(bindRun(forwardPlan(1), tensors, {}, 1, bound).message(),
            "the forward of variant 'gqa' needs tensor 'lse'");
  tensors = forwardTensors(q, q);
  tensors.push_back({"dq", q});
  EXPECT_EQ(bindRun(forwardPlan(1), tensors, {}, 1, bound).message(),
            "the forward of variant 'gqa' has no tensor 'dq' (it takes q, k, "
            "v, out, lse)");
  tensors = forwardTensors(q, q);
  tensors[4] = {"q", q};
  EXPECT_EQ(bindRun(forwardPlan(1), tensors, {}, 1, bound).message(),
            "tensor 'q' is given twice");
  // A wrong rank is named with the tensor, before any shape is compared.
  tensors = forwardTensors(q, q);
  tensors[4].tensor = tensor(DType::F32, {1, 2}, {2, 1});
  EXPECT_EQ(bindRun(forwardPlan(1), tensors, {}, 1, bound).message(),
            "lse must have rank 3 (sizes and strides), got 2 sizes and 2 "
            "strides");
}

// A run whose shapes passed bindRun before reuses that work (RunShapes.h):
// the key tells shapes apart by every size, stride and dtype, and what
// depends on the pointers alone is still checked.
TEST(RuntimeChecks, KeptShapesStillCheckThePointers) {
  TensorRef q = contiguousBf16({2, 100, 8, 64});
  TensorRef k = contiguousBf16({2, 300, 2, 64});
  std::vector<NamedTensor> tensors = forwardTensors(q, k);
  ProgramSpec plan = forwardPlan(4);
  std::vector<const TensorRef *> slots;
  ASSERT_TRUE(matchTensors(plan, tensors, slots).ok());
  std::vector<int64_t> key = detail::runShapeKey(slots, {});
  EXPECT_TRUE(checkPointers(plan, slots, {}).ok());
  // Another size, stride or dtype: another key.
  for (int change = 0; change < 3; ++change) {
    std::vector<NamedTensor> other = forwardTensors(q, k);
    TensorRef &t = other[1].tensor;
    if (change == 0)
      t.sizes[1] = 301;
    else if (change == 1)
      t.strides[0] += 64;
    else
      t.dtype = DType::F16;
    std::vector<const TensorRef *> otherSlots;
    ASSERT_TRUE(matchTensors(plan, other, otherSlots).ok());
    EXPECT_NE(detail::runShapeKey(otherSlots, {}), key) << change;
  }
  // The captures are part of the key.
  TensorRef slopes = tensor(DType::F32, {8}, {1});
  EXPECT_NE(detail::runShapeKey(slots, {slopes}), key);
  // The same shapes at other addresses: null and misaligned pointers are
  // refused as bindRun refuses them.
  tensors[1].tensor.data = nullptr;
  ASSERT_TRUE(matchTensors(plan, tensors, slots).ok());
  EXPECT_EQ(detail::runShapeKey(slots, {}), key);
  EXPECT_EQ(checkPointers(plan, slots, {}).message(), "k is a null pointer");
  tensors[1].tensor.data = reinterpret_cast<void *>(uintptr_t{0x1008});
  EXPECT_EQ(checkPointers(plan, slots, {}).message(),
            "k must be 16-byte aligned (its rows are copied in 16-byte "
            "chunks)");
  TensorRef nullCapture = slopes;
  nullCapture.data = nullptr;
  tensors = forwardTensors(q, k);
  ASSERT_TRUE(matchTensors(plan, tensors, slots).ok());
  ProgramSpec alibi = forwardPlan(4, {{"slopes", DType::F32, {"heads"}}});
  EXPECT_EQ(checkPointers(alibi, slots, {nullCapture}).message(),
            "capture 'slopes' is a null pointer");
  // A table keeps the last shapes and finds them by key.
  detail::RunShapes shapes;
  auto shape = std::make_shared<detail::RunShape>();
  EXPECT_EQ(shapes.find(key), nullptr);
  shapes.insert(key, shape);
  EXPECT_EQ(shapes.find(key), shape);
  for (int64_t i = 0; i < 16; ++i)
    shapes.insert({i}, std::make_shared<detail::RunShape>());
  EXPECT_EQ(shapes.find(key), nullptr); // replaced, oldest first
  EXPECT_NE(shapes.find({15}), nullptr);
}

TEST(RuntimeChecks, CapturesAreCheckedAgainstTheirDeclarations) {
  TensorRef q = contiguousBf16({1, 128, 8, 64});
  BoundRun bound;
  ProgramSpec alibi = forwardPlan(1, {{"slopes", DType::F32, {"heads"}}});
  EXPECT_EQ(bindRun(alibi, forwardTensors(q, q), {}, 1, bound).message(),
            "variant 'gqa' captures 1 tensors, got 0");
  TensorRef four = tensor(DType::F32, {4}, {1});
  EXPECT_EQ(bindRun(alibi, forwardTensors(q, q), {four}, 1, bound).message(),
            "capture 'slopes' has shape [4], expected [8]");
  TensorRef eight = tensor(DType::F32, {8}, {1});
  EXPECT_TRUE(bindRun(alibi, forwardTensors(q, q), {eight}, 1, bound).ok());
  ProgramSpec bad = forwardPlan(1, {{"bias", DType::F32, {"seq-q"}}});
  TensorRef t = tensor(DType::F32, {128}, {1});
  EXPECT_EQ(bindRun(bad, forwardTensors(q, q), {t}, 1, bound).message(),
            "capture 'bias' declares dim 'seq-q'; a dim is batch, heads, "
            "kv_heads, seq_q, seq_kv or a size");
}

TEST(RuntimeChecks, GridsAndWorkspacesFollowTheExpressions) {
  ProgramSpec p = forwardPlan(1);
  SymbolValues symbols{{"batch", 2}, {"heads", 8}, {"seq_q", 129}};
  std::array<int64_t, 3> grid;
  ASSERT_TRUE(evaluateGrid(p, p.kernels[0], symbols, grid).ok());
  EXPECT_EQ(grid, (std::array<int64_t, 3>{3, 8, 2}));
  symbols["heads"] = 70000;
  EXPECT_EQ(evaluateGrid(p, p.kernels[0], symbols, grid).message(),
            "kernel 'gqa_fwd' of variant 'gqa' needs a grid of [3, 70000, 2] "
            "for this problem; CUDA allows 1 to [2147483647, 65535, 65535] "
            "(one CTA per tile: batch and heads must be at most 65535)");
  p.workspaces = {{"delta",
                   DType::F32,
                   {SizeExpr::named("batch"), SizeExpr::named("heads"),
                    SizeExpr::named("seq_q")},
                   false},
                  {"acc",
                   DType::F32,
                   {SizeExpr::named("seq_q"), SizeExpr::constant(3)},
                   true}};
  symbols["heads"] = 8;
  WorkspaceLayout layout;
  ASSERT_TRUE(layoutWorkspaces(p, symbols, layout).ok());
  EXPECT_EQ(layout.offsets, (std::vector<size_t>{0, 8448}));
  EXPECT_EQ(layout.shapes[1], (std::vector<int64_t>{129, 3}));
  EXPECT_EQ(layout.totalBytes, 8448u + 129 * 3 * 4);
  // Sizes past 64 bits are refused, not wrapped into a small buffer.
  p.workspaces[1].shape = {SizeExpr::constant(int64_t{1} << 62),
                           SizeExpr::constant(1)};
  EXPECT_EQ(layoutWorkspaces(p, symbols, layout).message(),
            "workspace 'acc' of shape [4611686018427387904, 1] needs more "
            "than 2^64 bytes");
}

TEST(RuntimeChecks, DerivedSymbolsLaunchConditionsAndEmptyWorkspaces) {
  auto sym = SizeExpr::named;
  auto c = SizeExpr::constant;
  auto op = SizeExpr::apply;
  ProgramSpec p = forwardPlan(1);
  // kv_splits = min(ceildiv(num_sms, batch * heads), 8).
  p.symbols = {{"kv_splits",
                op(SizeExpr::Op::Min,
                   {op(SizeExpr::Op::CeilDiv,
                       {sym("num_sms"),
                        op(SizeExpr::Op::Mul, {sym("batch"), sym("heads")})}),
                    c(8)})}};
  p.workspaces = {
      {"partial",
       DType::F32,
       {op(SizeExpr::Op::Mul,
           {sym("batch"), sym("kv_splits"),
            op(SizeExpr::Op::Min,
               {op(SizeExpr::Op::Sub, {sym("kv_splits"), c(1)}), c(1)})}),
        c(64)},
       false}};
  KernelLaunch combine = p.kernels[0];
  combine.name = "combine";
  combine.when = op(SizeExpr::Op::Sub, {sym("kv_splits"), c(1)});
  p.kernels.push_back(combine);
  ASSERT_TRUE(verifyPlan(p).ok()) << verifyPlan(p).message();

  TensorRef q = contiguousBf16({1, 1, 2, 64});
  BoundRun bound;
  ASSERT_TRUE(bindRun(p, forwardTensors(q, q), {}, 132, bound).ok());
  EXPECT_EQ(bound.symbols["kv_splits"], 8);
  bool launches = false;
  ASSERT_TRUE(kernelLaunches(p.kernels[1], bound.symbols, launches).ok());
  EXPECT_TRUE(launches);
  WorkspaceLayout layout;
  ASSERT_TRUE(layoutWorkspaces(p, bound.symbols, layout).ok());
  EXPECT_EQ(layout.shapes[0], (std::vector<int64_t>{8, 64}));

  // Set by the caller: 1 means unsplit, so no combine and no workspace.
  ASSERT_TRUE(
      bindRun(p, forwardTensors(q, q), {}, 132, bound, {{"kv_splits", 1}})
          .ok());
  EXPECT_EQ(bound.symbols["kv_splits"], 1);
  ASSERT_TRUE(kernelLaunches(p.kernels[1], bound.symbols, launches).ok());
  EXPECT_FALSE(launches);
  ASSERT_TRUE(kernelLaunches(p.kernels[0], bound.symbols, launches).ok());
  EXPECT_TRUE(launches);
  ASSERT_TRUE(layoutWorkspaces(p, bound.symbols, layout).ok());
  EXPECT_EQ(layout.shapes[0], (std::vector<int64_t>{0, 64}));
  EXPECT_EQ(layout.totalBytes, 0u);

  EXPECT_EQ(
      bindRun(p, forwardTensors(q, q), {}, 132, bound, {{"kv_splits", 0}})
          .message(),
      "variant 'gqa': symbol 'kv_splits' is 0; a value set for it must be at "
      "least 1");
  EXPECT_EQ(bindRun(p, forwardTensors(q, q), {}, 132, bound, {{"splits", 2}})
                .message(),
            "variant 'gqa' has no symbol 'splits' to set (it derives "
            "kv_splits)");
  EXPECT_EQ(bindRun(forwardPlan(1), forwardTensors(q, q), {}, 132, bound,
                    {{"kv_splits", 2}})
                .message(),
            "variant 'gqa' has no symbol 'kv_splits' to set (it derives none)");
  // An expression that comes out below 1 is the plan's error, named.
  p.symbols[0].second = op(SizeExpr::Op::Sub, {sym("batch"), c(1)});
  EXPECT_EQ(bindRun(p, forwardTensors(q, q), {}, 132, bound).message(),
            "variant 'gqa': symbol 'kv_splits' is 0 for this problem; it must "
            "be at least 1");
}

TEST(RuntimeChecks, TensorMapsDescribeTheWholeTensorInnermostFirst) {
  TensorRef q = contiguousBf16({2, 100, 8, 64});
  KernelArg map;
  map.kind = KernelArg::Kind::TensorMap;
  map.name = "q";
  // D, N, H, B: a box covers 128 rows of one head.
  map.mapDims = {3, 1, 2, 0};
  map.box = {64, 128};
  map.swizzle = 128;
  TensorMapLayout layout;
  ASSERT_TRUE(tensorMapLayout("k", map, q, layout).ok());
  EXPECT_EQ(layout.dataType, 9); // CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
  EXPECT_EQ(layout.rank, 4u);
  EXPECT_EQ(std::vector<unsigned long long>(layout.dims, layout.dims + 4),
            (std::vector<unsigned long long>{64, 100, 8, 2}));
  // Byte strides of every dimension but the innermost, in the map's order.
  EXPECT_EQ(std::vector<unsigned long long>(layout.strides, layout.strides + 3),
            (std::vector<unsigned long long>{1024, 128, 102400}));
  EXPECT_EQ(std::vector<unsigned>(layout.box, layout.box + 4),
            (std::vector<unsigned>{64, 128, 1, 1}));
  EXPECT_EQ(layout.swizzle, 3); // CU_TENSOR_MAP_SWIZZLE_128B
  // Rows 67 bf16 apart are 134 bytes: not a TMA stride.
  TensorRef odd = tensor(DType::BF16, {1, 4, 1, 64}, {268, 67, 67, 1});
  EXPECT_EQ(tensorMapLayout("k", map, odd, layout).message(),
            "tensor map of 'q' (kernel 'k'): stride 67 of dimension 1 is not "
            "a multiple of 16 bytes below 2^40");
  TensorRef strided = tensor(DType::BF16, {1, 4, 1, 64}, {512, 128, 128, 2});
  EXPECT_EQ(tensorMapLayout("k", map, strided, layout).message(),
            "tensor map of 'q' (kernel 'k'): the tensor must be contiguous in "
            "its last dimension, got stride 2");
}

TEST(RuntimeChecks, PacksTensorsAsTheKernelsTensorStruct) {
  // Tensor<T, 3> by value: pointer, 3 sizes, 3 strides, all 64-bit.
  TensorRef lse = tensor(DType::F32, {2, 4, 100}, {400, 100, 1});
  KernelParams params;
  params.addTensor(lse, 3);
  auto *bytes = static_cast<const char *>(params.pointers()[0]);
  void *ptr;
  long long packed[6];
  std::memcpy(&ptr, bytes, 8);
  std::memcpy(packed, bytes + 8, sizeof(packed));
  EXPECT_EQ(ptr, lse.data);
  EXPECT_EQ(std::vector<long long>(packed, packed + 6),
            (std::vector<long long>{2, 4, 100, 400, 100, 1}));
}

} // namespace

namespace {

/// A paged forward's declarations (only the names validatePagedKV reads)
/// and a run of 2 sequences over a pool of 3 pages of 16 keys, 2 slots per
/// sequence.
struct PagedRun {
  ProgramSpec spec;
  BoundRun bound;
  int32_t table[4] = {2, 0, 1, -1};
  int32_t lens[2] = {20, 16};
  TensorRef pool = tensor(DType::BF16, {3, 16, 1, 64}, {1024, 64, 64, 1});
  TensorRef tableRef = tensor(DType::I32, {2, 2}, {2, 1}, table);
  TensorRef lensRef = tensor(DType::I32, {2}, {1}, lens);

  PagedRun() {
    for (const char *name : {"k", "block_table", "kv_lens"}) {
      TensorDecl decl;
      decl.name = name;
      spec.tensors.push_back(decl);
    }
    bound.tensors = {&pool, &tableRef, &lensRef};
  }
};

} // namespace

TEST(RuntimeChecks, PagedKVAcceptsTablesWithinThePool) {
  PagedRun run;
  EXPECT_TRUE(validatePagedKV(run.spec, run.bound).ok());
  // Sequence 1 uses one page: its second slot (-1) is never read.
  run.lens[1] = 0;
  EXPECT_TRUE(validatePagedKV(run.spec, run.bound).ok());
  // Plans without a paged cache pass.
  EXPECT_TRUE(validatePagedKV(ProgramSpec(), BoundRun()).ok());
}

TEST(RuntimeChecks, PagedKVNamesTheBadEntry) {
  PagedRun run;
  run.lens[1] = 17; // now slot 1 of sequence 1 (-1) is read
  EXPECT_EQ(validatePagedKV(run.spec, run.bound).message(),
            "block_table[1, 1] = -1 names no page of the pool (pages = 3)");
  run.lens[1] = 16;
  run.table[1] = 3;
  EXPECT_EQ(validatePagedKV(run.spec, run.bound).message(),
            "block_table[0, 1] = 3 names no page of the pool (pages = 3)");
  run.table[1] = 0;
  run.lens[0] = 33;
  EXPECT_EQ(validatePagedKV(run.spec, run.bound).message(),
            "kv_lens[0] = 33 is outside [0, max_pages * page_size = 32]");
  run.lens[0] = -1;
  EXPECT_EQ(validatePagedKV(run.spec, run.bound).message(),
            "kv_lens[0] = -1 is outside [0, max_pages * page_size = 32]");
}

namespace {

/// A varlen forward's plan: q [total_q, heads, 64], cu_seqlens_q [batch +
/// 1], cu_seqlens_kv [batch + 1] over k [total_kv, heads, 64].
ProgramSpec varlenPlan() {
  auto sym = SizeExpr::named;
  auto c = SizeExpr::constant;
  ProgramSpec p;
  p.variant = "varlen";
  p.kind = "forward";
  auto batchPlusOne = SizeExpr::apply(SizeExpr::Op::Add, {sym("batch"), c(1)});
  p.tensors = {{"q", DType::BF16, {sym("total_q"), sym("heads"), c(64)}, 0},
               {"k", DType::BF16, {sym("total_kv"), sym("heads"), c(64)}, 0},
               {"cu_seqlens_q", DType::I32, {batchPlusOne}, 0},
               {"cu_seqlens_kv", DType::I32, {batchPlusOne}, 0}};
  KernelLaunch k;
  k.name = "varlen_fwd";
  k.grid = {SizeExpr::apply(SizeExpr::Op::Add,
                            {SizeExpr::apply(SizeExpr::Op::CeilDiv,
                                             {sym("total_q"), c(64)}),
                             sym("batch")}),
            sym("heads"), c(1)};
  k.args = {{KernelArg::Kind::Tensor, "q", 0, 3},
            {KernelArg::Kind::Tensor, "k", 0, 3},
            {KernelArg::Kind::Tensor, "cu_seqlens_q", 0, 1},
            {KernelArg::Kind::Tensor, "cu_seqlens_kv", 0, 1}};
  p.kernels.push_back(k);
  return p;
}

} // namespace

TEST(RuntimeChecks, VarlenBindsTheBatchFromItsOffsetsAndChecksThem) {
  ProgramSpec plan = varlenPlan();
  ASSERT_TRUE(verifyPlan(plan).ok()) << verifyPlan(plan).message();
  std::vector<int32_t> cuQ{0, 100, 100, 250}, cuKV{0, 50, 80, 300};
  TensorRef q = contiguousBf16({250, 4, 64}), k = contiguousBf16({300, 4, 64});
  TensorRef offsetsQ = tensor(DType::I32, {4}, {1}, cuQ.data());
  TensorRef offsetsKV = tensor(DType::I32, {4}, {1}, cuKV.data());
  std::vector<NamedTensor> named{{"q", q},
                                 {"k", k},
                                 {"cu_seqlens_q", offsetsQ},
                                 {"cu_seqlens_kv", offsetsKV}};
  BoundRun bound;
  ASSERT_TRUE(bindRun(plan, named, {}, 132, bound).ok());
  EXPECT_EQ(bound.symbols["batch"], 3); // [batch + 1] binds batch
  EXPECT_EQ(bound.symbols["total_q"], 250);
  EXPECT_EQ(bound.symbols["total_kv"], 300);
  std::array<int64_t, 3> grid;
  ASSERT_TRUE(evaluateGrid(plan, plan.kernels[0], bound.symbols, grid).ok());
  EXPECT_EQ(grid[0], 4 + 3); // at least as many as the sequences' blocks
  EXPECT_TRUE(validateVarlen(plan, bound).ok());
  cuQ[2] = 90; // decreasing
  EXPECT_EQ(validateVarlen(plan, bound).message(),
            "cu_seqlens_q[2] = 90 is outside [100, total_q = 250]: offsets "
            "start at 0 or more, never decrease and end within the packed "
            "rows");
  cuQ[2] = 100;
  cuKV[3] = 301; // past the packed rows
  EXPECT_EQ(validateVarlen(plan, bound).message(),
            "cu_seqlens_kv[3] = 301 is outside [80, total_kv = 300]: offsets "
            "start at 0 or more, never decrease and end within the packed "
            "rows");
  // An offsets tensor of one entry is a batch of 0: refused.
  TensorRef one = tensor(DType::I32, {1}, {1}, cuQ.data());
  named[2].tensor = one;
  EXPECT_EQ(bindRun(plan, named, {}, 132, bound).message(),
            "every size must be at least 1, got cu_seqlens_q [1] "
            "(add(batch, 1))");
  // Plans without offsets pass.
  EXPECT_TRUE(validateVarlen(ProgramSpec(), BoundRun()).ok());
}
