/*===- capi-test.c - The C API, exercised from C --------------------------===*\
|*                                                                            *|
|* Part of gridjit's test suite. Compiled as C (C11) against                  *|
|* include/gridjit-c/gridjit.h and linked against libgridjit.so only, so it   *|
|* proves the header is C and the library exports what a C program needs.    *|
|* Each case is a subcommand (`capi-test CASE`); it prints one line per call *|
|* it checks ("what: STATUS: last error") for the lit tests in this folder   *|
|* to FileCheck, and checks computed results itself: a wrong result prints   *|
|* "FAIL: ..." and the program exits with 1.                                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

/* sigaction (the catch-faults case). */
#define _POSIX_C_SOURCE 200809L

#include "gridjit-c/gridjit.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Inputs/capi_report.h"
#include "Inputs/capi_objects.h"

static const char Saxpy[] =
    "kernel saxpy(n: i32, a: f32, x: ptr<f32>, y: ptr<f32>) {\n"
    "  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;\n"
    "  if i < n { y[i] = a * x[i] + y[i]; }\n"
    "}\n"
    "\n"
    "kernel fill(out: ptr<i64>, v: i64, flag: bool, small: u8) {\n"
    "  shared tile: [i32; 64];\n"
    "  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;\n"
    "  tile[thread_idx.x] = 1;\n"
    "  if flag { out[i] = v + (small as i64); }\n"
    "}\n"
    "\n"
    "kernel coop(out: ptr<i32>) {\n"
    "  out[block_idx.x] = 1;\n"
    "  grid_sync();\n"
    "}\n";

/*===-- basics: versions, names, defaults -------------------------------===*/

static int caseBasics(void) {
  printf("api version %u (header %d)\n", gj_api_version(), GJ_API_VERSION);
  EXPECT(gj_api_version() == GJ_API_VERSION);
  printf("version %s\n", gj_version_string());
  printf("last error at start: '%s'\n", gj_last_error());
  for (int S = GJ_OK; S <= GJ_ERROR_CHECK + 1; ++S)
    printf("status %d: %s\n", S, gj_status_name((gj_status)S));
  for (int T = GJ_BOOL; T <= GJ_BF16; ++T)
    printf("type %d: %s\n", T, gj_scalar_type_name((gj_scalar_type)T));
  printf("type 255: %s\n", gj_scalar_type_name(GJ_ANY));
  printf("type 13: %s\n", gj_scalar_type_name((gj_scalar_type)13));

  gj_compiler_options CO;
  memset(&CO, 0xff, sizeof(CO));
  gj_compiler_options_init(&CO, sizeof CO);
  EXPECT(CO.struct_size == sizeof(CO));
  printf("compiler defaults: targets %s opt %u threads %u disk cache %d cache dir %s\n",
         CO.targets ? CO.targets : "NULL", CO.opt_level, CO.threads, CO.use_disk_cache,
         CO.cache_dir ? CO.cache_dir : "NULL");
  gj_runtime_options RO;
  memset(&RO, 0xff, sizeof(RO));
  gj_runtime_options_init(&RO, sizeof RO);
  EXPECT(RO.struct_size == sizeof(RO));
  printf("runtime defaults: target %s threads %u device %u cubin cache %d cache dir %s catch "
         "faults %d reserved %u\n",
         RO.target ? RO.target : "NULL", RO.threads, RO.device, RO.use_cubin_cache,
         RO.cache_dir ? RO.cache_dir : "NULL", RO.catch_faults, RO.reserved);
  gj_launch_config LC;
  memset(&LC, 0xff, sizeof(LC));
  gj_launch_config_init(&LC, sizeof LC);
  EXPECT(LC.struct_size == sizeof(LC));
  printf("launch defaults: grid %u %u %u block %u %u %u shared %u stream %p\n", LC.grid[0],
         LC.grid[1], LC.grid[2], LC.block[0], LC.block[1], LC.block[2], LC.dynamic_shared_bytes,
         LC.stream);
  gj_kernel_info KI;
  gj_kernel_info_init(&KI, sizeof KI);
  EXPECT(KI.struct_size == sizeof(KI));
  gj_param_info PI;
  gj_param_info_init(&PI, sizeof PI);
  EXPECT(PI.struct_size == sizeof(PI));
  /* An init function writes the size it is given and nothing beyond: an
     older caller's struct (API version 1's gj_runtime_options, 40 bytes)
     in a larger buffer keeps the bytes after it. */
  unsigned char Buffer[sizeof(gj_runtime_options) + 8];
  memset(Buffer, 0xab, sizeof(Buffer));
  gj_runtime_options_init((gj_runtime_options *)(void *)Buffer, 40);
  size_t Written = 0;
  memcpy(&Written, Buffer, sizeof(Written));
  EXPECT(Written == 40);
  for (size_t I = 40; I < sizeof(Buffer); ++I)
    EXPECT(Buffer[I] == 0xab);
  /* A newer caller's (larger) struct: defaults, then zeros to its end. */
  memset(Buffer, 0xab, sizeof(Buffer));
  gj_runtime_options_init((gj_runtime_options *)(void *)Buffer, sizeof(Buffer));
  for (size_t I = sizeof(gj_runtime_options); I < sizeof(Buffer); ++I)
    EXPECT(Buffer[I] == 0);
  /* A size that is no struct's writes nothing. */
  memset(Buffer, 0xab, sizeof(Buffer));
  gj_runtime_options_init((gj_runtime_options *)(void *)Buffer, 12);
  gj_runtime_options_init((gj_runtime_options *)(void *)Buffer, 44);
  for (size_t I = 0; I < sizeof(Buffer); ++I)
    EXPECT(Buffer[I] == 0xab);
  /* The init functions accept NULL. */
  gj_compiler_options_init(NULL, sizeof(gj_compiler_options));
  gj_runtime_options_init(NULL, sizeof(gj_runtime_options));
  gj_launch_config_init(NULL, sizeof(gj_launch_config));
  gj_kernel_info_init(NULL, sizeof(gj_kernel_info));
  gj_param_info_init(NULL, sizeof(gj_param_info));
  return 0;
}

/*===-- null: every function with a NULL handle or pointer --------------===*/

