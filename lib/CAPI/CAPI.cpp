//===- CAPI.cpp - gridjit's C API over its C++ API --------------------------===//
//
// Part of gridjit. Implements include/gridjit-c/gridjit.h: every C handle
// is a small struct around the C++ object it stands for (a Compiler, a
// CompiledModuleRef, a Runtime, a LoadedModule, a DeviceBuffer), and every
// function turns the C++ API's llvm::Error into a gj_status and the calling
// thread's last error. No function holds a lock of its own while compiling
// or launching: the C++ objects are thread-safe themselves, and the only
// lock here guards the hand-over of an asynchronous compile's result.
// No exception leaves a function (a C caller cannot catch it).
//
//===----------------------------------------------------------------------===//

#include "gridjit-c/gridjit.h"

#include "gridjit/Compiler/Compiler.h"
#include "gridjit/IR/Type.h"
#include "gridjit/Runtime/CudaDevices.h"
#include "gridjit/Runtime/LaunchChecks.h"
#include "gridjit/Runtime/Runtime.h"
#include "gridjit/Support/Diagnostics.h"
#include "gridjit/Support/Limits.h"
#include "gridjit/Target/Target.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <cstddef>
#include <cstring>
#include <exception>
#include <future>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <utility>

using namespace gridjit;

//===----------------------------------------------------------------------===//
// Handles
//===----------------------------------------------------------------------===//

struct gj_compiler_s {
  std::unique_ptr<Compiler> C;
};

/// One reference to a compiled module: every handle the API returns is its
/// own gj_module_s, and the CompiledModule lives while any of them does.
struct gj_module_s {
  CompiledModuleRef M;
};

/// An asynchronous compile. The shared_future is never modified after the
/// job is made, so that any number of threads may wait on it at once; the
/// first one to see it finished moves the result out under Lock (a short
/// hand-over, never held while the compile runs).
struct gj_compile_job_s {
  std::shared_future<llvm::Expected<CompiledModuleRef>> Future;
  std::mutex Lock;
  bool Taken = false;
  gj_status Status = GJ_OK;
  std::string Message;
  CompiledModuleRef Module;
};

/// A runtime; its buffers and loaded modules share its ownership, so that it
/// outlives them whatever order the caller frees them in.
struct gj_runtime_s {
  std::shared_ptr<Runtime> RT;
};

struct gj_loaded_module_s {
  std::shared_ptr<Runtime> RT;
  CompiledModuleRef M; ///< the artifact's metadata stays valid while loaded
  std::unique_ptr<LoadedModule> LM;
};

struct gj_buffer_s {
  std::shared_ptr<Runtime> RT; ///< destroyed after Buf, which frees into it
  DeviceBuffer Buf;
};

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

