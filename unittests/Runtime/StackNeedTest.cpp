//===- StackNeedTest.cpp - A host kernel's stack need, bounded and checked -===//
//
// Part of gridjit. The host target bounds the stack each kernel needs when
// it compiles it (KernelInfo::StackBytes, docs/HostTarget.md "Stack"):
// the bound holds what the kernel really uses (measured on a thread whose
// stack was painted first), a kernel that needs more than a worker thread
// has is a compile error, and a launch on a thread with too little stack
// left is refused, before anything runs, with what the kernel needs, what
// the thread has and what to change.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"
#include "TestSupport.h"

#include "gridjit/Runtime/HostRuntime.h"
#include "gridjit/Runtime/Runtime.h"
#include "gridjit/Target/HostABI.h"
#include "gridjit/Target/Target.h"

#include "llvm/ADT/ArrayRef.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <pthread.h>
#include <sys/mman.h>
#include <vector>

using namespace gridjit;
using namespace gridjit::test;

namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

constexpr uint64_t ArrayBytes = 60000; // deepKernel's arrays

/// Runs \p Fn on a thread of its own whose stack is \p Stack, memory of
/// the caller's: exactly that stack.
void onStack(llvm::MutableArrayRef<unsigned char> Stack, const std::function<void()> &Fn) {
  pthread_attr_t Attr;
  pthread_attr_init(&Attr);
  pthread_attr_setstack(&Attr, Stack.data(), Stack.size());
  onThread(Attr, Fn);
}