static int caseNull(void) {
  gj_compiler C = newCompiler(NULL);
  gj_module M = NULL;
  MUST(gj_compile(C, Saxpy, strlen(Saxpy), "saxpy.kir", NULL, &M));
  gj_runtime R = newHostRuntime(1);
  gj_loaded_module LM = NULL;
  MUST(gj_runtime_load(R, M, &LM));
  gj_buffer B = NULL;
  MUST(gj_buffer_alloc(R, 64, &B));
  gj_compile_job J = NULL;
  gj_launch_config LC = config1D(1, 1);
  gj_kernel_info KI;
  gj_kernel_info_init(&KI, sizeof KI);
  gj_param_info PI;
  gj_param_info_init(&PI, sizeof PI);
  size_t Index = 0;
  const char *Data = NULL;
  size_t Size = 0;
  char Host[8];

  report("compiler_create out", gj_compiler_create(NULL, NULL));
  report("compile compiler", gj_compile(NULL, Saxpy, strlen(Saxpy), NULL, NULL, &M));
  report("compile source", gj_compile(C, NULL, 5, NULL, NULL, &M));
  report("compile out", gj_compile(C, Saxpy, strlen(Saxpy), NULL, NULL, NULL));
  report("compile_async compiler", gj_compile_async(NULL, Saxpy, 1, NULL, NULL, &J));
  report("compile_async out", gj_compile_async(C, Saxpy, 1, NULL, NULL, NULL));
  char *Text = NULL;
  report("emit compiler", gj_emit(NULL, Saxpy, strlen(Saxpy), NULL, NULL, "llvm", &Text, &Size));
  report("emit source", gj_emit(C, NULL, 5, NULL, NULL, "llvm", &Text, &Size));
  report("emit stage", gj_emit(C, Saxpy, strlen(Saxpy), NULL, NULL, NULL, &Text, &Size));
  report("emit text", gj_emit(C, Saxpy, strlen(Saxpy), NULL, NULL, "llvm", NULL, &Size));
  report("emit text_size", gj_emit(C, Saxpy, strlen(Saxpy), NULL, NULL, "llvm", &Text, NULL));
  gj_text_free(NULL);
  report("job_poll", gj_compile_job_poll(NULL));
  report("job_wait job", gj_compile_job_wait(NULL, &M));
  report("module_payload module", gj_module_payload(NULL, &Data, &Size));
  report("module_payload data", gj_module_payload(M, NULL, &Size));
  report("module_payload size", gj_module_payload(M, &Data, NULL));
  printf("module_kernel_count: %zu\n", gj_module_kernel_count(NULL));
  printf("module_target: '%s' (%s)\n", gj_module_target(NULL), gj_last_error());
  printf("module_arch: '%s' (%s)\n", gj_module_arch(NULL), gj_last_error());
  report("find_kernel module", gj_module_find_kernel(NULL, "saxpy", &Index));
  report("find_kernel name", gj_module_find_kernel(M, NULL, &Index));
  report("find_kernel index", gj_module_find_kernel(M, "saxpy", NULL));
  report("module_kernel module", gj_module_kernel(NULL, 0, &KI));
  report("module_kernel info", gj_module_kernel(M, 0, NULL));
  report("kernel_param module", gj_module_kernel_param(NULL, 0, 0, &PI));
  report("kernel_param info", gj_module_kernel_param(M, 0, 0, NULL));
  report("runtime_create out", gj_runtime_create(NULL, NULL));
  report("synchronize", gj_runtime_synchronize(NULL));
  report("load runtime", gj_runtime_load(NULL, M, &LM));
  report("load module", gj_runtime_load(R, NULL, &LM));
  report("load out", gj_runtime_load(R, M, NULL));
  report("buffer_alloc runtime", gj_buffer_alloc(NULL, 8, &B));
  report("buffer_alloc out", gj_buffer_alloc(R, 8, NULL));
  printf("buffer_address: %llu\n", (unsigned long long)gj_buffer_address(NULL));
  printf("buffer_size: %llu\n", (unsigned long long)gj_buffer_size(NULL));
  report("buffer_write buffer", gj_buffer_write(NULL, 0, Host, 8));
  report("buffer_write src", gj_buffer_write(B, 0, NULL, 8));
  report("buffer_read buffer", gj_buffer_read(NULL, 0, Host, 8));
  report("buffer_read dst", gj_buffer_read(B, 0, NULL, 8));
  report("launch module", gj_launch(NULL, "saxpy", &LC, NULL, 0, sizeof(gj_arg)));
  report("launch kernel", gj_launch(LM, NULL, &LC, NULL, 0, sizeof(gj_arg)));
  report("launch config", gj_launch(LM, "saxpy", NULL, NULL, 0, sizeof(gj_arg)));
  report("launch args", gj_launch(LM, "saxpy", &LC, NULL, 4, sizeof(gj_arg)));
  /* Out-parameters are left alone on failure. */
  EXPECT(M != NULL && LM != NULL && B != NULL && J == NULL);
  /* The destroy functions accept NULL. */
  gj_compiler_destroy(NULL);
  gj_compile_job_destroy(NULL);
  gj_module_release(NULL);
  gj_runtime_destroy(NULL);
  gj_loaded_module_destroy(NULL);
  gj_buffer_free(NULL);

  gj_buffer_free(B);
  gj_loaded_module_destroy(LM);
  gj_runtime_destroy(R);
  gj_module_release(M);
  gj_compiler_destroy(C);
  return 0;
}

/*===-- struct-size: structs of other sizes ----------------------------===*/

/* The rule of docs/CAPI.md, "Versions and growth", from C: sizes below a
   struct's first version or not a multiple of 8 are refused; a larger
   struct is accepted when its unknown tail is zero and refused, naming the
   byte, when it is not; a struct the library fills is written up to its
   struct_size and no further. (abi.test compiles callers against older and
   newer headers.) */
static int caseStructSize(void) {
  gj_compiler C = newCompiler(NULL);
  gj_module M = NULL;
  MUST(gj_compile(C, Saxpy, strlen(Saxpy), "saxpy.kir", NULL, &M));
  gj_runtime R = newHostRuntime(1);
  gj_loaded_module LM = NULL;
  MUST(gj_runtime_load(R, M, &LM));

  gj_compiler_options CO;
  gj_compiler_options_init(&CO, sizeof CO);
  CO.struct_size = 8;
  gj_compiler C2 = NULL;
  report("compiler options", gj_compiler_create(&CO, &C2));
  gj_runtime_options RO;
  gj_runtime_options_init(&RO, sizeof RO);
  RO.struct_size = 0;
  gj_runtime R2 = NULL;
  report("runtime options", gj_runtime_create(&RO, &R2));
  RO.struct_size = 44;
  report("runtime options of 44 bytes", gj_runtime_create(&RO, &R2));
  RO.struct_size = sizeof(RO);
  RO.reserved = 1;
  report("runtime options, reserved", gj_runtime_create(&RO, &R2));
  gj_kernel_info KI;
  memset(&KI, 0, sizeof(KI));
  report("kernel info", gj_module_kernel(M, 0, &KI));
  gj_param_info PI;
  gj_param_info_init(&PI, sizeof PI);
  PI.struct_size = sizeof(PI) - 1;
  report("param info", gj_module_kernel_param(M, 0, 0, &PI));
  gj_launch_config LC = config1D(1, 1);
  LC.struct_size = 4;
  report("launch config", gj_launch(LM, "saxpy", &LC, NULL, 0, sizeof(gj_arg)));
  EXPECT(C2 == NULL && R2 == NULL && KI.name == NULL && PI.name == NULL);
  LC.struct_size = sizeof(LC);
  gj_arg Args[4] = {scalarI(GJ_I32, 0), scalarF32(1), deviceArg(0, GJ_F32), deviceArg(0, GJ_F32)};
  report("arg size 8", gj_launch(LM, "saxpy", &LC, Args, 4, 8));
  report("arg size 20", gj_launch(LM, "saxpy", &LC, Args, 4, 20));

  /* A larger struct (a newer caller's): its zero tail is accepted, a byte
     that is not zero is named. */
  struct {
    gj_compiler_options O;
    unsigned char Newer[16];
  } Big;
  memset(&Big, 0, sizeof(Big));
  gj_compiler_options_init(&Big.O, sizeof(Big));
  EXPECT(Big.O.struct_size == sizeof(Big));
  Big.O.use_disk_cache = 0;
  report("larger compiler options", gj_compiler_create(&Big.O, &C2));
  gj_compiler_destroy(C2);
  C2 = NULL;
  Big.Newer[5] = 1;
  report("larger compiler options, byte 53 set", gj_compiler_create(&Big.O, &C2));
  EXPECT(C2 == NULL);

  /* A struct the library fills: up to struct_size, a tail it does not know
     zeroed, nothing beyond. */
  struct {
    gj_kernel_info I;
    unsigned char Newer[8];
    unsigned char After[8];
  } Out;
  memset(&Out, 0xab, sizeof(Out));
  gj_kernel_info_init(&Out.I, sizeof(Out.I) + sizeof(Out.Newer));
  memset(Out.Newer, 0xab, sizeof(Out.Newer));
  MUST(gj_module_kernel(M, 1, &Out.I));
  printf("larger kernel info: %s, struct_size %zu\n", Out.I.name, Out.I.struct_size);
  for (size_t I = 0; I < sizeof(Out.Newer); ++I)
    EXPECT(Out.Newer[I] == 0 && Out.After[I] == 0xab);

  gj_loaded_module_destroy(LM);
  gj_runtime_destroy(R);
  gj_module_release(M);
  gj_compiler_destroy(C);
  return 0;
}

/*===-- compiler: options, targets, compile errors ----------------------===*/

