//===- AsyncPool.cpp - The threads behind Compiler::compileAsync ----------===//
//
// Part of gridjit.
//
//===----------------------------------------------------------------------===//

#include "AsyncPool.h"

using namespace gridjit;

AsyncPool::AsyncPool(unsigned MaxThreads)
    : MaxThreads(MaxThreads ? MaxThreads : 1), Fork(M, [this] { resetInChild(); }) {}

AsyncPool::~AsyncPool() {
  {
    std::lock_guard<std::mutex> G(M);
    Stopping = true;
  }
  HasWork.notify_all();
  for (pthread_t T : Threads)
    pthread_join(T, nullptr);
}

void *AsyncPool::threadMain(void *Pool) {
  static_cast<AsyncPool *>(Pool)->work();
  return nullptr;
}

void AsyncPool::submit(std::function<void()> Task) {
  std::unique_lock<std::mutex> L(M);
  if (Waiting == 0 && Threads.size() < MaxThreads) {
    // pthreads directly, whose handles a child can forget (a std::thread
    // must be joined or detached, which a child cannot do with its
    // parent's).
    pthread_t T;
    if (pthread_create(&T, nullptr, threadMain, this) == 0) {
      Threads.push_back(T);
    } else if (Threads.empty()) {
      // The system cannot start a thread now (its thread or memory
      // limits). Threads already running take the task in turn; with none,
      // the caller runs it (compileAsync then returns a ready future),
      // rather than leaving it queued with nobody to run it.
      run(L, std::move(Task));
      return;
    }
  }
  Queue.push_back(std::move(Task));
  HasWork.notify_one();
}

void AsyncPool::wait() {
  std::unique_lock<std::mutex> L(M);
  Idle.wait(L, [this] { return Queue.empty() && Running.empty() && Finishing == 0; });
}

void AsyncPool::run(std::unique_lock<std::mutex> &L, std::function<void()> Task) {
  auto It = Running.insert(Running.end(), std::move(Task));
  L.unlock();
  (*It)();
  // Its captures go before the pool counts it done, and without M; but it
  // leaves Running first, under M, so that a fork() in between finds it
  // either whole in Running (the child destroys it) or out of it (the
  // child leaves it to this thread, which the child does not have), never
  // half destroyed.
  L.lock();
  std::function<void()> Done = std::move(*It);
  Running.erase(It);
  ++Finishing;
  L.unlock();
  Done = nullptr;
  L.lock();
  --Finishing;
  if (Running.empty() && Queue.empty() && Finishing == 0)
    Idle.notify_all();
}

void AsyncPool::work() {
  std::unique_lock<std::mutex> L(M);
  while (true) {
    if (Queue.empty()) {
      if (Stopping)
        return;
      ++Waiting;
      HasWork.wait(L, [this] { return !Queue.empty() || Stopping; });
      --Waiting;
      continue;
    }
    std::function<void()> Task = std::move(Queue.front());
    Queue.pop_front();
    run(L, std::move(Task));
  }
}

void AsyncPool::resetInChild() {
  // The parent's threads are not here: none can be joined, woken or
  // counted on. Their tasks and the queue go (what they captured is
  // destroyed now), and the condition variables start without the
  // parent's waiters.
  Threads.clear();
  Waiting = 0;
  Finishing = 0;
  Queue.clear();
  Running.clear();
  recreateInChild(HasWork);
  recreateInChild(Idle);
}
