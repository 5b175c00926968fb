//===- Compiler.h - The library's front door: compile, cached ---*- C++ -*-===//
//
// Part of gridjit. A Compiler takes KIR text (or a verified module), parses
// and verifies it, and returns the compiled module for one of its targets,
// from its memory cache, its disk cache, a remote cache shared by a fleet
// (when configured; docs/RemoteCache.md), or a fresh compile, in that order:
//
//   auto C = Compiler::create({.Targets = {std::move(NVPTX)}});
//   auto M = (*C)->compile(Text, "saxpy.kir");   // Expected<CompiledModuleRef>
//   const Artifact &A = (*M)->Art;                // PTX + launch metadata
//
// A Compiler is safe to use from any number of threads. Requests for one
// key that arrive while it is being compiled wait for that compile (single
// flight) instead of compiling again; processes sharing a cache directory
// do the same through a per-key lock file, and machines sharing a remote
// cache through a lease on the server. No lock is held while parsing,
// verifying, optimising, generating code, or reading and writing the disk.
// docs/Cache.md describes the key, the layout and the guarantees.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_COMPILER_COMPILER_H
#define GRIDJIT_COMPILER_COMPILER_H

#include "gridjit/Cache/CacheKey.h"
#include "gridjit/Cache/DiskCache.h"
#include "gridjit/Cache/RemoteCache.h"
#include "gridjit/Cache/TieredCache.h"
#include "gridjit/IR/AST.h"
#include "gridjit/Target/Target.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gridjit {

/// A compiled module: the artifact (PTX or an object file, and the launch
/// metadata of every kernel) and the key it is cached under. Immutable and
/// shared: the memory cache and every caller that asked for it hold the
/// same object, which stays valid after the cache evicts it.
using CompiledModule = CachedArtifact;
using CompiledModuleRef = CachedArtifactRef;

/// What one request did and how long each part took (milliseconds).
struct CompileInfo {
  CacheOutcome Outcome = CacheOutcome::Compiled;
  CacheKey Key;
  /// Parse and verify of this request; lower, optimise and codegen when it
  /// compiled (zero otherwise).
  PhaseTimes Times;
  double KeyMs = 0;    ///< canonical print and hash
  double LookupMs = 0; ///< memory, disk and remote lookups
  double WaitMs = 0;   ///< waiting for another thread or process
  double StoreMs = 0;  ///< writing the disk (and remote) entry
  double TotalMs = 0;
  /// Set when the disk held a bad entry for the key (TieredRequestInfo::
  /// BadEntry: a file there is replaced, anything else left alone).
  std::string BadEntry;
  /// Set when the remote cache held a bad entry for the key, or failed.
  std::string RemoteProblem;
};

/// Counters of a Compiler since it was created (monotonic).
struct CompilerStats {
  uint64_t Requests = 0;
  uint64_t MemoryHits = 0;
  uint64_t MemoryMisses = 0;
  uint64_t SharedWaits = 0; ///< requests that waited for another's compile
  uint64_t DiskHits = 0;
  uint64_t DiskMisses = 0;
  uint64_t Compiles = 0;        ///< Target::compile calls
  uint64_t CompileFailures = 0; ///< of those, failed
  uint64_t Evictions = 0;       ///< memory cache
  DiskCacheStats Disk;          ///< zero when the disk cache is off
  uint64_t RemoteHits = 0;      ///< requests served by the remote cache
  uint64_t RemoteMisses = 0;    ///< requests it could not serve (any reason)
  RemoteCacheStats Remote;      ///< zero when the remote cache is off
};

/// One request's choices beyond the source.
struct CompileRequest {
  /// The target's name ("nvptx", "host"); empty: the Compiler's first.
  std::string Target;
  /// 0..3; std::nullopt: CompilerOptions::OptLevel.
  std::optional<unsigned> OptLevel;
  /// Checked code (docs/Check.md): the request is compiled by the checked
  /// twin of its target (Target::makeChecked(CheckArch)), which the
  /// Compiler makes on first use and keeps for its life. Its fingerprint
  /// differs, so checked and unchecked code of one source are two cache
  /// entries; unchecked requests are unchanged. Only the host target has
  /// checked code: a checked request for nvptx is an InvalidArgument
  /// error. Default false.
  bool Check = false;
  /// The GPU architecture (sm_\p CheckArch, 70..90) whose limits checked
  /// code is held to (HostTargetOptions::CheckArch); ignored unless Check.
  /// Default 80.
  unsigned CheckArch = 80;
};

