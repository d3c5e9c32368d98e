//===- SpecCache.cpp - program specs cached on disk -----------------------===//

#include "SpecCache.h"

#include "KernelCache.h"

#include "kiln/SpecFormat.h"

namespace kiln::capi {

namespace {

/// The file holding this code (libkiln.so, or an executable linking the
/// compiler statically): its path, size and modification time.
const std::string &compilerIdentity() {
  static const std::string identity = [] {
    std::string id =
        symbolFileIdentity(reinterpret_cast<const void *>(&specCacheKey));
    return id.empty() ? std::string("unknown") : id;
  }();
  return identity;
}

template <typename T> void appendBytes(std::string &key, const T &value) {
  key.append(reinterpret_cast<const char *>(&value), sizeof(value));
}

} // namespace

std::string specCacheKey(const kiln_variant_options &o,
                         const std::string &program, const std::string &arch) {
  std::string key = "kiln-spec";
  for (const char *text : {o.mlir, o.name, o.dtype}) {
    key.push_back('\0');
    key += text ? std::string(text) : std::string("\x01", 1); // null
  }
  key.push_back('\0');
  key += program + '\0' + arch + '\0' + compilerIdentity() + '\0';
  appendBytes(key, o.head_dim);
  appendBytes(key, o.head_dim_v);
  appendBytes(key, o.page_size);
  appendBytes(key, o.dropout_p);
  appendBytes(key, o.capture_gradients);
  appendBytes(key, o.varlen);
  appendBytes(key, o.block_sparse[0]);
  appendBytes(key, o.block_sparse[1]);
  appendBytes(key, o.build_block_mask);
  return cacheDigest(key);
}

bool lookupSpec(const std::string &key, std::string &json) {
  if (!readCacheFile(key, ".spec.json", json))
    return false;
  // A file that does not read as a spec (edited, or from a disk fault) is
  // compiled again and replaced.
  ProgramSpec spec;
  return readSpecJson(json, spec).ok();
}

void storeSpec(const std::string &key, const std::string &json) {
  writeCacheFile(key, ".spec.json", json);
}

} // namespace kiln::capi
