//===- KernelGen.h - Random valid KIR kernels from fuzzer bytes -*- C++ -*-===//
//
// Part of gridjit (docs/Fuzzing.md). generateKernel turns bytes into one
// valid KIR module (a kernel `k` and up to three device functions) and the
// inputs of one launch. The same bytes always give the same kernel. Every
// kernel is race-free and has one defined result: threads write only their
// own output slots, atomics only combine commutatively and their old values
// are never used, shared memory is written before a block-wide
// sync_threads() and read after it, every index is masked into its array,
// every loop has a small bound, and no operation is used whose result KIR
// leaves open or that LLVM may fold differently from the machine (float
// min/max of zeros of both signs, transcendental math, atomic_exch/cas).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_FUZZ_KERNELGEN_H
#define GRIDJIT_FUZZ_KERNELGEN_H

#include "FuzzCommon.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gridjit::fuzz {

/// A generated kernel and its launch.
struct GeneratedKernel {
  /// The module's text. Its kernel is
  ///   k(ia: ptr<i32>, la: ptr<i64>, fa: ptr<f32>, da: ptr<f64>,
  ///     oi: ptr<i64>, of: ptr<f64>, acc: ptr<u64>,
  ///     s0: i32, s1: u32, s2: i64, s3: u64, s4: f32, s5: f64)
  std::string Source;
  uint32_t Grid = 1, Block = 1; ///< 1-D; Block <= MaxBlock
  std::vector<int32_t> IA;      ///< InputElems each
  std::vector<int64_t> LA;
  std::vector<float> FA;
  std::vector<double> DA;
  int32_t S0 = 0;
  uint32_t S1 = 0;
  int64_t S2 = 0;
  uint64_t S3 = 0;
  float S4 = 0;
  double S5 = 0;

  static constexpr unsigned InputElems = 64;
  static constexpr unsigned MaxBlock = 64;
  static constexpr unsigned MaxGrid = 3;
  /// Output slots per thread in oi and of.
  static constexpr unsigned OutSlots = 16;
  /// Elements of acc (8 for global atomics, 8 for the shared ones).
  static constexpr unsigned AccElems = 16;
};

GeneratedKernel generateKernel(ByteReader &In);

} // namespace gridjit::fuzz

#endif // GRIDJIT_FUZZ_KERNELGEN_H
