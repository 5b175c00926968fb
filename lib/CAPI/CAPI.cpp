//===- CAPI.cpp - gridjit's C API over its C++ API --------------------------===//
//
// Part of gridjit. Implements include/gridjit-c/gridjit.h: every C handle
// is a small struct around the C++ object it stands for (a Compiler, a
// CompiledModuleRef, a Runtime, a LoadedModule, a DeviceBuffer), and every
// function turns the C++ API's llvm::Error into a gj_status and the calling
// thread's last error. No function holds a lock of its own while compiling
// or launching: the C++ objects are thread-safe themselves, and the only
// lock here guards the hand-over of an asynchronous compile's result (and
// one a compiler's list of warnings). No exception leaves a function (a C
// caller cannot catch it). Every status is the C status of an ErrorKind
// (ErrorKinds.def); every struct is read and written through
// ExtensibleStruct.h, so that callers built against older and newer
// headers work (docs/CAPI.md, "Versions and growth").
//
//===----------------------------------------------------------------------===//

#include "gridjit-c/gridjit.h"

#include "ExtensibleStruct.h"

#include "gridjit/Compiler/Compiler.h"
#include "gridjit/IR/Type.h"
#include "gridjit/Runtime/CudaDevices.h"
#include "gridjit/Runtime/LaunchChecks.h"
#include "gridjit/Runtime/Runtime.h"
#include "gridjit/Support/Diagnostics.h"
#include "gridjit/Support/Errors.h"
#include "gridjit/Support/ForkSafety.h"
#include "gridjit/Support/HalfFloat.h"
#include "gridjit/Support/Limits.h"
#include "gridjit/Target/Target.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <deque>
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
using namespace gridjit::capi;

//===----------------------------------------------------------------------===//
// Handles
//===----------------------------------------------------------------------===//

/// The warnings of a compiler or runtime, in order. A deque, so that the
/// strings gj_*_warning hands out stay where they are as more are added.
/// Shared with the object's warning handler, which may run on its threads
/// until the object is gone.
struct WarningList {
  std::mutex Lock;
  std::deque<std::string> Messages;
  ForkHooks Fork{Lock, nullptr}; ///< fork(): no thread inside when copied

  /// A handler that appends to \p L: a library inside someone else's
  /// process prints nothing (where jit-run would warn, the caller reads
  /// the list).
  static WarningHandler into(const std::shared_ptr<WarningList> &L) {
    return [L](const std::string &Message) {
      std::lock_guard<std::mutex> G(L->Lock);
      L->Messages.push_back(Message);
    };
  }
  size_t count() {
    std::lock_guard<std::mutex> G(Lock);
    return Messages.size();
  }
  const char *at(size_t Index) {
    std::lock_guard<std::mutex> G(Lock);
    return Index < Messages.size() ? Messages[Index].c_str() : nullptr;
  }
};

struct gj_compiler_s {
  std::unique_ptr<Compiler> C;
  std::shared_ptr<WarningList> Warnings;
  unsigned OptLevel; ///< the compiler's, for gj_emit
  /// gj_compiler_options' check and check_arch: every request's.
  bool Check;
  unsigned CheckArch;
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
  ForkHooks Fork{Lock, nullptr}; ///< last: see ForkHooks
};

