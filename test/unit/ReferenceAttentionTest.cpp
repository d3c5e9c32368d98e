//===- ReferenceAttentionTest.cpp - tests of the float64 reference --------===//
//
// Every Kiln kernel is judged against kiln::ref::attentionForward, so these
// tests pin its semantics down on problems small enough to work out by hand:
// softmax weights, causal alignments, fully masked rows, score_mod order,
// GQA head mapping, memory layout and numerical stability.
//
//===----------------------------------------------------------------------===//

#include "reference/ReferenceAttention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

using namespace kiln::ref;

namespace {

const double kInf = std::numeric_limits<double>::infinity();

struct Result {
  std::vector<double> out; ///< [batch, seqQ, heads, headDimV]
  std::vector<double> lse; ///< [batch, heads, seqQ]
};

/// Runs the reference on a valid shape, checking the input sizes first.
/// Outputs start as NaN so that an entry the reference forgets to write is
/// noticed.
Result run(const ProblemShape &s, const AttentionSpec &spec,
           const std::vector<double> &q, const std::vector<double> &k,
           const std::vector<double> &v) {
  EXPECT_EQ(validateShape(s), "");
  EXPECT_EQ(q.size(), size_t(s.batch * s.seqQ * s.heads * s.headDimQK));
  EXPECT_EQ(k.size(), size_t(s.batch * s.seqKV * s.kvHeads * s.headDimQK));
  EXPECT_EQ(v.size(), size_t(s.batch * s.seqKV * s.kvHeads * s.headDimV));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Result r;
  r.out.assign(s.batch * s.seqQ * s.heads * s.headDimV, nan);
  r.lse.assign(s.batch * s.heads * s.seqQ, nan);
  attentionForward(s, spec, q.data(), k.data(), v.data(), r.out.data(),
                   r.lse.data());
  return r;
}

ProblemShape shape(int64_t seqQ, int64_t seqKV, int64_t headDimQK,
                   int64_t headDimV) {
  ProblemShape s;
  s.seqQ = seqQ;
  s.seqKV = seqKV;
  s.headDimQK = headDimQK;
  s.headDimV = headDimV;
  return s;
}

} // namespace

TEST(ReferenceAttention, SingleKeyCopiesItsValueRowAndLseIsTheScaledScore) {
  // With one key the softmax weight is exp(0) / exp(0) = 1, so the output is
  // that key's V row and lse = score + log(1) = scale * q.k.
  ProblemShape s = shape(1, 1, 2, 3);
  AttentionSpec spec;
  spec.scale = 0.5;
  Result r = run(s, spec, /*q=*/{1.0, 2.0}, /*k=*/{3.0, -1.0},
                 /*v=*/{4.0, -5.0, 6.5});
  EXPECT_DOUBLE_EQ(r.out[0], 4.0);
  EXPECT_DOUBLE_EQ(r.out[1], -5.0);
  EXPECT_DOUBLE_EQ(r.out[2], 6.5);
  // q.k = 1*3 + 2*(-1) = 1.
  EXPECT_DOUBLE_EQ(r.lse[0], 0.5);
}

TEST(ReferenceAttention, TwoKeysAreWeightedBySoftmaxOfTheirScores) {
  // scale = ln(3) / 2 and keys 0 and 2 give scores 0 and ln 3, so the
  // weights are 1/(1+3) = 1/4 and 3/4 and lse = log(e^0 + e^ln3) = log 4.
  ProblemShape s = shape(1, 2, 1, 2);
  AttentionSpec spec;
  spec.scale = std::log(3.0) / 2.0;
  Result r = run(s, spec, /*q=*/{1.0}, /*k=*/{0.0, 2.0},
                 /*v=*/{4.0, 0.0, 0.0, 8.0});
  EXPECT_NEAR(r.out[0], 0.25 * 4.0, 1e-12);
  EXPECT_NEAR(r.out[1], 0.75 * 8.0, 1e-12);
  EXPECT_NEAR(r.lse[0], std::log(4.0), 1e-12);
}