namespace {

thread_local std::string LastError;

/// Records \p Message as the calling thread's last error; returns \p S.
gj_status fail(gj_status S, const llvm::Twine &Message) {
  LastError = Message.str();
  return S;
}

/// The full rendering of \p E (every diagnostic with its source line and
/// caret), without a final newline. Consumes \p E.
std::string render(llvm::Error E) {
  std::string S = llvm::toString(std::move(E));
  while (!S.empty() && S.back() == '\n')
    S.pop_back();
  return S;
}

/// Records \p E (which must be an error) as the last error with status
/// \p S, or GJ_ERROR_COMPILE when it is KIR source's DiagnosticError.
gj_status fail(gj_status S, llvm::Error E) {
  if (E.isA<DiagnosticError>())
    S = GJ_ERROR_COMPILE;
  return fail(S, render(std::move(E)));
}

/// Runs \p Body, turning an exception (out of memory, a std::future or
/// std::thread failing) into GJ_ERROR_FAILED: none may reach a C caller.
template <typename Fn> gj_status guarded(const char *Function, Fn &&Body) {
  try {
    return Body();
  } catch (const std::bad_alloc &) {
    return fail(GJ_ERROR_FAILED, llvm::Twine(Function) + ": out of memory");
  } catch (const std::exception &Ex) {
    return fail(GJ_ERROR_FAILED, llvm::Twine(Function) + ": " + Ex.what());
  } catch (...) {
    return fail(GJ_ERROR_FAILED, llvm::Twine(Function) + ": unknown exception");
  }
}

gj_status nullArgument(const char *Function, const char *What) {
  return fail(GJ_ERROR_INVALID_ARGUMENT, llvm::Twine(Function) + ": " + What + " is NULL");
}

/// Checks the struct_size of a struct the caller passes in or wants filled.
template <typename T> gj_status checkStructSize(const char *Function, const T *S) {
  if (S->struct_size >= sizeof(T))
    return GJ_OK;
  return fail(GJ_ERROR_INVALID_ARGUMENT,
              llvm::Twine(Function) + ": struct_size is " + llvm::Twine(S->struct_size) +
                  ", less than the " + llvm::Twine(sizeof(T)) +
                  " bytes of this version's struct (call its *_init function first)");
}

const char *const ScalarNames[] = {"bool", "i8",  "i16", "i32", "i64", "u8",
                                   "u16",  "u32", "u64", "f32", "f64"};
constexpr int NumScalars = sizeof(ScalarNames) / sizeof(ScalarNames[0]);
static_assert(NumScalars == int(ScalarKind::F64) + 1, "gj_scalar_type follows ScalarKind");

/// The value a C caller stored in an enum (gj_status, gj_scalar_type,
/// gj_arg_kind), read as the int it is. C lets any int be stored there; C++
/// may assume an enum holds only values in its enumerators' range, and
/// reading another one as the enum is undefined behaviour (UBSan's
/// -fsanitize=enum reports it), so the C API never reads them as enums.
template <typename E> int raw(const E &V) {
  static_assert(sizeof(E) == sizeof(int), "the C API's enums are ints");
  int R;
  std::memcpy(&R, &V, sizeof R);
  return R;
}

bool isScalarType(int T) { return T >= 0 && T < NumScalars; }

gj_scalar_type toC(ScalarKind K) { return static_cast<gj_scalar_type>(K); }
ScalarKind toKind(int T) { return static_cast<ScalarKind>(T); }

/// The target names a compiler knows, for messages: "host, nvptx".
std::string targetList(const Compiler &C) {
  std::string S;
  for (TargetKind K : {TargetKind::Host, TargetKind::NVPTX})
    if (C.getTarget(getTargetName(K)))
      S += (S.empty() ? "" : ", ") + std::string(getTargetName(K));
  return S;
}

} // namespace

//===----------------------------------------------------------------------===//
// Versions, status, errors
//===----------------------------------------------------------------------===//

uint32_t gj_api_version(void) { return GJ_API_VERSION; }

const char *gj_version_string(void) { return GRIDJIT_VERSION_STRING; }

const char *gj_status_name(gj_status S) {
  switch (raw(S)) {
  case GJ_OK:
    return "GJ_OK";
  case GJ_ERROR_INVALID_ARGUMENT:
    return "GJ_ERROR_INVALID_ARGUMENT";
  case GJ_ERROR_COMPILE:
    return "GJ_ERROR_COMPILE";
  case GJ_ERROR_NOT_FOUND:
    return "GJ_ERROR_NOT_FOUND";
  case GJ_ERROR_LAUNCH:
    return "GJ_ERROR_LAUNCH";
  case GJ_ERROR_NOT_READY:
    return "GJ_ERROR_NOT_READY";
  case GJ_ERROR_NO_DEVICE:
    return "GJ_ERROR_NO_DEVICE";
  case GJ_ERROR_FAILED:
    return "GJ_ERROR_FAILED";
  }
  return "GJ_STATUS_UNKNOWN";
}

const char *gj_last_error(void) { return LastError.c_str(); }

const char *gj_scalar_type_name(gj_scalar_type T) {
  int V = raw(T);
  if (isScalarType(V))
    return ScalarNames[V];
  return V == GJ_ANY ? "any" : "unknown";
}

//===----------------------------------------------------------------------===//
// Compiler
//===----------------------------------------------------------------------===//

void gj_compiler_options_init(gj_compiler_options *O) {
  if (!O)
    return;
  *O = gj_compiler_options();
  O->struct_size = sizeof(*O);
  O->targets = nullptr;
  O->opt_level = 3;
  O->threads = 0;
  O->use_disk_cache = 1;
  O->cache_dir = nullptr;
}

/// The library's name of target \p Name: "cuda", the runtime's name of the
/// GPU, is "nvptx" (the Python package's `target="cuda"`).
static llvm::StringRef canonicalTarget(llvm::StringRef Name) {
  return Name == "cuda" ? "nvptx" : Name;
}

