//===- ReferenceAttention.cpp - float64 attention reference ---------------===//

#include "reference/ReferenceAttention.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <thread>
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

/// Scores of query row (b, h, i) against every key: score_mod(scale * q.k)
/// or -inf where the key is masked; `derivative`, when given, receives the
/// score_mod's derivative at each kept key (central differences, 1 without
/// a mod). Returns the row's maximum (-inf when no key is visible).
static double rowScores(const ProblemShape &s, const AttentionSpec &spec,
                        const double *q, const double *k, int64_t b, int64_t h,
                        int64_t i, std::vector<double> &scores,
                        std::vector<double> *derivative = nullptr) {
  const double negInf = -std::numeric_limits<double>::infinity();
  const int64_t hk = h / (s.heads / s.kvHeads);
  const double *qi = q + ((b * s.seqQ + i) * s.heads + h) * s.headDimQK;
  double rowMax = negInf;
  for (int64_t j = 0; j < s.seqKV; ++j) {
    bool keep = causalKeeps(spec.causal, i, j, s.seqQ, s.seqKV) &&
                (!spec.maskMod || spec.maskMod(b, h, i, j));
    if (!keep) {
      scores[j] = negInf;
      continue;
    }
    const double *kj = k + ((b * s.seqKV + j) * s.kvHeads + hk) * s.headDimQK;
    double dot = 0.0;
    for (int64_t d = 0; d < s.headDimQK; ++d)
      dot += qi[d] * kj[d];
    double arg = dot * spec.scale;
    double score = spec.scoreMod ? spec.scoreMod(arg, b, h, i, j) : arg;
    if (derivative) {
      (*derivative)[j] = 1.0;
      if (spec.scoreMod) {
        double step = 1e-6 * std::max(1.0, std::fabs(arg));
        (*derivative)[j] = (spec.scoreMod(arg + step, b, h, i, j) -
                            spec.scoreMod(arg - step, b, h, i, j)) /
                           (2 * step);
      }
    }
    scores[j] = score;
    rowMax = std::max(rowMax, score);
  }
  return rowMax;
}

/// One query row of one (batch, head): O(Lk) memory.
static void attentionRow(const ProblemShape &s, const AttentionSpec &spec,
                         const double *q, const double *k, const double *v,
                         double *out, double *lse, int64_t b, int64_t h,
                         int64_t i, std::vector<double> &scores,
                         std::vector<double> &row) {
  const double negInf = -std::numeric_limits<double>::infinity();
  const int64_t hk = h / (s.heads / s.kvHeads);
  double rowMax = rowScores(s, spec, q, k, b, h, i, scores);
  double *oi = out + ((b * s.seqQ + i) * s.heads + h) * s.headDimV;
  double *lsei = lse + (b * s.heads + h) * s.seqQ + i;
  if (rowMax == negInf) { // no visible key: the defined result
    std::fill(oi, oi + s.headDimV, 0.0);
    *lsei = negInf;
    return;
  }
  std::fill(row.begin(), row.end(), 0.0);
  double sum = 0.0;
  for (int64_t j = 0; j < s.seqKV; ++j) {
    if (scores[j] == negInf)
      continue;
    double p = std::exp(scores[j] - rowMax);
    sum += p;
    if (spec.dropout)
      p *= spec.dropout(b, h, i, j);
    const double *vj = v + ((b * s.seqKV + j) * s.kvHeads + hk) * s.headDimV;
    for (int64_t d = 0; d < s.headDimV; ++d)
      row[d] += p * vj[d];
  }
  for (int64_t d = 0; d < s.headDimV; ++d)
    oi[d] = row[d] / sum;
  *lsei = rowMax + std::log(sum);
}

void attentionForward(const ProblemShape &s, const AttentionSpec &spec,
                      const double *q, const double *k, const double *v,
                      double *out, double *lse) {
  // Rows are independent: spread them over the cores (long sequences make
  // the O(N^2 d) float64 reference the slowest part of a check). The mods
  // must be safe to call concurrently.
  const int64_t rows = s.batch * s.heads * s.seqQ;
  int64_t threads = std::max<int64_t>(
      1, std::min<int64_t>(std::thread::hardware_concurrency(),
                           rows * s.seqKV / (1 << 16)));
  std::atomic<int64_t> next{0};
  auto worker = [&] {
    std::vector<double> scores(s.seqKV), row(s.headDimV);
    constexpr int64_t kChunk = 16;
    for (int64_t start = next.fetch_add(kChunk); start < rows;
         start = next.fetch_add(kChunk))
      for (int64_t r = start; r < std::min(rows, start + kChunk); ++r) {
        int64_t b = r / (s.heads * s.seqQ), h = (r / s.seqQ) % s.heads,
                i = r % s.seqQ;
        attentionRow(s, spec, q, k, v, out, lse, b, h, i, scores, row);
      }
  };
  std::vector<std::thread> pool;
  for (int64_t t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread &t : pool)
    t.join();
}

