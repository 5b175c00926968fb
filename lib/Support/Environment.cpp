//===- Environment.cpp - The environment variables gridjit reads ----------===//
//
// Part of gridjit. The one table of environment variables and the one
// function that reads them (see Environment.h). Adding a variable: add an
// EnvVar, a row here, and a line to docs/Cache.md ("Environment").
//
//===----------------------------------------------------------------------===//

#include "gridjit/Support/Environment.h"

#include "llvm/Support/Process.h"

#include <cassert>

using namespace gridjit;

namespace {

constexpr EnvVarInfo Table[] = {
    {EnvVar::CudaHome, "CUDA_HOME", EnvEffect::PartOfKey,
     "where the NVPTX target looks for libdevice ($CUDA_HOME/nvvm/libdevice/libdevice.10.bc); "
     "keyed through libdevice's content, which the NVPTX target's fingerprint hashes"},
    {EnvVar::GridjitCacheDir, "GRIDJIT_CACHE_DIR", EnvEffect::DoesNotAffectCode,
     "the disk cache directory, when no directory is given by the caller"},
    {EnvVar::XdgCacheHome, "XDG_CACHE_HOME", EnvEffect::DoesNotAffectCode,
     "the disk cache directory is $XDG_CACHE_HOME/gridjit when neither the caller nor "
     "GRIDJIT_CACHE_DIR names one"},
    {EnvVar::Home, "HOME", EnvEffect::DoesNotAffectCode,
     "the disk cache directory is $HOME/.cache/gridjit when nothing else names one"},
    {EnvVar::GridjitNumThreads, "GRIDJIT_NUM_THREADS", EnvEffect::DoesNotAffectCode,
     "the size of the runtime's worker pool when the caller does not set it"},
    {EnvVar::GridjitCudaDriver, "GRIDJIT_CUDA_DRIVER", EnvEffect::DoesNotAffectCode,
     "the CUDA driver library to load (a path or a file name for dlopen) instead of "
     "libcuda.so.1, when the caller does not name one (CudaDriverOptions::LibraryPath)"},
    {EnvVar::GridjitRemoteCache, "GRIDJIT_REMOTE_CACHE", EnvEffect::DoesNotAffectCode,
     "the remote cache's URL (redis://... or redis+unix://..., docs/RemoteCache.md), when the "
     "caller does not give one"},
    {EnvVar::GridjitRemoteCacheSecretFile, "GRIDJIT_REMOTE_CACHE_SECRET_FILE",
     EnvEffect::DoesNotAffectCode,
     "the file holding the remote cache's HMAC secret, when the caller does not name one"},
    {EnvVar::GridjitRemoteCacheReadOnly, "GRIDJIT_REMOTE_CACHE_READ_ONLY",
     EnvEffect::DoesNotAffectCode,
     "when 1, the remote cache is only read (no stores, leases or deletes)"},
    {EnvVar::GridjitCacheSecretFile, "GRIDJIT_CACHE_SECRET_FILE", EnvEffect::DoesNotAffectCode,
     "the file holding the disk cache's HMAC secret (a cache directory shared between users), "
     "when the caller does not name one"},
};

} // namespace

llvm::ArrayRef<EnvVarInfo> gridjit::getEnvVarTable() { return Table; }

const EnvVarInfo &gridjit::getEnvVarInfo(EnvVar V) {
  const EnvVarInfo &I = Table[static_cast<unsigned>(V)];
  assert(I.Var == V && "the table is out of EnvVar order");
  return I;
}

std::optional<std::string> gridjit::getEnv(EnvVar V) {
  return llvm::sys::Process::GetEnv(llvm::StringRef(getEnvVarInfo(V).Name));
}
