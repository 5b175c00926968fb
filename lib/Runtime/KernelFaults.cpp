//===- KernelFaults.cpp - A host kernel's memory faults, caught -----------===//
//
// Part of gridjit. See KernelFaults.h.
//
// A thread about to run kernel code points CurrentScope at a sigjmp_buf set
// by sigsetjmp. The handler, for a fault on such a thread, clears the scope
// and siglongjmps there: the kernel's frames are abandoned. Kernel code
// holds no runtime lock and allocates nothing, and blocks of a host launch
// never wait for each other inside kernel code (a grid_sync ends a phase),
// so leaving it at any instruction is safe. Any other fault is passed on.
//
//===----------------------------------------------------------------------===//

#include "KernelFaults.h"

#include <cstdio>
#include <cstring>
#include <mutex>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string>

using namespace gridjit;

namespace {

struct Scope {
  sigjmp_buf Jump;
  volatile sig_atomic_t Signal = 0;
  void *volatile Address = nullptr;
};

/// The scope of the kernel call this thread is in, or null.
thread_local Scope *volatile CurrentScope = nullptr;

struct sigaction PreviousSegv, PreviousBus;

/// Hands a fault that is not a kernel's to the handler that was installed
/// before ours.
void passOn(int Sig, siginfo_t *Info, void *Ctx) {
  const struct sigaction &Prev = Sig == SIGBUS ? PreviousBus : PreviousSegv;
  if (Prev.sa_flags & SA_SIGINFO) {
    if (Prev.sa_sigaction) {
      Prev.sa_sigaction(Sig, Info, Ctx);
      return;
    }
  } else if (Prev.sa_handler != SIG_DFL && Prev.sa_handler != SIG_IGN) {
    Prev.sa_handler(Sig);
    return;
  }
  // The default action (an ignored fault cannot be ignored either): put it
  // back; a real fault repeats when the handler returns and ends the
  // process, one sent by kill() is sent again.
  struct sigaction Default;
  std::memset(&Default, 0, sizeof(Default));
  Default.sa_handler = SIG_DFL;
  sigemptyset(&Default.sa_mask);
  sigaction(Sig, &Default, nullptr);
  if (Info->si_code <= 0)
    raise(Sig);
}

void onFault(int Sig, siginfo_t *Info, void *Ctx) {
  Scope *S = CurrentScope;
  if (!S) {
    passOn(Sig, Info, Ctx);
    return;
  }
  CurrentScope = nullptr;
  S->Signal = Sig;
  S->Address = Info->si_addr;
  siglongjmp(S->Jump, 1);
}

void installHandlers() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    struct sigaction SA;
    std::memset(&SA, 0, sizeof(SA));
    SA.sa_sigaction = onFault;
    SA.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&SA.sa_mask);
    sigaction(SIGSEGV, &SA, &PreviousSegv);
    sigaction(SIGBUS, &SA, &PreviousBus);
  });
}

} // namespace

bool gridjit::runCatchingFaults(hostabi::EntryFn Entry, void *const *Args,
                                hostabi::BlockContext *Ctx, uint64_t First, uint64_t End,
                                int32_t &Result, KernelFault &Fault) {
  installHandlers();
  Scope S;
  // Without saving the signal mask (that would be a system call on every
  // call): after a fault the handler's mask, which blocks the signal, is
  // still in force, and is undone here.
  if (sigsetjmp(S.Jump, /*savemask=*/0)) {
    sigset_t Faults;
    sigemptyset(&Faults);
    sigaddset(&Faults, SIGSEGV);
    sigaddset(&Faults, SIGBUS);
    pthread_sigmask(SIG_UNBLOCK, &Faults, nullptr);
    Fault.Signal = S.Signal;
    Fault.Address = reinterpret_cast<uintptr_t>(S.Address);
    return false;
  }
  CurrentScope = &S;
  Result = Entry(Args, Ctx, First, End);
  CurrentScope = nullptr;
  return true;
}

std::string gridjit::describeFault(const KernelFault &F) {
  char Buf[64];
  std::snprintf(Buf, sizeof(Buf), "%s at address 0x%llx", F.Signal == SIGBUS ? "SIGBUS" : "SIGSEGV",
                static_cast<unsigned long long>(F.Address));
  return Buf;
}
