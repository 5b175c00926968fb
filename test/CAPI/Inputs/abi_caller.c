/*===- abi_caller.c - A C caller built against other versions' headers ---===*\
|*                                                                            *|
|* Part of gridjit's test suite (test/CAPI/abi.test). Compiled against a      *|
|* header older than the library (without the fields of API version 2),     *|
|* one newer than it (-DABI_NEWER: a field appended to every struct), and    *|
|* the old one as a program of API version 1 would call it (-DABI_V1:        *|
|* version 1's symbols, the *_init functions without a size and gj_launch    *|
|* with 16-byte arguments). Each one creates a runtime, reads a kernel's     *|
|* metadata, runs saxpy and checks the result, and has a kernel fault;      *|
|* `tail` (newer header only) sets the fields the library does not know.    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "gridjit-c/gridjit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_report.h"

#ifdef ABI_V1
/* Version 1's header declared these names as functions; version 2's makes
   them macros for the *_v2 symbols. */
#undef gj_compiler_options_init
#undef gj_runtime_options_init
#undef gj_kernel_info_init
#undef gj_launch_config_init
#undef gj_launch
void gj_compiler_options_init(gj_compiler_options *o);
void gj_runtime_options_init(gj_runtime_options *o);
void gj_kernel_info_init(gj_kernel_info *info);
void gj_launch_config_init(gj_launch_config *c);
gj_status gj_launch(gj_loaded_module lm, const char *kernel, const gj_launch_config *c,
                    const gj_arg *args, size_t num_args);
#define INIT(Fn, P) Fn(P)
#define LAUNCH(LM, K, C, A, N) gj_launch(LM, K, C, A, N)
#else
#define INIT(Fn, P) Fn(P, sizeof *(P))
#define LAUNCH(LM, K, C, A, N) gj_launch(LM, K, C, A, N, sizeof(gj_arg))
#endif

static const char Source[] = "kernel saxpy(n: i32, a: f32, x: ptr<f32>, y: ptr<f32>) {\n"
                             "  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;\n"
                             "  if i < n { y[i] = a * x[i] + y[i]; }\n"
                             "}\n"
                             "kernel far(n: i32, out: ptr<f32>) {\n"
                             "  out[n] = 1.0;\n"
                             "}\n";

static gj_arg scalar(uint32_t Type) {
  gj_arg A;
  memset(&A, 0, sizeof(A));
  A.kind = GJ_ARG_SCALAR;
  A.type = Type;
  return A;
}

int main(int Argc, char **Argv) {
  int Tail = Argc > 1 && !strcmp(Argv[1], "tail");
  (void)Tail;
  printf("sizes: gj_runtime_options %zu, gj_arg %zu, gj_kernel_info %zu, gj_launch_config %zu\n",
         sizeof(gj_runtime_options), sizeof(gj_arg), sizeof(gj_kernel_info),
         sizeof(gj_launch_config));

  /* The init functions write the caller's struct and nothing after it. */
  struct {
    gj_runtime_options O;
    unsigned char After[8];
  } RO;
  memset(&RO, 0xab, sizeof(RO));
  INIT(gj_runtime_options_init, &RO.O);
  for (size_t I = 0; I < sizeof(RO.After); ++I)
    EXPECT(RO.After[I] == 0xab);
  printf("runtime options: struct_size %zu, target %s\n", RO.O.struct_size, RO.O.target);
  RO.O.threads = 2;
  gj_runtime R = NULL;
#ifdef ABI_NEWER
  if (Tail) {
    RO.O.test_newer_field = 1;
    report("runtime with the newer field set", gj_runtime_create(&RO.O, &R));
    RO.O.test_newer_field = 0;
  }
#endif
  MUST(gj_runtime_create(&RO.O, &R));

  gj_compiler_options CO;
  INIT(gj_compiler_options_init, &CO);
  CO.use_disk_cache = 0;
  gj_compiler C = NULL;
  MUST(gj_compiler_create(&CO, &C));
  gj_module M = NULL;
  MUST(gj_compile(C, Source, strlen(Source), "abi.kir", NULL, &M));

  /* A struct the library fills: up to struct_size; a field it does not
     know is zeroed. */
  gj_kernel_info KI;
  INIT(gj_kernel_info_init, &KI);
#ifdef ABI_NEWER
  KI.test_newer_field = 0xffff;
#endif
  MUST(gj_module_kernel(M, 0, &KI));
  printf("kernel info: %s, %zu parameters, struct_size %zu\n", KI.name, KI.num_params,
         KI.struct_size);
#ifdef ABI_NEWER
  printf("kernel info's newer field: %llu\n", (unsigned long long)KI.test_newer_field);
#endif

  gj_loaded_module LM = NULL;
  MUST(gj_runtime_load(R, M, &LM));
  enum { N = 100 };
  float X[N], Y[N];
  for (int I = 0; I < N; ++I) {
    X[I] = (float)I;
    Y[I] = 1.0f;
  }
  gj_arg Args[4] = {scalar(GJ_I32), scalar(GJ_F32), scalar(GJ_F32), scalar(GJ_F32)};
  Args[0].value.i = N;
  Args[1].value.f32 = 2.0f;
  Args[2].kind = Args[3].kind = GJ_ARG_HOST_POINTER;
  Args[2].value.pointer = X;
  Args[3].value.pointer = Y;
  gj_launch_config LC;
  INIT(gj_launch_config_init, &LC);
  LC.grid[0] = 2;
  LC.block[0] = 64;
#ifdef ABI_NEWER
  if (Tail) {
    Args[2].test_newer_field = 7;
    report("launch with an argument's newer field set", LAUNCH(LM, "saxpy", &LC, Args, 4));
    Args[2].test_newer_field = 0;
  }
#endif
  MUST(LAUNCH(LM, "saxpy", &LC, Args, 4));
  int Wrong = 0;
  for (int I = 0; I < N; ++I)
    Wrong += Y[I] != 2.0f * (float)I + 1.0f;
  printf("saxpy: %d wrong\n", Wrong);
  EXPECT(Wrong == 0);

  /* catch_faults, which the old header lacks, has its default: on. */
  gj_arg Far[2] = {scalar(GJ_I32), scalar(GJ_F32)};
  Far[0].value.i = 1000000000;
  Far[1].kind = GJ_ARG_HOST_POINTER;
  Far[1].value.pointer = X;
  LC.grid[0] = LC.block[0] = 1;
  gj_status S = LAUNCH(LM, "far", &LC, Far, 2);
  printf("fault: %s\n", gj_status_name(S));

  gj_loaded_module_destroy(LM);
  gj_module_release(M);
  gj_compiler_destroy(C);
  gj_runtime_destroy(R);
  printf("%s\n", Failures ? "FAILED" : "PASS");
  return Failures != 0;
}
