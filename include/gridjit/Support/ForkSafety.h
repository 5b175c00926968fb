//===- ForkSafety.h - Keeping the library usable in a child of fork() -*- C++ -*-===//
//
// Part of gridjit. After fork() the child runs one thread, the one that
// called fork(); the parent's other threads are gone but their memory is
// not: a pool still counts threads the child does not have, a mutex that
// another thread held stays locked, a condition variable remembers waiters
// that will never wake, and sockets and file locks are shared with the
// parent. Every object of the library that owns threads, locks, sockets or
// file locks registers ForkHooks, which pthread_atfork handlers (installed
// once, by the first registration) run around every fork() of the process:
//
//   prepare  in the parent, on the forking thread, before the copy: take
//            the object's lock, so that no other thread is inside it when
//            the process is copied (newest object first);
//   parent   in the parent after the copy: release it (oldest first);
//   child    in the child, its only thread: make the object usable again
//            (forget the parent's threads, which it starts anew when next
//            used; drop work that was running on them; recreate condition
//            variables; close what must not be shared), then release the
//            lock (oldest first).
//
// Rules for the hooks' users: a mutex that prepare takes is held only
// briefly and never while waiting for another thread; one object's lock
// may be held while taking an older object's, never a newer one's (prepare
// takes them newest first); and no object registers or unregisters while
// holding a lock that prepare takes (the registry's own lock is held from
// prepare to parent or child). A fork() from inside a gridjit callback
// (a warning handler) while gridjit holds such a lock deadlocks.
//
// This is the library's one piece of process-wide bookkeeping besides the
// fault handlers (docs/Runtime.md, "fork()"): a list of live objects and a
// generation counter. The handlers change nothing outside gridjit.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_SUPPORT_FORKSAFETY_H
#define GRIDJIT_SUPPORT_FORKSAFETY_H

#include <cstdint>
#include <functional>
#include <mutex>
#include <new>

namespace gridjit {

/// The hooks of one object, registered for as long as this lives. Make it
/// the owner's last member, so that it is registered after the state it
/// touches is built and unregistered before that state is destroyed.
class ForkHooks {
public:
  /// Each may be empty.
  struct Handlers {
    std::function<void()> Prepare, Parent, Child;
  };
  explicit ForkHooks(Handlers H);
  /// Hooks for an object whose state \p M guards: prepare locks \p M, the
  /// parent unlocks it, the child runs \p ResetInChild (may be empty) with
  /// \p M held and then unlocks it.
  ForkHooks(std::mutex &M, std::function<void()> ResetInChild);
  ~ForkHooks();
  ForkHooks(const ForkHooks &) = delete;
  ForkHooks &operator=(const ForkHooks &) = delete;

private:
  friend struct ForkRegistry;
  Handlers H;
  ForkHooks *Prev = nullptr, *Next = nullptr;
};

/// How many fork() calls separate this process from the one whose gridjit
/// installed the handlers: 0 there, one more in each child (a child's
/// child: 2). An object that remembers the generation it was made in knows
/// whether it came over a fork(). Installs the handlers if nothing has yet.
uint64_t forkGeneration();

/// Re-creates \p Object in place, without destroying the parent's copy:
/// for a condition variable in a child, whose destructor would wait for
/// the parent's waiters (glibc), and whose waiter counts would make a
/// signal go to one of them instead of a real waiter.
template <typename T> void recreateInChild(T &Object) { ::new (static_cast<void *>(&Object)) T(); }

/// A stretch of a thread's work inside LLVM (lowering, optimising,
/// generating code), which a fork() must not copy half done: LLVM changes
/// process-wide state while it compiles (its pass registry, statics it
/// builds on first use, the locks that guard them) and has no fork
/// handlers of its own, so a child copied mid-change crashed or hung in its
/// own compiles. The prepare handler waits, before taking any object's
/// lock, until no thread is inside such a section, and a thread that would
/// enter one while a fork() waits, waits until the fork is done: a fork()
/// may thus wait for the compiles in flight to leave LLVM (milliseconds, a
/// large kernel's compile at most). Nested sections on one thread count
/// once. Nothing inside one may fork() or wait for a thread that might.
class LLVMSection {
public:
  LLVMSection();
  ~LLVMSection();
  LLVMSection(const LLVMSection &) = delete;
  LLVMSection &operator=(const LLVMSection &) = delete;
};

/// File descriptors the library holds that a child must not keep, such as
/// a file lock's (flock locks belong to the open file, which a child's
/// copy of the descriptor would keep locked after the parent's release):
/// each one added is closed in a child (and forgotten there). Remove it
/// before closing it in the process that added it.
void addForkChildClose(int FD);
void removeForkChildClose(int FD);

} // namespace gridjit

#endif // GRIDJIT_SUPPORT_FORKSAFETY_H