void attentionBackward(const ProblemShape &s, const AttentionSpec &spec,
                       const double *q, const double *k, const double *v,
                       const double *dout, double *dq, double *dk, double *dv) {
  const double negInf = -std::numeric_limits<double>::infinity();
  const int64_t group = s.heads / s.kvHeads;
  std::fill(dq, dq + s.batch * s.seqQ * s.heads * s.headDimQK, 0.0);
  std::fill(dk, dk + s.batch * s.seqKV * s.kvHeads * s.headDimQK, 0.0);
  std::fill(dv, dv + s.batch * s.seqKV * s.kvHeads * s.headDimV, 0.0);
  // One task per (batch, KV head): it owns that head's dk/dv and the dq rows
  // of its query heads, so tasks never write the same element.
  const int64_t tasks = s.batch * s.kvHeads;
  std::atomic<int64_t> next{0};
  auto worker = [&] {
    std::vector<double> x(s.seqKV), p(s.seqKV), dmod(s.seqKV), dp(s.seqKV);
    for (int64_t t = next.fetch_add(1); t < tasks; t = next.fetch_add(1)) {
      int64_t b = t / s.kvHeads, hk = t % s.kvHeads;
      for (int64_t h = hk * group; h < (hk + 1) * group; ++h)
        for (int64_t i = 0; i < s.seqQ; ++i) {
          const double *qi = q + ((b * s.seqQ + i) * s.heads + h) * s.headDimQK;
          const double *doi =
              dout + ((b * s.seqQ + i) * s.heads + h) * s.headDimV;
          double rowMax = rowScores(s, spec, q, k, b, h, i, x, &dmod);
          if (rowMax == negInf)
            continue; // no visible key: out = 0 does not depend on anything
          double sum = 0.0;
          for (int64_t j = 0; j < s.seqKV; ++j) {
            p[j] = x[j] == negInf ? 0.0 : std::exp(x[j] - rowMax);
            sum += p[j];
          }
          double rowD = 0.0; // D = sum_j P_ij dP_ij = dO_i . O_i
          for (int64_t j = 0; j < s.seqKV; ++j) {
            p[j] /= sum;
            if (p[j] == 0.0) {
              dp[j] = 0.0;
              continue;
            }
            const double *vj =
                v + ((b * s.seqKV + j) * s.kvHeads + hk) * s.headDimV;
            double acc = 0.0;
            for (int64_t d = 0; d < s.headDimV; ++d)
              acc += doi[d] * vj[d];
            // Dropout: O = (P ∘ Z) V, so dP = Z ∘ dO Vᵀ and dV = (P ∘ Z)ᵀ dO.
            if (spec.dropout)
              acc *= spec.dropout(b, h, i, j);
            dp[j] = acc;
            rowD += p[j] * acc;
          }
          double *dqi = dq + ((b * s.seqQ + i) * s.heads + h) * s.headDimQK;
          for (int64_t j = 0; j < s.seqKV; ++j) {
            if (p[j] == 0.0)
              continue;
            double ds = p[j] * (dp[j] - rowD) * dmod[j] * spec.scale;
            const double *kj =
                k + ((b * s.seqKV + j) * s.kvHeads + hk) * s.headDimQK;
            double *dkj =
                dk + ((b * s.seqKV + j) * s.kvHeads + hk) * s.headDimQK;
            double *dvj =
                dv + ((b * s.seqKV + j) * s.kvHeads + hk) * s.headDimV;
            for (int64_t d = 0; d < s.headDimQK; ++d) {
              dqi[d] += ds * kj[d];
              dkj[d] += ds * qi[d];
            }
            double pv = spec.dropout ? p[j] * spec.dropout(b, h, i, j) : p[j];
            for (int64_t d = 0; d < s.headDimV; ++d)
              dvj[d] += pv * doi[d];
          }
        }
    }
  };
  int64_t threads = std::max<int64_t>(
      1, std::min<int64_t>(std::thread::hardware_concurrency(), tasks));
  std::vector<std::thread> pool;
  for (int64_t i = 1; i < threads; ++i)
    pool.emplace_back(worker);
  worker();
  for (std::thread &t : pool)
    t.join();
}

} // namespace kiln::ref