/// The targets of \p Spec ("host", "nvptx:sm_80", "host,nvptx").
static gj_status parseTargets(const char *Spec, CompilerOptions &Opts) {
  llvm::StringRef Rest = Spec ? Spec : "";
  if (Rest.trim().empty())
    return GJ_OK; // the Compiler's default: the host target
  while (!Rest.empty()) {
    auto [Item, Tail] = Rest.split(',');
    Rest = Tail;
    Item = Item.trim();
    auto [Spelled, Arch] = Item.split(':');
    llvm::StringRef Name = canonicalTarget(Spelled);
    if (Name.empty())
      return fail(GJ_ERROR_INVALID_ARGUMENT,
                  "gj_compiler_create: empty target name in targets '" + llvm::Twine(Spec) + "'");
    if (!parseTargetName(Name))
      return fail(GJ_ERROR_NOT_FOUND, "gj_compiler_create: unknown target '" + Name +
                                          "' in targets '" + Spec + "' (known: host, nvptx)");
    auto T = createTargetByName(Name, Arch);
    if (!T)
      return fail(GJ_ERROR_INVALID_ARGUMENT,
                  "gj_compiler_create: target '" + Item + "': " + render(T.takeError()));
    Opts.Targets.push_back(std::move(*T));
  }
  return GJ_OK;
}

gj_status gj_compiler_create(const gj_compiler_options *O, gj_compiler *Out) {
  return guarded("gj_compiler_create", [&] {
    if (!Out)
      return nullArgument("gj_compiler_create", "out");
    gj_compiler_options Defaults;
    gj_compiler_options_init(&Defaults);
    if (!O)
      O = &Defaults;
    if (gj_status S = checkStructSize("gj_compiler_create", O))
      return S;
    if (O->opt_level > 3)
      return fail(GJ_ERROR_INVALID_ARGUMENT, "gj_compiler_create: opt_level " +
                                                 llvm::Twine(O->opt_level) +
                                                 " is not one of 0, 1, 2, 3");
    CompilerOptions Opts;
    if (gj_status S = parseTargets(O->targets, Opts))
      return S;
    Opts.OptLevel = O->opt_level;
    if (O->threads > limits::MaxThreads)
      return fail(GJ_ERROR_INVALID_ARGUMENT,
                  "gj_compiler_create: threads " + llvm::Twine(O->threads) +
                      " is more than the limit of " + llvm::Twine(limits::MaxThreads));
    Opts.AsyncThreads = O->threads;
    Opts.UseDiskCache = O->use_disk_cache != 0;
    if (O->cache_dir)
      Opts.CacheDir = O->cache_dir;
    // A library inside someone else's process prints nothing: a disk cache
    // that cannot be used is dropped silently (the compiler then caches in
    // memory only), where jit-run would warn.
    Opts.Warning = [](const std::string &) {};
    auto C = Compiler::create(std::move(Opts));
    if (!C)
      return fail(GJ_ERROR_INVALID_ARGUMENT, "gj_compiler_create: " + render(C.takeError()));
    *Out = new gj_compiler_s{std::move(*C)};
    return GJ_OK;
  });
}

void gj_compiler_destroy(gj_compiler C) { delete C; }

/// The checks gj_compile and gj_compile_async share: the handle, the source
/// and the target. Fills \p Req.
static gj_status checkCompile(const char *Function, gj_compiler C, const char *Source, size_t Size,
                              const char *Target, void *Out, CompileRequest &Req) {
  if (!C)
    return nullArgument(Function, "compiler");
  if (!Out)
    return nullArgument(Function, "out");
  if (!Source && Size)
    return nullArgument(Function, "source");
  if (Target && *Target) {
    llvm::StringRef Name = canonicalTarget(Target);
    if (!C->C->getTarget(Name))
      return fail(GJ_ERROR_NOT_FOUND, llvm::Twine(Function) + ": the compiler has no target '" +
                                          Target + "' (its targets: " + targetList(*C->C) + ")");
    Req.Target = Name.str();
  }
  return GJ_OK;
}

gj_status gj_compile(gj_compiler C, const char *Source, size_t Size, const char *BufferName,
                     const char *Target, gj_module *Out) {
  return guarded("gj_compile", [&] {
    CompileRequest Req;
    if (gj_status S = checkCompile("gj_compile", C, Source, Size, Target, Out, Req))
      return S;
    auto M = C->C->compile(std::string_view(Source ? Source : "", Size),
                           BufferName ? BufferName : "<source>", Req);
    if (!M)
      return fail(GJ_ERROR_FAILED, M.takeError());
    *Out = new gj_module_s{std::move(*M)};
    return GJ_OK;
  });
}