/// A runtime; its buffers and loaded modules share its ownership, so that it
/// outlives them whatever order the caller frees them in.
struct gj_runtime_s {
  std::shared_ptr<Runtime> RT;
  std::shared_ptr<WarningList> Warnings;
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

struct gj_cancel_token_s {
  CancelToken Token;
};

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

namespace {

thread_local std::string LastError;

/// The C status of errors of kind \p K (ErrorKinds.def).
gj_status statusOf(ErrorKind K) {
  switch (K) {
#define GRIDJIT_ERROR_KIND(Name, CStatus, PyName, PyBases, ExitStatus, Description)                \
  case ErrorKind::Name:                                                                            \
    return CStatus;
#include "gridjit/Support/ErrorKinds.def"
  }
  return GJ_ERROR_FAILED;
}

/// Records \p Message as the last error; returns the status of \p K.
gj_status fail(ErrorKind K, const llvm::Twine &Message) {
  LastError = Message.str();
  return statusOf(K);
}

/// The full rendering of \p E (every diagnostic with its source line and
/// caret), without a final newline. Consumes \p E.
std::string render(llvm::Error E) {
  std::string S = llvm::toString(std::move(E));
  while (!S.empty() && S.back() == '\n')
    S.pop_back();
  return S;
}

/// Records \p E (which must be an error) as the last error, with the
/// status of its kind.
gj_status fail(llvm::Error E) {
  ErrorKind K = peekErrorKind(E);
  return fail(K, render(std::move(E)));
}

/// Runs \p Body, turning an exception (out of memory, a std::future or
/// std::thread failing) into GJ_ERROR_FAILED: none may reach a C caller.
template <typename Fn> gj_status guarded(const char *Function, Fn &&Body) {
  try {
    return Body();
  } catch (const std::bad_alloc &) {
    return fail(ErrorKind::Failed, llvm::Twine(Function) + ": out of memory");
  } catch (const std::exception &Ex) {
    return fail(ErrorKind::Failed, llvm::Twine(Function) + ": " + Ex.what());
  } catch (...) {
    return fail(ErrorKind::Failed, llvm::Twine(Function) + ": unknown exception");
  }
}

gj_status nullArgument(const char *Function, const char *What) {
  return fail(ErrorKind::InvalidArgument, llvm::Twine(Function) + ": " + What + " is NULL");
}

//===----------------------------------------------------------------------===//
// Structs
//===----------------------------------------------------------------------===//

/// What this library knows of each struct (ExtensibleStruct.h): its size in
/// API version 1, the bytes it reads, its size.
template <typename T> constexpr StructLayout Layout = {};
template <>
constexpr StructLayout Layout<gj_compiler_options> = {
    "gj_compiler_options", 40, sizeof(gj_compiler_options), sizeof(gj_compiler_options)};
template <>
constexpr StructLayout Layout<gj_kernel_info> = {"gj_kernel_info", 40, sizeof(gj_kernel_info),
                                                 sizeof(gj_kernel_info)};
template <>
constexpr StructLayout Layout<gj_param_info> = {"gj_param_info", 32, sizeof(gj_param_info),
                                                sizeof(gj_param_info)};
template <>
constexpr StructLayout Layout<gj_runtime_options> = {
    "gj_runtime_options", 40, sizeof(gj_runtime_options), sizeof(gj_runtime_options)};
template <>
constexpr StructLayout Layout<gj_launch_config> = {"gj_launch_config", 48, sizeof(gj_launch_config),
                                                   sizeof(gj_launch_config)};
/// gj_launch's elements: their size is gj_launch's arg_size.
template <> constexpr StructLayout Layout<gj_arg> = {"gj_arg", 16, sizeof(gj_arg), sizeof(gj_arg)};

// The limits the header names are the library's.
static_assert(GJ_MAX_STRUCT_BYTES == MaxStructBytes);
static_assert(GJ_MAX_BUFFER_BYTES == limits::MaxBufferBytes);
static_assert(GJ_MAX_SOURCE_BYTES == limits::MaxSourceBytes);

// No struct ends in padding: a newer version's first field then starts
// exactly at this version's size, where the check for an unknown tail
// begins (a field inside our padding would be neither read nor refused).
static_assert(sizeof(gj_compiler_options) == offsetof(gj_compiler_options, check_arch) + 4);
static_assert(sizeof(gj_kernel_info) == offsetof(gj_kernel_info, static_shared_bytes) + 8);
static_assert(sizeof(gj_param_info) == offsetof(gj_param_info, align) + 4);
static_assert(sizeof(gj_runtime_options) ==
              offsetof(gj_runtime_options, compiler) + sizeof(gj_compiler));
// gj_runtime_options's reserved field lies inside the struct (it keeps
// `compiler` 8-byte aligned): gj_runtime_create checks that it is zero.
static_assert(offsetof(gj_runtime_options, compiler) == offsetof(gj_runtime_options, reserved) + 4);
static_assert(sizeof(gj_launch_config) == offsetof(gj_launch_config, check_same_value_writes) + 4);
static_assert(sizeof(gj_arg) == offsetof(gj_arg, extent) + 8);

/// The caller's struct_size of the struct at \p P (its first field).
size_t structSize(const void *P) {
  size_t Size;
  std::memcpy(&Size, P, sizeof Size);
  return Size;
}

/// Reads the caller's struct \p In over \p Out, which holds the defaults.
template <typename T> gj_status readStruct(const char *Function, const T *In, T &Out) {
  if (llvm::Error E = copyStructIn(Layout<T>, In, structSize(In), "struct_size", &Out))
    return fail(prefixError(Function, std::move(E)));
  return GJ_OK;
}

/// Writes \p Full into the caller's struct \p Out, as far as its
/// struct_size goes.
template <typename T> gj_status writeStruct(const char *Function, T Full, T *Out) {
  Full.struct_size = structSize(Out);
  if (llvm::Error E = copyStructOut(Layout<T>, &Full, Out, Full.struct_size, "struct_size"))
    return fail(prefixError(Function, std::move(E)));
  return GJ_OK;
}

/// The *_init functions: \p Defaults into the \p Size bytes at \p Out
/// (nothing for NULL or a size that is not one; there is no status to
/// report it with, and the next call that reads the struct refuses it).
template <typename T> void initStruct(T *Out, size_t Size, T Defaults) {
  if (!Out)
    return;
  Defaults.struct_size = Size;
  llvm::consumeError(copyStructOut(Layout<T>, &Defaults, Out, Size, "size"));
}

const char *const ScalarNames[] = {"bool", "i8",  "i16", "i32", "i64", "u8",  "u16",
                                   "u32",  "u64", "f32", "f64", "f16", "bf16"};
constexpr int NumScalars = sizeof(ScalarNames) / sizeof(ScalarNames[0]);
static_assert(NumScalars == int(ScalarKind::BF16) + 1, "gj_scalar_type follows ScalarKind");
static_assert(GJ_F16 == int(ScalarKind::F16) && GJ_BF16 == int(ScalarKind::BF16),
              "gj_scalar_type follows ScalarKind");

/// The value a C caller passed as an enum (gj_status, gj_scalar_type), read
/// as the int it is. C lets any int be stored there; C++ may assume an enum
/// holds only values in its enumerators' range, and reading another one as
/// the enum is undefined behaviour (UBSan's -fsanitize=enum reports it), so
/// the C API never reads them as enums. (Struct fields are uint32_t.)
template <typename E> int raw(const E &V) {
  static_assert(sizeof(E) == sizeof(int), "the C API's enums are ints");
  int R;
  std::memcpy(&R, &V, sizeof R);
  return R;
}

bool isScalarType(int T) { return T >= 0 && T < NumScalars; }

uint32_t toC(ScalarKind K) { return static_cast<uint32_t>(K); }
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
  // The statuses that are no kind of error.
  case GJ_ERROR_LAUNCH:
    return "GJ_ERROR_LAUNCH";
  case GJ_ERROR_NOT_READY:
    return "GJ_ERROR_NOT_READY";
    // One per kind of error (a status in two rows does not compile).
#define GRIDJIT_ERROR_KIND(Name, CStatus, PyName, PyBases, ExitStatus, Description)                \
  case CStatus:                                                                                    \
    return #CStatus;
#include "gridjit/Support/ErrorKinds.def"
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

void gj_compiler_options_init_v2(gj_compiler_options *O, size_t Size) {
  gj_compiler_options D{};
  D.targets = nullptr;
  D.opt_level = 3;
  D.threads = 0;
  D.use_disk_cache = 1;
  D.cache_dir = nullptr;
  D.check = 0;
  D.check_arch = CompileRequest().CheckArch;
  initStruct(O, Size, D);
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
      return fail(ErrorKind::InvalidArgument,
                  "gj_compiler_create: empty target name in targets '" + llvm::Twine(Spec) + "'");
    if (!parseTargetName(Name))
      return fail(ErrorKind::NotFound, "gj_compiler_create: unknown target '" + Name +
                                           "' in targets '" + Spec + "' (known: host, nvptx)");
    // The target knows the name, so what it refuses is the architecture
    // (or CPU) the caller gave: an option of the call.
    auto T = createTargetByName(Name, Arch);
    if (!T)
      return fail(ErrorKind::InvalidArgument,
                  "gj_compiler_create: target '" + Item + "': " + render(T.takeError()));
    Opts.Targets.push_back(std::move(*T));
  }
  return GJ_OK;
}

gj_status gj_compiler_create(const gj_compiler_options *O, gj_compiler *Out) {
  return guarded("gj_compiler_create", [&] {
    if (!Out)
      return nullArgument("gj_compiler_create", "out");
    gj_compiler_options Opt;
    gj_compiler_options_init_v2(&Opt, sizeof Opt);
    if (O)
      if (gj_status S = readStruct("gj_compiler_create", O, Opt))
        return S;
    if (Opt.opt_level > 3)
      return fail(ErrorKind::InvalidArgument, "gj_compiler_create: opt_level " +
                                                  llvm::Twine(Opt.opt_level) +
                                                  " is not one of 0, 1, 2, 3");
    CompilerOptions Opts;
    if (gj_status S = parseTargets(Opt.targets, Opts))
      return S;
    Opts.OptLevel = Opt.opt_level;
    if (Opt.threads > limits::MaxThreads)
      return fail(ErrorKind::InvalidArgument,
                  "gj_compiler_create: threads " + llvm::Twine(Opt.threads) +
                      " is more than the limit of " + llvm::Twine(limits::MaxThreads));
    Opts.AsyncThreads = Opt.threads;
    Opts.UseDiskCache = Opt.use_disk_cache != 0;
    if (Opt.cache_dir)
      Opts.CacheDir = Opt.cache_dir;
    // Warnings (a disk cache that cannot be used) are kept for
    // gj_compiler_warning.
    auto Warnings = std::make_shared<WarningList>();
    Opts.Warning = WarningList::into(Warnings);
    auto C = Compiler::create(std::move(Opts));
    if (!C)
      return fail(prefixError("gj_compiler_create", C.takeError()));
    *Out = new gj_compiler_s{std::move(*C), std::move(Warnings), Opt.opt_level, Opt.check != 0,
                             Opt.check_arch};
    return GJ_OK;
  });
}

size_t gj_compiler_warning_count(gj_compiler C) { return C ? C->Warnings->count() : 0; }

const char *gj_compiler_warning(gj_compiler C, size_t Index) {
  return C ? C->Warnings->at(Index) : nullptr;
}

void gj_compiler_destroy(gj_compiler C) { delete C; }

/// The checks gj_compile and gj_compile_async share: the handle, the source
/// and the target. Fills \p Req (with the compiler's check options).
static gj_status checkCompile(const char *Function, gj_compiler C, const char *Source, size_t Size,
                              const char *Target, void *Out, CompileRequest &Req) {
  if (!C)
    return nullArgument(Function, "compiler");
  if (!Out)
    return nullArgument(Function, "out");
  if (!Source && Size)
    return nullArgument(Function, "source");
  if (Size > limits::MaxSourceBytes)
    return fail(ErrorKind::InvalidArgument, llvm::Twine(Function) + ": a source of " +
                                                llvm::Twine(uint64_t(Size)) +
                                                " bytes is more than the limit of " +
                                                llvm::Twine(limits::MaxSourceBytes) + " bytes");
  if (Target && *Target) {
    llvm::StringRef Name = canonicalTarget(Target);
    if (!C->C->getTarget(Name))
      return fail(ErrorKind::NotFound, llvm::Twine(Function) + ": the compiler has no target '" +
                                           Target + "' (its targets: " + targetList(*C->C) + ")");
    Req.Target = Name.str();
  }
  Req.Check = C->Check;
  Req.CheckArch = C->CheckArch;
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
      return fail(M.takeError());
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

gj_status gj_emit(gj_compiler C, const char *Source, size_t Size, const char *BufferName,
                  const char *Target, const char *Stage, char **Text, size_t *TextSize) {
  return guarded("gj_emit", [&] {
    if (!C)
      return nullArgument("gj_emit", "compiler");
    if (!Stage)
      return nullArgument("gj_emit", "stage");
    if (!Text)
      return nullArgument("gj_emit", "text");
    if (!TextSize)
      return nullArgument("gj_emit", "text_size");
    CompileRequest Req;
    if (gj_status S = checkCompile("gj_emit", C, Source, Size, Target, Text, Req))
      return S;
    llvm::StringRef StageName(Stage);
    EmitKind Kind;
    if (StageName == "llvm")
      Kind = EmitKind::LLVM;
    else if (StageName == "asm")
      Kind = EmitKind::Assembly;
    else
      return fail(ErrorKind::InvalidArgument,
                  "gj_emit: unknown stage '" + StageName + "' (known: llvm, asm)");
    // The compiler's own target object (its checked twin for a checked
    // compiler): the architecture and features of the modules gj_compile
    // makes with it.
    auto Found = C->C->getTargetFor(Req);
    if (!Found)
      return fail(prefixError("gj_emit", Found.takeError()));
    const gridjit::Target *T = *Found;
    auto M = parseAndVerify(std::string_view(Source ? Source : "", Size),
                            BufferName ? BufferName : "<source>");
    if (!M)
      return fail(M.takeError());
    CompileOptions Opts;
    Opts.OptLevel = C->OptLevel;
    auto Emitted = T->emit(**M, Kind, Opts);
    if (!Emitted)
      return fail(Emitted.takeError());
    auto *Copy = static_cast<char *>(std::malloc(Emitted->size() + 1));
    if (!Copy)
      return fail(ErrorKind::Failed, "gj_emit: out of memory");
    std::memcpy(Copy, Emitted->data(), Emitted->size());
    Copy[Emitted->size()] = '\0';
    *Text = Copy;
    *TextSize = Emitted->size();
    return GJ_OK;
  });
}

void gj_text_free(char *Text) { std::free(Text); }

gj_status gj_compile_job_poll(gj_compile_job J) {
  return guarded("gj_compile_job_poll", [&] {
    if (!J)
      return nullArgument("gj_compile_job_poll", "job");
    if (J->Future.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
      return GJ_OK;
    LastError = "gj_compile_job_poll: the compile has not finished yet";
    return GJ_ERROR_NOT_READY; // not an error of any kind: no ErrorKind
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
        J->Status = statusOf(peekErrorKind(E));
        J->Message = render(std::move(E));
      }
      J->Taken = true;
    }
    if (J->Status != GJ_OK) {
      LastError = J->Message;
      return J->Status;
    }
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
    return fail(ErrorKind::NotFound, "no kernel '" + llvm::Twine(Name) +
                                         "' in the module (kernels: " + kernelList(M->M->Art) +
                                         ")");
  });
}

size_t gj_module_constant_count(gj_module M) { return M ? M->M->Art.Constants.size() : 0; }

gj_status gj_module_constant(gj_module M, size_t Index, const char **Name, int32_t *ElemType,
                             uint64_t *Bytes) {
  return guarded("gj_module_constant", [&] {
    if (!M)
      return nullArgument("gj_module_constant", "module");
    const std::vector<ConstantInfo> &Cs = M->M->Art.Constants;
    if (Index >= Cs.size())
      return fail(ErrorKind::InvalidArgument, "gj_module_constant: index " + llvm::Twine(Index) +
                                                  " is out of range (the "
                                                  "module has " +
                                                  llvm::Twine(Cs.size()) +
                                                  " constant memory arrays)");
    if (Name)
      *Name = Cs[Index].Name.c_str();
    if (ElemType)
      *ElemType = static_cast<int32_t>(Cs[Index].Ty.getScalarKind());
    if (Bytes)
      *Bytes = Cs[Index].Bytes;
    return GJ_OK;
  });
}

void gj_kernel_info_init_v2(gj_kernel_info *Info, size_t Size) {
  initStruct(Info, Size, gj_kernel_info{});
}

void gj_param_info_init_v2(gj_param_info *Info, size_t Size) {
  initStruct(Info, Size, gj_param_info{});
}

/// Kernel \p Index of \p M, or an error naming the range.
static const KernelInfo *kernelAt(const char *Function, gj_module M, size_t Index) {
  const std::vector<KernelInfo> &Ks = M->M->Art.Kernels;
  if (Index < Ks.size())
    return &Ks[Index];
  fail(ErrorKind::InvalidArgument, llvm::Twine(Function) + ": kernel index " + llvm::Twine(Index) +
                                       " is out of range (the module has " +
                                       llvm::Twine(Ks.size()) + " kernels)");
  return nullptr;
}

gj_status gj_module_kernel(gj_module M, size_t Index, gj_kernel_info *Info) {
  if (!M)
    return nullArgument("gj_module_kernel", "module");
  if (!Info)
    return nullArgument("gj_module_kernel", "info");
  if (llvm::Error E = checkStructSize(Layout<gj_kernel_info>, structSize(Info), "struct_size"))
    return fail(prefixError("gj_module_kernel", std::move(E)));
  const KernelInfo *K = kernelAt("gj_module_kernel", M, Index);
  if (!K)
    return GJ_ERROR_INVALID_ARGUMENT;
  gj_kernel_info Full{};
  Full.name = K->Name.c_str();
  Full.num_params = K->Params.size();
  Full.cooperative = K->Cooperative;
  Full.uses_dynamic_shared = K->UsesDynamicShared;
  Full.static_shared_bytes = K->StaticSharedBytes;
  return writeStruct("gj_module_kernel", Full, Info);
}

/// Parameter \p Param of kernel \p Kernel of \p M, or an error naming
/// the range.
static const KernelParamInfo *paramAt(const char *Function, gj_module M, size_t Kernel,
                                      size_t Param) {
  const KernelInfo *K = kernelAt(Function, M, Kernel);
  if (!K)
    return nullptr;
  if (Param < K->Params.size())
    return &K->Params[Param];
  fail(ErrorKind::InvalidArgument, llvm::Twine(Function) + ": parameter index " +
                                       llvm::Twine(Param) + " is out of range (kernel '" + K->Name +
                                       "' has " + llvm::Twine(K->Params.size()) + " parameters)");
  return nullptr;
}

gj_status gj_module_kernel_param(gj_module M, size_t Kernel, size_t Param, gj_param_info *Info) {
  if (!M)
    return nullArgument("gj_module_kernel_param", "module");
  if (!Info)
    return nullArgument("gj_module_kernel_param", "info");
  if (llvm::Error E = checkStructSize(Layout<gj_param_info>, structSize(Info), "struct_size"))
    return fail(prefixError("gj_module_kernel_param", std::move(E)));
  const KernelParamInfo *P = paramAt("gj_module_kernel_param", M, Kernel, Param);
  if (!P)
    return GJ_ERROR_INVALID_ARGUMENT;
  gj_param_info Full{};
  Full.name = P->Name.c_str();
  Full.is_pointer = P->Ty.isPointer();
  Full.type = toC(P->Ty.getScalarKind());
  Full.size = P->Size;
  Full.align = P->Align;
  return writeStruct("gj_module_kernel_param", Full, Info);
}

gj_status gj_kernel_argument_error(gj_module M, size_t Kernel, size_t Index, const char *Problem) {
  return guarded("gj_kernel_argument_error", [&] {
    if (!M)
      return nullArgument("gj_kernel_argument_error", "module");
    if (!Problem)
      return nullArgument("gj_kernel_argument_error", "problem");
    if (!paramAt("gj_kernel_argument_error", M, Kernel, Index))
      return GJ_ERROR_INVALID_ARGUMENT;
    return fail(argumentError(M->M->Art.Kernels[Kernel], Index, Problem));
  });
}

//===----------------------------------------------------------------------===//
// Runtimes, buffers
//===----------------------------------------------------------------------===//

void gj_runtime_options_init_v2(gj_runtime_options *O, size_t Size) {
  gj_runtime_options D{};
  D.target = "host";
  D.threads = 0;
  D.device = 0;
  D.use_cubin_cache = 1;
  D.cache_dir = nullptr;
  D.catch_faults = 1;
  D.reserved = 0;
  D.compiler = nullptr;
  initStruct(O, Size, D);
}

gj_status gj_runtime_create(const gj_runtime_options *O, gj_runtime *Out) {
  return guarded("gj_runtime_create", [&] {
    if (!Out)
      return nullArgument("gj_runtime_create", "out");
    gj_runtime_options Opt;
    gj_runtime_options_init_v2(&Opt, sizeof Opt);
    if (O)
      if (gj_status S = readStruct("gj_runtime_create", O, Opt))
        return S;
    // As an unknown byte past the struct's end would be (ExtensibleStruct.h).
    if (Opt.reserved)
      return fail(ErrorKind::InvalidArgument,
                  "gj_runtime_create: gj_runtime_options's reserved field (byte " +
                      llvm::Twine(offsetof(gj_runtime_options, reserved)) +
                      ") is not zero: it stands for a field this library does not have");
    llvm::StringRef Name = Opt.target ? Opt.target : "host";
    TargetKind K;
    if (Name == "host")
      K = TargetKind::Host;
    else if (Name == "cuda" || Name == "nvptx")
      K = TargetKind::NVPTX;
    else
      return fail(ErrorKind::NotFound,
                  "gj_runtime_create: unknown runtime target '" + Name + "' (known: host, cuda)");
    if (Opt.threads > limits::MaxThreads)
      return fail(ErrorKind::InvalidArgument,
                  "gj_runtime_create: threads " + llvm::Twine(Opt.threads) +
                      " is more than the limit of " + llvm::Twine(limits::MaxThreads));
    RuntimeOptions RO;
    RO.NumThreads = Opt.threads;
    RO.Device = Opt.device;
    RO.UseCubinCache = Opt.use_cubin_cache != 0;
    if (Opt.cache_dir)
      RO.CacheDir = Opt.cache_dir;
    RO.CatchFaults = Opt.catch_faults != 0;
    auto Warnings = std::make_shared<WarningList>();
    RO.Warning = WarningList::into(Warnings);
    if (Opt.compiler) {
      // The compiler's tiers: one pruning policy for the directory, one
      // breaker for the server.
      RO.CubinTiers = Opt.compiler->C->getCacheTiers();
    } else if (K == TargetKind::NVPTX && RO.UseCubinCache) {
      // The runtime reads no environment: the remote tier of the cubin
      // cache that $GRIDJIT_REMOTE_CACHE names (docs/RemoteCache.md), and
      // the disk tier's secret ($GRIDJIT_CACHE_SECRET_FILE, else the remote
      // tier's; docs/Cache.md), are found here, as a Compiler finds them.
      auto Remote = openRemoteCache({});
      if (!Remote)
        return fail(prefixError("gj_runtime_create", Remote.takeError()));
      RO.CubinTiers.Remote = std::move(*Remote);
      auto Secret = resolveDiskCacheSecret({}, RO.CubinTiers.Remote.get());
      if (!Secret)
        return fail(prefixError("gj_runtime_create", Secret.takeError()));
      RO.CacheSecret = std::move(*Secret);
    }
    auto RT = createRuntime(K, RO);
    if (!RT)
      return fail(prefixError("gj_runtime_create", RT.takeError()));
    *Out = new gj_runtime_s{std::shared_ptr<Runtime>(std::move(*RT)), std::move(Warnings)};
    return GJ_OK;
  });
}

void gj_runtime_destroy(gj_runtime R) { delete R; }

size_t gj_runtime_warning_count(gj_runtime R) { return R ? R->Warnings->count() : 0; }

const char *gj_runtime_warning(gj_runtime R, size_t Index) {
  return R ? R->Warnings->at(Index) : nullptr;
}

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
      return fail(std::move(E));
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
      return fail(ErrorKind::InvalidArgument,
                  "gj_runtime_load: the module was compiled for the " +
                      llvm::Twine(getTargetName(M->M->Art.Kind)) + " target, the runtime runs " +
                      getTargetName(R->RT->getTargetKind()) + " modules");
    auto LM = R->RT->load(M->M->Art);
    if (!LM)
      return fail(LM.takeError());
    *Out = new gj_loaded_module_s{R->RT, M->M, std::move(*LM)};
    return GJ_OK;
  });
}

