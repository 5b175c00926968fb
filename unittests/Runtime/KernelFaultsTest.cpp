//===- KernelFaultsTest.cpp - Signal handlers, signal stacks, guards ------===//
//
// Part of gridjit. The host runtime's fault catching as docs/Runtime.md
// describes it ("Catching a kernel's faults"): when its handlers are
// installed and removed, how faults that are not a kernel's reach the
// handlers around them, stack overflows on every thread that runs
// kernels, and device buffers between guard regions. Every test that
// changes or relies on the process's signal dispositions runs in a child
// process of its own (runChildTest), so that none of them depends on what
// an earlier test in the same process did.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"
#include "TestSupport.h"

#include "gridjit/Runtime/HostRuntime.h"
#include "gridjit/Runtime/Runtime.h"
#include "gridjit/Target/Target.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <functional>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

using namespace gridjit;
using namespace gridjit::test;

namespace {

using ::testing::HasSubstr;

// `far` faults (n = 10^9 past its buffer); `spin` runs until told to stop;
// `poke` writes one element anywhere.
const std::string Kernels = std::string(SaxpySource) + R"(
kernel far(n: i32, out: ptr<f32>) {
  out[n] = 1.0;
}

kernel spin(started: ptr<i32>, go: ptr<i32>) {
  atomic_add(&started[0], 1);
  while atomic_add(&go[0], 0) == 0 {
  }
}

kernel poke(n: i32, buf: ptr<f32>) {
  buf[n] = 7.0;
}
)";

using Loaded = LoadedHost;

const Artifact &artifact() {
  static Artifact A = compileForTest(createHostTarget(), Kernels, "kernel-faults-test.kir");
  return A;
}

Loaded load(HostRuntimeOptions Opts = {}) { return loadHost(artifact(), Opts); }

/// Runs `far` on an inaccessible page: a kernel fault.
llvm::Error launchFar(Loaded &L) {
  static void *Hole =
      mmap(nullptr, size_t(sysconf(_SC_PAGESIZE)), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  KernelArg Args[] = {KernelArg::i32(0), KernelArg::pointer(static_cast<float *>(Hole))};
  return L.RT->launch(*L.M, "far", config1D(1, 1), Args);
}

llvm::Error launchSaxpy(Loaded &L) {
  std::vector<float> X(256, 1.0f), Y(256, 1.0f);
  KernelArg Args[] = {KernelArg::i32(256), KernelArg::f32(2.0f), KernelArg::pointer(X.data()),
                      KernelArg::pointer(Y.data())};
  if (llvm::Error E = L.RT->launch(*L.M, "saxpy", config1D(8, 32), Args))
    return E;
  if (Y[255] != 3.0f)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "saxpy computed %f", Y[255]);
  return llvm::Error::success();
}

struct sigaction currentAction(int Sig) {
  // Zeroed: the C library fills only the kernel's part of sa_mask.
  struct sigaction A;
  std::memset(&A, 0, sizeof(A));
  sigaction(Sig, nullptr, &A);
  return A;
}

bool sameAction(const struct sigaction &A, const struct sigaction &B) {
  if (A.sa_handler != B.sa_handler || A.sa_flags != B.sa_flags)
    return false;
  for (int Sig = 1; Sig < NSIG; ++Sig)
    if (sigismember(&A.sa_mask, Sig) != sigismember(&B.sa_mask, Sig))
      return false;
  return true;
}

/// A page of the test's own that faults when touched: a fault that is no
/// kernel's. The handlers below make it accessible and return, so that
/// the touch then succeeds.
char *Trap = nullptr;
size_t PageBytes = 0;