static int caseCompiler(void) {
  gj_compiler_options O;
  gj_compiler_options_init(&O, sizeof O);
  O.use_disk_cache = 0;
  gj_compiler C = NULL;
  O.opt_level = 4;
  report("opt level 4", gj_compiler_create(&O, &C));
  O.opt_level = 3;
  O.targets = "host,cpu";
  report("unknown target", gj_compiler_create(&O, &C));
  O.targets = "nvptx:sm_12";
  report("bad arch", gj_compiler_create(&O, &C));
  O.targets = "host,,nvptx";
  report("empty target", gj_compiler_create(&O, &C));
  EXPECT(C == NULL);
  O.targets = "host,nvptx:sm_90";
  report("two targets", gj_compiler_create(&O, &C));

  gj_module M = NULL;
  report("compile for sm_90", gj_compile(C, Saxpy, strlen(Saxpy), "saxpy.kir", "nvptx", &M));
  printf("target %s arch %s kernels %zu\n", gj_module_target(M), gj_module_arch(M),
         gj_module_kernel_count(M));
  const char *Data = NULL;
  size_t Size = 0;
  MUST(gj_module_payload(M, &Data, &Size));
  EXPECT(Size > 0 && strstr(Data, ".entry saxpy") != NULL);
  gj_module_release(M);
  M = NULL;
  report("unknown compile target", gj_compile(C, Saxpy, strlen(Saxpy), NULL, "amdgpu", &M));
  report("cuda is nvptx", gj_compile(C, Saxpy, strlen(Saxpy), NULL, "cuda", &M));
  printf("target %s arch %s\n", gj_module_target(M), gj_module_arch(M));
  gj_module_release(M);
  M = NULL;
  gj_compiler CC = NULL;
  O.targets = "cuda:sm_75";
  report("targets cuda:sm_75", gj_compiler_create(&O, &CC));
  MUST(gj_compile(CC, Saxpy, strlen(Saxpy), NULL, NULL, &M));
  printf("target %s arch %s\n", gj_module_target(M), gj_module_arch(M));
  gj_module_release(M);
  M = NULL;
  gj_compiler_destroy(CC);

  /* Only the first `size` bytes are the source: the rest is not read. */
  char Buf[sizeof(Saxpy) + 16];
  memcpy(Buf, Saxpy, strlen(Saxpy));
  memcpy(Buf + strlen(Saxpy), "garbage here!!!", 16);
  report("sized source", gj_compile(C, Buf, strlen(Saxpy), "sized.kir", NULL, &M));
  printf("default target %s, host arch is not empty: %d\n", gj_module_target(M),
         gj_module_arch(M)[0] != 0);
  EXPECT(strcmp(gj_module_target(M), "host") == 0);
  gj_module_release(M);
  M = NULL;

  static const char Bad[] = "kernel k(n: i32) {\n"
                            "  let x: i32 = n + 1.5;\n"
                            "  y = 2;\n"
                            "}\n";
  report("compile error", gj_compile(C, Bad, strlen(Bad), "bad.kir", NULL, &M));
  report("compile error, no name", gj_compile(C, Bad, strlen(Bad), NULL, NULL, &M));
  report("empty source", gj_compile(C, "", 0, "empty.kir", NULL, &M));
  EXPECT(M != NULL);
  printf("empty module kernels %zu\n", gj_module_kernel_count(M));
  gj_module_release(M);
  gj_compiler_destroy(C);
  return 0;
}

/*===-- kernels: kernel and parameter metadata --------------------------===*/

static int caseKernels(void) {
  gj_compiler C = newCompiler(NULL);
  gj_module M = NULL;
  MUST(gj_compile(C, Saxpy, strlen(Saxpy), "saxpy.kir", NULL, &M));
  size_t N = gj_module_kernel_count(M);
  for (size_t K = 0; K < N; ++K) {
    gj_kernel_info KI;
    gj_kernel_info_init(&KI, sizeof KI);
    MUST(gj_module_kernel(M, K, &KI));
    printf("kernel %zu %s params %zu cooperative %d dynamic shared %d static shared %llu\n", K,
           KI.name, KI.num_params, KI.cooperative, KI.uses_dynamic_shared,
           (unsigned long long)KI.static_shared_bytes);
    for (size_t P = 0; P < KI.num_params; ++P) {
      gj_param_info PI;
      gj_param_info_init(&PI, sizeof PI);
      MUST(gj_module_kernel_param(M, K, P, &PI));
      printf("  param %zu %s pointer %d type %s size %u align %u\n", P, PI.name, PI.is_pointer,
             gj_scalar_type_name(PI.type), PI.size, PI.align);
    }
    size_t Index = 99;
    MUST(gj_module_find_kernel(M, KI.name, &Index));
    EXPECT(Index == K);
  }
  size_t Index = 99;
  report("find missing", gj_module_find_kernel(M, "sxapy", &Index));
  EXPECT(Index == 99);
  gj_kernel_info KI;
  gj_kernel_info_init(&KI, sizeof KI);
  report("kernel index", gj_module_kernel(M, 3, &KI));
  gj_param_info PI;
  gj_param_info_init(&PI, sizeof PI);
  report("param kernel index", gj_module_kernel_param(M, 7, 0, &PI));
  report("param index", gj_module_kernel_param(M, 0, 4, &PI));
  gj_module_release(M);
  gj_compiler_destroy(C);
  return 0;
}

/*===-- host: runs kernels on buffers and caller-owned memory -----------===*/

static int caseHost(void) {
  gj_compiler C = newCompiler(NULL);
  gj_module M = NULL;
  MUST(gj_compile(C, Saxpy, strlen(Saxpy), "saxpy.kir", "host", &M));
  gj_runtime R = newHostRuntime(4);
  gj_loaded_module LM = NULL;
  MUST(gj_runtime_load(R, M, &LM));
  /* The loaded module keeps its own reference to the module. */
  gj_module_release(M);

  enum { N = 1000 };
  float X[N], Y[N], Out[N];
  for (int I = 0; I < N; ++I) {
    X[I] = (float)I;
    Y[I] = (float)(2 * I);
  }
  gj_buffer BX = NULL, BY = NULL;
  MUST(gj_buffer_alloc(R, sizeof(X), &BX));
  MUST(gj_buffer_alloc(R, sizeof(Y), &BY));
  EXPECT(gj_buffer_size(BX) == sizeof(X) && gj_buffer_address(BX) != 0);
  float Zero[4] = {1, 1, 1, 1};
  MUST(gj_buffer_read(BX, 0, Zero, sizeof(Zero)));
  EXPECT(Zero[0] == 0 && Zero[3] == 0); /* zeroed on the host target */
  MUST(gj_buffer_write(BX, 0, X, sizeof(X)));
  MUST(gj_buffer_write(BY, 0, Y, sizeof(Y)));

  gj_launch_config LC = config1D((N + 127) / 128, 128);
  gj_arg Args[4] = {scalarI(GJ_I32, N), scalarF32(3.0f), bufferArg(BX, GJ_F32),
                    bufferArg(BY, GJ_ANY)};
  report("launch on buffers", gj_launch(LM, "saxpy", &LC, Args, 4, sizeof(gj_arg)));
  MUST(gj_runtime_synchronize(R));
  MUST(gj_buffer_read(BY, 0, Out, sizeof(Out)));
  int Bad = 0;
  for (int I = 0; I < N; ++I)
    Bad += Out[I] != 3.0f * (float)I + (float)(2 * I);
  printf("buffers: %d wrong\n", Bad);
  EXPECT(Bad == 0);

  /* A partial read at an offset. */
  float Two[2];
  MUST(gj_buffer_read(BY, 10 * sizeof(float), Two, sizeof(Two)));
  EXPECT(Two[0] == 50.0f && Two[1] == 55.0f);

  /* Caller-owned host memory, typed and untyped, and a raw address. */
  gj_arg HostArgs[4] = {scalarI(GJ_I32, N), scalarF32(0.5f), hostArg(X, GJ_F32),
                        hostArg(Y, GJ_ANY)};
  report("launch on host pointers", gj_launch(LM, "saxpy", &LC, HostArgs, 4, sizeof(gj_arg)));
  gj_arg AddrArgs[4] = {scalarI(GJ_I32, N), scalarF32(2.0f), deviceArg((uintptr_t)X, GJ_F32),
                        deviceArg(gj_buffer_address(BY), GJ_F32)};
  report("launch on addresses", gj_launch(LM, "saxpy", &LC, AddrArgs, 4, sizeof(gj_arg)));
  MUST(gj_buffer_read(BY, 0, Out, sizeof(Out)));
  Bad = 0;
  for (int I = 0; I < N; ++I) {
    Bad += Y[I] != 0.5f * (float)I + (float)(2 * I);
    Bad += Out[I] != 2.0f * (float)I + (3.0f * (float)I + (float)(2 * I));
  }
  printf("host pointers and addresses: %d wrong\n", Bad);
  EXPECT(Bad == 0);

  /* Every scalar path: i64, bool, u8. */
  int64_t Fill[64];
  memset(Fill, 0, sizeof(Fill));
  gj_launch_config LF = config1D(2, 32);
  gj_arg FillArgs[4] = {hostArg(Fill, GJ_I64), scalarI(GJ_I64, -5000000000LL),
                        scalarI(GJ_BOOL, 1), scalarU(GJ_U8, 255)};
  report("launch fill", gj_launch(LM, "fill", &LF, FillArgs, 4, sizeof(gj_arg)));
  Bad = 0;
  for (int I = 0; I < 64; ++I)
    Bad += Fill[I] != -5000000000LL + 255;
  printf("fill: %d wrong\n", Bad);
  EXPECT(Bad == 0);

  /* Cooperative (grid_sync) kernels launch without asking. */
  int32_t Coop[8];
  memset(Coop, 0, sizeof(Coop));
  gj_launch_config LCo = config1D(8, 4);
  gj_arg CoopArgs[1] = {hostArg(Coop, GJ_I32)};
  report("launch coop", gj_launch(LM, "coop", &LCo, CoopArgs, 1, sizeof(gj_arg)));
  EXPECT(Coop[0] == 1 && Coop[7] == 1);

  /* Destroying the runtime before its buffers and modules is tolerated:
     they keep it alive. */
  gj_runtime_destroy(R);
  MUST(gj_buffer_read(BY, 0, Two, sizeof(Two)));
  gj_buffer_free(BX);
  gj_buffer_free(BY);
  gj_loaded_module_destroy(LM);
  gj_compiler_destroy(C);
  return 0;
}