TEST(ReferenceAttention, EqualScoresAverageTheValueRows) {
  // q = 0 makes every score 0: uniform weights 1/4 and lse = log 4.
  ProblemShape s = shape(1, 4, 3, 1);
  Result r = run(s, AttentionSpec(), /*q=*/{0.0, 0.0, 0.0},
                 /*k=*/{1, 2, 3, -4, 5, 6, 7, 8, -9, 10, 11, 12},
                 /*v=*/{1.0, 2.0, 3.0, 6.0});
  EXPECT_NEAR(r.out[0], 3.0, 1e-12);
  EXPECT_NEAR(r.lse[0], std::log(4.0), 1e-12);
}

TEST(ReferenceAttention, CausalTopLeftAndBottomRightDifferWhenSeqQIsShorter) {
  // Lq = 2, Lk = 4, all scores 0, so each row averages the V rows it sees.
  // Top-left: row i sees keys 0..i. Bottom-right aligns the last query with
  // the last key: row i sees keys 0..i + (Lk - Lq), i.e. row 0 sees 0..2.
  ProblemShape s = shape(2, 4, 1, 1);
  std::vector<double> q = {0.0, 0.0}, k = {1.0, 2.0, 3.0, 4.0},
                      v = {1.0, 10.0, 100.0, 1000.0};

  AttentionSpec topLeft;
  topLeft.causal = CausalAlignment::TopLeft;
  Result tl = run(s, topLeft, q, k, v);
  EXPECT_NEAR(tl.out[0], 1.0, 1e-12);              // key 0
  EXPECT_NEAR(tl.out[1], (1.0 + 10.0) / 2, 1e-12); // keys 0, 1
  EXPECT_NEAR(tl.lse[0], std::log(1.0), 1e-12);
  EXPECT_NEAR(tl.lse[1], std::log(2.0), 1e-12);

  AttentionSpec bottomRight;
  bottomRight.causal = CausalAlignment::BottomRight;
  Result br = run(s, bottomRight, q, k, v);
  EXPECT_NEAR(br.out[0], (1.0 + 10.0 + 100.0) / 3, 1e-12); // keys 0..2
  EXPECT_NEAR(br.out[1], (1.0 + 10.0 + 100.0 + 1000.0) / 4, 1e-12);
  EXPECT_NEAR(br.lse[0], std::log(3.0), 1e-12);
  EXPECT_NEAR(br.lse[1], std::log(4.0), 1e-12);
}

TEST(ReferenceAttention, CausalAlignmentsAgreeWhenSeqQEqualsSeqKV) {
  // With Lq == Lk the offset Lk - Lq is 0, so both alignments are the same
  // lower-triangular mask.
  ProblemShape s = shape(3, 3, 1, 1);
  std::vector<double> q = {0.5, -1.0, 2.0}, k = {1.0, 2.0, -3.0},
                      v = {1.0, 10.0, 100.0};
  AttentionSpec topLeft, bottomRight;
  topLeft.causal = CausalAlignment::TopLeft;
  bottomRight.causal = CausalAlignment::BottomRight;
  Result tl = run(s, topLeft, q, k, v);
  Result br = run(s, bottomRight, q, k, v);
  EXPECT_EQ(tl.out, br.out);
  EXPECT_EQ(tl.lse, br.lse);
  EXPECT_DOUBLE_EQ(tl.out[0], 1.0); // row 0 sees only key 0
}

TEST(ReferenceAttention, BottomRightWithLongerQueriesMasksTheFirstRows) {
  // Lq = 4, Lk = 2: row i sees keys 0..i - 2, so rows 0 and 1 see nothing
  // (out 0, lse -inf), row 2 sees key 0, row 3 sees keys 0 and 1.
  ProblemShape s = shape(4, 2, 1, 1);
  AttentionSpec spec;
  spec.causal = CausalAlignment::BottomRight;
  Result r = run(s, spec, /*q=*/{0.0, 0.0, 0.0, 0.0}, /*k=*/{1.0, 2.0},
                 /*v=*/{2.0, 4.0});
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(r.out[i], 0.0);
    EXPECT_EQ(r.lse[i], -kInf);
  }
  EXPECT_DOUBLE_EQ(r.out[2], 2.0);
  EXPECT_DOUBLE_EQ(r.lse[2], 0.0);
  EXPECT_NEAR(r.out[3], 3.0, 1e-12);
  EXPECT_NEAR(r.lse[3], std::log(2.0), 1e-12);
}

