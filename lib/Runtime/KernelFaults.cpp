//===- KernelFaults.cpp - A host kernel's memory faults, caught -----------===//
//
// Part of gridjit. See KernelFaults.h.
//
// A thread about to run kernel code points CurrentScope at a sigjmp_buf set
// by sigsetjmp. The handler, for a hardware fault on such a thread, clears
// the scope and siglongjmps there: the kernel's frames are abandoned.
// Kernel code holds no runtime lock and allocates nothing (it calls only
// the C library's memset, memcpy and math functions, which take no lock
// either), and blocks of a host launch never wait for each other inside
// kernel code (a grid_sync ends a phase), so leaving it at any instruction
// is safe. Any other fault is passed on.
//
//===----------------------------------------------------------------------===//

#include "KernelFaults.h"

#include "gridjit/Support/ForkSafety.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <pthread.h>
#include <setjmp.h>
#include <ucontext.h>
#include <unistd.h>

using namespace gridjit;

namespace {

/// Written by the handler, read after the jump back: volatile.
struct Scope {
  sigjmp_buf Jump;
  volatile int Signal = 0;
  volatile uintptr_t Address = 0, StackPointer = 0;
};

/// The gate: the scope of the kernel call this thread is in, or null.
///
/// The handler reads it on whichever thread faults, so it must be readable
/// there without a call into the dynamic linker: a thread_local of the
/// default (general-dynamic) model in a shared library that was dlopen'ed
/// (libgridjit.so under Python) is allocated on the thread's first access,
/// by __tls_get_addr, which may call malloc - not async-signal-safe, and a
/// deadlock when the fault happened inside malloc on a thread that never
/// ran a kernel. Initial-exec TLS lives in the static TLS block every
/// thread gets when it starts (the dynamic linker reserves room for a
/// dlopen'ed library's few bytes of it): the handler's read is one load
/// from the thread pointer. It is one pointer; a trivially initialised
/// thread_local has no constructor to run either.
__attribute__((tls_model("initial-exec"))) thread_local Scope *volatile CurrentScope = nullptr;

/// The two signals gridjit handles, and what it knows of each.
struct Slot {
  int Signal;
  /// The action ours replaced, as it was installed; read by the handler.
  /// Written only while ours is not installed (under HandlersLock).
  struct sigaction Previous;
  /// Ours is in the process's chain: installed by us, and not removed
  /// because the application installed another after it.
  bool Linked = false;
  /// Previous had SA_RESETHAND and was called once: from then on the
  /// signal's action is SIG_DFL, as the kernel would have made it.
  std::atomic<bool> OneShotUsed{false};
};
static_assert(std::atomic<bool>::is_always_lock_free, "the handler reads it");

Slot Slots[] = {{SIGSEGV, {}}, {SIGBUS, {}}};
std::mutex HandlersLock;
unsigned Holders = 0; // live runtimes holding the handlers

Slot &slotFor(int Sig) { return Sig == SIGBUS ? Slots[1] : Slots[0]; }

void setDefault(int Sig) {
  struct sigaction Default;
  std::memset(&Default, 0, sizeof(Default));
  Default.sa_handler = SIG_DFL;
  sigemptyset(&Default.sa_mask);
  sigaction(Sig, &Default, nullptr);
}

/// Hands a fault that is not a kernel's to the action installed before
/// ours, as the kernel would have delivered it had ours not been there.
void passOn(int Sig, siginfo_t *Info, void *Ctx) {
  Slot &S = slotFor(Sig);
  const struct sigaction &Prev = S.Previous;
  bool Hardware = Info->si_code > 0;
  // sa_handler and sa_sigaction share their storage: SIG_DFL and SIG_IGN
  // mean the same whatever the flags say.
  bool Default = Prev.sa_handler == SIG_DFL ||
                 ((Prev.sa_flags & SA_RESETHAND) && S.OneShotUsed.exchange(true));
  if (!Default && Prev.sa_handler == SIG_IGN) {
    // A signal that was sent is ignored; a fault cannot be (the kernel
    // delivers it with the default action instead).
    if (!Hardware)
      return;
    Default = true;
  }
  if (Default) {
    // The default action ends the process: a fault repeats when this
    // handler returns and meets it; a signal that was sent is sent again
    // (our handler does not block it: SA_NODEFER).
    setDefault(Sig);
    if (!Hardware)
      raise(Sig);
    return;
  }
  // The mask the kernel would have set for it: its sa_mask, and the
  // signal itself unless SA_NODEFER. Ours runs with neither.
  sigset_t Mask = Prev.sa_mask, Old;
  if (!(Prev.sa_flags & SA_NODEFER))
    sigaddset(&Mask, Sig);
  pthread_sigmask(SIG_BLOCK, &Mask, &Old);
  if (Prev.sa_flags & SA_SIGINFO)
    Prev.sa_sigaction(Sig, Info, Ctx);
  else
    Prev.sa_handler(Sig);
  pthread_sigmask(SIG_SETMASK, &Old, nullptr);
}

uintptr_t stackPointer(void *Ctx) {
  auto *UC = static_cast<ucontext_t *>(Ctx);
#if defined(__x86_64__)
  return uintptr_t(UC->uc_mcontext.gregs[REG_RSP]);
#elif defined(__aarch64__)
  return uintptr_t(UC->uc_mcontext.sp);
#else
  (void)UC;
  return 0; // unknown: no fault is taken for a stack overflow
#endif
}

void onFault(int Sig, siginfo_t *Info, void *Ctx) {
  Scope *S = CurrentScope;
  // A kernel's fault: this thread is in kernel code, and the hardware
  // raised it (si_code > 0). A SIGSEGV sent to the thread (kill,
  // pthread_kill, sigqueue: SI_USER, SI_TKILL, SI_QUEUE, all <= 0) is not
  // the kernel's doing, even while it runs one.
  if (!S || Info->si_code <= 0) {
    passOn(Sig, Info, Ctx);
    return;
  }
  CurrentScope = nullptr;
  S->Signal = Sig;
  S->Address = reinterpret_cast<uintptr_t>(Info->si_addr);
  S->StackPointer = stackPointer(Ctx);
  // Back to the mask the kernel ran with (ours added nothing to it, but a
  // handler installed after ours that passed the fault on may have): the
  // one the fault interrupted. sigsetjmp does not save it - that would be
  // a system call on every kernel call.
  pthread_sigmask(SIG_SETMASK, &static_cast<ucontext_t *>(Ctx)->uc_sigmask, nullptr);
  siglongjmp(S->Jump, 1);
}

bool isOurs(const struct sigaction &A) {
  return (A.sa_flags & SA_SIGINFO) && A.sa_sigaction == onFault;
}

} // namespace

