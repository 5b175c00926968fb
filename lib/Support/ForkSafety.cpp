//===- ForkSafety.cpp - Keeping the library usable in a child of fork() ---===//
//
// Part of gridjit. See gridjit/Support/ForkSafety.h.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Support/ForkSafety.h"

#include <algorithm>
#include <atomic>
#include <pthread.h>
#include <unistd.h>
#include <vector>

namespace gridjit {

/// The live hooks, oldest first, and the descriptors to close in a child.
/// Never destroyed: objects may unregister during static destruction.
struct ForkRegistry {
  std::mutex Lock; ///< held from prepare until parent or child
  ForkHooks *First = nullptr, *Last = nullptr;
  std::vector<int> ChildClose;
  std::atomic<uint64_t> Generation{0};

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