/*===-- launch-errors: configurations and arguments refused -------------===*/

static int caseLaunchErrors(void) {
  gj_compiler C = newCompiler(NULL);
  gj_module M = NULL;
  MUST(gj_compile(C, Saxpy, strlen(Saxpy), "saxpy.kir", NULL, &M));
  gj_runtime R = newHostRuntime(2), R2 = newHostRuntime(1);
  gj_loaded_module LM = NULL;
  MUST(gj_runtime_load(R, M, &LM));
  gj_buffer B = NULL, B2 = NULL;
  MUST(gj_buffer_alloc(R, 64, &B));
  MUST(gj_buffer_alloc(R2, 64, &B2));
  float Y[16];
  gj_launch_config LC = config1D(1, 16);

  report("unknown kernel", gj_launch(LM, "saxp", &LC, NULL, 0, sizeof(gj_arg)));
  gj_arg Three[3] = {scalarI(GJ_I32, 16), scalarF32(1), bufferArg(B, GJ_F32)};
  report("too few args", gj_launch(LM, "saxpy", &LC, Three, 3, sizeof(gj_arg)));
  gj_arg Wrong[4] = {scalarI(GJ_I64, 16), scalarF32(1), bufferArg(B, GJ_F32),
                     bufferArg(B, GJ_F32)};
  report("wrong scalar type", gj_launch(LM, "saxpy", &LC, Wrong, 4, sizeof(gj_arg)));
  gj_arg Pointee[4] = {scalarI(GJ_I32, 16), scalarF32(1), bufferArg(B, GJ_I32),
                       bufferArg(B, GJ_F32)};
  report("wrong pointee", gj_launch(LM, "saxpy", &LC, Pointee, 4, sizeof(gj_arg)));
  gj_arg ScalarForPtr[4] = {scalarI(GJ_I32, 16), scalarF32(1), scalarF32(1),
                            bufferArg(B, GJ_F32)};
  report("scalar for pointer", gj_launch(LM, "saxpy", &LC, ScalarForPtr, 4, sizeof(gj_arg)));
  gj_arg PtrForScalar[4] = {hostArg(Y, GJ_ANY), scalarF32(1), bufferArg(B, GJ_F32),
                            bufferArg(B, GJ_F32)};
  report("pointer for scalar", gj_launch(LM, "saxpy", &LC, PtrForScalar, 4, sizeof(gj_arg)));
  gj_arg Range[4] = {scalarI(GJ_I32, 1LL << 40), scalarF32(1), bufferArg(B, GJ_F32),
                     bufferArg(B, GJ_F32)};
  report("i32 out of range", gj_launch(LM, "saxpy", &LC, Range, 4, sizeof(gj_arg)));
  gj_arg FillArgs[4] = {hostArg(Y, GJ_I64), scalarI(GJ_I64, 1), scalarI(GJ_BOOL, 2),
                        scalarU(GJ_U8, 256)};
  report("bool 2", gj_launch(LM, "fill", &LC, FillArgs, 4, sizeof(gj_arg)));
  FillArgs[2] = scalarI(GJ_BOOL, 0);
  report("u8 256", gj_launch(LM, "fill", &LC, FillArgs, 4, sizeof(gj_arg)));
  gj_arg AnyScalar[4] = {scalarI(GJ_ANY, 16), scalarF32(1), bufferArg(B, GJ_F32),
                         bufferArg(B, GJ_F32)};
  report("scalar of type any", gj_launch(LM, "saxpy", &LC, AnyScalar, 4, sizeof(gj_arg)));
  gj_arg BadType[4] = {scalarI((gj_scalar_type)42, 16), scalarF32(1), bufferArg(B, GJ_F32),
                       bufferArg(B, GJ_F32)};
  report("unknown scalar type", gj_launch(LM, "saxpy", &LC, BadType, 4, sizeof(gj_arg)));
  gj_arg BadKind[4] = {scalarI(GJ_I32, 16), scalarF32(1), bufferArg(B, GJ_F32),
                       bufferArg(B, GJ_F32)};
  BadKind[3].kind = (gj_arg_kind)9;
  report("unknown kind", gj_launch(LM, "saxpy", &LC, BadKind, 4, sizeof(gj_arg)));
  gj_arg NullBuf[4] = {scalarI(GJ_I32, 16), scalarF32(1), bufferArg(NULL, GJ_F32),
                       bufferArg(B, GJ_F32)};
  report("null buffer", gj_launch(LM, "saxpy", &LC, NullBuf, 4, sizeof(gj_arg)));
  gj_arg Other[4] = {scalarI(GJ_I32, 16), scalarF32(1), bufferArg(B2, GJ_F32),
                     bufferArg(B, GJ_F32)};
  report("buffer of another runtime", gj_launch(LM, "saxpy", &LC, Other, 4, sizeof(gj_arg)));

  gj_arg Good[4] = {scalarI(GJ_I32, 16), scalarF32(1), bufferArg(B, GJ_F32),
                    bufferArg(B, GJ_F32)};
  gj_launch_config Zero = config1D(0, 16);
  report("zero grid", gj_launch(LM, "saxpy", &Zero, Good, 4, sizeof(gj_arg)));
  gj_launch_config Huge = config1D(1, 2048);
  report("block too large", gj_launch(LM, "saxpy", &Huge, Good, 4, sizeof(gj_arg)));
  gj_launch_config Shared = config1D(1, 16);
  Shared.dynamic_shared_bytes = 64;
  report("dynamic shared unused", gj_launch(LM, "saxpy", &Shared, Good, 4, sizeof(gj_arg)));
  gj_launch_config Stream = config1D(1, 16);
  Stream.stream = &Stream;
  report("host stream", gj_launch(LM, "saxpy", &Stream, Good, 4, sizeof(gj_arg)));
  report("good launch", gj_launch(LM, "saxpy", &LC, Good, 4, sizeof(gj_arg)));

  gj_buffer HugeBuffer = NULL;
  report("huge buffer", gj_buffer_alloc(R, (uint64_t)1 << 62, &HugeBuffer));
  EXPECT(HugeBuffer == NULL);
  report("write out of range", gj_buffer_write(B, 60, Y, 8));
  report("read out of range", gj_buffer_read(B, 65, Y, 0));
  report("empty write", gj_buffer_write(B, 64, NULL, 0));

  gj_runtime_options RO;
  gj_runtime_options_init(&RO, sizeof RO);
  RO.target = "tpu";
  gj_runtime R3 = NULL;
  report("unknown runtime", gj_runtime_create(&RO, &R3));
  EXPECT(R3 == NULL);

  gj_compiler CN = newCompiler("nvptx");
  gj_module MN = NULL;
  MUST(gj_compile(CN, Saxpy, strlen(Saxpy), "saxpy.kir", NULL, &MN));
  gj_loaded_module LMN = NULL;
  report("load nvptx on host", gj_runtime_load(R, MN, &LMN));
  EXPECT(LMN == NULL);
  gj_module_release(MN);
  gj_compiler_destroy(CN);

  gj_buffer_free(B);
  gj_buffer_free(B2);
  gj_loaded_module_destroy(LM);
  gj_runtime_destroy(R);
  gj_runtime_destroy(R2);
  gj_module_release(M);
  gj_compiler_destroy(C);
  return 0;
}

