//===- SpecCache.h - program specs cached on disk --------------*- C++ -*-===//
//
// kiln_compile_spec lowers a variant through the MLIR pipeline (6–30 ms per
// program), which a fresh process would otherwise redo for every program it
// loads, although the runtime's cubin cache makes the rest of a warm load a
// few milliseconds. So the spec (JSON) is kept in the same cache folder, keyed
// by everything that determines it: the variant's text and options, the
// program, the arch, and the compiler's own identity (the library file that
// holds it), so that a rebuilt compiler never reads an older one's specs.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_CAPI_SPECCACHE_H
#define KILN_COMPILER_CAPI_SPECCACHE_H

#include "kiln/kiln_jit_c.h"

#include <string>

namespace kiln::capi {

/// The cache key of the spec of `program` for `arch` under `options`.
std::string specCacheKey(const kiln_variant_options &options,
                         const std::string &program, const std::string &arch);

/// The cached spec of `key`, if there is one that reads as a spec.
bool lookupSpec(const std::string &key, std::string &json);

/// Keeps `json` as the spec of `key` (atomically; safe from many
/// processes).
void storeSpec(const std::string &key, const std::string &json);

} // namespace kiln::capi

#endif // KILN_COMPILER_CAPI_SPECCACHE_H