llvm::Error gridjit::holdFaultHandlers() {
  std::lock_guard<std::mutex> G(HandlersLock);
  if (Holders++ > 0)
    return llvm::Error::success();
  struct sigaction Ours;
  std::memset(&Ours, 0, sizeof(Ours));
  Ours.sa_sigaction = onFault;
  // SA_ONSTACK: on the thread's alternate stack, so that a stack overflow
  // is caught. SA_NODEFER, with an empty mask: ours adds nothing to the
  // thread's mask, so that passOn can give the previous handler exactly
  // the mask it asked for, and a jump out of a kernel leaves the mask as
  // the kernel had it.
  Ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&Ours.sa_mask);
  for (Slot &S : Slots) {
    if (S.Linked)
      continue; // still behind the application's handler
    S.OneShotUsed = false;
    if (sigaction(S.Signal, &Ours, &S.Previous) != 0) {
      int Err = errno;
      --Holders;
      return llvm::createStringError(std::error_code(Err, std::generic_category()),
                                     "host runtime: cannot install the %s handler that catches "
                                     "kernels' faults: %s",
                                     S.Signal == SIGBUS ? "SIGBUS" : "SIGSEGV", strerror(Err));
    }
    S.Linked = true;
  }
  return llvm::Error::success();
}

void gridjit::forkSafeFaultHandlers() {
  // Never destroyed: runtimes may go during static destruction.
  static ForkHooks *Hooks = new ForkHooks(HandlersLock, nullptr);
  (void)Hooks;
}

