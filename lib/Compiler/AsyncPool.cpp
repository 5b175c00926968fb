//===- AsyncPool.cpp - The threads behind Compiler::compileAsync ----------===//
//
// Part of gridjit.
//
//===----------------------------------------------------------------------===//

#include "AsyncPool.h"

#include <system_error>

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
  std::unique_lock<std::mutex> L(M);
  if (Waiting == 0 && Threads.size() < MaxThreads) {
    try {
      Threads.emplace_back([this] { work(); });
    } catch (const std::system_error &) {
      // The system cannot start a thread now (its thread or memory
      // limits). Threads already running take the task in turn; with none,
      // the caller runs it (compileAsync then returns a ready future),
      // rather than leaving it queued with nobody to run it.
      if (Threads.empty()) {
        ++Running;
        L.unlock();
        Task();
        Task = nullptr;
        L.lock();
        if (--Running == 0 && Queue.empty())
          Idle.notify_all();
        return;
      }
    }
  }
  Queue.push_back(std::move(Task));
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