/// \p Bytes of memory for a thread's stack, unmapped when it goes.
struct StackMemory {
  explicit StackMemory(size_t Bytes) : Bytes(Bytes) {
    void *P = mmap(nullptr, Bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(P, MAP_FAILED);
    Mem = P == MAP_FAILED ? nullptr : static_cast<unsigned char *>(P);
  }
  ~StackMemory() {
    if (Mem)
      munmap(Mem, Bytes);
  }
  llvm::MutableArrayRef<unsigned char> get() { return {Mem, Mem ? Bytes : 0}; }
  size_t Bytes;
  unsigned char *Mem;
};

/// The bytes of its stack that \p Fn, run on a thread of its own whose
/// \p StackBytes of stack were filled with a pattern first, wrote: from the
/// top down to the lowest byte that no longer holds the pattern.
uint64_t stackWrittenBy(size_t StackBytes, const std::function<void()> &Fn) {
  StackMemory S(StackBytes);
  const unsigned char Pattern = 0xa5;
  std::fill(S.get().begin(), S.get().end(), Pattern);
  onStack(S.get(), Fn);
  size_t Lowest = 0;
  while (Lowest < S.get().size() && S.get()[Lowest] == Pattern)
    ++Lowest;
  return S.get().size() - Lowest;
}

const char *const Shallow = "kernel shallow(n: i32, out: ptr<f64>) {\n"
                            "  out[block_idx.x] = n as f64;\n"
                            "}\n";

// The bound holds the real use: a chain of 20 device functions, each with
// an array of 60000 bytes live across its call, writes no more of a
// painted stack, beyond what a kernel with no arrays writes, than its
// StackBytes says. And the bound is tight: the arrays, the C library's
// allowance and little more.
TEST(StackNeedTest, TheBoundHoldsWhatTheKernelWrites) {
  Artifact Deep = compileForTest(createHostTarget(), deepKernel(20), "deep20.kir");
  Artifact Base = compileForTest(createHostTarget(), Shallow, "shallow.kir");
  ASSERT_FALSE(Deep.Kernels.empty() || Base.Kernels.empty());
  uint64_t Need = Deep.Kernels[0].StackBytes;
  EXPECT_GE(Need, 20 * ArrayBytes + hostabi::LibraryCallStackBytes);
  EXPECT_LE(Need, 20 * ArrayBytes + hostabi::LibraryCallStackBytes + (64u << 10));
  EXPECT_GE(Base.Kernels[0].StackBytes, hostabi::LibraryCallStackBytes);
  EXPECT_LE(Base.Kernels[0].StackBytes, hostabi::LibraryCallStackBytes + 4096);

  HostRuntimeOptions O;
  O.NumThreads = 1; // every block on the launching thread
  LoadedHost D = loadHost(Deep, O), B = loadHost(Base, O);
  ASSERT_TRUE(D.M && B.M);
  std::vector<double> Out(1);
  KernelArg Args[] = {KernelArg::i32(0), KernelArg::pointer(Out.data())};
  // Once each first: what a first launch does once (the fault handlers)
  // is then done in neither measured launch.
  ASSERT_TRUE(succeeded(B.RT->launch(*B.M, "shallow", config1D(1, 1), Args)));
  ASSERT_TRUE(succeeded(D.RT->launch(*D.M, "deep", config1D(1, 1), Args)));
  EXPECT_EQ(Out[0], 20.0);
  uint64_t BaseUse = stackWrittenBy(8u << 20, [&] {
    ASSERT_TRUE(succeeded(B.RT->launch(*B.M, "shallow", config1D(1, 1), Args)));
  });
  uint64_t DeepUse = stackWrittenBy(
      8u << 20, [&] { ASSERT_TRUE(succeeded(D.RT->launch(*D.M, "deep", config1D(1, 1), Args))); });
  ASSERT_GT(DeepUse, BaseUse);
  // The measure sees the arrays (each is cleared when its function
  // starts), less what the shallow launch wrote below its kernel's frame
  // (the runtime's calls after it) and the deep one's frame hides.
  EXPECT_GE(DeepUse - BaseUse, 19 * ArrayBytes);
  EXPECT_LE(DeepUse - BaseUse, Need) << "the kernel used more stack than its bound";
}

// More than a worker thread can give a kernel: an error of the compile,
// at the kernel, with the sizes.
TEST(StackNeedTest, AKernelThatNeedsMoreThanAWorkerThreadHasIsACompileError) {
  auto T = createHostTarget();
  ASSERT_TRUE(succeeded(T));
  auto M = parseAndVerify(deepKernel(300), "deep300.kir");
  ASSERT_TRUE(succeeded(M));
  auto A = (*T)->compile(**M, CompileOptions());
  ASSERT_TRUE(failed(A));
  llvm::Error E = A.takeError();
  EXPECT_EQ(peekErrorKind(E), ErrorKind::Compile);
  std::string Text = errorText(std::move(E));
  EXPECT_THAT(Text, MatchesRegex("deep300.kir:1800:1: error: kernel 'deep' needs [0-9]+ bytes "
                                 "\\(17\\.[0-9] MiB\\) of stack on the host target, more than the "
                                 "16515072 bytes \\(15\\.8 MiB\\) a worker thread can give a "
                                 "kernel: .*(\n.*)*"));
  EXPECT_THAT(Text, HasSubstr("make them smaller, or keep the data in a buffer"));
  EXPECT_EQ(hostabi::MaxKernelStackBytes, hostabi::WorkerStackBytes - hostabi::RuntimeStackBytes);
}

// A launch on a thread with too little stack left is refused before any
// block runs; on a thread with enough, with pool threads too, it runs.
TEST(StackNeedTest, ALaunchOnAThreadWithTooLittleStackIsRefused) {
  Artifact A = compileForTest(createHostTarget(), deepKernel(150), "deep150.kir");
  ASSERT_FALSE(A.Kernels.empty());
  uint64_t Need = A.Kernels[0].StackBytes;
  ASSERT_GT(Need, 150 * ArrayBytes);
  ASSERT_LT(Need + hostabi::RuntimeStackBytes, hostabi::WorkerStackBytes);
  // A launch of Blocks blocks on a runtime with a pool thread, from a
  // thread whose stack is Stack: what the kernel wrote, and the error's
  // kind and text ("" for none).
  struct Result {
    std::vector<double> Out;
    ErrorKind Kind = ErrorKind::Failed;
    std::string Text;
  };
  auto Launch = [&](StackMemory &Stack, uint32_t Blocks) {
    Result R;
    R.Out.assign(Blocks, -1.0);
    onStack(Stack.get(), [&] {
      HostRuntimeOptions O;
      O.NumThreads = 2;
      LoadedHost L = loadHost(A, O);
      ASSERT_TRUE(L.M);
      KernelArg Args[] = {KernelArg::i32(0), KernelArg::pointer(R.Out.data())};
      llvm::Error E = L.RT->launch(*L.M, "deep", config1D(Blocks, 1), Args);
      if (E)
        R.Kind = peekErrorKind(E);
      R.Text = errorText(std::move(E));
    });
    return R;
  };
  StackMemory Small(4u << 20), Large(64u << 20);
  Result Refused = Launch(Small, 4);
  EXPECT_EQ(Refused.Out, std::vector<double>(4, -1.0)) << "a refused launch ran";
  EXPECT_EQ(Refused.Kind, ErrorKind::Configuration);
  EXPECT_THAT(Refused.Text,
              MatchesRegex("kernel 'deep' needs " + std::to_string(Need) +
                           " bytes \\(8\\.[0-9] MiB\\) of stack \\(its frame as compiled, with "
                           "every device function's local arrays, and the C library's\\) and "
                           "the runtime 262144 bytes \\(256 KiB\\) more, but the thread that "
                           "launches it, which runs blocks too, has [0-9]+ bytes \\([0-9.]+ "
                           "MiB\\) left of its stack of 4194304 bytes \\(4 MiB\\): launch "
                           "it from a thread with a larger stack \\(ulimit -s for a process's "
                           "main thread, pthread_attr_setstacksize for a thread of yours\\), "
                           "or make the kernel's local arrays smaller"));
  Result Ran = Launch(Large, 8);
  EXPECT_EQ(Ran.Text, "");
  EXPECT_EQ(Ran.Out, std::vector<double>(8, 150.0));
}

} // namespace
