//===- FuzzCAPI.cpp - libFuzzer target: the C API in random orders --------===//
//
// Part of gridjit (docs/Fuzzing.md). The bytes are a program of C API calls
// (include/gridjit-c/gridjit.h) over a few slots of each handle kind:
// compilers, compile jobs, modules, runtimes, loaded modules and buffers
// are created, used in any order (a module loaded after its compiler is
// gone, a runtime destroyed before its buffers, ...) and destroyed; calls
// get NULL handles and outputs, bad struct sizes, unknown targets and
// kernels, wrong argument types, bad or fuzzed sources, out-of-range
// buffer offsets and launch sizes. Every call must return a status (with
// gj_last_error set on failure), never crash; at the end every handle still
// held is released and LeakSanitizer checks that nothing was leaked.
//
// What the harness keeps valid, because the C API cannot check it (a
// caller's bug, not gridjit's): handles are never used after being
// destroyed, host memory passed in is as large as claimed, and pointer
// arguments of a launch point to at least 256 bytes (the kernels below
// touch no more).
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "gridjit-c/gridjit.h"

#include "llvm/Support/FileSystem.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include <unistd.h>

using gridjit::fuzz::ByteReader;
using gridjit::fuzz::fail;

namespace {

/// Kernels whose memory accesses stay within 256 bytes of each pointer
/// argument for any grid, block and scalar arguments.
const char GoodSource[] = R"(
kernel inc(n: i32, x: ptr<f32>) {
  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;
  if i < 16 && i < n {
    x[i] = x[i] + 1.0;
  }
}
kernel sum(a: u64, y: ptr<i64>) {
  shared s: [i64; 32];
  let t: i32 = thread_idx.x + thread_idx.y * block_dim.x + thread_idx.z * block_dim.x * block_dim.y;
  s[t % 32] = a as i64;
  sync_threads();
  if t == 0 {
    atomic_add(&y[0], s[0]);
  }
}
kernel dyn(y: ptr<i32>) {
  shared d: [i32];
  if thread_idx.x == 0 {
    d[0] = 7;
    atomic_add(&y[1], d[0]);
  }
}
kernel coop(y: ptr<u32>) {
  atomic_add(&y[2], 1u32);
  grid_sync();
}
kernel scalars(b: bool, c: f64, d: i8, e: u16) {
}
)";

const char *const Targets[] = {"host", "nvptx", "host,nvptx", "nvptx:sm_90,host",
                               "cuda", "bogus", "host:",      "nvptx:sm_1",
                               "",     nullptr};
const char *const RuntimeTargets[] = {"host", "cuda", "nvptx", "gpu", "", nullptr};
const char *const KernelNames[] = {"inc", "sum", "dyn", "coop", "scalars", "nope", "", nullptr};

constexpr int Slots = 3;

struct State {
  gj_compiler Compilers[Slots] = {};
  gj_compile_job Jobs[Slots] = {};
  gj_module Modules[Slots] = {};
  gj_runtime Runtimes[Slots] = {};
  gj_loaded_module Loaded[Slots] = {};
  gj_buffer Buffers[Slots] = {};
  alignas(64) unsigned char Host[4096] = {};

  ~State() {
    for (auto &J : Jobs)
      gj_compile_job_destroy(J);
    for (auto &L : Loaded)
      gj_loaded_module_destroy(L);
    for (auto &B : Buffers)
      gj_buffer_free(B);
    for (auto &R : Runtimes)
      gj_runtime_destroy(R);
    for (auto &M : Modules)
      gj_module_release(M);
    for (auto &C : Compilers)
      gj_compiler_destroy(C);
  }
};

std::string CacheDir;
bool Trace = false; ///< $GRIDJIT_FUZZ_TRACE: print every checked call