void gridjit::releaseFaultHandlers() {
  std::lock_guard<std::mutex> G(HandlersLock);
  if (Holders == 0 || --Holders > 0)
    return;
  for (Slot &S : Slots) {
    struct sigaction Current;
    if (!S.Linked || sigaction(S.Signal, nullptr, &Current) != 0 || !isOurs(Current))
      continue;
    if (S.OneShotUsed)
      setDefault(S.Signal);
    else
      sigaction(S.Signal, &S.Previous, nullptr);
    S.Linked = false;
  }
}

bool gridjit::runCatchingFaults(hostabi::EntryFn Entry, void *const *Args,
                                hostabi::BlockContext *Ctx, uint64_t First, uint64_t End,
                                int32_t &Result, KernelFault &Fault) {
  Scope S;
  if (sigsetjmp(S.Jump, /*savemask=*/0)) {
    Fault.Signal = S.Signal;
    Fault.Address = S.Address;
    uintptr_t Page = uintptr_t(sysconf(_SC_PAGESIZE));
    uintptr_t Distance =
        S.Address > S.StackPointer ? S.Address - S.StackPointer : S.StackPointer - S.Address;
    Fault.StackOverflow = S.StackPointer && Distance < Page;
    return false;
  }
  CurrentScope = &S;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  Result = Entry(Args, Ctx, First, End);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  CurrentScope = nullptr;
  return true;
}

void gridjit::leaveFaultScope() {
  CurrentScope = nullptr;
  std::atomic_signal_fence(std::memory_order_seq_cst);
}

std::string gridjit::describeFault(const KernelFault &F) {
  char Buf[64];
  std::snprintf(Buf, sizeof(Buf), "%s at address 0x%llx", F.Signal == SIGBUS ? "SIGBUS" : "SIGSEGV",
                static_cast<unsigned long long>(F.Address));
  return Buf;
}

//===----------------------------------------------------------------------===//
// Alternate signal stacks
//===----------------------------------------------------------------------===//

static GuardedLayout signalStackLayout() {
  GuardedLayout L;
  L.compute(SignalStack::Bytes, bufferGuardBytes());
  return L;
}

SignalStack::~SignalStack() {
  if (Memory)
    unmapGuarded(signalStackLayout(), Memory);
}

bool SignalStack::allocate() {
  Memory = mapGuarded(signalStackLayout());
  return Memory != nullptr;
}

bool SignalStack::install(stack_t *Old) const {
  stack_t New;
  New.ss_sp = Memory;
  New.ss_size = Bytes;
  New.ss_flags = 0;
  return sigaltstack(&New, Old) == 0;
}

namespace {
/// The alternate signal stack gridjit gave the calling thread, if any.
class ThreadSignalStack {
public:
  enum StateKind { Unknown, Ours, Theirs };
  ~ThreadSignalStack() {
    if (State != Ours)
      return;
    // The thread is ending: take ours off (if it is still the thread's)
    // before it is unmapped.
    stack_t Current;
    if (sigaltstack(nullptr, &Current) == 0 && Current.ss_sp == Stack.base()) {
      stack_t None{};
      None.ss_flags = SS_DISABLE;
      sigaltstack(&None, nullptr);
    }
  }
  StateKind State = Unknown;
  SignalStack Stack;
};

// Default TLS model: read by launches, never by the handler.
thread_local ThreadSignalStack ThisThread;
} // namespace

bool gridjit::ensureThreadSignalStack() {
  ThreadSignalStack &T = ThisThread;
  if (T.State != ThreadSignalStack::Unknown)
    return true;
  stack_t Current;
  if (sigaltstack(nullptr, &Current) == 0 && !(Current.ss_flags & SS_DISABLE)) {
    T.State = ThreadSignalStack::Theirs;
    return true;
  }
  if ((!T.Stack.allocated() && !T.Stack.allocate()) || !T.Stack.install())
    return false;
  T.State = ThreadSignalStack::Ours;
  return true;
}