TEST(ReferenceAttention, FullyMaskedRowGivesZeroOutputAndNegativeInfinityLse) {
  // mask_mod hides every key from query 1: the documented result is out = 0
  // and lse = -inf, never the NaN of 0/0. Query 0 is unaffected.
  ProblemShape s = shape(2, 3, 1, 2);
  AttentionSpec spec;
  spec.maskMod = [](int64_t, int64_t, int64_t q, int64_t) { return q != 1; };
  Result r = run(s, spec, /*q=*/{1.0, 1.0}, /*k=*/{1.0, 1.0, 1.0},
                 /*v=*/{1.0, 2.0, 3.0, 4.0, 5.0, 6.0});
  EXPECT_NEAR(r.out[0], 3.0, 1e-12); // mean of 1, 3, 5
  EXPECT_NEAR(r.out[1], 4.0, 1e-12); // mean of 2, 4, 6
  EXPECT_EQ(r.out[2], 0.0);
  EXPECT_EQ(r.out[3], 0.0);
  EXPECT_FALSE(std::isnan(r.out[2]) || std::isnan(r.out[3]));
  EXPECT_TRUE(std::isinf(r.lse[1]) && r.lse[1] < 0) << r.lse[1];
}

TEST(ReferenceAttention, MaskModHidesOnlyTheKeysItRejects) {
  // Hiding key 1 (score ln 3 would have dominated) leaves keys 0 and 2 with
  // scores 0 and 0: out is the mean of their V rows, lse = log 2.
  ProblemShape s = shape(1, 3, 1, 1);
  AttentionSpec spec;
  spec.scale = std::log(3.0);
  spec.maskMod = [](int64_t, int64_t, int64_t, int64_t kv) { return kv != 1; };
  Result r = run(s, spec, /*q=*/{1.0}, /*k=*/{0.0, 1.0, 0.0},
                 /*v=*/{2.0, 100.0, 6.0});
  EXPECT_NEAR(r.out[0], 4.0, 1e-12);
  EXPECT_NEAR(r.lse[0], std::log(2.0), 1e-12);
}

TEST(ReferenceAttention, CausalMaskAndMaskModCombineWithAnd) {
  // Top-left causal lets row 0 see key 0 only; mask_mod hides key 0, so row 0
  // sees nothing. Row 1 keeps key 1 (causal allows 0, 1; mask_mod drops 0).
  ProblemShape s = shape(2, 2, 1, 1);
  AttentionSpec spec;
  spec.causal = CausalAlignment::TopLeft;
  spec.maskMod = [](int64_t, int64_t, int64_t, int64_t kv) { return kv != 0; };
  Result r = run(s, spec, /*q=*/{1.0, 1.0}, /*k=*/{1.0, 1.0},
                 /*v=*/{7.0, 9.0});
  EXPECT_EQ(r.out[0], 0.0);
  EXPECT_EQ(r.lse[0], -kInf);
  EXPECT_DOUBLE_EQ(r.out[1], 9.0);
}

TEST(ReferenceAttention, ScoreModAddingAConstantShiftsOnlyTheLse) {
  // softmax is invariant under adding c to every score, but
  // log(sum exp(s + c)) = log(sum exp(s)) + c.
  ProblemShape s = shape(2, 3, 2, 2);
  std::vector<double> q = {0.3, -1.2, 2.0, 0.7};
  std::vector<double> k = {1.0, 0.5, -0.25, 2.0, 1.5, -1.0};
  std::vector<double> v = {1.0, -2.0, 3.0, 4.0, -5.0, 6.0};
  AttentionSpec plain;
  plain.scale = 0.7;
  AttentionSpec shifted = plain;
  const double c = 3.5;
  shifted.scoreMod = [c](double score, int64_t, int64_t, int64_t, int64_t) {
    return score + c;
  };
  Result a = run(s, plain, q, k, v);
  Result b = run(s, shifted, q, k, v);
  for (size_t i = 0; i < a.out.size(); ++i)
    EXPECT_NEAR(b.out[i], a.out[i], 1e-12) << "out[" << i << "]";
  for (size_t i = 0; i < a.lse.size(); ++i)
    EXPECT_NEAR(b.lse[i], a.lse[i] + c, 1e-12) << "lse[" << i << "]";
}

