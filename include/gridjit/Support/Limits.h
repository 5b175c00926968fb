//===- Limits.h - CUDA's execution limits, named once -----------*- C++ -*-===//
//
// Part of gridjit. The warp size and the launch limits of CUDA's execution
// model, which KIR kernels assume on every target. The runtimes check
// launches against them and the code generators rely on them (value-range
// hints, lane arithmetic), so both sides use these names: relaxing a limit
// here changes both at once.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_SUPPORT_LIMITS_H
#define GRIDJIT_SUPPORT_LIMITS_H

#include <cstdint>

namespace gridjit::limits {

/// Threads in a warp (the value of `warp_size`).
inline constexpr uint32_t WarpSize = 32;
/// log2(WarpSize): a thread's warp is its linear index >> Log2WarpSize.
inline constexpr uint32_t Log2WarpSize = 5;
/// A thread's lane is its linear index & LaneMask.
inline constexpr uint32_t LaneMask = WarpSize - 1;
static_assert(WarpSize == 1u << Log2WarpSize, "WarpSize must be 2^Log2WarpSize");

/// Threads in one block (x*y*z).
inline constexpr uint32_t MaxThreadsPerBlock = 1024;
/// Largest block dimensions (x, y, z).
inline constexpr uint32_t MaxBlockDim[3] = {1024, 1024, 64};
/// Largest grid dimensions (x, y, z).
inline constexpr uint32_t MaxGridDim[3] = {0x7fffffffu, 65535, 65535};

/// The most bytes a local array may have on a thread's stack. The verifier
/// rejects a larger array in a device function (whose arrays always live
/// on the stack of the thread that runs the kernel); the host target keeps
/// a kernel's larger arrays once per block instead (hostabi::
/// MaxStackArrayBytes, chosen against the 16 MiB stack of its worker
/// threads).
inline constexpr uint64_t MaxStackArrayBytes = 64u << 10;

/// The most bytes of a module's constant tables and constant memory
/// together (`const W: [T; N] = [...]`, `constant C: [T; N];`): a GPU's
/// constant bank, 64 KiB. The verifier rejects more, on every target.
inline constexpr uint64_t MaxConstantBytes = 64u << 10;

/// The most threads a caller may ask for: the host runtime's worker threads
/// (HostRuntimeOptions::NumThreads, RuntimeOptions::NumThreads, jit-run's
/// --threads and GRIDJIT_NUM_THREADS, gj_runtime_options::threads) and the
/// compiler's (CompilerOptions::AsyncThreads, gj_compiler_options::threads).
/// A larger count is an error, not an attempt to start that many threads.
inline constexpr uint32_t MaxThreads = 1024;

/// The most bytes one device buffer may have (Runtime::allocate, the C
/// API's gj_buffer_alloc, the Python package's DeviceArray): 2^62, far more
/// than any machine's memory, and small enough that every size computed
/// from a buffer's (rounded up to pages, with guard regions, offset plus
/// length) fits in 64 bits. A larger request is an error of kind
/// InvalidArgument that names this limit, before anything is allocated.
inline constexpr uint64_t MaxBufferBytes = uint64_t(1) << 62;

/// The most bytes of KIR source the C API compiles (gj_compile,
/// gj_compile_async): source lines and columns are 32-bit numbers. A
/// larger size is an error of kind InvalidArgument, before any byte is
/// read.
inline constexpr uint64_t MaxSourceBytes = 0xffffffffu;

} // namespace gridjit::limits

#endif // GRIDJIT_SUPPORT_LIMITS_H
