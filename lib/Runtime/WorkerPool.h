//===- WorkerPool.h - The host runtime's threads ----------------*- C++ -*-===//
//
// Part of gridjit (internal header). A fixed set of threads that help the
// threads calling run(): each call is one job that up to MaxParticipants
// threads work on together (the caller is always one of them, so a job
// never waits for a free worker and a pool of size 1 has no threads at
// all). Jobs from different callers run side by side. The pool's lock is
// held only to hand out places in a job, never while work runs. Each pool
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
  /// stack of its own (SignalStack) from its start.
  static llvm::Expected<std::unique_ptr<WorkerPool>> create(unsigned NumThreads, bool SignalStacks);
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

private:
  struct Job {
    llvm::function_ref<void(unsigned)> Work;
    unsigned Max;
    unsigned Joined = 1; ///< places handed out (the caller has 0)
    unsigned Active = 0; ///< pool threads still in Work
    bool Closed = false; ///< the caller is done: no more joiners
  };
  struct ThreadStart;
  explicit WorkerPool(unsigned NumThreads) : NumThreads(NumThreads) {}
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
  std::mutex M;
  std::condition_variable WorkAvailable, JobDone;
  std::deque<Job *> Queue;
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
