//===- ReferenceAttention.cpp - float64 attention reference ---------------===//

#include "reference/ReferenceAttention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace kiln::ref {

std::string validateShape(const ProblemShape &s) {
  if (s.batch < 1 || s.heads < 1 || s.kvHeads < 1 || s.seqQ < 1 ||
      s.seqKV < 1 || s.headDimQK < 1 || s.headDimV < 1)
    return "every size must be at least 1";
  if (s.heads % s.kvHeads != 0)
    return "heads (" + std::to_string(s.heads) +
           ") must be a multiple of kv heads (" + std::to_string(s.kvHeads) +
           ")";
  return "";
}

/// Whether key kv is visible from query q under the causal alignment.
static bool causalKeeps(CausalAlignment causal, int64_t q, int64_t kv,
                        int64_t seqQ, int64_t seqKV) {
  switch (causal) {
  case CausalAlignment::None:
    return true;
  case CausalAlignment::TopLeft:
    return kv <= q;
  case CausalAlignment::BottomRight:
    return kv <= q + seqKV - seqQ;
  }
  return true;
}

void attentionForward(const ProblemShape &s, const AttentionSpec &spec,
                      const double *q, const double *k, const double *v,
                      double *out, double *lse) {
  const double negInf = -std::numeric_limits<double>::infinity();
  const int64_t group = s.heads / s.kvHeads;
  std::vector<double> scores(s.seqKV);
  std::vector<double> row(s.headDimV);
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.heads; ++h) {
      const int64_t hk = h / group;
      for (int64_t i = 0; i < s.seqQ; ++i) {
        const double *qi = q + ((b * s.seqQ + i) * s.heads + h) * s.headDimQK;
        double rowMax = negInf;
        for (int64_t j = 0; j < s.seqKV; ++j) {
          bool keep = causalKeeps(spec.causal, i, j, s.seqQ, s.seqKV) &&
                      (!spec.maskMod || spec.maskMod(b, h, i, j));
          if (!keep) {
            scores[j] = negInf;
            continue;
          }
          const double *kj =
              k + ((b * s.seqKV + j) * s.kvHeads + hk) * s.headDimQK;
          double dot = 0.0;
          for (int64_t d = 0; d < s.headDimQK; ++d)
            dot += qi[d] * kj[d];
          double score = dot * spec.scale;
          if (spec.scoreMod)
            score = spec.scoreMod(score, b, h, i, j);
          scores[j] = score;
          rowMax = std::max(rowMax, score);
        }
        double *oi = out + ((b * s.seqQ + i) * s.heads + h) * s.headDimV;
        double *lsei = lse + (b * s.heads + h) * s.seqQ + i;
        if (rowMax == negInf) { // no visible key: the defined result
          std::fill(oi, oi + s.headDimV, 0.0);
          *lsei = negInf;
          continue;
        }
        std::fill(row.begin(), row.end(), 0.0);
        double sum = 0.0;
        for (int64_t j = 0; j < s.seqKV; ++j) {
          if (scores[j] == negInf)
            continue;
          double p = std::exp(scores[j] - rowMax);
          sum += p;
          const double *vj =
              v + ((b * s.seqKV + j) * s.kvHeads + hk) * s.headDimV;
          for (int64_t d = 0; d < s.headDimV; ++d)
            row[d] += p * vj[d];
        }
        for (int64_t d = 0; d < s.headDimV; ++d)
          oi[d] = row[d] / sum;
        *lsei = rowMax + std::log(sum);
      }
    }
  }
}

} // namespace kiln::ref
