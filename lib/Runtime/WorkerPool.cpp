//===- WorkerPool.cpp - The host runtime's threads ------------------------===//
//
// Part of gridjit. See WorkerPool.h.
//
//===----------------------------------------------------------------------===//

#include "WorkerPool.h"

#include "gridjit/Target/HostABI.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <sched.h>
#include <signal.h>
#include <string>

using namespace gridjit;

struct WorkerPool::ThreadStart {
  WorkerPool *Pool;
  const SignalStack *Stack; ///< null: none
};

void *WorkerPool::threadMain(void *Arg) {
  std::unique_ptr<ThreadStart> Start(static_cast<ThreadStart *>(Arg));
  // Installed before the thread runs any kernel, for its whole life. It
  // cannot fail: the stack is mapped and nothing runs on it yet.
  if (Start->Stack)
    Start->Stack->install();
  Start->Pool->workerLoop();
  if (Start->Stack) {
    stack_t None{};
    None.ss_flags = SS_DISABLE;
    sigaltstack(&None, nullptr);
  }
  return nullptr;
}

llvm::Expected<std::unique_ptr<WorkerPool>>
WorkerPool::create(unsigned NumThreads, bool SignalStacks, unsigned SpinMicroseconds) {
  std::unique_ptr<WorkerPool> P(new WorkerPool(std::max(1u, NumThreads), SpinMicroseconds));
  if (SignalStacks) {
    P->Stacks.resize(P->NumThreads - 1);
    for (SignalStack &S : P->Stacks)
      if (!S.allocate())
        return llvm::createStringError(std::error_code(errno, std::generic_category()),
                                       "host runtime: cannot map the worker threads' signal "
                                       "stacks (%s)",
                                       std::strerror(errno));
  }
  // Pool threads run kernels, whose device functions and small local
  // arrays live on the stack: more than the usual default
  // (hostabi::MaxStackArrayBytes is chosen against this size). pthreads
  // directly, not llvm::thread: that one ends the process when a thread
  // cannot be created.
  pthread_attr_t Attr;
  if (int Err = pthread_attr_init(&Attr))
    return llvm::createStringError(std::error_code(Err, std::generic_category()),
                                   "host runtime: cannot set up worker threads: %s",
                                   std::strerror(Err));
  int Err = pthread_attr_setstacksize(&Attr, hostabi::WorkerStackBytes);
  if (!Err)
    Err = P->startThreads(Attr);
  pthread_attr_destroy(&Attr);
  if (Err) {
    std::string Msg = "host runtime: could not start worker thread " +
                      std::to_string(P->Threads.size() + 1) + " of " +
                      std::to_string(P->NumThreads - 1) + " (" + std::strerror(Err) +
                      "; each has a " + std::to_string(hostabi::WorkerStackBytes >> 20) +
                      " MiB stack): ask for fewer threads (HostRuntimeOptions::NumThreads, "
                      "jit-run --threads, GRIDJIT_NUM_THREADS) or raise the process's limits";
    P->stop();
    return llvm::createStringError(std::error_code(Err, std::generic_category()), Msg);
  }
  return std::move(P);
}

int WorkerPool::startThreads(const pthread_attr_t &Attr) {
  while (Threads.size() + 1 < NumThreads) {
    size_t I = Threads.size();
    auto *Start = new ThreadStart{this, Stacks.empty() ? nullptr : &Stacks[I]};
    pthread_t T;
    if (int Err = pthread_create(&T, &Attr, threadMain, Start)) {
      delete Start;
      return Err;
    }
    Threads.push_back(T);
  }
  return 0;
}

void WorkerPool::restartThreads() {
  std::lock_guard<std::mutex> L(M);
  if (!Forked.load(std::memory_order_relaxed))
    return; // another caller did it
  // The signal stacks are the parent's mappings, which the child has too.
  // A thread that cannot start now leaves the pool smaller, not failed:
  // the callers of run() do the work.
  pthread_attr_t Attr;
  if (pthread_attr_init(&Attr) == 0) {
    if (pthread_attr_setstacksize(&Attr, hostabi::WorkerStackBytes) == 0)
      (void)startThreads(Attr);
    pthread_attr_destroy(&Attr);
  }
  // After the threads: a run() that sees it cleared reads Threads as left.
  Forked.store(false, std::memory_order_release);
}

