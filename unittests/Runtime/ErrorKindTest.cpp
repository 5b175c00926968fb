//===- ErrorKindTest.cpp - Every kind of error, from the C++ API ----------===//
//
// Part of gridjit. One error of each kind of ErrorKinds.def as the C++ API
// returns it, each of its own kind (getErrorKind/peekErrorKind): on the
// host runtime and compiler, on the CUDA runtime over the fake driver (its
// results mapped by DriverCallError::kindOf), and a file that cannot be
// read. test/CAPI/kinds.test and test/Python/test_errors.py do the same
// through the C API and the Python package.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"
#include "TestSupport.h"

#include "Runtime/Cuda/CudaDriver.h"
#include "Runtime/Cuda/CudaRuntime.h"

#include "gridjit/Cache/RemoteCache.h"
#include "gridjit/Compiler/Compiler.h"
#include "gridjit/Runtime/HostRuntime.h"
#include "gridjit/Runtime/LaunchChecks.h"
#include "gridjit/Support/Errors.h"

#include "llvm/Support/MemoryBuffer.h"

#include "gtest/gtest.h"

#include <set>

using namespace gridjit;
using namespace gridjit::test;

namespace {

/// test/CAPI/Inputs/kinds.kir: kernels that fail in each way a host
/// runtime can.
std::string kindsKir() {
  auto Buf = llvm::MemoryBuffer::getFile(std::string(sourceDir()) + "/test/CAPI/Inputs/kinds.kir");
  if (!Buf) {
    ADD_FAILURE() << "cannot read kinds.kir: " << Buf.getError().message();
    return "";
  }
  return (*Buf)->getBuffer().str();
}

/// The kind of \p E, which it consumes; "success" is a test failure.
ErrorKind kindOf(llvm::Error E) {
  EXPECT_TRUE(!!E) << "succeeded, expected an error";
  ErrorKind K = peekErrorKind(E);
  llvm::consumeError(std::move(E));
  return K;
}
template <typename T> ErrorKind kindOf(llvm::Expected<T> E) {
  if (E) {
    ADD_FAILURE() << "succeeded, expected an error";
    return ErrorKind::Failed;
  }
  return kindOf(E.takeError());
}

/// A one-dimensional launch of \p Grid blocks of \p Block threads.
LaunchConfig config(uint32_t Grid, uint32_t Block) { return {{Grid, 1, 1}, {Block, 1, 1}, 0}; }

TEST(ErrorKindTest, HostCompilerAndRuntime) {
  std::set<ErrorKind> Seen;
  auto Check = [&](ErrorKind Got, ErrorKind Want) {
    EXPECT_EQ(getErrorKindName(Got), getErrorKindName(Want));
    Seen.insert(Got);
  };
  CompilerOptions CO;
  CO.UseDiskCache = false;
  CO.UseRemoteCache = false;
  auto C = Compiler::create(CO);
  ASSERT_TRUE(succeeded(C));
  Check(kindOf((*C)->compile("kernel k( {", "bad.kir")), ErrorKind::Compile);
  CompileRequest Bad;
  Bad.OptLevel = 7;
  std::string Kir = kindsKir();
  Check(kindOf((*C)->compile(Kir, "kinds.kir", Bad)), ErrorKind::InvalidArgument);
  auto M = (*C)->compile(Kir, "kinds.kir");
  ASSERT_TRUE(succeeded(M));

  HostRuntimeOptions HO;
  HO.NumThreads = 2;
  auto RT = HostRuntime::create(HO);
  ASSERT_TRUE(succeeded(RT));
  auto LM = (*RT)->load((*M)->Art);
  ASSERT_TRUE(succeeded(LM));
  int32_t Out[8] = {};
  float F[4] = {};
  KernelArg Good[] = {KernelArg::pointer(Out)};
  KernelArg Wrong[] = {KernelArg::pointer(F)};
  Check(kindOf((*RT)->launch(**LM, "nope", config(1, 8), Good)), ErrorKind::NotFound);
  Check(kindOf((*RT)->launch(**LM, "halfif", config(1, 8), Wrong)), ErrorKind::Argument);
  Check(kindOf((*RT)->launch(**LM, "halfif", config(1, 2048), Good)), ErrorKind::Configuration);
  Check(kindOf((*RT)->launch(**LM, "halfif", config(1, 8), Good)), ErrorKind::Divergence);
  KernelArg Far[] = {KernelArg::i32(1000000000), KernelArg::pointer(F)};
  Check(kindOf((*RT)->launch(**LM, "far", config(1, 1), Far)), ErrorKind::Fault);
  // The watchdog is checked between blocks, and has passed by the second:
  // a deadline of 1 ms, and blocks that each take longer (no time bound is
  // asserted; a slower machine only makes the blocks longer).
  std::vector<int32_t> Big(1024);
  KernelArg Spin[] = {KernelArg::pointer(Big.data())};
  LaunchOptions LO;
  LO.TimeoutMilliseconds = 1;
  Check(kindOf((*RT)->launch(**LM, "spin", config(1u << 20, 1024), Spin, LO)), ErrorKind::Timeout);
  // A cancelled token: its own kind, told apart from the timeout.
  CancelToken Cancelled;
  Cancelled.cancel();
  LaunchOptions Cancel;
  Cancel.Cancel = &Cancelled;
  Check(kindOf((*RT)->launch(**LM, "spin", config(64, 1024), Spin, Cancel)), ErrorKind::Cancelled);
  // (Not an allocation too large, which a sanitizer would report.)
  Artifact Garbage = (*M)->Art;
  Garbage.Payload = "not an object file";
  Check(kindOf((*RT)->load(Garbage)), ErrorKind::Failed);
  auto B = (*RT)->allocate(8);
  ASSERT_TRUE(succeeded(B));
  Check(kindOf((*RT)->copyToDevice(*B, Out, 16)), ErrorKind::InvalidArgument);
  Check(kindOf(readRemoteCacheSecret("/nonexistent/gridjit/secret")), ErrorKind::IO);
  EXPECT_EQ(Seen.size(), 11u);
}

TEST(ErrorKindTest, CudaRuntimeOnTheFakeDriver) {
  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "0");
  EXPECT_EQ(getErrorKindName(kindOf(CudaRuntime::create(0, fake()))), "NoDevice");
  CudaDriverOptions Missing;
  Missing.LibraryPath = "/nonexistent/libcuda.so.1";
  EXPECT_EQ(getErrorKindName(kindOf(CudaRuntime::create(0, Missing))), "NoDevice");
  ScopedEnv One("GRIDJIT_FAKE_CUDA_DEVICES", "1");
  EXPECT_EQ(getErrorKindName(kindOf(CudaRuntime::create(3, fake()))), "NotFound");

