//===- CompileUnits.cpp - a program's kernels compiled one by one ---------===//

#include "kiln/CompileUnits.h"

#include "KernelCache.h"

#include "kiln/Runtime.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <system_error>
#include <thread>

namespace kiln {

namespace {

/// Part of the cache key: what compileToCubin passes to NVRTC, as one string.
std::string nvrtcOptionsFor(const std::string &arch) {
  std::string joined;
  for (const std::string &option : nvrtcOptions(arch))
    joined += (joined.empty() ? "" : " ") + option;
  return joined;
}

/// $KILN_NVRTC_THREADS when it is a positive integer, else the hardware's.
size_t compileThreads() {
  if (const char *env = std::getenv("KILN_NVRTC_THREADS"); env && *env) {
    char *end = nullptr;
    long n = std::strtol(env, &end, 10);
    if (*end == '\0' && n > 0)
      return static_cast<size_t>(n);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

} // namespace

Status splitCompileUnits(const ProgramSpec &spec,
                         std::vector<CompileUnit> &units) {
  units.clear();
  const std::string &source = spec.source;
  const std::string marker = kKernelSectionMarker;
  // Section starts: the marker at the beginning of a line.
  std::vector<size_t> starts;
  for (size_t at = source.find(marker); at != std::string::npos;
       at = source.find(marker, at + 1))
    if (at == 0 || source[at - 1] == '\n')
      starts.push_back(at);
  if (starts.empty()) {
    CompileUnit whole{spec.displayName(), source, {}};
    for (size_t k = 0; k < spec.kernels.size(); ++k)
      whole.kernels.push_back(k);
    units.push_back(std::move(whole));
    return Status();
  }
  std::string preamble = source.substr(0, starts.front());
  std::vector<int> sectionOf(spec.kernels.size(), -1);
  for (size_t i = 0; i < starts.size(); ++i) {
    size_t nameBegin = starts[i] + marker.size();
    size_t nameEnd = source.find('\n', nameBegin);
    std::string name = source.substr(nameBegin, nameEnd == std::string::npos
                                                    ? std::string::npos
                                                    : nameEnd - nameBegin);
    size_t end = i + 1 < starts.size() ? starts[i + 1] : source.size();
    auto kernel = std::find_if(
        spec.kernels.begin(), spec.kernels.end(),
        [&](const KernelLaunch &k) { return k.name == name; });
    if (kernel == spec.kernels.end())
      return Status::error("the source of '" + spec.displayName() +
                           "' has a section for kernel '" + name +
                           "', which its launch plan does not launch");
    size_t index = kernel - spec.kernels.begin();
    if (sectionOf[index] >= 0)
      return Status::error("the source of '" + spec.displayName() +
                           "' has two sections for kernel '" + name + "'");
    sectionOf[index] = static_cast<int>(units.size());
    units.push_back(
        {name, preamble + source.substr(starts[i], end - starts[i]), {index}});
  }
  for (size_t k = 0; k < spec.kernels.size(); ++k)
    if (sectionOf[k] < 0)
      return Status::error("the source of '" + spec.displayName() +
                           "' has no section for kernel '" +
                           spec.kernels[k].name + "' (a line \"" + marker +
                           spec.kernels[k].name + "\")");
  return Status();
}

Status compileUnits(const std::vector<CompileUnit> &units,
                    const std::string &arch, bool useCache,
                    std::vector<CompiledUnit> &compiled) {
  compiled.assign(units.size(), CompiledUnit());
  std::vector<Status> statuses(units.size());
  std::atomic<size_t> next{0};
  auto work = [&]() noexcept {
    for (size_t u = next++; u < units.size(); u = next++) try {
      CompiledUnit &out = compiled[u];
      std::string key;
      if (useCache) {
        key = cacheKey(units[u].source, arch, nvrtcOptionsFor(arch));
        if ((out.cacheHit = lookupCubin(key, out.cubin)))
          continue;
      }
      auto start = std::chrono::steady_clock::now();
      statuses[u] =
          compileToCubin(units[u].source, arch, units[u].name, out.cubin,
                         out.log);
      out.ms = std::chrono::duration<double, std::milli>(
                   std::chrono::steady_clock::now() - start)
                   .count();
      if (statuses[u].ok() && useCache)
        storeCubin(key, out.cubin);
    } catch (const std::exception &e) {
      // Nothing may escape a worker (std::terminate) or the C API.
      statuses[u] = Status::error("compiling '" + units[u].name +
                                  "' failed: " + e.what());
    }
  };
  size_t threads = std::min(compileThreads(), units.size());
  std::vector<std::thread> workers;
  for (size_t t = 1; t < threads; ++t) {
    try {
      workers.emplace_back(work);
    } catch (const std::system_error &) {
      break; // no more threads (a process limit): the ones started suffice
    }
  }
  work();
  for (std::thread &worker : workers)
    worker.join();
  for (const Status &s : statuses)
    if (!s.ok())
      return s;
  return Status();
}

} // namespace kiln