void gj_loaded_module_destroy(gj_loaded_module LM) { delete LM; }

gj_status gj_loaded_module_set_constant(gj_loaded_module LM, const char *Name, const void *Data,
                                        uint64_t Bytes) {
  return guarded("gj_loaded_module_set_constant", [&] {
    if (!LM)
      return nullArgument("gj_loaded_module_set_constant", "loaded module");
    if (!Name)
      return nullArgument("gj_loaded_module_set_constant", "name");
    if (!Data)
      return nullArgument("gj_loaded_module_set_constant", "data");
    if (llvm::Error E = LM->RT->setConstant(*LM->LM, Name, Data, Bytes))
      return fail(prefixError("gj_loaded_module_set_constant", std::move(E)));
    return GJ_OK;
  });
}

gj_status gj_buffer_alloc(gj_runtime R, uint64_t Bytes, gj_buffer *Out) {
  return guarded("gj_buffer_alloc", [&] {
    if (!R)
      return nullArgument("gj_buffer_alloc", "runtime");
    if (!Out)
      return nullArgument("gj_buffer_alloc", "out");
    auto B = R->RT->allocate(Bytes);
    if (!B)
      return fail(prefixError("gj_buffer_alloc", B.takeError()));
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
    return fail(ErrorKind::InvalidArgument, llvm::Twine(Function) + ": " + llvm::Twine(Bytes) +
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
      return fail(prefixError("gj_buffer_write", std::move(E)));
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
      return fail(prefixError("gj_buffer_read", std::move(E)));
    return GJ_OK;
  });
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

void gj_launch_config_init_v2(gj_launch_config *C, size_t Size) {
  gj_launch_config D{};
  for (int I = 0; I < 3; ++I)
    D.grid[I] = D.block[I] = 1;
  D.dynamic_shared_bytes = 0;
  D.stream = nullptr;
  D.timeout_ms = 0;
  D.cancel = nullptr;
  D.print_buffer_bytes = 0;
  D.print_callback = nullptr;
  D.print_user_data = nullptr;
  D.check_max_findings = 1;
  D.check_same_value_writes = 0;
  initStruct(C, Size, D);
}

gj_status gj_cancel_token_create(gj_cancel_token *Out) {
  return guarded("gj_cancel_token_create", [&] {
    if (!Out)
      return nullArgument("gj_cancel_token_create", "out");
    *Out = new gj_cancel_token_s;
    return GJ_OK;
  });
}

gj_status gj_cancel_token_cancel(gj_cancel_token T) {
  // Nothing here may allocate for a token: a signal handler may call it.
  if (!T)
    return nullArgument("gj_cancel_token_cancel", "token");
  T->Token.cancel();
  return GJ_OK;
}

int32_t gj_cancel_token_is_cancelled(gj_cancel_token T) {
  return T && T->Token.isCancelled() ? 1 : 0;
}

void gj_cancel_token_destroy(gj_cancel_token T) { delete T; }

namespace {

/// Misuse of a gj_arg (an unknown kind or type, a NULL or foreign buffer):
/// "gj_launch: kernel 'K': argument N ('p: T'): PROBLEM".
gj_status badArg(const KernelInfo &K, size_t I, const llvm::Twine &Problem) {
  return fail(ErrorKind::InvalidArgument, "gj_launch: " + describeArgument(K, I) + ": " + Problem);
}

/// A signed value that must fit in \p Bits bits.
bool fitsSigned(int64_t V, unsigned Bits) {
  if (Bits >= 64)
    return true;
  int64_t Max = (int64_t(1) << (Bits - 1)) - 1;
  return V >= -Max - 1 && V <= Max;
}

/// "must fit in u8 (0 to 255), but 256 was given".
std::string doesNotFit(ScalarKind SK, const llvm::Twine &Value) {
  unsigned Bits = scalarBits(SK);
  std::string Range = isSignedScalar(SK) ? std::to_string(-(int64_t(1) << (Bits - 1))) + " to " +
                                               std::to_string((int64_t(1) << (Bits - 1)) - 1)
                                         : "0 to " + std::to_string((uint64_t(1) << Bits) - 1);
  return ("must fit in " + llvm::Twine(scalarName(SK)) + " (" + Range + "), but " + Value +
          " was given")
      .str();
}

/// Converts scalar argument \p I (of scalar type \p Type) of a launch of
/// \p K into \p Out.
gj_status convertScalar(const gj_arg &A, int Type, size_t I, const KernelInfo &K, KernelArg &Out) {
  if (!isScalarType(Type))
    return badArg(K, I,
                  "a scalar argument needs a scalar type, not " +
                      (Type == GJ_ANY ? llvm::Twine("'any'") : llvm::Twine(Type)));
  ScalarKind SK = toKind(Type);
  if (SK == ScalarKind::Bool) {
    if (A.value.i != 0 && A.value.i != 1)
      return fail(argumentError(
          K, I, "must be a bool (0 or 1), but " + llvm::Twine(A.value.i) + " was given"));
    Out = KernelArg::boolean(A.value.i != 0);
    return GJ_OK;
  }
  if (isFloatScalar(SK)) {
    switch (SK) {
    case ScalarKind::F16:
    case ScalarKind::BF16: {
      // Rounded as `x as f16` rounds; a finite value past the type's
      // range is refused, not made infinite.
      uint16_t Bits =
          SK == ScalarKind::F16 ? f16FromDouble(A.value.f32) : bf16FromFloat(A.value.f32);
      double Back = SK == ScalarKind::F16 ? f16ToDouble(Bits) : bf16ToDouble(Bits);
      if (std::isfinite(A.value.f32) && std::isinf(Back))
        return fail(argumentError(K, I,
                                  "must fit in " + llvm::Twine(scalarName(SK)) + ", but " +
                                      llvm::formatv("{0}", A.value.f32) +
                                      " was given (it would round to infinity)"));
      Out = KernelArg::halfBits(SK, Bits);
      break;
    }
    case ScalarKind::F32:
      Out = KernelArg::f32(A.value.f32);
      break;
    default:
      Out = KernelArg::f64(A.value.f64);
    }
    return GJ_OK;
  }
  unsigned Bits = scalarBits(SK);
  if (isSignedScalar(SK)) {
    if (!fitsSigned(A.value.i, Bits))
      return fail(argumentError(K, I, doesNotFit(SK, llvm::Twine(A.value.i))));
  } else if (Bits < 64 && (A.value.u >> Bits) != 0) {
    return fail(argumentError(K, I, doesNotFit(SK, llvm::Twine(A.value.u))));
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

/// Converts argument \p I of a launch of \p K into \p Out.
gj_status convertArg(const gj_arg &A, size_t I, const KernelInfo &K, const Runtime &RT,
                     KernelArg &Out) {
  const int Kind = int(A.kind), Type = int(A.type);
  if (A.kind == GJ_ARG_SCALAR)
    return convertScalar(A, Type, I, K, Out);
  std::optional<ScalarKind> Pointee;
  if (isScalarType(Type))
    Pointee = toKind(Type);
  else if (Type != GJ_ANY)
    return badArg(K, I, "unknown pointee type " + llvm::Twine(A.type));
  uint64_t Extent = A.extent;
  switch (Kind) {
  case GJ_ARG_BUFFER: {
    const gj_buffer_s *B = A.value.buffer;
    if (!B)
      return badArg(K, I, "the buffer is NULL");
    if (B->RT.get() != &RT)
      return badArg(K, I, "the buffer belongs to another runtime than the loaded module");
    if (A.extent > B->Buf.size())
      return badArg(K, I,
                    "has an extent of " + llvm::Twine(A.extent) +
                        " bytes, more than its buffer's " + llvm::Twine(B->Buf.size()));
    Out = KernelArg::buffer(B->Buf, Pointee);
    if (!Extent) // the whole buffer: the kernel's pointer is its start
      Extent = B->Buf.size();
    break;
  }
  case GJ_ARG_DEVICE_POINTER:
    Out = KernelArg::devicePointer(A.value.address, Pointee);
    break;
  case GJ_ARG_HOST_POINTER:
    if (RT.getTargetKind() != TargetKind::Host)
      return fail(argumentError(K, I,
                                "is a host pointer (GJ_ARG_HOST_POINTER), which a kernel on the "
                                "nvptx target cannot use; pass a gj_buffer or "
                                "GJ_ARG_DEVICE_POINTER"));
    // KernelArg::pointer takes the pointee from a C++ type; a claimed
    // pointee is given as an address instead (the same on the host target).
    if (Pointee)
      Out = KernelArg::devicePointer(reinterpret_cast<uintptr_t>(A.value.pointer), Pointee);
    else
      Out = KernelArg::pointer(A.value.pointer);
    break;
  default:
    return badArg(K, I, "unknown argument kind " + llvm::Twine(A.kind));
  }
  Out = Out.withExtent(Extent);
  return GJ_OK;
}

} // namespace

gj_status gj_launch_v2(gj_loaded_module LM, const char *Kernel, const gj_launch_config *C,
                       const gj_arg *Args, size_t NumArgs, size_t ArgSize) {
  return guarded("gj_launch", [&] {
    if (!LM)
      return nullArgument("gj_launch", "loaded module");
    if (!Kernel)
      return nullArgument("gj_launch", "kernel");
    if (!C)
      return nullArgument("gj_launch", "config");
    if (!Args && NumArgs)
      return nullArgument("gj_launch", "args");
    gj_launch_config Config;
    gj_launch_config_init_v2(&Config, sizeof Config);
    if (gj_status S = readStruct("gj_launch", C, Config))
      return S;
    if (NumArgs)
      if (llvm::Error E = checkStructSize(Layout<gj_arg>, ArgSize, "arg_size"))
        return fail(prefixError("gj_launch", std::move(E)));
    auto K = findKernel(*LM->LM, Kernel);
    if (!K)
      return fail(prefixError("gj_launch", K.takeError()));
    // The count first, before anything is allocated or read for it: then
    // NumArgs elements of at most MaxStructBytes each are a real array.
    if (llvm::Error E = checkArgumentCount(*K, NumArgs))
      return fail(std::move(E));
    llvm::SmallVector<KernelArg, 8> KArgs(NumArgs);
    const auto *Element = reinterpret_cast<const unsigned char *>(Args);
    for (size_t I = 0; I < NumArgs; ++I, Element += ArgSize) {
      gj_arg A{}; // an older caller's element lacks extent: 0, unknown
      if (llvm::Error E = copyStructIn(Layout<gj_arg>, Element, ArgSize, "arg_size", &A))
        return fail(prefixError("gj_launch: " + describeArgument(*K, I), std::move(E)));
      if (gj_status S = convertArg(A, I, *K, *LM->RT, KArgs[I]))
        return S;
    }
    LaunchConfig LC;
    LC.Grid = {Config.grid[0], Config.grid[1], Config.grid[2]};
    LC.Block = {Config.block[0], Config.block[1], Config.block[2]};
    LC.DynamicSharedBytes = Config.dynamic_shared_bytes;
    LaunchOptions LO;
    LO.Stream = Config.stream;
    LO.TimeoutMilliseconds = Config.timeout_ms;
    if (Config.cancel)
      LO.Cancel = &Config.cancel->Token;
    LO.PrintBufferBytes = Config.print_buffer_bytes;
    LO.CheckMaxFindings = Config.check_max_findings;
    LO.CheckSameValueWrites = Config.check_same_value_writes != 0;
    if (gj_print_callback CB = Config.print_callback)
      LO.PrintOutput = [CB, User = Config.print_user_data](llvm::StringRef Text) {
        CB(Text.data(), Text.size(), User);
      };
    if (llvm::Error E = LM->RT->launch(*LM->LM, Kernel, LC, KArgs, LO))
      return fail(std::move(E));
    return GJ_OK;
  });
}

//===----------------------------------------------------------------------===//
// API version 1's symbols
//===----------------------------------------------------------------------===//
//
// The functions whose arguments changed in API version 2, as programs built
// against version 1's header call them: the *_init functions without a
// size (they write the struct as version 1 had it, whose size is the
// oldest each accepts) and gj_launch with 16-byte gj_args, whose failed
// launches are GJ_ERROR_LAUNCH as they were. The header's
// macros name the version-2 symbols; these keep the old names working
// (docs/CAPI.md, "Versions and growth"; test/CAPI/abi.test calls them).

#undef gj_compiler_options_init
#undef gj_kernel_info_init
#undef gj_param_info_init
#undef gj_runtime_options_init
#undef gj_launch_config_init
#undef gj_launch

extern "C" {
GJ_API void gj_compiler_options_init(gj_compiler_options *O);
GJ_API void gj_kernel_info_init(gj_kernel_info *Info);
GJ_API void gj_param_info_init(gj_param_info *Info);
GJ_API void gj_runtime_options_init(gj_runtime_options *O);
GJ_API void gj_launch_config_init(gj_launch_config *C);
GJ_API gj_status gj_launch(gj_loaded_module LM, const char *Kernel, const gj_launch_config *C,
                           const gj_arg *Args, size_t NumArgs);
}

void gj_compiler_options_init(gj_compiler_options *O) {
  gj_compiler_options_init_v2(O, Layout<gj_compiler_options>.Oldest);
}
void gj_kernel_info_init(gj_kernel_info *Info) {
  gj_kernel_info_init_v2(Info, Layout<gj_kernel_info>.Oldest);
}
void gj_param_info_init(gj_param_info *Info) {
  gj_param_info_init_v2(Info, Layout<gj_param_info>.Oldest);
}
void gj_runtime_options_init(gj_runtime_options *O) {
  gj_runtime_options_init_v2(O, Layout<gj_runtime_options>.Oldest);
}
void gj_launch_config_init(gj_launch_config *C) {
  gj_launch_config_init_v2(C, Layout<gj_launch_config>.Oldest);
}
gj_status gj_launch(gj_loaded_module LM, const char *Kernel, const gj_launch_config *C,
                    const gj_arg *Args, size_t NumArgs) {
  // Version 1 had one status for every failed launch.
  switch (gj_status S = gj_launch_v2(LM, Kernel, C, Args, NumArgs, Layout<gj_arg>.Oldest)) {
  case GJ_ERROR_ARGUMENT:
  case GJ_ERROR_CONFIGURATION:
  case GJ_ERROR_DIVERGENCE:
  case GJ_ERROR_FAULT:
  case GJ_ERROR_TIMEOUT:
    return GJ_ERROR_LAUNCH;
  default:
    return S;
  }
}