void WorkerPool::resetInChild() {
  // The parent's threads, and the callers whose jobs are queued, are not
  // here; the condition variables start without the parent's waiters.
  Threads.clear();
  Queue.clear();
  Sleeping = 0;
  Stopping = false;
  recreateInChild(WorkAvailable);
  recreateInChild(JobDone);
  Forked.store(NumThreads > 1, std::memory_order_relaxed);
}

void WorkerPool::stop() {
  {
    std::lock_guard<std::mutex> L(M);
    Stopping = true;
    Posted.fetch_add(1, std::memory_order_relaxed); // ends the threads' spins
  }
  WorkAvailable.notify_all();
  for (pthread_t T : Threads)
    pthread_join(T, nullptr);
  Threads.clear();
}

WorkerPool::~WorkerPool() { stop(); }

bool WorkerPool::spinUntil(llvm::function_ref<bool()> Done) const {
  if (SpinMicroseconds == 0)
    return Done();
  auto End = std::chrono::steady_clock::now() + std::chrono::microseconds(SpinMicroseconds);
  for (unsigned I = 1;; ++I) {
    if (Done())
      return true;
    if (I <= 64) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause(); // about 40 ns on recent Intel cores, fewer on AMD
#endif
    } else {
      // Then give the CPU to any other thread that waits for it (the
      // launch's other participant, when the machine is loaded): it
      // returns at once when none does.
      sched_yield();
    }
    if (I % 16 == 0 && std::chrono::steady_clock::now() >= End)
      return Done();
  }
}

unsigned WorkerPool::sleepingThreads() {
  std::lock_guard<std::mutex> L(M);
  return Sleeping;
}

unsigned WorkerPool::run(unsigned MaxParticipants, llvm::function_ref<void(unsigned)> Work) {
  if (Forked.load(std::memory_order_acquire)) [[unlikely]]
    restartThreads();
  if (MaxParticipants <= 1 || Threads.empty()) {
    Work(0);
    return 1;
  }
  Job J{Work, MaxParticipants};
  bool Wake;
  {
    std::lock_guard<std::mutex> L(M);
    Queue.push_back(&J);
    Posted.fetch_add(1, std::memory_order_relaxed);
    Wake = Sleeping != 0;
  }
  // Spinning threads see Posted change; only sleeping ones need the
  // system call.
  if (Wake)
    WorkAvailable.notify_all();
  Work(0);
  {
    std::lock_guard<std::mutex> L(M);
    J.Closed = true;
    auto It = std::find(Queue.begin(), Queue.end(), &J);
    if (It != Queue.end())
      Queue.erase(It);
  }
  // The pool threads still in the job are usually finishing their last
  // blocks: watch for them first, then sleep.
  if (!spinUntil([&] { return J.Active.load(std::memory_order_acquire) == 0; })) {
    std::unique_lock<std::mutex> L(M);
    JobDone.wait(L, [&] { return J.Active.load(std::memory_order_relaxed) == 0; });
  }
  return J.Joined; // closed: no place is handed out after this
}

void WorkerPool::workerLoop() {
  std::unique_lock<std::mutex> L(M);
  while (true) {
    while (Queue.empty() && !Stopping) {
      // Idle: watch for the next job without the lock for a while, so
      // that a launch soon after the last one finds this thread awake. A
      // job seen but already taken (or done) starts a new watch.
      uint64_t Seen = Posted.load(std::memory_order_relaxed);
      L.unlock();
      bool Queued = spinUntil([&] { return Posted.load(std::memory_order_relaxed) != Seen; });
      L.lock();
      if (!Queued && Queue.empty() && !Stopping) {
        ++Sleeping;
        WorkAvailable.wait(L, [&] { return Stopping || !Queue.empty(); });
        --Sleeping;
      }
    }
    if (Queue.empty())
      return; // stopping
    Job *J = Queue.front();
    unsigned Index = J->Joined++;
    J->Active.fetch_add(1, std::memory_order_relaxed);
    if (J->Joined >= J->Max)
      Queue.pop_front();
    L.unlock();
    J->Work(Index);
    L.lock();
    // The decrement is this thread's last use of *J: once it reads 0, the
    // caller (spinning without the lock) may return and end the job.
    bool Closed = J->Closed;
    if (J->Active.fetch_sub(1, std::memory_order_release) == 1 && Closed)
      JobDone.notify_all();
  }
}