TEST(ReferenceAttention, ScoreModSeesTheScaledScoreAndItsPosition) {
  // score_mod is applied after scaling: it must receive scale * q.k, with the
  // query and key indices of that score.
  ProblemShape s = shape(2, 2, 1, 1);
  AttentionSpec spec;
  spec.scale = 0.25;
  std::vector<double> q = {2.0, 3.0}, k = {5.0, 7.0};
  int calls = 0;
  spec.scoreMod = [&](double score, int64_t b, int64_t h, int64_t qi,
                      int64_t kv) {
    ++calls;
    EXPECT_EQ(b, 0);
    EXPECT_EQ(h, 0);
    EXPECT_DOUBLE_EQ(score, 0.25 * q[qi] * k[kv]) << "q=" << qi << " kv=" << kv;
    return score;
  };
  run(s, spec, q, k, /*v=*/{1.0, 2.0});
  EXPECT_EQ(calls, 4);
}

TEST(ReferenceAttention, ScoreModCanReweightKeysByPosition) {
  // All raw scores are 0; score_mod adds ln 3 to key 1 only (a positional
  // bias), giving weights 1/4 and 3/4, and lse = log 4.
  ProblemShape s = shape(1, 2, 1, 1);
  AttentionSpec spec;
  spec.scoreMod = [](double score, int64_t, int64_t, int64_t, int64_t kv) {
    return kv == 1 ? score + std::log(3.0) : score;
  };
  Result r = run(s, spec, /*q=*/{0.0}, /*k=*/{1.0, 1.0}, /*v=*/{4.0, 8.0});
  EXPECT_NEAR(r.out[0], 0.25 * 4.0 + 0.75 * 8.0, 1e-12);
  EXPECT_NEAR(r.lse[0], std::log(4.0), 1e-12);
}

TEST(ReferenceAttention, GroupedQueryHeadsShareTheirKVHead) {
  // heads = 4, kvHeads = 2: group size 2, so heads 0, 1 read KV head 0 and
  // heads 2, 3 read KV head 1. One key per head makes out = that head's V
  // and lse = scale * q.k, so both K and V routing are visible.
  ProblemShape s = shape(1, 1, 1, 1);
  s.heads = 4;
  s.kvHeads = 2;
  AttentionSpec spec;
  spec.scale = 1.0;
  Result r = run(s, spec, /*q=*/{1.0, 2.0, 3.0, 4.0}, /*k=*/{10.0, 100.0},
                 /*v=*/{-1.0, -2.0});
  const double wantOut[] = {-1.0, -1.0, -2.0, -2.0};
  const double wantLse[] = {10.0, 20.0, 300.0, 400.0};
  for (int h = 0; h < 4; ++h) {
    SCOPED_TRACE(h);
    EXPECT_DOUBLE_EQ(r.out[h], wantOut[h]);
    EXPECT_DOUBLE_EQ(r.lse[h], wantLse[h]);
  }
}

