//===- kiln.cpp - the Kiln driver -----------------------------------------===//
//
//   kiln run <variant.mlir> --backend cpu --batch B --heads H --seqlen N
//            [--seqlen-kv M] --head-dim D --dtype bf16|fp16 --check
//   kiln run <variant.mlir> -emit=attn|tile|llvm
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Commands.h"
#include "compiler/Driver/RunOptions.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

static const char *kUsage =
    "usage: kiln <command> [options]\n"
    "commands:\n"
    "  run <variant.mlir>      lower, JIT and run a variant (kiln run --help)\n"
    "  compile <variant.mlir>  emit and compile its CUDA kernel:\n"
    "                          --arch sm_80|sm_90a -o file.cubin (no GPU "
    "needed)\n";

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  if (argc < 2) {
    llvm::errs() << kUsage;
    return 2;
  }
  std::string command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    llvm::outs() << kUsage;
    return 0;
  }
  if (command != "run" && command != "compile") {
    llvm::errs() << "kiln: error: unknown command '" << command << "'\n"
                 << kUsage;
    return 2;
  }
  std::vector<std::string> args(argv + 2, argv + argc);
  kiln::driver::ParsedRunOptions parsed = kiln::driver::parseRunOptions(args);
  if (parsed.help) {
    llvm::outs() << kiln::driver::runUsage();
    return 0;
  }
  if (!parsed.error.empty()) {
    llvm::errs() << "kiln: error: " << parsed.error << "\n";
    return 2;
  }
  if (command == "compile")
    return kiln::driver::compileCommand(parsed.options, llvm::outs(),
                                        llvm::errs());
  return kiln::driver::runCommand(parsed.options, llvm::outs(), llvm::errs());
}
