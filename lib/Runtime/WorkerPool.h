//===- WorkerPool.h - The host runtime's threads ----------------*- C++ -*-===//
//
// Part of gridjit (internal header). A fixed set of threads that help the
// threads calling run(): each call is one job that up to MaxParticipants
// threads work on together (the caller is always one of them, so a job
// never waits for a free worker and a pool of size 1 has no threads at
// all). Jobs from different callers run side by side. The pool's lock is
// held only to hand out places in a job, never while work runs.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_RUNTIME_WORKERPOOL_H
#define GRIDJIT_LIB_RUNTIME_WORKERPOOL_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

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
  static llvm::Expected<std::unique_ptr<WorkerPool>> create(unsigned NumThreads);
  ~WorkerPool();
  WorkerPool(const WorkerPool &) = delete;
  WorkerPool &operator=(const WorkerPool &) = delete;

  unsigned size() const { return NumThreads; }
  /// Calls Work(I) on up to \p MaxParticipants threads with distinct I
  /// (the caller gets 0) and returns when every call has returned. Work
  /// must share out its work itself (e.g. through an atomic counter) and
  /// return once none is left; a participant that joins late finds none.
  void run(unsigned MaxParticipants, llvm::function_ref<void(unsigned)> Work);

private:
  struct Job {
    llvm::function_ref<void(unsigned)> Work;
    unsigned Max;
    unsigned Joined = 1; ///< places handed out (the caller has 0)
    unsigned Active = 0; ///< pool threads still in Work
    bool Closed = false; ///< the caller is done: no more joiners
  };
  explicit WorkerPool(unsigned NumThreads) : NumThreads(NumThreads) {}
  void workerLoop();
  void stop();

  unsigned NumThreads;
  std::mutex M;
  std::condition_variable WorkAvailable, JobDone;
  std::deque<Job *> Queue;
  bool Stopping = false;
  std::vector<pthread_t> Threads;
};

} // namespace gridjit

#endif // GRIDJIT_LIB_RUNTIME_WORKERPOOL_H