gj_status gj_compile_async(gj_compiler C, const char *Source, size_t Size, const char *BufferName,
                           const char *Target, gj_compile_job *Out) {
  return guarded("gj_compile_async", [&] {
    CompileRequest Req;
    if (gj_status S = checkCompile("gj_compile_async", C, Source, Size, Target, Out, Req))
      return S;
    auto Job = std::make_unique<gj_compile_job_s>();
    Job->Future = C->C->compileAsync(std::string(Source ? Source : "", Size),
                                     BufferName ? BufferName : "<source>", std::move(Req))
                      .share();
    *Out = Job.release();
    return GJ_OK;
  });
}

gj_status gj_compile_job_poll(gj_compile_job J) {
  return guarded("gj_compile_job_poll", [&] {
    if (!J)
      return nullArgument("gj_compile_job_poll", "job");
    if (J->Future.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
      return GJ_OK;
    return fail(GJ_ERROR_NOT_READY, "gj_compile_job_poll: the compile has not finished yet");
  });
}

gj_status gj_compile_job_wait(gj_compile_job J, gj_module *Out) {
  return guarded("gj_compile_job_wait", [&] {
    if (!J)
      return nullArgument("gj_compile_job_wait", "job");
    if (!Out)
      return nullArgument("gj_compile_job_wait", "out");
    J->Future.wait(); // no lock held: any number of threads may wait
    std::lock_guard<std::mutex> G(J->Lock);
    if (!J->Taken) {
      // The shared state's value is not const (compileAsync made it); this
      // is the only place that touches it, once, under the lock.
      auto &Result = const_cast<llvm::Expected<CompiledModuleRef> &>(J->Future.get());
      if (Result) {
        J->Module = std::move(*Result);
      } else {
        llvm::Error E = Result.takeError();
        J->Status = E.isA<DiagnosticError>() ? GJ_ERROR_COMPILE : GJ_ERROR_FAILED;
        J->Message = render(std::move(E));
      }
      J->Taken = true;
    }
    if (J->Status != GJ_OK)
      return fail(J->Status, J->Message);
    *Out = new gj_module_s{J->Module};
    return GJ_OK;
  });
}

void gj_compile_job_destroy(gj_compile_job J) {
  if (!J)
    return;
  J->Future.wait();
  {
    // Consume an error nobody waited for (Expected must be checked).
    std::lock_guard<std::mutex> G(J->Lock);
    if (!J->Taken) {
      auto &Result = const_cast<llvm::Expected<CompiledModuleRef> &>(J->Future.get());
      if (!Result)
        llvm::consumeError(Result.takeError());
      J->Taken = true;
    }
  }
  delete J;
}

//===----------------------------------------------------------------------===//
// Compiled modules and kernels
//===----------------------------------------------------------------------===//

void gj_module_release(gj_module M) { delete M; }

const char *gj_module_target(gj_module M) {
  if (!M) {
    nullArgument("gj_module_target", "module");
    return "";
  }
  return M->M->Art.Kind == TargetKind::Host ? "host" : "nvptx";
}

const char *gj_module_arch(gj_module M) {
  if (!M) {
    nullArgument("gj_module_arch", "module");
    return "";
  }
  return M->M->Art.Arch.c_str();
}

gj_status gj_module_payload(gj_module M, const char **Data, size_t *Size) {
  if (!M)
    return nullArgument("gj_module_payload", "module");
  if (!Data || !Size)
    return nullArgument("gj_module_payload", Data ? "size" : "data");
  *Data = M->M->Art.Payload.data();
  *Size = M->M->Art.Payload.size();
  return GJ_OK;
}

size_t gj_module_kernel_count(gj_module M) { return M ? M->M->Art.Kernels.size() : 0; }

/// "a, b, c" of the kernels of \p A.
static std::string kernelList(const Artifact &A) {
  std::string S;
  for (const KernelInfo &K : A.Kernels)
    S += (S.empty() ? "" : ", ") + K.Name;
  return S.empty() ? "none" : S;
}

gj_status gj_module_find_kernel(gj_module M, const char *Name, size_t *Index) {
  return guarded("gj_module_find_kernel", [&] {
    if (!M)
      return nullArgument("gj_module_find_kernel", "module");
    if (!Name)
      return nullArgument("gj_module_find_kernel", "name");
    if (!Index)
      return nullArgument("gj_module_find_kernel", "index");
    const std::vector<KernelInfo> &Ks = M->M->Art.Kernels;
    for (size_t I = 0; I < Ks.size(); ++I)
      if (Ks[I].Name == Name) {
        *Index = I;
        return GJ_OK;
      }
    return fail(GJ_ERROR_NOT_FOUND, "no kernel '" + llvm::Twine(Name) +
                                        "' in the module (kernels: " + kernelList(M->M->Art) + ")");
  });
}

void gj_kernel_info_init(gj_kernel_info *Info) {
  if (!Info)
    return;
  *Info = gj_kernel_info();
  Info->struct_size = sizeof(*Info);
}

void gj_param_info_init(gj_param_info *Info) {
  if (!Info)
    return;
  *Info = gj_param_info();
  Info->struct_size = sizeof(*Info);
}

/// Kernel \p Index of \p M, or an error naming the range.
static const KernelInfo *kernelAt(const char *Function, gj_module M, size_t Index) {
  const std::vector<KernelInfo> &Ks = M->M->Art.Kernels;
  if (Index < Ks.size())
    return &Ks[Index];
  fail(GJ_ERROR_INVALID_ARGUMENT, llvm::Twine(Function) + ": kernel index " + llvm::Twine(Index) +
                                      " is out of range (the module has " + llvm::Twine(Ks.size()) +
                                      " kernels)");
  return nullptr;
}

gj_status gj_module_kernel(gj_module M, size_t Index, gj_kernel_info *Info) {
  if (!M)
    return nullArgument("gj_module_kernel", "module");
  if (!Info)
    return nullArgument("gj_module_kernel", "info");
  if (gj_status S = checkStructSize("gj_module_kernel", Info))
    return S;
  const KernelInfo *K = kernelAt("gj_module_kernel", M, Index);
  if (!K)
    return GJ_ERROR_INVALID_ARGUMENT;
  Info->name = K->Name.c_str();
  Info->num_params = K->Params.size();
  Info->cooperative = K->Cooperative;
  Info->uses_dynamic_shared = K->UsesDynamicShared;
  Info->static_shared_bytes = K->StaticSharedBytes;
  return GJ_OK;
}

gj_status gj_module_kernel_param(gj_module M, size_t Kernel, size_t Param, gj_param_info *Info) {
  if (!M)
    return nullArgument("gj_module_kernel_param", "module");
  if (!Info)
    return nullArgument("gj_module_kernel_param", "info");
  if (gj_status S = checkStructSize("gj_module_kernel_param", Info))
    return S;
  const KernelInfo *K = kernelAt("gj_module_kernel_param", M, Kernel);
  if (!K)
    return GJ_ERROR_INVALID_ARGUMENT;
  if (Param >= K->Params.size())
    return fail(GJ_ERROR_INVALID_ARGUMENT, "gj_module_kernel_param: parameter index " +
                                               llvm::Twine(Param) + " is out of range (kernel '" +
                                               K->Name + "' has " + llvm::Twine(K->Params.size()) +
                                               " parameters)");
  const KernelParamInfo &P = K->Params[Param];
  Info->name = P.Name.c_str();
  Info->is_pointer = P.Ty.isPointer();
  Info->type = toC(P.Ty.getScalarKind());
  Info->size = P.Size;
  Info->align = P.Align;
  return GJ_OK;
}

//===----------------------------------------------------------------------===//
// Runtimes, buffers
//===----------------------------------------------------------------------===//

void gj_runtime_options_init(gj_runtime_options *O) {
  if (!O)
    return;
  *O = gj_runtime_options();
  O->struct_size = sizeof(*O);
  O->target = "host";
  O->threads = 0;
  O->device = 0;
  O->use_cubin_cache = 1;
  O->cache_dir = nullptr;
}

gj_status gj_runtime_create(const gj_runtime_options *O, gj_runtime *Out) {
  return guarded("gj_runtime_create", [&] {
    if (!Out)
      return nullArgument("gj_runtime_create", "out");
    gj_runtime_options Defaults;
    gj_runtime_options_init(&Defaults);
    if (!O)
      O = &Defaults;
    if (gj_status S = checkStructSize("gj_runtime_create", O))
      return S;
    llvm::StringRef Name = O->target ? O->target : "host";
    TargetKind K;
    if (Name == "host")
      K = TargetKind::Host;
    else if (Name == "cuda" || Name == "nvptx")
      K = TargetKind::NVPTX;
    else
      return fail(GJ_ERROR_NOT_FOUND,
                  "gj_runtime_create: unknown runtime target '" + Name + "' (known: host, cuda)");
    if (O->threads > limits::MaxThreads)
      return fail(GJ_ERROR_INVALID_ARGUMENT,
                  "gj_runtime_create: threads " + llvm::Twine(O->threads) +
                      " is more than the limit of " + llvm::Twine(limits::MaxThreads));
    RuntimeOptions RO;
    RO.NumThreads = O->threads;
    RO.Device = O->device;
    RO.UseCubinCache = O->use_cubin_cache != 0;
    if (O->cache_dir)
      RO.CacheDir = O->cache_dir;
    // The runtime reads no environment: the remote tier of the cubin cache
    // that $GRIDJIT_REMOTE_CACHE names (docs/RemoteCache.md) is opened here.
    if (K == TargetKind::NVPTX && RO.UseCubinCache) {
      auto Remote = openRemoteCache({});
      if (!Remote)
        return fail(GJ_ERROR_FAILED, "gj_runtime_create: " + render(Remote.takeError()));
      RO.CubinTiers.Remote = std::move(*Remote);
    }
    auto RT = createRuntime(K, RO);
    if (!RT) {
      // CudaRuntime::create's documented messages tell the cases apart.
      std::string Msg = render(RT.takeError());
      gj_status S = GJ_ERROR_FAILED;
      if (llvm::StringRef(Msg).starts_with("no CUDA device"))
        S = GJ_ERROR_NO_DEVICE;
      else if (llvm::StringRef(Msg).contains("does not exist"))
        S = GJ_ERROR_NOT_FOUND;
      return fail(S, "gj_runtime_create: " + Msg);
    }
    *Out = new gj_runtime_s{std::shared_ptr<Runtime>(std::move(*RT))};
    return GJ_OK;
  });
}

void gj_runtime_destroy(gj_runtime R) { delete R; }

int32_t gj_cuda_device_count(void) {
  try {
    auto Devices = listCudaDevices();
    if (!Devices) {
      LastError = "gj_cuda_device_count: " + render(Devices.takeError());
      return 0;
    }
    return static_cast<int32_t>(Devices->size());
  } catch (...) {
    return 0;
  }
}

gj_status gj_runtime_synchronize(gj_runtime R) {
  return guarded("gj_runtime_synchronize", [&] {
    if (!R)
      return nullArgument("gj_runtime_synchronize", "runtime");
    if (llvm::Error E = R->RT->synchronize())
      return fail(GJ_ERROR_LAUNCH, std::move(E));
    return GJ_OK;
  });
}

gj_status gj_runtime_load(gj_runtime R, gj_module M, gj_loaded_module *Out) {
  return guarded("gj_runtime_load", [&] {
    if (!R)
      return nullArgument("gj_runtime_load", "runtime");
    if (!M)
      return nullArgument("gj_runtime_load", "module");
    if (!Out)
      return nullArgument("gj_runtime_load", "out");
    if (M->M->Art.Kind != R->RT->getTargetKind())
      return fail(GJ_ERROR_INVALID_ARGUMENT,
                  "gj_runtime_load: the module was compiled for the " +
                      llvm::Twine(getTargetName(M->M->Art.Kind)) + " target, the runtime runs " +
                      getTargetName(R->RT->getTargetKind()) + " modules");
    auto LM = R->RT->load(M->M->Art);
    if (!LM)
      return fail(GJ_ERROR_FAILED, LM.takeError());
    *Out = new gj_loaded_module_s{R->RT, M->M, std::move(*LM)};
    return GJ_OK;
  });
}

void gj_loaded_module_destroy(gj_loaded_module LM) { delete LM; }

gj_status gj_buffer_alloc(gj_runtime R, uint64_t Bytes, gj_buffer *Out) {
  return guarded("gj_buffer_alloc", [&] {
    if (!R)
      return nullArgument("gj_buffer_alloc", "runtime");
    if (!Out)
      return nullArgument("gj_buffer_alloc", "out");
    auto B = R->RT->allocate(Bytes);
    if (!B)
      return fail(GJ_ERROR_FAILED, "gj_buffer_alloc: " + render(B.takeError()));
    *Out = new gj_buffer_s{R->RT, std::move(*B)};
    return GJ_OK;
  });
}

void gj_buffer_free(gj_buffer B) {
  if (!B)
    return;
  // Errors of the device's free are dropped: the caller can do nothing
  // about them, and the handle is gone either way.
  llvm::consumeError(B->RT->free(B->Buf));
  delete B;
}

uint64_t gj_buffer_address(gj_buffer B) { return B ? B->Buf.getAddress() : 0; }

uint64_t gj_buffer_size(gj_buffer B) { return B ? B->Buf.size() : 0; }

/// Checks a copy of \p Bytes at \p Offset of \p B from or to \p Host.
static gj_status checkCopy(const char *Function, gj_buffer B, uint64_t Offset, const void *Host,
                           uint64_t Bytes) {
  if (!B)
    return nullArgument(Function, "buffer");
  if (!Host && Bytes)
    return nullArgument(Function, "host memory");
  uint64_t Size = B->Buf.size();
  if (Offset > Size || Bytes > Size - Offset)
    return fail(GJ_ERROR_INVALID_ARGUMENT, llvm::Twine(Function) + ": " + llvm::Twine(Bytes) +
                                               " bytes at offset " + llvm::Twine(Offset) +
                                               " are outside the buffer of " + llvm::Twine(Size) +
                                               " bytes");
  return GJ_OK;
}

gj_status gj_buffer_write(gj_buffer B, uint64_t Offset, const void *Src, uint64_t Bytes) {
  return guarded("gj_buffer_write", [&] {
    if (gj_status S = checkCopy("gj_buffer_write", B, Offset, Src, Bytes))
      return S;
    if (!Bytes)
      return GJ_OK;
    if (llvm::Error E = B->RT->copyToDevice(B->Buf, Src, Bytes, Offset))
      return fail(GJ_ERROR_FAILED, "gj_buffer_write: " + render(std::move(E)));
    return GJ_OK;
  });
}

gj_status gj_buffer_read(gj_buffer B, uint64_t Offset, void *Dst, uint64_t Bytes) {
  return guarded("gj_buffer_read", [&] {
    if (gj_status S = checkCopy("gj_buffer_read", B, Offset, Dst, Bytes))
      return S;
    if (!Bytes)
      return GJ_OK;
    if (llvm::Error E = B->RT->copyFromDevice(Dst, B->Buf, Bytes, Offset))
      return fail(GJ_ERROR_FAILED, "gj_buffer_read: " + render(std::move(E)));
    return GJ_OK;
  });
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

void gj_launch_config_init(gj_launch_config *C) {
  if (!C)
    return;
  *C = gj_launch_config();
  C->struct_size = sizeof(*C);
  for (int I = 0; I < 3; ++I)
    C->grid[I] = C->block[I] = 1;
  C->dynamic_shared_bytes = 0;
  C->stream = nullptr;
}

namespace {

/// "gj_launch: kernel 'K': argument N ('p: ptr<f32>')" (N counts from 1,
/// as the runtime's own argument checks do): how the messages about
/// argument \p I begin.
std::string argumentPrefix(const KernelInfo &K, size_t I) {
  std::string S = "gj_launch: kernel '" + K.Name + "': argument " + std::to_string(I + 1);
  if (I < K.Params.size())
    S += " ('" + K.Params[I].Name + ": " + K.Params[I].Ty.str() + "')";
  return S;
}

/// A signed value that must fit in \p Bits bits.
bool fitsSigned(int64_t V, unsigned Bits) {
  if (Bits >= 64)
    return true;
  int64_t Max = (int64_t(1) << (Bits - 1)) - 1;
  return V >= -Max - 1 && V <= Max;
}

/// Converts argument \p I of a launch of \p K into \p Out.
gj_status convertArg(const gj_arg &A, size_t I, const KernelInfo &K, const Runtime &RT,
                     KernelArg &Out) {
  const int Kind = raw(A.kind), Type = raw(A.type);
  std::optional<ScalarKind> Pointee;
  if (Kind != GJ_ARG_SCALAR) {
    if (isScalarType(Type))
      Pointee = toKind(Type);
    else if (Type != GJ_ANY)
      return fail(GJ_ERROR_INVALID_ARGUMENT,
                  argumentPrefix(K, I) + ": unknown pointee type " + llvm::Twine(Type));
  }
  switch (Kind) {
  case GJ_ARG_SCALAR: {
    if (!isScalarType(Type))
      return fail(GJ_ERROR_INVALID_ARGUMENT,
                  argumentPrefix(K, I) + ": a scalar argument needs a scalar type, not " +
                      (Type == GJ_ANY ? llvm::Twine("'any'") : llvm::Twine(Type)));
    ScalarKind SK = toKind(Type);
    if (SK == ScalarKind::Bool) {
      if (A.value.i != 0 && A.value.i != 1)
        return fail(GJ_ERROR_INVALID_ARGUMENT, argumentPrefix(K, I) + ": bool value " +
                                                   llvm::Twine(A.value.i) + " is not 0 or 1");
      Out = KernelArg::boolean(A.value.i != 0);
      return GJ_OK;
    }
    if (isFloatScalar(SK)) {
      Out = SK == ScalarKind::F32 ? KernelArg::f32(A.value.f32) : KernelArg::f64(A.value.f64);
      return GJ_OK;
    }
    unsigned Bits = scalarBits(SK);
    if (isSignedScalar(SK)) {
      if (!fitsSigned(A.value.i, Bits))
        return fail(GJ_ERROR_INVALID_ARGUMENT, argumentPrefix(K, I) + ": " +
                                                   llvm::Twine(A.value.i) + " does not fit in " +
                                                   ScalarNames[int(SK)]);
    } else if (Bits < 64 && (A.value.u >> Bits) != 0) {
      return fail(GJ_ERROR_INVALID_ARGUMENT, argumentPrefix(K, I) + ": " + llvm::Twine(A.value.u) +
                                                 " does not fit in " + ScalarNames[int(SK)]);
    }
    switch (SK) {
    case ScalarKind::I8:
      Out = KernelArg::i8(int8_t(A.value.i));
      break;
    case ScalarKind::I16:
      Out = KernelArg::i16(int16_t(A.value.i));
      break;
    case ScalarKind::I32:
      Out = KernelArg::i32(int32_t(A.value.i));
      break;
    case ScalarKind::I64:
      Out = KernelArg::i64(A.value.i);
      break;
    case ScalarKind::U8:
      Out = KernelArg::u8(uint8_t(A.value.u));
      break;
    case ScalarKind::U16:
      Out = KernelArg::u16(uint16_t(A.value.u));
      break;
    case ScalarKind::U32:
      Out = KernelArg::u32(uint32_t(A.value.u));
      break;
    default:
      Out = KernelArg::u64(A.value.u);
      break;
    }
    return GJ_OK;
  }
  case GJ_ARG_BUFFER: {
    const gj_buffer_s *B = A.value.buffer;
    if (!B)
      return fail(GJ_ERROR_INVALID_ARGUMENT, argumentPrefix(K, I) + ": the buffer is NULL");
    if (B->RT.get() != &RT)
      return fail(GJ_ERROR_INVALID_ARGUMENT,
                  argumentPrefix(K, I) +
                      ": the buffer belongs to another runtime than the loaded module");
    Out = KernelArg::buffer(B->Buf, Pointee);
    return GJ_OK;
  }
  case GJ_ARG_DEVICE_POINTER:
    Out = KernelArg::devicePointer(A.value.address, Pointee);
    return GJ_OK;
  case GJ_ARG_HOST_POINTER: {
    if (RT.getTargetKind() != TargetKind::Host)
      return fail(GJ_ERROR_INVALID_ARGUMENT,
                  argumentPrefix(K, I) +
                      ": a host pointer cannot be passed to a kernel on the nvptx target "
                      "(use a gj_buffer or GJ_ARG_DEVICE_POINTER)");
    // KernelArg::pointer takes the pointee from a C++ type; a claimed
    // pointee is given as an address instead (the same on the host target).
    if (Pointee)
      Out = KernelArg::devicePointer(reinterpret_cast<uintptr_t>(A.value.pointer), Pointee);
    else
      Out = KernelArg::pointer(A.value.pointer);
    return GJ_OK;
  }
  }
  return fail(GJ_ERROR_INVALID_ARGUMENT,
              argumentPrefix(K, I) + ": unknown argument kind " + llvm::Twine(Kind));
}

} // namespace

gj_status gj_launch(gj_loaded_module LM, const char *Kernel, const gj_launch_config *C,
                    const gj_arg *Args, size_t NumArgs) {
  return guarded("gj_launch", [&] {
    if (!LM)
      return nullArgument("gj_launch", "loaded module");
    if (!Kernel)
      return nullArgument("gj_launch", "kernel");
    if (!C)
      return nullArgument("gj_launch", "config");
    if (!Args && NumArgs)
      return nullArgument("gj_launch", "args");
    if (gj_status S = checkStructSize("gj_launch", C))
      return S;
    auto K = findKernel(*LM->LM, Kernel);
    if (!K)
      return fail(GJ_ERROR_NOT_FOUND, "gj_launch: " + render(K.takeError()));
    llvm::SmallVector<KernelArg, 8> KArgs(NumArgs);
    for (size_t I = 0; I < NumArgs; ++I)
      if (gj_status S = convertArg(Args[I], I, *K, *LM->RT, KArgs[I]))
        return S;
    LaunchConfig LC;
    LC.Grid = {C->grid[0], C->grid[1], C->grid[2]};
    LC.Block = {C->block[0], C->block[1], C->block[2]};
    LC.DynamicSharedBytes = C->dynamic_shared_bytes;
    LaunchOptions LO;
    LO.Stream = C->stream;
    if (llvm::Error E = LM->RT->launch(*LM->LM, Kernel, LC, KArgs, LO))
      return fail(GJ_ERROR_LAUNCH, std::move(E));
    return GJ_OK;
  });
}
