//===- ForkSafety.cpp - Keeping the library usable in a child of fork() ---===//
//
// Part of gridjit. See gridjit/Support/ForkSafety.h.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Support/ForkSafety.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <pthread.h>
#include <unistd.h>
#include <vector>

namespace gridjit {

/// The threads inside LLVM (LLVMSection) and whether a fork() waits for
/// them to leave. Writer-preferring: once a fork waits, no thread enters,
/// so a stream of compiles cannot keep it waiting forever.
struct LLVMGate {
  std::mutex M; ///< held by the forking thread from prepare to parent/child
  std::condition_variable CV;
  unsigned Inside = 0;
  bool ForkWaiting = false;

  void enter() {
    std::unique_lock<std::mutex> G(M);
    CV.wait(G, [&] { return !ForkWaiting; });
    ++Inside;
  }
  void leave() {
    std::lock_guard<std::mutex> G(M);
    if (--Inside == 0)
      CV.notify_all();
  }
  /// Returns with M held and no thread inside.
  void prepare() {
    std::unique_lock<std::mutex> G(M);
    ForkWaiting = true;
    CV.wait(G, [&] { return Inside == 0; });
    G.release();
  }
  void parent() {
    ForkWaiting = false;
    M.unlock();
    CV.notify_all();
  }
  void child() {
    // The parent's waiting threads are not here; their waits must not
    // stay in the condition variable.
    recreateInChild(CV);
    ForkWaiting = false;
    M.unlock();
  }
};

/// Each thread's depth of nested LLVMSections.
thread_local unsigned SectionDepth = 0;

/// The live hooks, oldest first, and the descriptors to close in a child.
/// Never destroyed: objects may unregister during static destruction.
struct ForkRegistry {
  std::mutex Lock; ///< held from prepare until parent or child
  ForkHooks *First = nullptr, *Last = nullptr;
  std::vector<int> ChildClose;
  std::atomic<uint64_t> Generation{0};
  LLVMGate Gate;

  static ForkRegistry &get();

  void add(ForkHooks *H) {
    std::lock_guard<std::mutex> G(Lock);
    H->Prev = Last;
    (Last ? Last->Next : First) = H;
    Last = H;
  }
  void remove(ForkHooks *H) {
    std::lock_guard<std::mutex> G(Lock);
    (H->Prev ? H->Prev->Next : First) = H->Next;
    (H->Next ? H->Next->Prev : Last) = H->Prev;
    H->Prev = H->Next = nullptr;
  }

  // The pthread_atfork handlers.
  static void prepare() {
    ForkRegistry &R = get();
    // First, while no lock of an object is held, which the threads inside
    // LLVM may need on their way out (the TargetMachine pool's).
    R.Gate.prepare();
    R.Lock.lock();
    for (ForkHooks *H = R.Last; H; H = H->Prev)
      if (H->H.Prepare)
        H->H.Prepare();
  }
  static void parent() {
    ForkRegistry &R = get();
    for (ForkHooks *H = R.First; H; H = H->Next)
      if (H->H.Parent)
        H->H.Parent();
    R.Lock.unlock();
    R.Gate.parent();
  }
  static void child() {
    ForkRegistry &R = get();
    R.Generation.fetch_add(1, std::memory_order_relaxed);
    for (int FD : R.ChildClose)
      ::close(FD);
    R.ChildClose.clear();
    for (ForkHooks *H = R.First; H; H = H->Next)
      if (H->H.Child)
        H->H.Child();
    R.Lock.unlock();
    R.Gate.child();
  }
};

ForkRegistry &ForkRegistry::get() {
  static ForkRegistry *R = [] {
    auto *New = new ForkRegistry;
    // Once per process image: a child inherits the handlers with the
    // memory, and a dlclose of the library removes them (glibc ties them
    // to the object that registered them).
    pthread_atfork(&ForkRegistry::prepare, &ForkRegistry::parent, &ForkRegistry::child);
    return New;
  }();
  return *R;
}

ForkHooks::ForkHooks(Handlers Hs) : H(std::move(Hs)) { ForkRegistry::get().add(this); }

ForkHooks::ForkHooks(std::mutex &M, std::function<void()> ResetInChild)
    : ForkHooks(Handlers{[&M] { M.lock(); }, [&M] { M.unlock(); },
                         [&M, Reset = std::move(ResetInChild)] {
                           if (Reset)
                             Reset();
                           M.unlock();
                         }}) {}

ForkHooks::~ForkHooks() { ForkRegistry::get().remove(this); }

LLVMSection::LLVMSection() {
  if (SectionDepth++ == 0)
    ForkRegistry::get().Gate.enter();
}

LLVMSection::~LLVMSection() {
  if (--SectionDepth == 0)
    ForkRegistry::get().Gate.leave();
}

uint64_t forkGeneration() { return ForkRegistry::get().Generation.load(std::memory_order_relaxed); }

void addForkChildClose(int FD) {
  ForkRegistry &R = ForkRegistry::get();
  std::lock_guard<std::mutex> G(R.Lock);
  R.ChildClose.push_back(FD);
}

void removeForkChildClose(int FD) {
  ForkRegistry &R = ForkRegistry::get();
  std::lock_guard<std::mutex> G(R.Lock);
  auto It = std::find(R.ChildClose.begin(), R.ChildClose.end(), FD);
  if (It != R.ChildClose.end())
    R.ChildClose.erase(It);
}

} // namespace gridjit
