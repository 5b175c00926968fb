//===- WorkerPool.cpp - The host runtime's threads ------------------------===//
//
// Part of gridjit. See WorkerPool.h.
//
//===----------------------------------------------------------------------===//

#include "WorkerPool.h"

#include "gridjit/Target/HostABI.h"

#include <algorithm>

using namespace gridjit;

WorkerPool::WorkerPool(unsigned NumThreads) : NumThreads(std::max(1u, NumThreads)) {
  for (unsigned I = 1; I < this->NumThreads; ++I)
    // Pool threads run kernels, whose device functions and small local
    // arrays live on the stack: more than the usual default
    // (hostabi::MaxStackArrayBytes is chosen against this size).
    Threads.emplace_back(std::optional<unsigned>(hostabi::WorkerStackBytes),
                         [this] { workerLoop(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> L(M);
    Stopping = true;
  }
  WorkAvailable.notify_all();
  for (llvm::thread &T : Threads)
    T.join();
}

void WorkerPool::run(unsigned MaxParticipants, llvm::function_ref<void(unsigned)> Work) {
  if (MaxParticipants <= 1 || Threads.empty()) {
    Work(0);
    return;
  }
  Job J{Work, MaxParticipants};
  {
    std::lock_guard<std::mutex> L(M);
    Queue.push_back(&J);
  }
  WorkAvailable.notify_all();
  Work(0);
  std::unique_lock<std::mutex> L(M);
  J.Closed = true;
  auto It = std::find(Queue.begin(), Queue.end(), &J);
  if (It != Queue.end())
    Queue.erase(It);
  JobDone.wait(L, [&] { return J.Active == 0; });
}

void WorkerPool::workerLoop() {
  std::unique_lock<std::mutex> L(M);
  while (true) {
    WorkAvailable.wait(L, [&] { return Stopping || !Queue.empty(); });
    if (Queue.empty())
      return; // stopping
    Job *J = Queue.front();
    unsigned Index = J->Joined++;
    ++J->Active;
    if (J->Joined >= J->Max)
      Queue.pop_front();
    L.unlock();
    J->Work(Index);
    L.lock();
    if (--J->Active == 0 && J->Closed)
      JobDone.notify_all();
  }
}
