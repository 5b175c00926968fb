//===- BenchPaths.h - Where the checkout, the build and LLVM's tools are --===//
//
// Part of gridjit. The benchmarks find examples/, the built jit-run and
// libgridjit.so, and llc through these. Only BenchPaths.cpp is compiled
// with the absolute paths, so that the benchmark programs' own compile
// lines are the same in every checkout (ccache hits in a fresh clone).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_BENCHMARKS_BENCHPATHS_H
#define GRIDJIT_BENCHMARKS_BENCHPATHS_H

#include <string>

namespace gridjit::bench {

/// The source tree this build was configured from.
std::string checkoutDir();
/// The build tree (bin/jit-run, lib/libgridjit.so).
std::string buildDir();
/// LLVM's tools (llc).
std::string llvmToolsDir();

} // namespace gridjit::bench

#endif // GRIDJIT_BENCHMARKS_BENCHPATHS_H
