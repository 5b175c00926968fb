//===- Environment.h - The environment variables gridjit reads --*- C++ -*-===//
//
// Part of gridjit. Every environment variable the library reads is declared
// once, in the table behind getEnvVarTable(), together with whether it can
// change generated code (and then how it enters the cache key) or not. The
// library reads the environment only through getEnv(), which takes a table
// entry, so a variable that is not in the table cannot be read; a unit test
// (unittests/Cache/EnvironmentTest.cpp) fails when any other code under
// lib/ or include/ reads the environment directly.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_SUPPORT_ENVIRONMENT_H
#define GRIDJIT_SUPPORT_ENVIRONMENT_H

#include "llvm/ADT/ArrayRef.h"

#include <optional>
#include <string>
#include <string_view>

namespace gridjit {

/// The environment variables the library reads (tools such as jit-run may
/// read others of their own).
enum class EnvVar {
  CudaHome,                     ///< CUDA_HOME
  GridjitCacheDir,              ///< GRIDJIT_CACHE_DIR
  XdgCacheHome,                 ///< XDG_CACHE_HOME
  Home,                         ///< HOME
  GridjitNumThreads,            ///< GRIDJIT_NUM_THREADS
  GridjitCudaDriver,            ///< GRIDJIT_CUDA_DRIVER
  GridjitRemoteCache,           ///< GRIDJIT_REMOTE_CACHE
  GridjitRemoteCacheSecretFile, ///< GRIDJIT_REMOTE_CACHE_SECRET_FILE
  GridjitRemoteCacheReadOnly,   ///< GRIDJIT_REMOTE_CACHE_READ_ONLY
  GridjitCacheSecretFile,       ///< GRIDJIT_CACHE_SECRET_FILE
};

/// Whether a variable can change the code gridjit generates.
enum class EnvEffect {
  /// It can change generated code, so its effect is part of the cache key
  /// (EnvVarInfo::Use says through which key component).
  PartOfKey,
  /// It changes where or how things run, never the code.
  DoesNotAffectCode,
};

/// One row of the table.
struct EnvVarInfo {
  EnvVar Var;
  std::string_view Name; ///< "CUDA_HOME"
  EnvEffect Effect;
  std::string_view Use; ///< what it does (and, for PartOfKey, how it is keyed)
};

/// Every variable the library reads, one row each, in EnvVar order.
llvm::ArrayRef<EnvVarInfo> getEnvVarTable();
/// The row of \p V.
const EnvVarInfo &getEnvVarInfo(EnvVar V);

/// The value of \p V in the process environment; std::nullopt when it is
/// unset. An empty value is returned as an empty string. This is the only
/// place library code reads the environment.
std::optional<std::string> getEnv(EnvVar V);

} // namespace gridjit

#endif // GRIDJIT_SUPPORT_ENVIRONMENT_H