  // Each launch failure of the driver, by what its result means.
  const std::pair<const char *, ErrorKind> Results[] = {
      {"cuLaunchKernel:700", ErrorKind::Fault},   {"cuLaunchKernel:719", ErrorKind::Fault},
      {"cuLaunchKernel:702", ErrorKind::Timeout}, {"cuLaunchKernel:701", ErrorKind::Configuration},
      {"cuLaunchKernel:999", ErrorKind::Driver},  {"cuMemAlloc:2", ErrorKind::Driver}};
  NVPTXTargetOptions TO;
  TO.Arch = "sm_80";
  Artifact A = compileForTest(createNVPTXTarget(TO), SaxpySource, "saxpy.kir");
  for (const auto &[Spec, Want] : Results) {
    ScopedEnv Fail("GRIDJIT_FAKE_CUDA_FAIL", Spec);
    CudaRuntimeOptions O;
    O.Driver = fake();
    O.UseCubinCache = false;
    auto RT = CudaRuntime::create(O);
    ASSERT_TRUE(succeeded(RT));
    ErrorKind Got;
    if (llvm::StringRef(Spec).starts_with("cuMemAlloc")) {
      Got = kindOf((*RT)->allocate(64));
    } else {
      auto LM = (*RT)->load(A);
      ASSERT_TRUE(succeeded(LM));
      KernelArg Args[] = {KernelArg::i32(4), KernelArg::f32(1), KernelArg::devicePointer(0x1000),
                          KernelArg::devicePointer(0x2000)};
      Got = kindOf((*RT)->launch(**LM, "saxpy", config(1, 32), Args));
    }
    EXPECT_EQ(getErrorKindName(Got), getErrorKindName(Want)) << Spec;
  }
}

TEST(ErrorKindTest, ArgumentMessagesBeginInOnePlace) {
  KernelInfo K;
  K.Name = "saxpy";
  K.Params.push_back({"n", Type::getScalar(ScalarKind::I32), 4, 4});
  EXPECT_EQ(describeArgument(K, 0), "kernel 'saxpy': argument 1 ('n: i32')");
  EXPECT_EQ(describeArgument(K, 3), "kernel 'saxpy': argument 4");
  llvm::Error E = argumentError(K, 0, "must be an i32, but a str was given");
  EXPECT_EQ(peekErrorKind(E), ErrorKind::Argument);
  EXPECT_EQ(errorText(std::move(E)),
            "kernel 'saxpy': argument 1 ('n: i32') must be an i32, but a str was given");
}

TEST(ErrorKindTest, ExtentIsCarried) {
  float X[4];
  KernelArg A = KernelArg::pointer(X).withExtent(sizeof X);
  KernelArg Copy = A;
  EXPECT_EQ(Copy.getExtent(), sizeof X);
  EXPECT_EQ(Copy.getPointer(), static_cast<void *>(X));
  EXPECT_EQ(KernelArg::devicePointer(0x1000).getExtent(), 0u);
}

} // namespace
