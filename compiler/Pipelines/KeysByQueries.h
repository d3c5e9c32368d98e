//===- KeysByQueries.h - the backward dK/dV kernel's orientation -*- C++ -*-===//

#ifndef KILN_COMPILER_PIPELINES_KEYSBYQUERIES_H
#define KILN_COMPILER_PIPELINES_KEYSBYQUERIES_H

namespace kiln {

/// The backward dK/dV kernel's orientation (convert-attn-to-tile-backward
/// keys-by-queries). `Auto`: keys by queries where the kernel then gets a
/// TMA producer warpgroup (sm_90a with wgmma and warp specialization),
/// queries by keys elsewhere (measured faster without one).
enum class KeysByQueries { Auto, On, Off };

} // namespace kiln

#endif // KILN_COMPILER_PIPELINES_KEYSBYQUERIES_H
