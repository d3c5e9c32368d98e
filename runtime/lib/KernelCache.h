//===- KernelCache.h - cubins cached in memory and on disk ------*- C++ -*-===//

#ifndef KILN_RUNTIME_LIB_KERNELCACHE_H
#define KILN_RUNTIME_LIB_KERNELCACHE_H

#include <string>

namespace kiln {

/// A 128-bit hex digest of `data` (two FNV-1a hashes): cache file names.
std::string cacheDigest(const std::string &data);

/// A file's identity in cache keys: its real path, size and modification
/// time; empty when it cannot be read.
std::string fileIdentity(const char *path);

/// fileIdentity of the file (a library or the executable) that defines
/// `symbol`; empty when there is none.
std::string symbolFileIdentity(const void *symbol);

/// A 128-bit hex digest of everything that determines a cubin: source, arch,
/// compile options, Kiln's and NVRTC's versions.
std::string cacheKey(const std::string &source, const std::string &arch,
                     const std::string &options);

/// The cache folder: $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else
/// $HOME/.cache/kiln; empty when none can be created (memory only).
std::string cacheDirectory();

/// Reads the cache folder's file <key><extension>; false when there is none
/// (or no folder).
bool readCacheFile(const std::string &key, const std::string &extension,
                   std::string &data);

/// Writes the cache folder's file <key><extension> atomically (under a
/// unique temporary name, then renamed), so concurrent processes never read
/// a partial file; does nothing without a folder.
void writeCacheFile(const std::string &key, const std::string &extension,
                    const std::string &data);

/// Looks a cubin up in memory, then on disk.
bool lookupCubin(const std::string &key, std::string &cubin);

/// Stores a cubin in memory and on disk. The file appears atomically (written
/// under a unique temporary name, then renamed), so concurrent processes
/// never read a partial cubin.
void storeCubin(const std::string &key, const std::string &cubin);

} // namespace kiln

#endif // KILN_RUNTIME_LIB_KERNELCACHE_H