/*===-- async: compile jobs, poll and wait -------------------------------===*/

static int caseAsync(void) {
  gj_compiler_options O;
  gj_compiler_options_init(&O, sizeof O);
  O.use_disk_cache = 0;
  O.threads = 2;
  gj_compiler C = NULL;
  MUST(gj_compiler_create(&O, &C));
  gj_compile_job J = NULL;
  report("compile_async", gj_compile_async(C, Saxpy, strlen(Saxpy), "async.kir", NULL, &J));
  /* Poll until it finishes; NOT_READY until then, never an error. */
  gj_status S;
  while ((S = gj_compile_job_poll(J)) == GJ_ERROR_NOT_READY)
    EXPECT(strstr(gj_last_error(), "not finished") != NULL);
  report("poll after finishing", S);
  gj_module M1 = NULL, M2 = NULL;
  report("wait", gj_compile_job_wait(J, &M1));
  report("wait again", gj_compile_job_wait(J, &M2));
  EXPECT(M1 != NULL && M2 != NULL && M1 != M2);
  printf("kernels %zu %zu\n", gj_module_kernel_count(M1), gj_module_kernel_count(M2));
  gj_compile_job_destroy(J);
  gj_module_release(M1);
  /* A module outlives its job and the other reference. */
  size_t Index = 0;
  MUST(gj_module_find_kernel(M2, "fill", &Index));
  EXPECT(Index == 1);

  static const char Bad[] = "kernel k() {\n  return 1;\n}\n";
  J = NULL;
  MUST(gj_compile_async(C, Bad, strlen(Bad), "async-bad.kir", NULL, &J));
  gj_module M3 = NULL;
  report("wait for a failing compile", gj_compile_job_wait(J, &M3));
  report("wait again for a failing compile", gj_compile_job_wait(J, &M3));
  EXPECT(M3 == NULL);
  report("poll a failed compile", gj_compile_job_poll(J));
  gj_compile_job_destroy(J);

  /* Jobs destroyed unwaited, and a compiler destroyed with jobs in flight:
     the jobs stay valid. */
  gj_compile_job Many[8];
  for (int I = 0; I < 8; ++I) {
    char Src[256];
    snprintf(Src, sizeof(Src), "kernel k%d(out: ptr<i32>) { out[0] = %d; }\n", I, I);
    MUST(gj_compile_async(C, Src, strlen(Src), NULL, NULL, &Many[I]));
  }
  gj_compile_job_destroy(Many[0]);
  gj_compile_job_destroy(Many[1]);
  gj_compiler_destroy(C);
  for (int I = 2; I < 8; ++I) {
    gj_module M = NULL;
    MUST(gj_compile_job_wait(Many[I], &M));
    gj_kernel_info KI;
    gj_kernel_info_init(&KI, sizeof KI);
    MUST(gj_module_kernel(M, 0, &KI));
    char Want[8];
    snprintf(Want, sizeof(Want), "k%d", I);
    EXPECT(strcmp(KI.name, Want) == 0);
    gj_module_release(M);
    gj_compile_job_destroy(Many[I]);
  }
  gj_module_release(M2);
  printf("async done\n");
  return 0;
}

/*===-- threads: many threads compiling and launching at once -----------===*/

enum { NumThreads = 8, Rounds = 6, Elems = 256 };

struct Shared {
  gj_compiler C;
  gj_runtime R;
  gj_loaded_module Saxpy;
};

struct Work {
  struct Shared *S;
  int Id;
  int Wrong;
  char Error[512];
};

static void *threadMain(void *P) {
  struct Work *W = (struct Work *)P;
  gj_runtime R = W->S->R;
  for (int Round = 0; Round < Rounds; ++Round) {
    /* A kernel of its own for each thread and round: a real compile. */
    char Src[512];
    int K = W->Id * 100 + Round;
    snprintf(Src, sizeof(Src),
             "kernel add%d(out: ptr<i32>, n: i32) {\n"
             "  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;\n"
             "  if i < n { out[i] = out[i] + i + %d; }\n"
             "}\n",
             K, K);
    gj_module M = NULL;
    gj_loaded_module LM = NULL;
    gj_buffer B = NULL;
    char Name[32];
    snprintf(Name, sizeof(Name), "add%d", K);
    int32_t Out[Elems];
    for (int I = 0; I < Elems; ++I)
      Out[I] = I;
    gj_launch_config LC = config1D(Elems / 64, 64);
    if (gj_compile(W->S->C, Src, strlen(Src), Name, NULL, &M) ||
        gj_runtime_load(R, M, &LM) || gj_buffer_alloc(R, sizeof(Out), &B) ||
        gj_buffer_write(B, 0, Out, sizeof(Out))) {
      snprintf(W->Error, sizeof(W->Error), "%s", gj_last_error());
      return NULL;
    }
    gj_arg Args[2] = {bufferArg(B, GJ_I32), scalarI(GJ_I32, Elems)};
    float X[Elems], Y[Elems];
    for (int I = 0; I < Elems; ++I) {
      X[I] = (float)I;
      Y[I] = (float)W->Id;
    }
    gj_arg SArgs[4] = {scalarI(GJ_I32, Elems), scalarF32((float)Round), hostArg(X, GJ_F32),
                       hostArg(Y, GJ_F32)};
    if (gj_launch(LM, Name, &LC, Args, 2, sizeof(gj_arg)) || gj_launch(W->S->Saxpy, "saxpy", &LC, SArgs, 4, sizeof(gj_arg)) ||
        gj_buffer_read(B, 0, Out, sizeof(Out))) {
      snprintf(W->Error, sizeof(W->Error), "%s", gj_last_error());
      return NULL;
    }
    for (int I = 0; I < Elems; ++I) {
      W->Wrong += Out[I] != 2 * I + K;
      W->Wrong += Y[I] != (float)Round * (float)I + (float)W->Id;
    }
    /* A failing call in this thread sets this thread's error only. */
    size_t Index;
    if (gj_module_find_kernel(M, "nope", &Index) != GJ_ERROR_NOT_FOUND ||
        strstr(gj_last_error(), Name) == NULL)
      ++W->Wrong;
    gj_buffer_free(B);
    gj_loaded_module_destroy(LM);
    gj_module_release(M);
  }
  return NULL;
}