/// Options of a Compiler. Defaults are what `jit-run` uses.
struct CompilerOptions {
  /// The targets to compile for, each of its own kind (see
  /// createTargetByName). Empty (the default): the host target for this
  /// machine.
  std::vector<std::shared_ptr<const Target>> Targets;
  /// Default optimisation level, 0..3. Default 3.
  unsigned OptLevel = 3;
  /// The disk cache. Default on.
  bool UseDiskCache = true;
  /// The disk cache directory; empty: resolveCacheDirectory() (from
  /// GRIDJIT_CACHE_DIR, XDG_CACHE_HOME, HOME).
  std::string CacheDir;
  /// Size bound of the disk cache (DiskCacheOptions::MaxBytes). Default
  /// 512 MiB; 0 is unbounded.
  uint64_t DiskCacheMaxBytes = uint64_t(512) << 20;
  /// The most compiled modules the memory cache keeps (least recently used
  /// are evicted first). 0 turns the memory cache off (single flight stays
  /// on). Default 256.
  size_t MemoryCacheCapacity = 256;
  /// Threads for compileAsync; 0: as many as the CPUs this process may run
  /// on. Threads are started on demand. Default 0. At most
  /// limits::MaxThreads (1024): more is an error from create().
  unsigned AsyncThreads = 0;
  /// DiskCacheOptions::LockTimeout and PruneInterval.
  std::chrono::milliseconds DiskLockTimeout = std::chrono::seconds(30);
  std::chrono::milliseconds DiskPruneInterval = std::chrono::seconds(60);
  /// The remote cache (docs/RemoteCache.md). Default on when a URL is
  /// given here or in $GRIDJIT_REMOTE_CACHE.
  bool UseRemoteCache = true;
  /// Its options. An empty URL: $GRIDJIT_REMOTE_CACHE (unset or empty: no
  /// remote cache). ReadOnly is also set by $GRIDJIT_REMOTE_CACHE_READ_ONLY=1.
  /// Secret, when empty, is read from RemoteSecretFile.
  RemoteCacheOptions Remote;
  /// The file holding the HMAC secret; empty:
  /// $GRIDJIT_REMOTE_CACHE_SECRET_FILE (unset or empty: no secret).
  std::string RemoteSecretFile;
  /// The file holding the disk cache's HMAC secret (DiskCacheOptions::
  /// Secret; docs/Cache.md, "Sharing a cache directory"); empty:
  /// $GRIDJIT_CACHE_SECRET_FILE; both empty: the remote cache's secret,
  /// when a remote cache is on and has one; else no secret (the directory
  /// must then be this user's and private, or it is not used).
  std::string CacheSecretFile;
  /// Receives warnings (today only: the disk cache was turned off, once).
  /// Null: they go to standard error through llvm::WithColor::warning.
  WarningHandler Warning;
  /// Tiers made beforehand (openCacheTiers), to share with a CUDA
  /// runtime's cubin cache (RuntimeOptions::CubinTiers) or another
  /// Compiler, so that one directory has one pruning policy and one server
  /// one breaker and connection pool. Set: these are the Compiler's disk
  /// and remote tiers, and the disk and remote options above are not used.
  /// Unset (the default): the Compiler opens its own (openCacheTiers).
  std::optional<CacheTiers> Tiers;
};

/// The disk and remote tiers \p Opts describe: the disk cache (unless
/// UseDiskCache is off) in CacheDir or resolveCacheDirectory()'s directory,
/// with DiskCacheMaxBytes, DiskLockTimeout, DiskPruneInterval, Warning and
/// the secret of CacheSecretFile (see there); a directory that cannot be
/// determined is no disk tier, with one warning. The remote cache (unless
/// UseRemoteCache is off) that Remote, RemoteSecretFile and the environment
/// describe (openRemoteCache). Errors: a malformed remote cache URL, a
/// secret file that cannot be read (or is not a regular file, or holds too
/// few or too many bytes).
llvm::Expected<CacheTiers> openCacheTiers(const CompilerOptions &Opts);

