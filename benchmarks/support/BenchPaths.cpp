//===- BenchPaths.cpp - Where the checkout, the build and LLVM's tools are ===//
//
// Part of gridjit. The only benchmark file compiled with absolute paths
// (benchmarks/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "BenchPaths.h"

std::string gridjit::bench::checkoutDir() { return GRIDJIT_SOURCE_DIR; }
std::string gridjit::bench::buildDir() { return GRIDJIT_BINARY_DIR; }
std::string gridjit::bench::llvmToolsDir() { return GRIDJIT_LLVM_TOOLS_DIR; }
