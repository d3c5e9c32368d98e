//===- VariantTest.cpp - one rule for selecting and specialising ----------===//
//
// `kiln run`, `kiln compile` and kiln/Kiln.h all go through
// selectAndSpecialize: which attn.attention of a text is compiled, and how a
// head dim or dtype override applies to it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Variant.h"

#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::driver;

namespace {

constexpr const char *kTwo = R"(
attn.attention @square {qk_head_dim = 64, v_head_dim = 64, element_type = bf16}
attn.attention @wide {qk_head_dim = 192, v_head_dim = 128, element_type = bf16}
)";

struct Parsed {
  mlir::MLIRContext context{kilnRegistry()};
  mlir::OwningOpRef<mlir::ModuleOp> module;
  explicit Parsed(const char *text) {
    context.loadAllAvailableDialects();
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  }
};

std::pair<int64_t, int64_t> dims(const char *name,
                                 const VariantSpecialization &s) {
  Parsed p(kTwo);
  attn::AttentionOp op;
  Status st = selectAndSpecialize(*p.module, name, s, op);
  EXPECT_TRUE(st.ok()) << st.message();
  if (!op)
    return {-1, -1};
  return {op.getQkHeadDim(), op.getVHeadDim()};
}

TEST(Variant, HeadDimSetsBothOnlyWhenTheVariantsWereEqual) {
  VariantSpecialization s;
  s.headDim = 128;
  EXPECT_EQ(dims("square", s), std::make_pair(int64_t(128), int64_t(128)));
  // qk != v: --head-dim is the qk head dim alone.
  EXPECT_EQ(dims("wide", s), std::make_pair(int64_t(128), int64_t(128)));
  s.headDim = 256;
  EXPECT_EQ(dims("wide", s), std::make_pair(int64_t(256), int64_t(128)));
  s.headDimV = 64;
  EXPECT_EQ(dims("square", s), std::make_pair(int64_t(256), int64_t(64)));
  s = VariantSpecialization();
  s.headDimV = 32;
  EXPECT_EQ(dims("square", s), std::make_pair(int64_t(64), int64_t(32)));
}

TEST(Variant, DtypeAndVerification) {
  Parsed p(kTwo);
  attn::AttentionOp op;
  VariantSpecialization s;
  s.dtype = "fp16";
  ASSERT_TRUE(selectAndSpecialize(*p.module, "square", s, op).ok());
  EXPECT_TRUE(op.getElementType().isF16());
  Parsed q(kTwo);
  s.dtype = "fp8";
  EXPECT_EQ(selectAndSpecialize(*q.module, "square", s, op).message(),
            "dtype must be bf16 or fp16, got 'fp8'");
}

TEST(Variant, SelectionNamesTheChoices) {
  attn::AttentionOp op;
  Parsed a(kTwo);
  EXPECT_EQ(selectAndSpecialize(*a.module, "", {}, op).message(),
            "the input has 2 attn.attention ops; pick one by name (square, "
            "wide)");
  Parsed b(kTwo);
  EXPECT_EQ(selectAndSpecialize(*b.module, "tall", {}, op).message(),
            "no attn.attention named 'tall'");
  Parsed c(kTwo);
  ASSERT_TRUE(selectAndSpecialize(*c.module, "wide", {}, op).ok());
  // The others are gone: the module compiles exactly one variant.
  EXPECT_EQ(std::distance(c.module->getOps<attn::AttentionOp>().begin(),
                          c.module->getOps<attn::AttentionOp>().end()),
            1);
  Parsed d("module {}");
  EXPECT_EQ(selectAndSpecialize(*d.module, "", {}, op).message(),
            "the input has no attn.attention op");
}

} // namespace