static int caseThreads(void) {
  struct Shared S;
  S.C = newCompiler(NULL);
  S.R = newHostRuntime(4);
  gj_module M = NULL;
  MUST(gj_compile(S.C, Saxpy, strlen(Saxpy), "saxpy.kir", NULL, &M));
  MUST(gj_runtime_load(S.R, M, &S.Saxpy));
  gj_module_release(M);
  pthread_t T[NumThreads];
  struct Work W[NumThreads];
  for (int I = 0; I < NumThreads; ++I) {
    W[I].S = &S;
    W[I].Id = I;
    W[I].Wrong = 0;
    W[I].Error[0] = 0;
    pthread_create(&T[I], NULL, threadMain, &W[I]);
  }
  int Wrong = 0, Errors = 0;
  for (int I = 0; I < NumThreads; ++I) {
    pthread_join(T[I], NULL);
    Wrong += W[I].Wrong;
    if (W[I].Error[0]) {
      printf("FAIL: thread %d: %s\n", I, W[I].Error);
      ++Errors;
    }
  }
  printf("%d threads x %d rounds: %d wrong, %d errors\n", NumThreads, Rounds, Wrong, Errors);
  EXPECT(Wrong == 0 && Errors == 0);
  /* The main thread's last error is its own (no call failed here). */
  printf("main thread's last error: '%s'\n", gj_last_error());
  gj_loaded_module_destroy(S.Saxpy);
  gj_runtime_destroy(S.R);
  gj_compiler_destroy(S.C);
  return 0;
}

/*===-- cuda: the CUDA runtime through the fake driver ------------------===*/

typedef int (*CountFn)(int);

static int caseCuda(const char *FakePath) {
  printf("devices: %d\n", gj_cuda_device_count());
  gj_compiler C = newCompiler("nvptx:sm_80,host");
  gj_module M = NULL, MH = NULL;
  MUST(gj_compile(C, Saxpy, strlen(Saxpy), "saxpy.kir", NULL, &M));
  MUST(gj_compile(C, Saxpy, strlen(Saxpy), "saxpy.kir", "host", &MH));
  gj_runtime_options O;
  gj_runtime_options_init(&O, sizeof O);
  O.target = "cuda";
  O.use_cubin_cache = 0;
  gj_runtime R = NULL;
  if (report("cuda runtime", gj_runtime_create(&O, &R)) != GJ_OK) {
    gj_module_release(M);
    gj_module_release(MH);
    gj_compiler_destroy(C);
    return 0;
  }
  gj_loaded_module LM = NULL;
  report("load host module on cuda", gj_runtime_load(R, MH, &LM));
  report("load", gj_runtime_load(R, M, &LM));
  enum { N = 256 };
  float X[N], Back[N];
  for (int I = 0; I < N; ++I)
    X[I] = (float)I;
  gj_buffer BX = NULL, BY = NULL;
  MUST(gj_buffer_alloc(R, sizeof(X), &BX));
  MUST(gj_buffer_alloc(R, sizeof(X), &BY));
  MUST(gj_buffer_write(BX, 0, X, sizeof(X)));
  MUST(gj_buffer_read(BX, 0, Back, sizeof(Back)));
  EXPECT(memcmp(X, Back, sizeof(X)) == 0);

  void *Fake = dlopen(FakePath, RTLD_LAZY | RTLD_LOCAL);
  CountFn Launches = Fake ? (CountFn)dlsym(Fake, "gridjitFakeCudaLaunches") : NULL;
  EXPECT(Launches != NULL);
  int Before = Launches ? Launches(0) : 0, CoopBefore = Launches ? Launches(1) : 0;
  gj_launch_config LC = config1D(2, 128);
  gj_arg Args[4] = {scalarI(GJ_I32, N), scalarF32(2.0f), bufferArg(BX, GJ_F32),
                    deviceArg(gj_buffer_address(BY), GJ_F32)};
  report("launch", gj_launch(LM, "saxpy", &LC, Args, 4, sizeof(gj_arg)));
  LC.stream = (void *)0x1234; /* a caller's stream, passed through as it is */
  report("launch on a caller's stream", gj_launch(LM, "saxpy", &LC, Args, 4, sizeof(gj_arg)));
  LC.stream = NULL;
  gj_arg CoopArgs[1] = {bufferArg(BY, GJ_ANY)};
  report("launch coop", gj_launch(LM, "coop", &LC, CoopArgs, 1, sizeof(gj_arg)));
  report("synchronize", gj_runtime_synchronize(R));
  if (Launches)
    printf("fake launches: %d, cooperative: %d\n", Launches(0) - Before,
           Launches(1) - CoopBefore);
  gj_arg HostPtr[4] = {scalarI(GJ_I32, N), scalarF32(2.0f), hostArg(X, GJ_F32),
                       bufferArg(BY, GJ_F32)};
  report("host pointer on cuda", gj_launch(LM, "saxpy", &LC, HostPtr, 4, sizeof(gj_arg)));
  gj_launch_config Big = config1D(1, 1025);
  report("block too large on cuda", gj_launch(LM, "saxpy", &Big, Args, 4, sizeof(gj_arg)));
  gj_buffer_free(BX);
  gj_buffer_free(BY);
  gj_loaded_module_destroy(LM);
  gj_runtime_destroy(R);
  gj_module_release(M);
  gj_module_release(MH);
  gj_compiler_destroy(C);
  if (Fake)
    dlclose(Fake);
  return 0;
}

/* The driver failing (GRIDJIT_FAKE_CUDA_FAIL makes cuMemAlloc and
   cuLaunchKernel fail): the status of what the driver's error means
   (cuda.test), with the driver's own message. */
static int caseCudaFail(void) {
  gj_compiler C = newCompiler("nvptx");
  gj_module M = NULL;
  MUST(gj_compile(C, Saxpy, strlen(Saxpy), "saxpy.kir", NULL, &M));
  gj_runtime_options O;
  gj_runtime_options_init(&O, sizeof O);
  O.target = "cuda";
  O.use_cubin_cache = 0;
  gj_runtime R = NULL;
  MUST(gj_runtime_create(&O, &R));
  gj_loaded_module LM = NULL;
  MUST(gj_runtime_load(R, M, &LM));
  gj_buffer B = NULL;
  report("alloc", gj_buffer_alloc(R, 1024, &B));
  gj_buffer_free(B);
  gj_launch_config LC = config1D(1, 32);
  gj_arg Args[4] = {scalarI(GJ_I32, 32), scalarF32(1.0f), deviceArg(0x10000, GJ_F32),
                    deviceArg(0x20000, GJ_F32)};
  report("launch", gj_launch(LM, "saxpy", &LC, Args, 4, sizeof(gj_arg)));
  gj_loaded_module_destroy(LM);
  gj_runtime_destroy(R);
  gj_module_release(M);
  gj_compiler_destroy(C);
  return 0;
}

/*===-- kinds: one error of each kind the host can give -----------------===*/

/* The contents of file \p Path (NUL-terminated, to be freed), or exit. */
static char *readFile(const char *Path, size_t *Size) {
  FILE *F = fopen(Path, "rb");
  char *Text = NULL;
  if (!F || fseek(F, 0, SEEK_END) != 0 || (*Size = (size_t)ftell(F), fseek(F, 0, SEEK_SET)) != 0 ||
      !(Text = malloc(*Size + 1)) || fread(Text, 1, *Size, F) != *Size) {
    printf("FAIL: cannot read %s\n", Path);
    exit(1);
  }
  Text[*Size] = 0;
  fclose(F);
  return Text;
}

/* Each kind of error of ErrorKinds.def that a host runtime and compiler
   can meet, with its status, running the kernels of \p KirPath
   (Inputs/kinds.kir; kinds.test; the CUDA driver's kinds are cuda.test's,
   I/O errors compiler-create's, and GJ_ERROR_FAILED launch-errors.test's
   huge buffer). */