/// A failing call must say why.
void checkStatus(gj_status S, const char *Call) {
  if (Trace)
    std::fprintf(stderr, "%s -> %s%s%s\n", Call, gj_status_name(S), S ? ": " : "",
                 S ? gj_last_error() : "");
  if (S == GJ_OK || S == GJ_ERROR_NOT_READY)
    return;
  if (std::strcmp(gj_status_name(S), "GJ_STATUS_UNKNOWN") == 0)
    fail(std::string(Call) + " returned an unknown status " + std::to_string(int(S)));
  const char *E = gj_last_error();
  if (!E || !*E)
    fail(std::string(Call) + " failed (" + gj_status_name(S) + ") without a message");
}

size_t structSize(ByteReader &In, size_t Real) {
  switch (In.below(8)) {
  case 0:
    return 0;
  case 1:
    return Real / 2;
  case 2:
    return 8;
  case 3:
    return Real - 8; // an older or newer version's, or one the library refuses
  default:
    return Real;
  }
}

template <typename T> T *slot(ByteReader &In, T (&Arr)[Slots]) { return &Arr[In.below(Slots)]; }

void step(State &S, ByteReader &In) {
  switch (In.below(20)) {
  case 0: { // compiler create
    gj_compiler *Out = slot(In, S.Compilers);
    gj_compiler_options O;
    gj_compiler_options_init(&O, sizeof O);
    O.struct_size = structSize(In, sizeof(O));
    O.targets = Targets[In.below(std::size(Targets))];
    O.opt_level = In.below(5);
    O.threads = In.below(4) == 0 ? 5000 : In.below(3);
    O.use_disk_cache = In.flag();
    O.cache_dir = CacheDir.c_str();
    gj_compiler_destroy(*Out);
    *Out = nullptr;
    bool NullOpts = In.below(8) == 0;
    checkStatus(gj_compiler_create(NullOpts ? nullptr : &O, In.below(16) ? Out : nullptr),
                "gj_compiler_create");
    if (NullOpts && *Out) { // the defaults would use the user's cache: not here
      gj_compiler_destroy(*Out);
      *Out = nullptr;
    }
    break;
  }
  case 1: { // compiler destroy
    gj_compiler *C = slot(In, S.Compilers);
    gj_compiler_destroy(*C);
    *C = nullptr;
    break;
  }
  case 2:
  case 3: { // compile
    gj_compiler C = *slot(In, S.Compilers);
    gj_module *Out = slot(In, S.Modules);
    std::string Src = In.flag() ? std::string(GoodSource) : In.bytes(In.u8());
    const char *T = Targets[In.below(std::size(Targets))];
    gj_module_release(*Out);
    *Out = nullptr;
    checkStatus(gj_compile(C, In.below(16) ? Src.data() : nullptr, Src.size(),
                           In.flag() ? "fuzz.kir" : nullptr, T, In.below(16) ? Out : nullptr),
                "gj_compile");
    break;
  }
  case 4: { // compile async
    gj_compiler C = *slot(In, S.Compilers);
    gj_compile_job *Out = slot(In, S.Jobs);
    std::string Src = In.flag() ? std::string(GoodSource) : In.bytes(In.u8());
    gj_compile_job_destroy(*Out);
    *Out = nullptr;
    checkStatus(gj_compile_async(C, Src.data(), Src.size(), "async.kir",
                                 Targets[In.below(std::size(Targets))], Out),
                "gj_compile_async");
    break;
  }
  case 5: { // job poll / wait / destroy
    gj_compile_job *J = slot(In, S.Jobs);
    switch (In.below(3)) {
    case 0:
      checkStatus(gj_compile_job_poll(*J), "gj_compile_job_poll");
      break;
    case 1: {
      gj_module *Out = slot(In, S.Modules);
      gj_module_release(*Out);
      *Out = nullptr;
      checkStatus(gj_compile_job_wait(*J, In.below(8) ? Out : nullptr), "gj_compile_job_wait");
      break;
    }
    default:
      gj_compile_job_destroy(*J);
      *J = nullptr;
    }
    break;
  }
  case 6: { // module release
    gj_module *M = slot(In, S.Modules);
    gj_module_release(*M);
    *M = nullptr;
    break;
  }
  case 7: { // module queries
    gj_module M = *slot(In, S.Modules);
    (void)gj_module_target(M);
    (void)gj_module_arch(M);
    const char *Data = nullptr;
    size_t Size = 0;
    checkStatus(gj_module_payload(M, In.flag() ? &Data : nullptr, &Size), "gj_module_payload");
    size_t N = gj_module_kernel_count(M);
    size_t Index = 0;
    checkStatus(gj_module_find_kernel(M, KernelNames[In.below(std::size(KernelNames))],
                                      In.below(8) ? &Index : nullptr),
                "gj_module_find_kernel");
    gj_kernel_info KI;
    gj_kernel_info_init(&KI, sizeof KI);
    KI.struct_size = structSize(In, sizeof(KI));
    size_t K = In.below(uint32_t(N + 2));
    checkStatus(gj_module_kernel(M, K, In.below(8) ? &KI : nullptr), "gj_module_kernel");
    gj_param_info PI;
    gj_param_info_init(&PI, sizeof PI);
    PI.struct_size = structSize(In, sizeof(PI));
    checkStatus(gj_module_kernel_param(M, K, In.below(6), &PI), "gj_module_kernel_param");
    break;
  }
  case 8: { // runtime create
    gj_runtime *Out = slot(In, S.Runtimes);
    gj_runtime_options O;
    gj_runtime_options_init(&O, sizeof O);
    O.struct_size = structSize(In, sizeof(O));
    O.target = RuntimeTargets[In.below(std::size(RuntimeTargets))];
    O.threads = In.below(6) == 0 ? 4096 : In.below(3);
    O.device = In.below(3);
    O.use_cubin_cache = 0;
    O.cache_dir = CacheDir.c_str();
    gj_runtime_destroy(*Out);
    *Out = nullptr;
    checkStatus(gj_runtime_create(In.below(8) ? &O : nullptr, In.below(16) ? Out : nullptr),
                "gj_runtime_create");
    break;
  }
  case 9: { // runtime destroy / synchronize
    gj_runtime *R = slot(In, S.Runtimes);
    if (In.flag()) {
      checkStatus(gj_runtime_synchronize(*R), "gj_runtime_synchronize");
    } else {
      gj_runtime_destroy(*R);
      *R = nullptr;
    }
    break;
  }
  case 10: { // load
    gj_runtime R = *slot(In, S.Runtimes);
    gj_module M = *slot(In, S.Modules);
    gj_loaded_module *Out = slot(In, S.Loaded);
    gj_loaded_module_destroy(*Out);
    *Out = nullptr;
    checkStatus(gj_runtime_load(R, M, In.below(16) ? Out : nullptr), "gj_runtime_load");
    break;
  }
  case 11: { // unload
    gj_loaded_module *L = slot(In, S.Loaded);
    gj_loaded_module_destroy(*L);
    *L = nullptr;
    break;
  }
  case 12: { // buffer alloc
    gj_runtime R = *slot(In, S.Runtimes);
    gj_buffer *Out = slot(In, S.Buffers);
    uint64_t Bytes;
    switch (In.below(4)) {
    case 0:
      Bytes = 0;
      break;
    case 1:
      Bytes = uint64_t(1) << (44 + In.below(20)); // too large to allocate
      break;
    default:
      Bytes = 256 + In.u8() * 8;
    }
    gj_buffer_free(*Out);
    *Out = nullptr;
    checkStatus(gj_buffer_alloc(R, Bytes, In.below(16) ? Out : nullptr), "gj_buffer_alloc");
    break;
  }
  case 13: { // buffer free
    gj_buffer *B = slot(In, S.Buffers);
    gj_buffer_free(*B);
    *B = nullptr;
    break;
  }
  case 14:
  case 15: { // buffer write / read
    gj_buffer B = *slot(In, S.Buffers);
    (void)gj_buffer_address(B);
    uint64_t Size = gj_buffer_size(B);
    uint64_t Offset =
        In.below(4) == 0 ? In.u64() : In.below(uint32_t(std::min<uint64_t>(Size + 16, 255)));
    uint64_t Bytes = In.below(4) == 0 ? In.u64() : In.u8();
    // The host memory must really hold Bytes (the API cannot check that):
    // larger requests are made with a null pointer instead.
    void *Host = Bytes <= sizeof(S.Host) ? S.Host : nullptr;
    if (In.flag())
      checkStatus(gj_buffer_write(B, Offset, Host, Bytes), "gj_buffer_write");
    else
      checkStatus(gj_buffer_read(B, Offset, Host, Bytes), "gj_buffer_read");
    break;
  }
  default: { // launch
    gj_loaded_module L = *slot(In, S.Loaded);
    const char *Kernel = KernelNames[In.below(std::size(KernelNames))];
    gj_launch_config C;
    gj_launch_config_init(&C, sizeof C);
    C.struct_size = structSize(In, sizeof(C));
    for (int I = 0; I < 3; ++I) {
      uint32_t Pick = In.below(16);
      C.grid[I] = Pick == 0 ? 0 : Pick == 1 ? 0x80000000u : 1 + (I == 0 ? In.below(3) : 0);
      Pick = In.below(16);
      C.block[I] = Pick == 0 ? 0 : Pick == 1 ? 4096 : 1 + In.below(I == 0 ? 8 : 2);
    }
    C.dynamic_shared_bytes = In.flag() ? 0 : In.below(2) ? 64 : 1u << 30;
    gj_arg Args[6];
    size_t NumArgs = In.below(7);
    for (size_t I = 0; I < NumArgs; ++I) {
      gj_arg &A = Args[I];
      std::memset(&A, 0, sizeof(A));
      A.type = In.below(12) == 11 ? GJ_ANY : In.below(11);
      switch (In.below(4)) {
      case 0:
        A.kind = GJ_ARG_SCALAR;
        A.value.u = In.u64();
        break;
      case 1: {
        A.kind = GJ_ARG_BUFFER;
        gj_buffer B = *slot(In, S.Buffers);
        // Kernels touch at most 256 bytes; smaller buffers are not passed.
        A.value.buffer = gj_buffer_size(B) >= 256 ? B : nullptr;
        break;
      }
      case 2:
        A.kind = GJ_ARG_HOST_POINTER;
        A.value.pointer = S.Host;
        break;
      default:
        A.kind = In.below(2) ? GJ_ARG_DEVICE_POINTER : 7;
        A.value.address = reinterpret_cast<uintptr_t>(S.Host);
      }
    }
    // Elements of API version 1's 16-byte gj_arg now and then (read from
    // the same array: only their number of bytes matters here).
    size_t ArgSize = In.below(4) == 0 ? 16 : sizeof(gj_arg);
    checkStatus(gj_launch(L, Kernel, In.below(16) ? &C : nullptr, NumArgs ? Args : nullptr, NumArgs,
                          ArgSize),
                "gj_launch");
    break;
  }
  }
}

} // namespace

/// A buffer too large for memory must be an error from gj_buffer_alloc, as
/// it is without ASan, not ASan's report of a failed allocation.
extern "C" const char *__asan_default_options() { return "allocator_may_return_null=1"; }

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  char Template[] = "/tmp/gridjit-fuzz-capi-XXXXXX";
  if (!mkdtemp(Template)) {
    std::perror("mkdtemp");
    std::exit(1);
  }
  CacheDir = Template;
  Trace = std::getenv("GRIDJIT_FUZZ_TRACE") != nullptr;
  // The compilers' cache, never the user's; removed when the run ends.
  std::atexit([] { llvm::sys::fs::remove_directories(CacheDir); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  ByteReader In(Data, Size);
  State S;
  for (int Steps = 0; Steps < 32 && !In.empty(); ++Steps)
    step(S, In);
  return 0;
}
