//===- KernelCache.cpp - cubins cached in memory and on disk --------------===//

#include "KernelCache.h"

#include "CudaApi.h"
#include "kiln/Runtime.h"

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln {
namespace {

uint64_t fnv1a(const std::string &data, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::mutex &cacheMutex() {
  static std::mutex m;
  return m;
}

std::map<std::string, std::string> &memoryCache() {
  static std::map<std::string, std::string> cache;
  return cache;
}

bool makeDirectories(const std::string &path) {
  std::string partial;
  std::stringstream parts(path);
  std::string part;
  if (!path.empty() && path[0] == '/')
    partial = "/";
  while (std::getline(parts, part, '/')) {
    if (part.empty())
      continue;
    partial += part + "/";
    if (mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
      return false;
  }
  return true;
}

} // namespace

std::string fileIdentity(const char *path) {
  char real[PATH_MAX];
  struct stat info;
  if (!path || !realpath(path, real) || stat(real, &info) != 0)
    return "";
  return std::string(real) + " " + std::to_string(info.st_size) + " " +
         std::to_string(static_cast<long long>(info.st_mtime));
}

std::string symbolFileIdentity(const void *symbol) {
  Dl_info where;
  if (!symbol || !dladdr(symbol, &where) || !where.dli_fname)
    return "";
  return fileIdentity(where.dli_fname);
}

std::string cacheDigest(const std::string &data) {
  char hex[33];
  std::snprintf(
      hex, sizeof(hex), "%016llx%016llx",
      static_cast<unsigned long long>(fnv1a(data, 0xcbf29ce484222325ull)),
      static_cast<unsigned long long>(fnv1a(data, 0x84222325cbf29ce4ull)));
  return hex;
}

std::string cacheKey(const std::string &source, const std::string &arch,
                     const std::string &options) {
  // The emitted source includes the device library by name only, so its
  // text is part of the key too; so is the NVRTC that compiles it (its
  // file's identity, so that a hit does not load NVRTC).
  std::string all =
      source + '\0' + arch + '\0' + options + '\0' + runtimeVersion();
  for (int i = 0; i < api::kDeviceLibraryCount; ++i)
    all += std::string("\0", 1) + api::kDeviceLibrarySources[i];
  all += std::string("\0", 1) + api::nvrtcIdentity();
  return cacheDigest(all);
}

std::string cacheDirectory() {
  static std::string dir = [] {
    std::string d;
    if (const char *env = std::getenv("KILN_CACHE_DIR"); env && *env)
      d = env;
    else if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
      d = std::string(xdg) + "/kiln";
    else if (const char *home = std::getenv("HOME"); home && *home)
      d = std::string(home) + "/.cache/kiln";
    if (!d.empty() && !makeDirectories(d))
      d.clear();
    return d;
  }();
  return dir;
}

bool readCacheFile(const std::string &key, const std::string &extension,
                   std::string &data) {
  std::string dir = cacheDirectory();
  if (dir.empty())
    return false;
  std::ifstream in(dir + "/" + key + extension, std::ios::binary);
  if (!in)
    return false;
  std::stringstream buffer;
  buffer << in.rdbuf();
  data = buffer.str();
  return !data.empty();
}

void writeCacheFile(const std::string &key, const std::string &extension,
                    const std::string &data) {
  std::string dir = cacheDirectory();
  if (dir.empty())
    return;
  std::random_device rd;
  std::string path = dir + "/" + key + extension;
  std::string tmp =
      path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(rd());
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out) {
      std::remove(tmp.c_str());
      return;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    std::remove(tmp.c_str());
}

bool lookupCubin(const std::string &key, std::string &cubin) {
  std::lock_guard<std::mutex> lock(cacheMutex());
  auto &memory = memoryCache();
  if (auto it = memory.find(key); it != memory.end()) {
    cubin = it->second;
    return true;
  }
  if (!readCacheFile(key, ".cubin", cubin))
    return false;
  memory[key] = cubin;
  return true;
}

void storeCubin(const std::string &key, const std::string &cubin) {
  std::lock_guard<std::mutex> lock(cacheMutex());
  memoryCache()[key] = cubin;
  writeCacheFile(key, ".cubin", cubin);
}

} // namespace kiln
