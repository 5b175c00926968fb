//===- SingleFlight.h - One producer per key, its outcome for all -*- C++ -*-===//
//
// Part of gridjit (internal to lib/Cache). What TieredCache needs to let
// one request per key do the work while the others wait for its outcome:
// a Flight (the outcome, once, to any number of waiters) and a Failure (an
// error kept so that every waiter gets an equal one).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_CACHE_SINGLEFLIGHT_H
#define GRIDJIT_LIB_CACHE_SINGLEFLIGHT_H

#include "gridjit/Cache/TieredCache.h"
#include "gridjit/Support/Diagnostics.h"
#include "gridjit/Support/Errors.h"

#include "llvm/Support/Error.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gridjit {

/// A failed produce, kept so that every waiting request gets an equal
/// error: a DiagnosticError stays a DiagnosticError of its kind (rendered
/// exactly as the original was), any other error becomes a KindedError of
/// its kind (getErrorKind) with the same message.
class Failure {
public:
  /// Consumes \p E.
  explicit Failure(llvm::Error E);
  /// A new error equal to the one given to the constructor.
  llvm::Error make() const;

private:
  struct Item {
    bool IsDiagnostic;
    std::string BufferName;
    std::vector<Diagnostic> Diags;
    std::string Text;
    ErrorKind Kind;
  };
  std::vector<Item> Items;
};

/// What a leader hands to the requests waiting for its key: the artifact,
/// or the failure.
struct FlightResult {
  CachedArtifactRef Value;
  std::shared_ptr<const Failure> Fail;
};

/// One key being produced (or loaded) by its leader. Waiters block on its
/// own mutex and condition variable, never on the cache's. (Not a
/// std::shared_future: libstdc++ completes those inside the uninstrumented
/// LLVM library, which ThreadSanitizer cannot see, so every waiter's read
/// would be reported as a race; docs/Cache.md, "Tests".)
class Flight {
public:
  void finish(FlightResult R) {
    {
      std::lock_guard<std::mutex> G(M);
      Result = std::move(R);
      Finished = true;
    }
    Done.notify_all();
  }
  FlightResult wait() {
    std::unique_lock<std::mutex> L(M);
    Done.wait(L, [this] { return Finished; });
    return Result;
  }

private:
  std::mutex M;
  std::condition_variable Done;
  bool Finished = false;
  FlightResult Result;
};

} // namespace gridjit

#endif // GRIDJIT_LIB_CACHE_SINGLEFLIGHT_H
