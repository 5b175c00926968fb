//===- StackCheck.cpp - A host launch's threads have the stack it needs ---===//
//
// Part of gridjit. See StackCheck.h.
//
//===----------------------------------------------------------------------===//

#include "StackCheck.h"

#include "gridjit/Support/ByteCount.h"
#include "gridjit/Support/Errors.h"
#include "gridjit/Target/HostABI.h"

#include <pthread.h>

using namespace gridjit;
namespace abi = gridjit::hostabi;

namespace {
/// A thread's stack as pthread_getattr_np gave it, asked once per thread:
/// for a process's main thread glibc reads /proc/self/maps and the stack
/// rlimit on every call (about 50 us, more than the rest of a launch).
struct StackBounds {
  uintptr_t Bottom = 0;
  uint64_t Size = 0;
};
thread_local std::optional<StackBounds> CachedBounds;

std::optional<StackBounds> askStackBounds() {
  pthread_attr_t Attr;
  if (pthread_getattr_np(pthread_self(), &Attr) != 0)
    return std::nullopt;
  void *Low = nullptr;
  size_t Size = 0;
  int Err = pthread_attr_getstack(&Attr, &Low, &Size);
  pthread_attr_destroy(&Attr);
  if (Err != 0)
    return std::nullopt;
  return StackBounds{reinterpret_cast<uintptr_t>(Low), Size};
}

bool contains(const StackBounds &B, uintptr_t Here) {
  return Here >= B.Bottom && Here - B.Bottom <= B.Size;
}
} // namespace

std::optional<ThreadStack> gridjit::callingThreadStack() {
  // The stack grows down from Bottom + Size; this frame is on it. A frame
  // outside the bounds asked before (the main thread's rlimit was raised
  // since) asks again.
  auto Here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  if (!CachedBounds || !contains(*CachedBounds, Here)) {
    CachedBounds = askStackBounds();
    if (!CachedBounds || !contains(*CachedBounds, Here)) {
      CachedBounds.reset();
      return std::nullopt;
    }
  }
  return ThreadStack{CachedBounds->Size, Here - CachedBounds->Bottom};
}

llvm::Error gridjit::checkKernelStack(const KernelInfo &K, bool PoolThreadsRun) {
  if (K.StackBytes == 0)
    return llvm::Error::success();
  uint64_t Need = K.StackBytes + abi::RuntimeStackBytes;
  // Made only for an error: a launch that passes pays for no formatting.
  auto What = [&] {
    return "kernel '" + K.Name + "' needs " + formatByteCount(K.StackBytes) +
           " of stack (its frame as compiled, with every device function's local "
           "arrays, and the C library's) and the runtime " +
           formatByteCount(abi::RuntimeStackBytes) + " more";
  };
  if (PoolThreadsRun && Need > abi::WorkerStackBytes)
    return makeError(ErrorKind::Configuration,
                     What() + ", but a worker thread of the host runtime has a stack of " +
                         formatByteCount(abi::WorkerStackBytes) +
                         ": make the kernel's local arrays smaller, or keep the data in a buffer");
  std::optional<ThreadStack> S = callingThreadStack();
  if (S && S->Left < Need)
    return makeError(ErrorKind::Configuration,
                     What() + ", but the thread that launches it, which runs blocks too, has " +
                         formatByteCount(S->Left) + " left of its stack of " +
                         formatByteCount(S->Size) +
                         ": launch it from a thread with a larger stack (ulimit -s for a "
                         "process's main thread, pthread_attr_setstacksize for a thread of "
                         "yours), or make the kernel's local arrays smaller");
  return llvm::Error::success();
}
