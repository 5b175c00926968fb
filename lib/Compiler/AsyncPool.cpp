//===- AsyncPool.cpp - The threads behind Compiler::compileAsync ----------===//
//
// Part of gridjit.
//
//===----------------------------------------------------------------------===//

#include "AsyncPool.h"

using namespace gridjit;

AsyncPool::AsyncPool(unsigned MaxThreads) : MaxThreads(MaxThreads ? MaxThreads : 1) {}

AsyncPool::~AsyncPool() {
  {
    std::lock_guard<std::mutex> G(M);
    Stopping = true;
  }
  HasWork.notify_all();
  for (std::thread &T : Threads)
    T.join();
}

void AsyncPool::submit(std::function<void()> Task) {
  std::lock_guard<std::mutex> G(M);
  Queue.push_back(std::move(Task));
  if (Waiting == 0 && Threads.size() < MaxThreads)
    Threads.emplace_back([this] { work(); });
  else
    HasWork.notify_one();
}

void AsyncPool::wait() {
  std::unique_lock<std::mutex> L(M);
  Idle.wait(L, [this] { return Queue.empty() && Running == 0; });
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
    ++Running;
    L.unlock();
    Task();
    Task = nullptr; // its captures go before the pool counts it done
    L.lock();
    if (--Running == 0 && Queue.empty())
      Idle.notify_all();
  }
}
