//===- Programs.cpp - compiled programs of a variant, kept per key --------===//

#include "Programs.h"

#include <c10/util/Exception.h>

#include <memory>
#include <mutex>
#include <unordered_map>

namespace kiln::torch_ops {

namespace {

/// Everything ProgramOptions holds, and which program on which device (-1:
/// the host), as one string: the texts, then the numbers' bytes (no
/// formatting: this is every call's path).
std::string keyOf(const ProgramOptions &o, const char *which, int device) {
  std::string key;
  key.reserve(o.text.size() + o.name.size() + 64);
  key.append(o.text).push_back('\0');
  key.append(o.name).push_back('\0');
  key.append(o.dtype).push_back('\0');
  key.append(which).push_back('\0');
  auto bytes = [&key](const auto &value) {
    key.append(reinterpret_cast<const char *>(&value), sizeof(value));
  };
  bytes(o.headDim);
  bytes(o.headDimV);
  bytes(o.dropoutP);
  bytes(o.varlen);
  bytes(o.pageSize);
  bytes(device);
  return key;
}

kiln_variant_options cOptions(const ProgramOptions &o, const std::string &text,
                              const std::string &name) {
  kiln_variant_options c{};
  c.mlir = text.c_str();
  c.name = name.empty() ? nullptr : name.c_str();
  c.head_dim = o.headDim;
  c.head_dim_v = o.headDimV;
  c.dtype = o.dtype;
  c.dropout_p = o.dropoutP;
  c.varlen = o.varlen ? 1 : 0;
  c.page_size = o.pageSize;
  return c;
}

/// A table of compiled programs. Entries are never freed: the programs live
/// as long as the process (freeing a loaded program at exit could run after
/// the CUDA driver has shut down). A miss compiles outside the lock, so
/// other threads' lookups do not wait behind a compile; two threads missing
/// the same key both compile, and the later one frees its program.
template <typename Handle, void (*Free)(Handle *)> class Table {
public:
  template <typename Make> Handle *get(std::string key, Make make) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto it = entries_.find(key); it != entries_.end())
        return it->second;
    }
    Handle *made = make();
    std::lock_guard<std::mutex> lock(mutex_);
    auto [it, inserted] = entries_.emplace(std::move(key), made);
    if (!inserted)
      Free(made);
    return it->second;
  }

private:
  std::mutex mutex_;
  std::unordered_map<std::string, Handle *> entries_;
};

} // namespace

void fail(const std::string &message) { TORCH_CHECK(false, "kiln: ", message); }

char *errorBuffer() {
  thread_local std::unique_ptr<char[]> buffer(new char[kErrorBufferSize]);
  return buffer.get();
}

kiln_program *deviceProgram(const ProgramOptions &options, const char *which,
                            int device) {
  static Table<kiln_program, kiln_program_free> table;
  return table.get(keyOf(options, which, device), [&] {
    char *error = errorBuffer();
    char arch[16];
    if (kiln_device_arch(device, arch, sizeof(arch), error, kErrorBufferSize))
      fail(error);
    std::string text(options.text), name(options.name);
    kiln_variant_options c = cOptions(options, text, name);
    char *spec = nullptr;
    if (kiln_compile_spec(&c, which, arch, &spec, error, kErrorBufferSize))
      fail(error);
    kiln_program *program = nullptr;
    int status =
        kiln_program_load(spec, device, &program, error, kErrorBufferSize);
    kiln_string_free(spec);
    if (status)
      fail(error);
    return program;
  });
}

kiln_host_program *hostProgram(const ProgramOptions &options) {
  static Table<kiln_host_program, kiln_host_program_free> table;
  return table.get(keyOf(options, "host", -1), [&] {
    char *error = errorBuffer();
    std::string text(options.text), name(options.name);
    kiln_variant_options c = cOptions(options, text, name);
    kiln_host_program *program = nullptr;
    if (kiln_host_program_compile(&c, &program, error, kErrorBufferSize))
      fail(error);
    return program;
  });
}

} // namespace kiln::torch_ops