TEST(ReferenceAttention, TensorsUseBatchSeqHeadDimAndLseBatchHeadSeq) {
  // batch = 2, heads = 2, seqQ = 2, one key: out[b, i, h, :] = V[b, 0, h, :]
  // and lse[b, h, i] = q[b, i, h] * k[b, 0, h]. Every q, k, v entry is
  // distinct, so a wrong stride picks a wrong value.
  ProblemShape s = shape(2, 1, 1, 2);
  s.batch = 2;
  s.heads = 2;
  s.kvHeads = 2;
  AttentionSpec spec;
  spec.scale = 1.0;
  // q[b, i, h] = 1 + 4b + 2i + h.
  std::vector<double> q = {1, 2, 3, 4, 5, 6, 7, 8};
  // k[b, 0, h] = 10 * (1 + 2b + h).
  std::vector<double> k = {10, 20, 30, 40};
  // v[b, 0, h, d] = 100 * (1 + 2b + h) + d.
  std::vector<double> v = {100, 101, 200, 201, 300, 301, 400, 401};
  Result r = run(s, spec, q, k, v);
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 2; ++i)
      for (int h = 0; h < 2; ++h) {
        SCOPED_TRACE(testing::Message()
                     << "b=" << b << " i=" << i << " h=" << h);
        double qv = 1 + 4 * b + 2 * i + h, kv = 10 * (1 + 2 * b + h);
        for (int d = 0; d < 2; ++d)
          EXPECT_DOUBLE_EQ(r.out[((b * 2 + i) * 2 + h) * 2 + d],
                           100 * (1 + 2 * b + h) + d);
        EXPECT_DOUBLE_EQ(r.lse[(b * 2 + h) * 2 + i], qv * kv);
      }
}

TEST(ReferenceAttention, LargeScoresDoNotOverflow) {
  // Scores 1e4 and 1e4 - 10: a naive exp(1e4) is inf, but the max-subtracted
  // softmax gives weights 1/(1+e^-10) and e^-10/(1+e^-10), and
  // lse = 1e4 + log(1 + e^-10).
  ProblemShape s = shape(1, 2, 1, 1);
  AttentionSpec spec;
  spec.scale = 1.0;
  Result r = run(s, spec, /*q=*/{100.0}, /*k=*/{100.0, 99.9},
                 /*v=*/{1.0, 0.0});
  const double e = std::exp(-100.0 * (100.0 - 99.9));
  EXPECT_TRUE(std::isfinite(r.out[0]));
  EXPECT_TRUE(std::isfinite(r.lse[0]));
  EXPECT_NEAR(r.out[0], 1.0 / (1.0 + e), 1e-9);
  EXPECT_NEAR(r.lse[0], 1e4 + std::log1p(e), 1e-9);
}

TEST(ReferenceAttention, LargeNegativeScoresDoNotUnderflowToAnEmptyRow) {
  // Every score is -1e4: exp(-1e4) underflows to 0, but after subtracting
  // the row max the weights are equal and the row is not treated as masked.
  ProblemShape s = shape(1, 2, 1, 1);
  AttentionSpec spec;
  spec.scale = 1.0;
  Result r = run(s, spec, /*q=*/{-100.0}, /*k=*/{100.0, 100.0},
                 /*v=*/{2.0, 4.0});
  EXPECT_NEAR(r.out[0], 3.0, 1e-12);
  EXPECT_NEAR(r.lse[0], -1e4 + std::log(2.0), 1e-9);
}

TEST(ValidateShape, AcceptsAValidShape) {
  ProblemShape s;
  s.batch = 2;
  s.heads = 8;
  s.kvHeads = 2;
  s.seqQ = 3;
  s.seqKV = 5;
  s.headDimQK = 16;
  s.headDimV = 32;
  EXPECT_EQ(validateShape(s), "");
  EXPECT_EQ(validateShape(ProblemShape()), ""); // the defaults are valid
}

TEST(ValidateShape, RejectsAnyZeroOrNegativeSize) {
  int64_t ProblemShape::*fields[] = {
      &ProblemShape::batch,   &ProblemShape::heads, &ProblemShape::kvHeads,
      &ProblemShape::seqQ,    &ProblemShape::seqKV, &ProblemShape::headDimQK,
      &ProblemShape::headDimV};
  for (size_t f = 0; f < std::size(fields); ++f) {
    for (int64_t bad : {0, -1}) {
      SCOPED_TRACE(testing::Message() << "field " << f << " = " << bad);
      ProblemShape s;
      s.*fields[f] = bad;
      EXPECT_NE(validateShape(s), "");
    }
  }
}