/// The front door. Thread-safe. Owns its memory cache, disk cache and the
/// threads of compileAsync; its targets are shared and immutable.
class Compiler {
public:
  /// Errors: the default host target cannot be made, a null target, two
  /// targets with one name, an OptLevel above 3, a malformed remote cache
  /// URL, a secret file that cannot be read. (An unreachable server is no
  /// error: requests then fall back to compiling.)
  /// A disk cache directory that cannot be determined or used is not an
  /// error: the Compiler then caches in memory only, with one warning.
  static llvm::Expected<std::unique_ptr<Compiler>> create(CompilerOptions Opts);
  /// Waits for every compileAsync still running (waitForAsync).
  ~Compiler();
  Compiler(const Compiler &) = delete;
  Compiler &operator=(const Compiler &) = delete;

  /// Parses, verifies and compiles \p Source (diagnostics name
  /// \p BufferName, and so do the host target's run-time messages: its
  /// cache key covers the name and exact text), or returns the cached
  /// module. Errors: the source's
  /// DiagnosticError, an unknown target or opt level, or the compile's own
  /// error. A failed compile is given to every request that was waiting for
  /// it and is not cached. \p Info, when given, is filled in.
  llvm::Expected<CompiledModuleRef> compile(std::string_view Source, std::string_view BufferName,
                                            const CompileRequest &Req = {},
                                            CompileInfo *Info = nullptr);
  /// The same for a module built in memory; it must be verified.
  llvm::Expected<CompiledModuleRef> compile(const Module &M, const CompileRequest &Req = {},
                                            CompileInfo *Info = nullptr);
  /// compile() on one of the Compiler's threads (AsyncThreads of them);
  /// the future holds what compile() returns.
  std::future<llvm::Expected<CompiledModuleRef>>
  compileAsync(std::string Source, std::string BufferName, CompileRequest Req = {});
  /// Blocks until every compileAsync issued so far has delivered its
  /// result. (Also a synchronisation point ThreadSanitizer understands:
  /// under TSan, with LLVM not instrumented, libstdc++'s future hand-off is
  /// invisible to it, so TSan-checked code should call this before get();
  /// see unittests/Compiler/CompilerTest.cpp.)
  void waitForAsync();

  /// The key \p Source would be cached under (parses and verifies it).
  llvm::Expected<CacheKey> computeKey(std::string_view Source, std::string_view BufferName,
                                      const CompileRequest &Req = {}) const;

  /// The target named \p Name (empty: the first), or null.
  const Target *getTarget(std::string_view Name = {}) const;
  /// The target \p Req compiles with: its target (getTarget), or for a
  /// checked request that target's checked twin (made on first use, kept
  /// for the Compiler's life). Errors: as compile() for the target and
  /// Check.
  llvm::Expected<const Target *> getTargetFor(const CompileRequest &Req) const;
  /// The disk cache directory; empty when the disk cache is off.
  std::string getCacheDirectory() const;
  /// The remote cache's URL; empty when it is off.
  std::string getRemoteCacheURL() const;
  /// The disk and remote tiers the Compiler uses (to give a CUDA runtime,
  /// RuntimeOptions::CubinTiers, or another Compiler, CompilerOptions::Tiers).
  const CacheTiers &getCacheTiers() const;
  CompilerStats getStats() const;
  /// Drops every module from the memory cache (callers keep theirs).
  void clearMemoryCache();

private:
  struct Impl;
  explicit Compiler(std::unique_ptr<Impl> I);
  std::unique_ptr<Impl> P;
};

/// parseModule followed by verifyModule: the front end every compile runs.
/// Errors: the source's DiagnosticError.
llvm::Expected<std::unique_ptr<Module>> parseAndVerify(std::string_view Source,
                                                       std::string_view BufferName);

} // namespace gridjit

#endif // GRIDJIT_COMPILER_COMPILER_H
