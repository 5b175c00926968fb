//===- WorkerPool.h - The host runtime's threads ----------------*- C++ -*-===//
//
// Part of gridjit (internal header). A fixed set of threads that help the
// threads calling run(): each call is one job that up to MaxParticipants
// threads work on together (the caller is always one of them, so a job
// never waits for a free worker and a pool of size 1 has no threads at
// all). Jobs from different callers run side by side. The pool's lock is
// held only to hand out places in a job, never while work runs. A pool
// thread that finds no job, and a caller whose job still has pool threads
// in it, first watch for a bounded time (spinning, without the lock)
// before they sleep: waking a sleeping thread costs tens of microseconds
// on a virtual machine, a large part of a launch of a millisecond
// (docs/HostTarget.md, "Scheduling"). Each pool
// thread may have its own alternate signal stack for its whole life
// (KernelFaults.h), so that a kernel that overflows its stack there is
// caught. In a child of fork(), which has none of the parent's threads, the
// pool forgets them and starts its own on the next run()
// (gridjit/Support/ForkSafety.h).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_RUNTIME_WORKERPOOL_H
#define GRIDJIT_LIB_RUNTIME_WORKERPOOL_H

#include "KernelFaults.h"

#include "gridjit/Support/ForkSafety.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <vector>

namespace gridjit {

class WorkerPool {
public:
  /// \p NumThreads threads do work: each caller of run() and
  /// NumThreads - 1 pool threads (none for 1). Fails, with the threads it
  /// started joined again, when the system cannot start one of them (the
  /// process's thread or memory limits): a clear error, never an abort.
  /// With \p SignalStacks, each pool thread runs on an alternate signal
  /// stack of its own (SignalStack) from its start. \p SpinMicroseconds:
  /// how long an idle pool thread watches for the next job before it
  /// sleeps, and how long a caller watches for the pool threads still in
  /// its job before it sleeps (0: sleep at once). Spinning pays only where
  /// each thread has a CPU of its own: HostRuntime passes
  /// DefaultSpinMicroseconds when NumThreads is at most the CPUs the
  /// process may run on, else 0.
  static llvm::Expected<std::unique_ptr<WorkerPool>> create(unsigned NumThreads, bool SignalStacks,
                                                            unsigned SpinMicroseconds);
  /// About twice the time a sleeping thread takes to wake on the
  /// development VM (docs/HostTarget.md, "Scheduling"): a launch that
  /// follows the last one within it finds the pool threads awake.
  static constexpr unsigned DefaultSpinMicroseconds = 100;
  ~WorkerPool();
  WorkerPool(const WorkerPool &) = delete;
  WorkerPool &operator=(const WorkerPool &) = delete;

  unsigned size() const { return NumThreads; }
  /// Calls Work(I) on up to \p MaxParticipants threads with distinct I
  /// (the caller gets 0) and returns when every call has returned. Work
  /// must share out its work itself (e.g. through an atomic counter) and
  /// return once none is left; a participant that joins late finds none.
  /// Returns how many threads called Work (the caller included).
  unsigned run(unsigned MaxParticipants, llvm::function_ref<void(unsigned)> Work);
  /// Pool threads asleep waiting for a job (for tests: a thread that
  /// spins is not counted).
  unsigned sleepingThreads();

private:
  struct Job {
    llvm::function_ref<void(unsigned)> Work;
    unsigned Max;
    unsigned Joined = 1; ///< places handed out (the caller has 0)
    /// Pool threads still in Work; changed with M held, read without it
    /// by a caller that spins. A pool thread's decrement is its last use
    /// of the job (which lives on the caller's stack).
    std::atomic<unsigned> Active{0};
    bool Closed = false; ///< the caller is done: no more joiners
  };
  struct ThreadStart;
  WorkerPool(unsigned NumThreads, unsigned SpinMicroseconds)
      : NumThreads(NumThreads), SpinMicroseconds(SpinMicroseconds) {}
  /// Spins until \p Done() or SpinMicroseconds have passed; Done()'s value.
  bool spinUntil(llvm::function_ref<bool()> Done) const;
  static void *threadMain(void *Start);
  void workerLoop();
  void stop();
  /// Starts pool threads (with \p Attr) until there are NumThreads - 1;
  /// 0, or the error of the first that could not start. M held, or the
  /// pool not shared yet.
  int startThreads(const pthread_attr_t &Attr);
  /// In a child of fork(), before a job: the threads the parent had.
  void restartThreads();
  /// In a child of fork(), with M held.
  void resetInChild();

  unsigned NumThreads;
  unsigned SpinMicroseconds;
  std::mutex M;
  std::condition_variable WorkAvailable, JobDone;
  std::deque<Job *> Queue;
  /// Jobs queued so far: what an idle pool thread watches while it spins.
  std::atomic<uint64_t> Posted{0};
  /// Pool threads waiting on WorkAvailable: run() wakes them (a system
  /// call) only when there are any.
  unsigned Sleeping = 0;
  bool Stopping = false;
  std::vector<pthread_t> Threads;
  /// One per thread, when the pool has them; unmapped after the threads
  /// are joined.
  std::vector<SignalStack> Stacks;
  /// A child of fork() that has not started its threads yet.
  std::atomic<bool> Forked{false};
  ForkHooks Fork{M, [this] { resetInChild(); }}; ///< last: see ForkHooks
};

} // namespace gridjit

#endif // GRIDJIT_LIB_RUNTIME_WORKERPOOL_H