static int caseKinds(const char *KirPath) {
  gj_compiler C = newCompiler(NULL);
  gj_module M = NULL;
  report("invalid argument", gj_compile(NULL, "", 0, NULL, NULL, &M));
  report("compile", gj_compile(C, "kernel k( {", 11, "bad.kir", NULL, &M));
  size_t Size = 0;
  char *Kir = readFile(KirPath, &Size);
  MUST(gj_compile(C, Kir, Size, "kinds.kir", NULL, &M));
  free(Kir);
  gj_runtime R = newHostRuntime(2);
  gj_loaded_module LM = NULL;
  MUST(gj_runtime_load(R, M, &LM));
  gj_launch_config LC = config1D(1, 8);
  report("not found", gj_launch(LM, "nope", &LC, NULL, 0, sizeof(gj_arg)));
  int32_t Out[8];
  gj_arg Wrong = hostArg(Out, GJ_F32);
  report("argument", gj_launch(LM, "halfif", &LC, &Wrong, 1, sizeof(gj_arg)));
  gj_arg Good = hostArg(Out, GJ_I32);
  gj_launch_config Big = config1D(1, 2048);
  report("configuration", gj_launch(LM, "halfif", &Big, &Good, 1, sizeof(gj_arg)));
  report("divergence", gj_launch(LM, "halfif", &LC, &Good, 1, sizeof(gj_arg)));
  float F[4];
  gj_arg FarArgs[2] = {scalarI(GJ_I32, 1000000000), hostArg(F, GJ_F32)};
  gj_launch_config One = config1D(1, 1);
  report("fault", gj_launch(LM, "far", &One, FarArgs, 2, sizeof(gj_arg)));
  /* The runtime goes on after each. */
  report("after them", gj_launch(LM, "halfif", &One, &Good, 1, sizeof(gj_arg)));
  gj_loaded_module_destroy(LM);
  gj_runtime_destroy(R);
  gj_module_release(M);
  gj_compiler_destroy(C);
  return 0;
}

/* gj_compiler_create with the defaults, and its warnings, in whatever
   environment the test gives it. */
static int caseCompilerCreate(const char *CacheDir) {
  gj_compiler_options O;
  gj_compiler_options_init(&O, sizeof O);
  O.cache_dir = CacheDir;
  gj_compiler C = NULL;
  if (report("compiler", gj_compiler_create(&O, &C)) != GJ_OK)
    return 0;
  /* Warnings come when the disk cache is first needed. */
  gj_module M = NULL;
  MUST(gj_compile(C, Saxpy, strlen(Saxpy), "saxpy.kir", NULL, &M));
  size_t N = gj_compiler_warning_count(C);
  printf("warnings: %zu\n", N);
  for (size_t I = 0; I < N; ++I)
    printf("warning %zu: %s\n", I, gj_compiler_warning(C, I));
  EXPECT(gj_compiler_warning(C, N) == NULL && gj_compiler_warning(NULL, 0) == NULL &&
         gj_compiler_warning_count(NULL) == 0);
  gj_module_release(M);
  gj_compiler_destroy(C);
  return 0;
}

/*===-- catch-faults: a runtime that installs no signal handler --------===*/

/* SIGSEGV's handler, as sigaction reports it. */
static void *segvHandler(void) {
  struct sigaction A;
  sigaction(SIGSEGV, NULL, &A);
  return (A.sa_flags & SA_SIGINFO) ? (void *)(uintptr_t)A.sa_sigaction
                                   : (void *)(uintptr_t)A.sa_handler;
}

/* Launches saxpy on a runtime with catch_faults = \p Catch; prints whether
   SIGSEGV's handler changed. */
static void launchWithCatchFaults(gj_module M, int32_t Catch) {
  void *Before = segvHandler();
  gj_runtime_options O;
  gj_runtime_options_init(&O, sizeof O);
  O.catch_faults = Catch;
  gj_runtime R = NULL;
  MUST(gj_runtime_create(&O, &R));
  gj_loaded_module LM = NULL;
  MUST(gj_runtime_load(R, M, &LM));
  float X[4] = {1, 2, 3, 4}, Y[4] = {0};
  gj_arg Args[4] = {scalarI(GJ_I32, 4), scalarF32(2), hostArg(X, GJ_F32), hostArg(Y, GJ_F32)};
  gj_launch_config LC = config1D(1, 4);
  MUST(gj_launch(LM, "saxpy", &LC, Args, 4, sizeof(gj_arg)));
  EXPECT(Y[3] == 8);
  printf("catch_faults %d: SIGSEGV handler %s\n", (int)Catch,
         segvHandler() == Before ? "unchanged" : "changed");
  gj_loaded_module_destroy(LM);
  gj_runtime_destroy(R);
}

static int caseCatchFaults(void) {
  gj_compiler C = newCompiler(NULL);
  gj_module M = NULL;
  MUST(gj_compile(C, Saxpy, strlen(Saxpy), "saxpy.kir", NULL, &M));
  /* Off first: handlers, once installed, may stay while a runtime lives. */
  launchWithCatchFaults(M, 0);
  launchWithCatchFaults(M, 1);
  gj_module_release(M);
  gj_compiler_destroy(C);
  return 0;
}

/* A runtime for device \p Ordinal, when the environment says what there is. */
static int caseCudaCreate(unsigned Ordinal) {
  printf("devices: %d\n", gj_cuda_device_count());
  gj_runtime_options O;
  gj_runtime_options_init(&O, sizeof O);
  O.target = "nvptx";
  O.device = Ordinal;
  O.use_cubin_cache = 0;
  gj_runtime R = NULL;
  report("cuda runtime", gj_runtime_create(&O, &R));
  gj_runtime_destroy(R);
  return 0;
}

/*===-- cubin-cache: where a CUDA runtime keeps its cubins, its warnings ===*/

/* A compiler with its cache in CompilerDir compiles saxpy for nvptx; a
   CUDA runtime with cache_dir RuntimeDir, and the compiler's tiers when
   Share is non-zero, loads it (a cubin compile and store); the runtime's
   warnings are printed. */
static int caseCubinCache(const char *CompilerDir, const char *RuntimeDir, int Share) {
  gj_compiler_options CO;
  gj_compiler_options_init(&CO, sizeof CO);
  CO.targets = "nvptx:sm_80";
  CO.cache_dir = CompilerDir;
  gj_compiler C = NULL;
  MUST(gj_compiler_create(&CO, &C));
  gj_module M = NULL;
  MUST(gj_compile(C, Saxpy, strlen(Saxpy), "saxpy.kir", NULL, &M));
  gj_runtime_options RO;
  gj_runtime_options_init(&RO, sizeof RO);
  RO.target = "cuda";
  RO.cache_dir = RuntimeDir;
  RO.compiler = Share ? C : NULL;
  gj_runtime R = NULL;
  MUST(gj_runtime_create(&RO, &R));
  /* The runtime keeps the compiler's tiers alive. */
  gj_compiler_destroy(C);
  gj_loaded_module LM = NULL;
  report("load", gj_runtime_load(R, M, &LM));
  size_t N = gj_runtime_warning_count(R);
  printf("runtime warnings: %zu\n", N);
  for (size_t I = 0; I < N; ++I)
    printf("runtime warning %zu: %s\n", I, gj_runtime_warning(R, I));
  EXPECT(gj_runtime_warning(R, N) == NULL && gj_runtime_warning(NULL, 0) == NULL &&
         gj_runtime_warning_count(NULL) == 0);
  gj_loaded_module_destroy(LM);
  gj_runtime_destroy(R);
  gj_module_release(M);
  return 0;
}

/*===-- emit: a stage of a source as text --------------------------------===*/

/* Prints whether \p Text (of \p Size bytes and a NUL) holds \p Needle. */
static void showText(const char *What, const char *Text, size_t Size, const char *Needle) {
  EXPECT(strlen(Text) == Size);
  printf("%s: has '%s': %d\n", What, Needle, strstr(Text, Needle) != NULL);
}