TEST(ValidateShape, RejectsHeadsNotAMultipleOfKVHeadsNamingBoth) {
  ProblemShape s;
  s.heads = 6;
  s.kvHeads = 4;
  std::string error = validateShape(s);
  EXPECT_NE(error.find("6"), std::string::npos) << error;
  EXPECT_NE(error.find("4"), std::string::npos) << error;
  // kvHeads > heads is not a multiple either (it would make the group 0).
  s.heads = 2;
  s.kvHeads = 3;
  EXPECT_NE(validateShape(s), "");
}

// The reference backward against central differences of the reference
// forward: L = sum(dO * O) is perturbed one input at a time.
TEST(ReferenceBackward, MatchesFiniteDifferencesOfTheForward) {
  ProblemShape shape;
  shape.batch = 1;
  shape.heads = 2;
  shape.kvHeads = 1; // GQA: both query heads read KV head 0
  shape.seqQ = 3;
  shape.seqKV = 4;
  shape.headDimQK = 3;
  shape.headDimV = 2;
  AttentionSpec spec;
  spec.scale = 0.7;
  spec.causal = CausalAlignment::BottomRight;
  spec.scoreMod = [](double s, int64_t, int64_t h, int64_t q, int64_t kv) {
    return 2.0 * std::tanh(s / 2.0) + 0.1 * h - 0.05 * (kv - q);
  };
  std::vector<double> q(shape.seqQ * shape.heads * shape.headDimQK),
      k(shape.seqKV * shape.headDimQK), v(shape.seqKV * shape.headDimV),
      dO(shape.seqQ * shape.heads * shape.headDimV);
  double x = 0.3;
  for (auto *vec : {&q, &k, &v, &dO})
    for (double &e : *vec)
      e = (x = std::fmod(x * 7.31 + 0.17, 2.0)) - 1.0;
  auto loss = [&] {
    std::vector<double> out(dO.size()), lse(shape.heads * shape.seqQ);
    attentionForward(shape, spec, q.data(), k.data(), v.data(), out.data(),
                     lse.data());
    double l = 0;
    for (size_t i = 0; i < out.size(); ++i)
      l += out[i] * dO[i];
    return l;
  };
  std::vector<double> dq(q.size()), dk(k.size()), dv(v.size());
  attentionBackward(shape, spec, q.data(), k.data(), v.data(), dO.data(),
                    dq.data(), dk.data(), dv.data());
  for (auto [input, grad] :
       {std::pair<std::vector<double> *, std::vector<double> *>{&q, &dq},
        {&k, &dk},
        {&v, &dv}}) {
    for (size_t i = 0; i < input->size(); ++i) {
      double saved = (*input)[i], h = 1e-6;
      (*input)[i] = saved + h;
      double up = loss();
      (*input)[i] = saved - h;
      double down = loss();
      (*input)[i] = saved;
      EXPECT_NEAR((*grad)[i], (up - down) / (2 * h), 1e-6) << "element " << i;
    }
  }
}

// A row with no visible key contributes no gradient (its output is the
// constant 0), and nothing becomes NaN.
TEST(ReferenceBackward, FullyMaskedRowsContributeNothing) {
  ProblemShape shape;
  shape.seqQ = 2;
  shape.seqKV = 2;
  shape.headDimQK = shape.headDimV = 2;
  AttentionSpec spec;
  spec.maskMod = [](int64_t, int64_t, int64_t q, int64_t) { return q == 1; };
  std::vector<double> q{1, 2, 3, 4}, k{1, 0, 0, 1}, v{1, 2, 3, 4},
      dO{1, 1, 1, 1}, dq(4), dk(4), dv(4);
  attentionBackward(shape, spec, q.data(), k.data(), v.data(), dO.data(),
                    dq.data(), dk.data(), dv.data());
  EXPECT_EQ(dq[0], 0.0);
  EXPECT_EQ(dq[1], 0.0);
  for (double g : {dq[2], dq[3], dk[0], dk[1], dk[2], dk[3], dv[0], dv[3]})
    EXPECT_TRUE(std::isfinite(g));
  // Row 1 sees both keys: dV sums its softmax weights times dO (= 1).
  EXPECT_NEAR(dv[0] + dv[2], 1.0, 1e-12);
}