void armTrap() {
  PageBytes = size_t(sysconf(_SC_PAGESIZE));
  if (!Trap)
    Trap = static_cast<char *>(
        mmap(nullptr, PageBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  mprotect(Trap, PageBytes, PROT_NONE);
}

void touchTrap() { *static_cast<volatile char *>(Trap) = 1; }

void disarmTrap() { mprotect(Trap, PageBytes, PROT_READ | PROT_WRITE); }

void installAction(int Sig, void (*Fn)(int, siginfo_t *, void *), int Flags,
                   std::initializer_list<int> Mask = {}, struct sigaction *Old = nullptr) {
  struct sigaction A;
  std::memset(&A, 0, sizeof(A));
  A.sa_sigaction = Fn;
  A.sa_flags = SA_SIGINFO | Flags;
  sigemptyset(&A.sa_mask);
  for (int S : Mask)
    sigaddset(&A.sa_mask, S);
  ASSERT_EQ(sigaction(Sig, &A, Old), 0);
}

/// No core file from a child that is meant to die of a signal.
void noCoreFile() {
  struct rlimit None = {0, 0};
  setrlimit(RLIMIT_CORE, &None);
}

constexpr const char *ChildVar = "GRIDJIT_KERNEL_FAULTS_CHILD";

ChildRun runChild(const std::string &Test) {
  return runChildTest("KernelFaultsTest.DISABLED_" + Test, {std::string(ChildVar) + "=1"}, 300);
}

/// Runs the child test \p Test, which must pass.
void expectChildPasses(const std::string &Test) {
  ChildRun R = runChild(Test);
  EXPECT_EQ(R.ExitCode, 0) << R.Error << "\nchild output:\n" << R.Output;
  EXPECT_THAT(R.Output, HasSubstr(ChildPassedLine));
}

#define CHILD_ONLY()                                                                               \
  if (!std::getenv(ChildVar))                                                                      \
  GTEST_SKIP() << "runs in a child process of its parent test"

void say(const char *Line) {
  std::fprintf(stderr, "%s\n", Line);
  std::fflush(stderr);
}

//===----------------------------------------------------------------------===//
// Installing and removing the handlers
//===----------------------------------------------------------------------===//

TEST(KernelFaultsTest, HandlersComeWithTheFirstCatchingLaunchAndGoWithTheLastRuntime) {
  expectChildPasses("InstallAndRemoveChild");
}

extern "C" void recordingAction(int, siginfo_t *, void *) {}

TEST(KernelFaultsTest, DISABLED_InstallAndRemoveChild) {
  CHILD_ONLY();
  // The application's own handlers come first.
  installAction(SIGSEGV, recordingAction, SA_RESTART, {SIGUSR1});
  installAction(SIGBUS, recordingAction, 0);
  struct sigaction Segv = currentAction(SIGSEGV), Bus = currentAction(SIGBUS);

  Loaded A = load();
  ASSERT_TRUE(A.M);
  // Making a runtime installs nothing; its first launch does.
  EXPECT_TRUE(sameAction(currentAction(SIGSEGV), Segv));
  ASSERT_TRUE(succeeded(launchSaxpy(A)));
  struct sigaction Ours = currentAction(SIGSEGV);
  EXPECT_FALSE(sameAction(Ours, Segv));
  EXPECT_EQ(Ours.sa_flags & (SA_SIGINFO | SA_ONSTACK | SA_NODEFER),
            SA_SIGINFO | SA_ONSTACK | SA_NODEFER);
  EXPECT_TRUE(sameAction(currentAction(SIGBUS), Ours));

  // A second runtime shares them; the handlers stay until the last goes.
  Loaded B = load();
  ASSERT_TRUE(B.M);
  ASSERT_TRUE(succeeded(launchSaxpy(B)));
  EXPECT_TRUE(failed(launchFar(B)));
  A = Loaded();
  EXPECT_TRUE(sameAction(currentAction(SIGSEGV), Ours));
  EXPECT_TRUE(failed(launchFar(B)));
  B = Loaded();
  // The application's handlers are back, exactly as they were.
  EXPECT_TRUE(sameAction(currentAction(SIGSEGV), Segv));
  EXPECT_TRUE(sameAction(currentAction(SIGBUS), Bus));

  // And again for a runtime made after that.
  Loaded C = load();
  ASSERT_TRUE(C.M);
  ASSERT_TRUE(failed(launchFar(C)));
  EXPECT_TRUE(sameAction(currentAction(SIGSEGV), Ours));
  C = Loaded();
  EXPECT_TRUE(sameAction(currentAction(SIGSEGV), Segv));
}

TEST(KernelFaultsTest, ARuntimeThatDoesNotCatchInstallsNothingAndAFaultEndsTheProcess) {
  ChildRun R = runChild("NoCatchingChild");
  // Killed by the SIGSEGV (ExecuteAndWait says -2 for a signal).
  EXPECT_EQ(R.ExitCode, -2) << R.Error << "\nchild output:\n" << R.Output;
  EXPECT_THAT(R.Output, HasSubstr("no handler installed; faulting launch next"));
  EXPECT_THAT(R.Output, ::testing::Not(HasSubstr("the launch returned")));
}

TEST(KernelFaultsTest, DISABLED_NoCatchingChild) {
  CHILD_ONLY();
  noCoreFile();
  struct sigaction Segv = currentAction(SIGSEGV), Bus = currentAction(SIGBUS);
  // Through createRuntime's option, as the C API and Python use it.
  RuntimeOptions RO;
  RO.NumThreads = 2;
  RO.CatchFaults = false;
  auto RT = createRuntime(TargetKind::Host, RO);
  ASSERT_TRUE(succeeded(RT));
  auto M = (*RT)->load(artifact());
  ASSERT_TRUE(succeeded(M));
  Loaded L;
  L.RT.reset(static_cast<HostRuntime *>(RT->release())); // createRuntime's host runtime
  L.M = std::move(*M);
  ASSERT_TRUE(succeeded(launchSaxpy(L)));
  EXPECT_TRUE(sameAction(currentAction(SIGSEGV), Segv));
  EXPECT_TRUE(sameAction(currentAction(SIGBUS), Bus));
  // The launching thread's alternate signal stack is not touched either.
  stack_t SS;
  ASSERT_EQ(sigaltstack(nullptr, &SS), 0);
  EXPECT_TRUE(SS.ss_flags & SS_DISABLE);
  say("no handler installed; faulting launch next");
  llvm::Error E = launchFar(L);
  say("the launch returned");
  ADD_FAILURE() << errorText(std::move(E));
}

//===----------------------------------------------------------------------===//
// Faults that are not a kernel's
//===----------------------------------------------------------------------===//

// The application's handler from before gridjit's: SA_SIGINFO,
// SA_RESETHAND and a mask with SIGUSR1.
std::atomic<int> BeforeCalls{0};
bool BeforeSawUsr1Blocked = false, BeforeSawSegvBlocked = false;
void *BeforeAddress = nullptr;
int BeforeCode = 0;

extern "C" void beforeAction(int, siginfo_t *Info, void *) {
  sigset_t Now;
  pthread_sigmask(SIG_SETMASK, nullptr, &Now);
  BeforeSawUsr1Blocked = sigismember(&Now, SIGUSR1);
  BeforeSawSegvBlocked = sigismember(&Now, SIGSEGV);
  BeforeAddress = Info->si_addr;
  BeforeCode = Info->si_code;
  ++BeforeCalls;
  disarmTrap();
}

TEST(KernelFaultsTest, AHandlerFromBeforeGetsOtherFaultsWithItsMaskAndResetHand) {
  ChildRun R = runChild("HandlerBeforeChild");
  // The one-shot handler was used up: the second fault of the test's own
  // ended the child with the default action.
  EXPECT_EQ(R.ExitCode, -2) << R.Error << "\nchild output:\n" << R.Output;
  EXPECT_THAT(R.Output, HasSubstr("one-shot handler used; its second fault next"));
  EXPECT_THAT(R.Output, ::testing::Not(HasSubstr("survived")));
  EXPECT_THAT(R.Output, ::testing::Not(HasSubstr("Failure")));
}

TEST(KernelFaultsTest, DISABLED_HandlerBeforeChild) {
  CHILD_ONLY();
  noCoreFile();
  armTrap();
  installAction(SIGSEGV, beforeAction, SA_RESETHAND, {SIGUSR1});
  Loaded L = load();
  ASSERT_TRUE(L.M);
  // A kernel's fault is gridjit's alone.
  EXPECT_TRUE(failed(launchFar(L)));
  EXPECT_EQ(BeforeCalls, 0);
  // The test's own fault goes to the application's handler, called as the
  // kernel would have called it: its mask and the signal blocked.
  touchTrap();
  EXPECT_EQ(BeforeCalls, 1);
  EXPECT_TRUE(BeforeSawUsr1Blocked);
  EXPECT_TRUE(BeforeSawSegvBlocked);
  EXPECT_EQ(BeforeAddress, Trap);
  EXPECT_EQ(BeforeCode, SEGV_ACCERR);
  // Its mask ended with it.
  sigset_t Now;
  pthread_sigmask(SIG_SETMASK, nullptr, &Now);
  EXPECT_FALSE(sigismember(&Now, SIGUSR1));
  EXPECT_FALSE(sigismember(&Now, SIGSEGV));
  // Kernel faults are still caught, in many blocks on every thread: saxpy
  // over device buffers of one element, which end at guard regions.
  EXPECT_TRUE(failed(launchFar(L)));
  auto X = L.RT->allocate(4), Y = L.RT->allocate(4);
  ASSERT_TRUE(succeeded(X) && succeeded(Y));
  KernelArg Args[] = {KernelArg::i32(0x7fffffff), KernelArg::f32(1.0f), KernelArg::buffer(*X),
                      KernelArg::buffer(*Y)};
  EXPECT_TRUE(failed(L.RT->launch(*L.M, "saxpy", config1D(1u << 20, 1024), Args)));
  EXPECT_EQ(BeforeCalls, 1);
  if (::testing::Test::HasFailure())
    return;
  // SA_RESETHAND: the handler was for one fault; the next one gets the
  // default action, as without gridjit.
  armTrap();
  say("one-shot handler used; its second fault next");
  touchTrap();
  say("survived");
}

// A handler with neither SA_SIGINFO nor a mask, with SA_NODEFER, for a
// SIGBUS of the test's own (a mapped file cut short).
std::atomic<int> PlainCalls{0};
bool PlainSawBusBlocked = true;
char *BusPage = nullptr;

extern "C" void plainHandler(int Sig) {
  sigset_t Now;
  pthread_sigmask(SIG_SETMASK, nullptr, &Now);
  PlainSawBusBlocked = sigismember(&Now, SIGBUS);
  if (Sig == SIGBUS) {
    // Replace the page past the file's end with an anonymous one.
    mmap(BusPage, PageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
         0);
  }
  ++PlainCalls;
}

TEST(KernelFaultsTest, APlainHandlerFromBeforeGetsABusErrorWithSA_NODEFER) {
  expectChildPasses("PlainHandlerChild");
}

TEST(KernelFaultsTest, DISABLED_PlainHandlerChild) {
  CHILD_ONLY();
  PageBytes = size_t(sysconf(_SC_PAGESIZE));
  struct sigaction A;
  std::memset(&A, 0, sizeof(A));
  A.sa_handler = plainHandler;
  A.sa_flags = SA_NODEFER;
  sigemptyset(&A.sa_mask);
  ASSERT_EQ(sigaction(SIGBUS, &A, nullptr), 0);
  Loaded L = load();
  ASSERT_TRUE(L.M);
  ASSERT_TRUE(failed(launchFar(L))); // installs gridjit's
  // A page of a file that has no bytes there: SIGBUS (BUS_ADRERR).
  char Name[] = "/tmp/gridjit-bus-XXXXXX";
  int FD = mkstemp(Name);
  ASSERT_GE(FD, 0);
  unlink(Name);
  ASSERT_EQ(ftruncate(FD, off_t(PageBytes)), 0);
  BusPage =
      static_cast<char *>(mmap(nullptr, PageBytes, PROT_READ | PROT_WRITE, MAP_SHARED, FD, 0));
  ASSERT_NE(BusPage, MAP_FAILED);
  ASSERT_EQ(ftruncate(FD, 0), 0);
  close(FD);
  *static_cast<volatile char *>(BusPage) = 1;
  EXPECT_EQ(PlainCalls, 1);
  EXPECT_FALSE(PlainSawBusBlocked);
  EXPECT_TRUE(failed(launchFar(L)));
}

// The application's handler from after gridjit's, which chains to the
// handler it replaced, as the convention is.
struct sigaction Replaced;
std::atomic<int> AfterCalls{0};

extern "C" void afterAction(int Sig, siginfo_t *Info, void *Ctx) {
  ++AfterCalls;
  if (Info->si_addr == Trap) {
    disarmTrap();
    return;
  }
  if (Replaced.sa_flags & SA_SIGINFO)
    Replaced.sa_sigaction(Sig, Info, Ctx);
}

TEST(KernelFaultsTest, AHandlerFromAfterSeesEveryFaultAndKernelFaultsAreCaughtThroughIt) {
  expectChildPasses("HandlerAfterChild");
}

TEST(KernelFaultsTest, DISABLED_HandlerAfterChild) {
  CHILD_ONLY();
  armTrap();
  Loaded L = load();
  ASSERT_TRUE(L.M);
  ASSERT_TRUE(succeeded(launchSaxpy(L)));
  installAction(SIGSEGV, afterAction, SA_ONSTACK, {}, &Replaced);
  // The kernel's fault reaches the application's handler first, which
  // passes it to gridjit's, which catches it.
  llvm::Error E = launchFar(L);
  ASSERT_TRUE(E.isA<KernelFaultError>());
  EXPECT_THAT(errorText(std::move(E)), HasSubstr("kernel 'far' accessed memory outside"));
  EXPECT_EQ(AfterCalls, 1);
  // The test's own fault is the application handler's alone.
  touchTrap();
  EXPECT_EQ(AfterCalls, 2);
  // The last runtime going leaves the application's handler installed
  // (and gridjit's behind it, to which it chains)...
  L = Loaded();
  struct sigaction Now = currentAction(SIGSEGV);
  EXPECT_EQ(Now.sa_sigaction, afterAction);
  // ... so that a new runtime still catches through it, without
  // installing anything over it.
  Loaded L2 = load();
  ASSERT_TRUE(L2.M);
  EXPECT_TRUE(failed(launchFar(L2)));
  EXPECT_EQ(AfterCalls, 3);
  EXPECT_EQ(currentAction(SIGSEGV).sa_sigaction, afterAction);
}

// A handler from after gridjit's that does not chain: gridjit's is not
// called, and kernel faults are the application's to handle.
extern "C" void exitingAction(int, siginfo_t *, void *) { _exit(43); }

TEST(KernelFaultsTest, AHandlerFromAfterThatDoesNotChainGetsKernelFaults) {
  ChildRun R = runChild("NonChainingChild");
  EXPECT_EQ(R.ExitCode, 43) << R.Error << "\nchild output:\n" << R.Output;
  EXPECT_THAT(R.Output, HasSubstr("faulting launch next"));
}

TEST(KernelFaultsTest, DISABLED_NonChainingChild) {
  CHILD_ONLY();
  Loaded L = load();
  ASSERT_TRUE(L.M);
  ASSERT_TRUE(succeeded(launchSaxpy(L)));
  installAction(SIGSEGV, exitingAction, 0);
  say("faulting launch next");
  llvm::Error E = launchFar(L);
  ADD_FAILURE() << "the launch returned: " << errorText(std::move(E));
}

// A SIGSEGV sent to a thread while it runs a kernel is not the kernel's
// fault: it goes to the handler from before gridjit's.
std::atomic<int> SentCalls{0};
int SentCodes[2] = {0, 0};

extern "C" void sentAction(int, siginfo_t *Info, void *) {
  int N = SentCalls.load();
  if (N < 2)
    SentCodes[N] = Info->si_code;
  SentCalls = N + 1;
}

TEST(KernelFaultsTest, ASignalSentToAThreadInAKernelIsNotTheKernels) {
  expectChildPasses("SentSignalChild");
}

TEST(KernelFaultsTest, DISABLED_SentSignalChild) {
  CHILD_ONLY();
  installAction(SIGSEGV, sentAction, 0);
  HostRuntimeOptions O;
  O.NumThreads = 1; // the launching thread runs the kernel
  Loaded L = load(O);
  ASSERT_TRUE(L.M);
  int32_t Started = 0, Go = 0;
  std::string Result = "did not return";
  std::thread T([&] {
    KernelArg Args[] = {KernelArg::pointer(&Started), KernelArg::pointer(&Go)};
    llvm::Error E = L.RT->launch(*L.M, "spin", config1D(1, 1), Args);
    Result = E ? errorText(std::move(E)) : "success";
  });
  // Each wait has a generous bound, so that a regression fails the test
  // instead of hanging it (the kernel returns early when its fault is
  // taken for the kernel's, and no handler call comes).
  auto Within = [](const std::function<bool()> &Done) {
    auto Until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!Done() && std::chrono::steady_clock::now() < Until)
      std::this_thread::yield();
    return Done();
  };
  EXPECT_TRUE(Within([&] { return __atomic_load_n(&Started, __ATOMIC_SEQ_CST) != 0; }));
  // As `kill -SEGV` would, but to the thread inside the kernel: SI_TKILL,
  // then SI_QUEUE.
  EXPECT_EQ(pthread_kill(T.native_handle(), SIGSEGV), 0);
  EXPECT_TRUE(Within([] { return SentCalls.load() >= 1; }));
  union sigval V;
  V.sival_int = 0;
  EXPECT_EQ(pthread_sigqueue(T.native_handle(), SIGSEGV, V), 0);
  EXPECT_TRUE(Within([] { return SentCalls.load() >= 2; }));
  __atomic_store_n(&Go, 1, __ATOMIC_SEQ_CST);
  T.join();
  // The kernel ran on to its end: nothing was taken for its fault.
  EXPECT_EQ(Result, "success");
  EXPECT_EQ(SentCodes[0], SI_TKILL);
  EXPECT_EQ(SentCodes[1], SI_QUEUE);
}

//===----------------------------------------------------------------------===//
// Stack overflows
//===----------------------------------------------------------------------===//

TEST(KernelFaultsTest, AKernelThatOverflowsItsStackIsAnErrorOnEveryThread) {
  expectChildPasses("StackOverflowChild");
}

TEST(KernelFaultsTest, DISABLED_StackOverflowChild) {
  CHILD_ONLY();
  // 150 * 60000 bytes: more than the launching thread's 4 MiB stack. The
  // host target bounds a kernel's stack need when it compiles it and the
  // runtime refuses a launch on a thread with less (StackNeedTest.cpp), so
  // this artifact says it does not know its need, as one that no check
  // covers would: the overflow is then the fault that stops the launch.
  // (No kernel the host target compiles needs more than a pool thread's
  // stack, so no overflow reaches one.)
  Artifact A = compileForTest(createHostTarget(), deepKernel(150), "deep.kir");
  ASSERT_FALSE(A.Kernels.empty());
  ASSERT_GT(A.Kernels[0].StackBytes, 150u * 60000);
  A.Kernels[0].StackBytes = 0;

  // On the launching thread (a 4 MiB stack, the only thread that runs
  // blocks): one with an alternate signal stack of its own, which gridjit
  // uses and leaves as it is, and one without, which gets gridjit's.
  auto OverflowOnLaunchingThread = [&] {
    HostRuntimeOptions O;
    O.NumThreads = 1;
    Loaded L = loadHost(A, O);
    ASSERT_TRUE(L.M);
    std::vector<double> Out(4);
    KernelArg Args[] = {KernelArg::i32(0), KernelArg::pointer(Out.data())};
    for (int Round = 0; Round < 3; ++Round) {
      llvm::Error E = L.RT->launch(*L.M, "deep", config1D(4, 1), Args);
      ASSERT_TRUE(E.isA<KernelFaultError>()) << Round;
      EXPECT_THAT(errorText(std::move(E)),
                  HasSubstr("kernel 'deep' overflowed the stack of the thread that ran it"));
    }
    // The thread lived through it and runs kernels again.
    auto M = L.RT->load(artifact());
    ASSERT_TRUE(succeeded(M));
    L.M = std::move(*M);
    ASSERT_TRUE(succeeded(launchSaxpy(L)));
  };
  onThreadWithStack(4u << 20, [&] {
    std::vector<char> Own(64 << 10);
    stack_t Mine, After;
    Mine.ss_sp = Own.data();
    Mine.ss_size = Own.size();
    Mine.ss_flags = 0;
    ASSERT_EQ(sigaltstack(&Mine, nullptr), 0);
    OverflowOnLaunchingThread();
    ASSERT_EQ(sigaltstack(nullptr, &After), 0);
    EXPECT_EQ(After.ss_sp, Own.data());
    EXPECT_EQ(After.ss_size, Own.size());
    EXPECT_FALSE(After.ss_flags & SS_DISABLE);
    stack_t None{};
    None.ss_flags = SS_DISABLE;
    sigaltstack(&None, nullptr);
  });
  onThreadWithStack(4u << 20, [&] {
    OverflowOnLaunchingThread();
    stack_t After;
    ASSERT_EQ(sigaltstack(nullptr, &After), 0);
    EXPECT_FALSE(After.ss_flags & SS_DISABLE);
    EXPECT_GE(After.ss_size, 64u << 10);
  });
}

//===----------------------------------------------------------------------===//
// Device buffers between guard regions
//===----------------------------------------------------------------------===//

/// Runs `poke(n, buf)`: one write to buf[n].
llvm::Error poke(Loaded &L, const DeviceBuffer &B, int32_t N) {
  KernelArg Args[] = {KernelArg::i32(N), KernelArg::buffer(B, ScalarKind::F32)};
  return L.RT->launch(*L.M, "poke", config1D(1, 1), Args);
}

std::vector<float> contents(Loaded &L, const DeviceBuffer &B) {
  std::vector<float> V(B.size() / 4);
  EXPECT_TRUE(succeeded(L.RT->copyFromDevice(V.data(), B, B.size())));
  return V;
}

TEST(DeviceBufferGuardsTest, AWritePastABufferFaultsAndLeavesItsNeighboursAndTheHeapAlone) {
  Loaded L = load();
  ASSERT_TRUE(L.M);
  // 100 floats: 400 bytes, 448 with the padding to 64 bytes, placed at the
  // end of their page.
  std::vector<float> Ones(100, 1.0f), Twos(100, 2.0f);
  auto A = L.RT->allocate(400), B = L.RT->allocate(400), C = L.RT->allocate(400);
  ASSERT_TRUE(succeeded(A) && succeeded(B) && succeeded(C));
  ASSERT_TRUE(succeeded(L.RT->copyToDevice(*A, Ones.data(), 400)));
  ASSERT_TRUE(succeeded(L.RT->copyToDevice(*B, Twos.data(), 400)));
  ASSERT_TRUE(succeeded(L.RT->copyToDevice(*C, Ones.data(), 400)));
  int32_t Page = int32_t(sysconf(_SC_PAGESIZE));
  int32_t Slack = (Page - 448 % Page) % Page; // bytes of the page before the buffer
  int32_t Guard = std::max(Page, 64 << 10);
  // What goes unnoticed, harmlessly: the padding after the end, and the
  // rest of the first page before the start (the buffer's own).
  for (int32_t N : {100, 111, -1, -(Slack / 4)})
    EXPECT_TRUE(succeeded(poke(L, *B, N))) << N;
  // Past that, the guard regions: the first and the last float of each.
  for (int32_t N : {112, 112 + Guard / 4 - 1, -(Slack / 4) - 1, -(Slack / 4) - Guard / 4}) {
    llvm::Error E = poke(L, *B, N);
    ASSERT_TRUE(E.isA<KernelFaultError>()) << N;
    EXPECT_THAT(errorText(std::move(E)),
                HasSubstr("kernel 'poke' accessed memory outside its buffers (SIGSEGV at"));
  }
  EXPECT_EQ(contents(L, *A), Ones);
  EXPECT_EQ(contents(L, *B), Twos);
  EXPECT_EQ(contents(L, *C), Ones);
  // The heap is intact: it still allocates and frees.
  for (int I = 0; I < 1000; ++I) {
    std::vector<char> V(size_t(I) * 37 + 1, char(I));
    ASSERT_EQ(V.back(), char(I));
  }
}

TEST(DeviceBufferGuardsTest, BuffersAreZeroedAlignedAndReusedAcrossSizes) {
  Loaded L = load();
  ASSERT_TRUE(L.M);
  std::vector<uint64_t> Sizes = {1, 63, 64, 65, 4000, 4096, 4097, 65536, 1 << 20, 3 << 20};
  for (int Round = 0; Round < 3; ++Round) {
    std::vector<DeviceBuffer> Live;
    for (uint64_t Size : Sizes) {
      auto B = L.RT->allocate(Size);
      ASSERT_TRUE(succeeded(B));
      EXPECT_EQ(B->getAddress() % 64, 0u);
      std::vector<unsigned char> Seen(Size, 0xff);
      ASSERT_TRUE(succeeded(L.RT->copyFromDevice(Seen.data(), *B, Size)));
      EXPECT_EQ(std::count(Seen.begin(), Seen.end(), 0), ptrdiff_t(Size)) << Size;
      // Dirty it, so that a reused region must be zeroed again.
      std::vector<unsigned char> Junk(Size, 0xab);
      ASSERT_TRUE(succeeded(L.RT->copyToDevice(*B, Junk.data(), Size)));
      Live.push_back(std::move(*B));
    }
    for (DeviceBuffer &B : Live)
      ASSERT_TRUE(succeeded(L.RT->free(B)));
  }
}

} // namespace
