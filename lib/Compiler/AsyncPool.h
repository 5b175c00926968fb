//===- AsyncPool.h - The threads behind Compiler::compileAsync -*- C++ -*-===//
//
// Part of gridjit. A small pool of worker threads, owned by one Compiler:
// threads start on demand, up to a fixed maximum, and are joined when the
// pool is destroyed. (Not llvm::StdThreadPool: that one hands tasks over
// through std::shared_future state compiled into LLVM, which
// ThreadSanitizer cannot see, so every compileAsync would be reported as a
// race in a TSan build; this one synchronises only through its own mutex.)
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_COMPILER_ASYNCPOOL_H
#define GRIDJIT_LIB_COMPILER_ASYNCPOOL_H

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
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
  void work();

  std::mutex M;
  std::condition_variable HasWork, Idle;
  std::deque<std::function<void()>> Queue;
  std::vector<std::thread> Threads;
  unsigned MaxThreads;
  unsigned Waiting = 0; ///< threads blocked on HasWork
  unsigned Running = 0; ///< tasks being run
  bool Stopping = false;
};

} // namespace gridjit

#endif // GRIDJIT_LIB_COMPILER_ASYNCPOOL_H
