//===- AsyncPool.h - The threads behind Compiler::compileAsync -*- C++ -*-===//
//
// Part of gridjit. A small pool of worker threads, owned by one Compiler:
// threads start on demand, up to a fixed maximum, and are joined when the
// pool is destroyed. (Not llvm::StdThreadPool: that one hands tasks over
// through std::shared_future state compiled into LLVM, which
// ThreadSanitizer cannot see, so every compileAsync would be reported as a
// race in a TSan build; this one synchronises only through its own mutex.)
//
// fork(): a child has none of the parent's threads. Its pool forgets them
// and starts its own on the next submit; the tasks the parent had queued or
// was running are dropped in the child (destroying what they captured: a
// compile's promise then gets its error, Compiler.cpp), since nothing there
// will finish them (gridjit/Support/ForkSafety.h).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_COMPILER_ASYNCPOOL_H
#define GRIDJIT_LIB_COMPILER_ASYNCPOOL_H

#include "gridjit/Support/ForkSafety.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <pthread.h>
#include <vector>

namespace gridjit {

class AsyncPool {
public:
  /// At most \p MaxThreads threads (at least 1).
  explicit AsyncPool(unsigned MaxThreads);
  /// Runs every task already submitted, then joins the threads.
  ~AsyncPool();
  AsyncPool(const AsyncPool &) = delete;
  AsyncPool &operator=(const AsyncPool &) = delete;

  /// Queues \p Task; starts a thread if none is idle and the maximum is
  /// not reached. If no thread can be started and none is running, runs
  /// \p Task on the calling thread before returning.
  void submit(std::function<void()> Task);
  /// Blocks until the queue is empty and no task is running.
  void wait();

private:
  static void *threadMain(void *Pool);
  void work();
  /// Runs \p Task, kept in Running meanwhile; \p L (on M) is held on entry
  /// and on return, released while the task runs.
  void run(std::unique_lock<std::mutex> &L, std::function<void()> Task);
  /// In a child of fork(), with M held: see the file comment.
  void resetInChild();

  std::mutex M;
  std::condition_variable HasWork, Idle;
  std::deque<std::function<void()>> Queue;
  /// The tasks being run, owned here rather than by the threads running
  /// them, so that a child can drop those of its parent's threads.
  std::list<std::function<void()>> Running;
  /// Tasks that have run and left Running, whose captures their thread is
  /// destroying without M: wait() waits for them too. A child of fork()
  /// starts at 0 and never touches them (their thread is not there).
  unsigned Finishing = 0;
  std::vector<pthread_t> Threads;
  unsigned MaxThreads;
  unsigned Waiting = 0; ///< threads blocked on HasWork
  bool Stopping = false;
  ForkHooks Fork; ///< last: registered after, and gone before, the rest
};

} // namespace gridjit

#endif // GRIDJIT_LIB_COMPILER_ASYNCPOOL_H
