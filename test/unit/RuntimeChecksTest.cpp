//===- RuntimeChecksTest.cpp - the runtime's host-side argument checks ----===//
//
// The forward and backward launchers refuse bad tensors before any launch,
// with a message naming the tensor and what is supported. The checks that
// need no GPU (dtype, rank, shape, strides, alignment, capture declarations)
// and the kernel-parameter packing are tested here, so CI covers them.
//
//===----------------------------------------------------------------------===//

#include "Launch.h"

#include <gtest/gtest.h>

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
  EXPECT_TRUE(checkStaged("q", q).ok());
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

TEST(RuntimeChecks, StagedTensorsNeedUnitInnerStrideAndAlignedRows) {
  TensorRef strided = tensor(DType::BF16, {1, 4, 1, 64}, {512, 128, 128, 2});
  EXPECT_EQ(checkStaged("dout", strided).message(),
            "dout must be contiguous in its last (head) dimension, got "
            "stride 2");
  TensorRef misaligned = tensor(DType::BF16, {1, 4, 1, 64}, {256, 64, 64, 1},
                                kDeviceLikeStorage + 2);
  EXPECT_EQ(checkStaged("q", misaligned).message(),
            "q must be 16-byte aligned for cp.async");
  // Rows 67 bf16 elements apart are not 16-byte aligned.
  TensorRef padded = tensor(DType::BF16, {1, 4, 1, 64}, {268, 67, 67, 1});
  EXPECT_EQ(checkStaged("v", padded).message(),
            "v stride 268 of dimension 0 must be a multiple of 8 elements "
            "(16-byte aligned rows)");
  // fp32 would need multiples of 4; bf16 rows padded by 8 are fine.
  TensorRef ok = tensor(DType::BF16, {1, 4, 1, 64}, {288, 72, 72, 1});
  EXPECT_TRUE(checkStaged("v", ok).ok());
}

TEST(RuntimeChecks, CaptureCountAndMalformedDimsAreErrorsNotCrashes) {
  CaptureSpec slopes{"slopes", DType::F32, {"heads"}};
  ProblemSizes sizes{1, 8, 8, 128, 128};
  EXPECT_EQ(checkCaptures("alibi", {slopes}, {}, sizes).message(),
            "variant 'alibi' captures 1 tensors, got 0");
  CaptureSpec bad{"bias", DType::F32, {"seq-q"}};
  TensorRef t = tensor(DType::F32, {128}, {1});
  EXPECT_EQ(checkCaptures("v", {bad}, {t}, sizes).message(),
            "capture 'bias' declares dim 'seq-q'; a dim is batch, heads, "
            "kv_heads, seq_q, seq_kv or a size");
  CaptureSpec wrongSize{"slopes", DType::F32, {"heads"}};
  TensorRef four = tensor(DType::F32, {4}, {1});
  EXPECT_EQ(checkCaptures("alibi", {wrongSize}, {four}, sizes).message(),
            "capture 'slopes' has shape [4], expected [8]");
}

TEST(RuntimeChecks, ProblemSizesComeFromQAndK) {
  ProblemSizes sizes;
  TensorRef q = contiguousBf16({2, 100, 8, 64});
  TensorRef k = contiguousBf16({2, 300, 2, 64});
  ASSERT_TRUE(problemSizes(q, k, 4, "gqa", sizes).ok());
  EXPECT_EQ(sizes.batch, 2);
  EXPECT_EQ(sizes.heads, 8);
  EXPECT_EQ(sizes.kvHeads, 2);
  EXPECT_EQ(sizes.seqQ, 100);
  EXPECT_EQ(sizes.seqKV, 300);
  EXPECT_EQ(problemSizes(q, k, 2, "gqa", sizes).message(),
            "q has 8 heads and k 2; variant 'gqa' needs heads = kv_heads * 2");
  TensorRef empty = contiguousBf16({2, 0, 8, 64});
  EXPECT_EQ(problemSizes(empty, k, 4, "gqa", sizes).message(),
            "every size must be at least 1, got q [2, 0, 8, 64] and k "
            "[2, 300, 2, 64]");
  TensorRef wide = contiguousBf16({1, 4, 70000, 64});
  TensorRef wideK = contiguousBf16({1, 4, 70000, 64});
  EXPECT_EQ(problemSizes(wide, wideK, 1, "plain", sizes).message(),
            "batch and heads must be at most 65535 (grid limits)");
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