static int caseEmit(void) {
  gj_compiler C = newCompiler("host,nvptx:sm_90");
  char *Text = NULL;
  size_t Size = 0;
  report("llvm", gj_emit(C, Saxpy, strlen(Saxpy), "saxpy.kir", NULL, "llvm", &Text, &Size));
  showText("host llvm", Text, Size, "@__gridjit_entry_saxpy(");
  gj_text_free(Text);
  report("asm", gj_emit(C, Saxpy, strlen(Saxpy), "saxpy.kir", "host", "asm", &Text, &Size));
  showText("host asm", Text, Size, "__gridjit_entry_saxpy:");
  gj_text_free(Text);
  report("nvptx llvm", gj_emit(C, Saxpy, strlen(Saxpy), "saxpy.kir", "cuda", "llvm", &Text, &Size));
  showText("nvptx llvm", Text, Size, "nvptx64-nvidia-cuda");
  gj_text_free(Text);
  report("nvptx asm", gj_emit(C, Saxpy, strlen(Saxpy), "saxpy.kir", "nvptx", "asm", &Text, &Size));
  showText("nvptx asm", Text, Size, ".target sm_90");
  gj_text_free(Text);
  /* Errors leave *text alone. */
  Text = (char *)"untouched";
  report("unknown stage", gj_emit(C, Saxpy, strlen(Saxpy), NULL, NULL, "obj", &Text, &Size));
  report("unknown target", gj_emit(C, Saxpy, strlen(Saxpy), NULL, "amdgpu", "llvm", &Text, &Size));
  report("compile error", gj_emit(C, "kernel k() {\n  nope;\n}\n", 22, "bad.kir", NULL, "asm", &Text,
                                  &Size));
  EXPECT(!strcmp(Text, "untouched"));
  gj_compiler_destroy(C);
  return 0;
}

/*===-- check: checked code (gj_compiler_options' check) ----------------===*/

/* A checked compiler of \p Targets with check_arch \p Arch. */
static gj_compiler newCheckedCompiler(const char *Targets, uint32_t Arch) {
  gj_compiler_options O;
  gj_compiler_options_init(&O, sizeof O);
  printf("compiler defaults: check %d, check_arch %u\n", (int)O.check, (unsigned)O.check_arch);
  O.targets = Targets;
  O.use_disk_cache = 0;
  O.check = 1;
  O.check_arch = Arch;
  gj_compiler C = NULL;
  MUST(gj_compiler_create(&O, &C));
  return C;
}

static int caseCheck(void) {
  gj_compiler C = newCheckedCompiler("host,nvptx", 80);
  gj_module M = NULL;
  report("checked host", gj_compile(C, Saxpy, strlen(Saxpy), "saxpy.kir", "host", &M));
  report("checked nvptx", gj_compile(C, Saxpy, strlen(Saxpy), "saxpy.kir", "nvptx", &M));
  char *Text = NULL;
  size_t Size = 0;
  report("checked emit nvptx",
         gj_emit(C, Saxpy, strlen(Saxpy), "saxpy.kir", "nvptx", "llvm", &Text, &Size));
  report("checked emit host",
         gj_emit(C, Saxpy, strlen(Saxpy), "saxpy.kir", "host", "llvm", &Text, &Size));
  gj_text_free(Text);
  gj_compiler Bad = newCheckedCompiler("host", 60);
  gj_module None = NULL;
  report("check_arch 60", gj_compile(Bad, Saxpy, strlen(Saxpy), "saxpy.kir", NULL, &None));
  EXPECT(None == NULL);
  gj_compiler_destroy(Bad);

  /* A checked launch of an in-bounds saxpy on caller memory and gj_buffers,
     each with its real extent (a buffer's is its size): clean. */
  gj_runtime R = newHostRuntime(2);
  gj_loaded_module LM = NULL;
  MUST(gj_runtime_load(R, M, &LM));
  gj_launch_config LC = config1D(2, 64);
  printf("launch defaults: check_max_findings %u, check_same_value_writes %d\n",
         (unsigned)LC.check_max_findings, (int)LC.check_same_value_writes);
  LC.check_max_findings = 4;
  LC.check_same_value_writes = 1;
  enum { N = 100 };
  float X[N], Y[N];
  for (int I = 0; I < N; ++I)
    X[I] = (float)I, Y[I] = 1;
  gj_buffer BY = NULL;
  MUST(gj_buffer_alloc(R, sizeof(Y), &BY));
  MUST(gj_buffer_write(BY, 0, Y, sizeof(Y)));
  gj_arg Args[4] = {scalarI(GJ_I32, N), scalarF32(2), hostArg(X, GJ_F32), bufferArg(BY, GJ_F32)};
  Args[2].extent = sizeof(X);
  report("checked launch", gj_launch(LM, "saxpy", &LC, Args, 4, sizeof(gj_arg)));
  MUST(gj_buffer_read(BY, 0, Y, sizeof(Y)));
  int Wrong = 0;
  for (int I = 0; I < N; ++I)
    Wrong += Y[I] != 2.0f * (float)I + 1;
  printf("checked saxpy: %d wrong\n", Wrong);
  EXPECT(Wrong == 0);
  /* A gj_buffer's extent may not claim more than the buffer has. */
  Args[3].extent = sizeof(Y) + 4;
  report("extent past the buffer", gj_launch(LM, "saxpy", &LC, Args, 4, sizeof(gj_arg)));
  Args[3].extent = sizeof(Y);
  report("extent of the buffer", gj_launch(LM, "saxpy", &LC, Args, 4, sizeof(gj_arg)));
  /* The caller's x holds 96 floats, not 100: the checked launch stops at
     the first read past them, names the parameter, and returns
     GJ_ERROR_CHECK. Without an extent, x's size is unknown: reported, not
     trusted. */
  LC.check_max_findings = 1;
  Args[2].extent = 96 * sizeof(float);
  report("read past x", gj_launch(LM, "saxpy", &LC, Args, 4, sizeof(gj_arg)));
  Args[2].extent = 0;
  report("x without an extent", gj_launch(LM, "saxpy", &LC, Args, 4, sizeof(gj_arg)));

  gj_buffer_free(BY);
  gj_loaded_module_destroy(LM);
  gj_runtime_destroy(R);
  gj_module_release(M);
  gj_compiler_destroy(C);
  return 0;
}

int main(int Argc, char **Argv) {
  if (Argc < 2) {
    fprintf(stderr, "usage: capi-test CASE [ARG]\n");
    return 2;
  }
  const char *Case = Argv[1];
  int RC = 2;
  if (!strcmp(Case, "basics"))
    RC = caseBasics();
  else if (!strcmp(Case, "null"))
    RC = caseNull();
  else if (!strcmp(Case, "struct-size"))
    RC = caseStructSize();
  else if (!strcmp(Case, "compiler"))
    RC = caseCompiler();
  else if (!strcmp(Case, "emit"))
    RC = caseEmit();
  else if (!strcmp(Case, "check"))
    RC = caseCheck();
  else if (!strcmp(Case, "kernels"))
    RC = caseKernels();
  else if (!strcmp(Case, "host"))
    RC = caseHost();
  else if (!strcmp(Case, "launch-errors"))
    RC = caseLaunchErrors();
  else if (!strcmp(Case, "async"))
    RC = caseAsync();
  else if (!strcmp(Case, "threads"))
    RC = caseThreads();
  else if (!strcmp(Case, "cuda") && Argc > 2)
    RC = caseCuda(Argv[2]);
  else if (!strcmp(Case, "cuda-fail"))
    RC = caseCudaFail();
  else if (!strcmp(Case, "kinds") && Argc > 2)
    RC = caseKinds(Argv[2]);
  else if (!strcmp(Case, "compiler-create"))
    RC = caseCompilerCreate(Argc > 2 ? Argv[2] : NULL);
  else if (!strcmp(Case, "catch-faults"))
    RC = caseCatchFaults();
  else if (!strcmp(Case, "cubin-cache") && Argc > 4)
    RC = caseCubinCache(Argv[2], Argv[3], !strcmp(Argv[4], "share"));
  else if (!strcmp(Case, "cuda-create"))
    RC = caseCudaCreate(Argc > 2 ? (unsigned)atoi(Argv[2]) : 0);
  else
    fprintf(stderr, "capi-test: unknown case '%s'\n", Case);
  if (RC == 0 && Failures)
    RC = 1;
  printf("%s\n", RC == 0 ? "PASS" : "FAILED");
  return RC;
}
