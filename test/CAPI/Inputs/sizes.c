/*===- sizes.c - Every size the C API takes, at the boundaries ------------===*\
|*                                                                            *|
|* Part of gridjit's test suite (test/CAPI/sizes.test). Every size, count    *|
|* and offset a caller passes (struct sizes and gj_launch's arg_size, the    *|
|* number of arguments, buffer sizes, copy offsets and lengths, launch       *|
|* dimensions, dynamic shared bytes, source sizes) at the values where       *|
|* arithmetic on them would overflow 64 bits (2^64 - 1, 2^63, SIZE_MAX) and  *|
|* at the largest value that still works, where that is cheap. Each call     *|
|* prints "what: STATUS: last error" for FileCheck; a call must return an    *|
|* error, never crash, abort or overflow a buffer (the program runs under   *|
|* the sanitizers in their builds). Wrong results print "FAIL: ...".        *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "gridjit-c/gridjit.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_report.h"
#include "capi_objects.h"

static const char Source[] = "kernel saxpy(n: i32, a: f32, x: ptr<f32>, y: ptr<f32>) {\n"
                             "  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;\n"
                             "  if i < n { y[i] = a * x[i] + y[i]; }\n"
                             "}\n"
                             "\n"
                             "kernel dyn(out: ptr<i32>) {\n"
                             "  shared tile: [i32];\n"
                             "  tile[thread_idx.x] = 7;\n"
                             "  out[thread_idx.x] = tile[thread_idx.x];\n"
                             "}\n";

/* 2^64 - 1 (SIZE_MAX too: this test runs on 64-bit machines) and 2^63. */
#define MAX64 UINT64_MAX
#define POW63 ((uint64_t)1 << 63)

/* The limits the C API documents: the largest struct (gj_*.struct_size,
   arg_size), buffer and source. */
enum { MaxStruct = GJ_MAX_STRUCT_BYTES };
#define MAX_BUFFER GJ_MAX_BUFFER_BYTES
#define MAX_SOURCE ((uint64_t)GJ_MAX_SOURCE_BYTES)

/* Struct sizes: a struct_size (or arg_size) beyond the largest any version
   may have is refused before any byte of it is read or written; the
   largest, with its unknown tail zero, works. */
static void structSizes(gj_module M, gj_loaded_module LM, gj_buffer B) {
  static const size_t Sizes[] = {MAX64, POW63, MAX64 - 7, MaxStruct + 8};
  static const char *const Names[] = {"2^64-1", "2^63", "2^64-8", "4104"};
  /* A caller's struct of MaxStruct bytes: the known fields, zeros after. */
  static union {
    gj_compiler_options CO;
    gj_kernel_info KI;
    gj_launch_config LC;
    unsigned char Bytes[MaxStruct + 64];
  } Big;
  char What[96];
  for (int I = 0; I < 4; ++I) {
    memset(&Big, 0, sizeof(Big));
    gj_compiler_options_init(&Big.CO, sizeof(Big.CO));
    Big.CO.use_disk_cache = 0;
    Big.CO.struct_size = Sizes[I];
    gj_compiler C = NULL;
    snprintf(What, sizeof What, "compiler options of %s bytes", Names[I]);
    report(What, gj_compiler_create(&Big.CO, &C));
    EXPECT(C == NULL);

    memset(&Big, 0, sizeof(Big));
    Big.KI.struct_size = Sizes[I];
    snprintf(What, sizeof What, "kernel info of %s bytes", Names[I]);
    report(What, gj_module_kernel(M, 0, &Big.KI));
    EXPECT(Big.KI.name == NULL);

    /* An *_init with such a size writes nothing (it has no status to
       report it with); it wrote SIZE_MAX - 7 bytes before. */
    memset(&Big, 0xab, sizeof(Big));
    gj_kernel_info_init(&Big.KI, Sizes[I]);
    for (size_t J = 0; J < sizeof(Big.Bytes); ++J)
      EXPECT(Big.Bytes[J] == 0xab);

    memset(&Big, 0, sizeof(Big));
    Big.LC = config1D(1, 1);
    Big.LC.struct_size = Sizes[I];
    snprintf(What, sizeof What, "launch config of %s bytes", Names[I]);
    report(What, gj_launch(LM, "saxpy", &Big.LC, NULL, 0, sizeof(gj_arg)));

    gj_launch_config LC = config1D(1, 1);
    gj_arg One = scalarI(GJ_I32, 0);
    snprintf(What, sizeof What, "arg_size %s", Names[I]);
    report(What, gj_launch(LM, "saxpy", &LC, &One, 1, Sizes[I]));
  }

  /* The largest struct: MaxStruct bytes, all of the unknown tail zero. */
  memset(&Big, 0, sizeof(Big));
  gj_compiler_options_init(&Big.CO, MaxStruct);
  EXPECT(Big.CO.struct_size == MaxStruct && Big.Bytes[MaxStruct] == 0);
  Big.CO.use_disk_cache = 0;
  gj_compiler C = NULL;
  report("compiler options of 4096 bytes", gj_compiler_create(&Big.CO, &C));
  gj_compiler_destroy(C);
  memset(&Big, 0xab, sizeof(Big));
  gj_kernel_info_init(&Big.KI, MaxStruct);
  report("kernel info of 4096 bytes", gj_module_kernel(M, 0, &Big.KI));
  EXPECT(Big.KI.name && !strcmp(Big.KI.name, "saxpy"));
  for (size_t J = sizeof(gj_kernel_info); J < MaxStruct; ++J)
    EXPECT(Big.Bytes[J] == 0);
  for (size_t J = MaxStruct; J < sizeof(Big.Bytes); ++J)
    EXPECT(Big.Bytes[J] == 0xab);

  /* Four gj_args of MaxStruct bytes each: a launch that works. */
  static unsigned char Args[4][MaxStruct];
  memset(Args, 0, sizeof(Args));
  gj_arg Known[4] = {scalarI(GJ_I32, 16), scalarF32(2.0f), bufferArg(B, GJ_F32),
                     bufferArg(B, GJ_F32)};
  for (int I = 0; I < 4; ++I)
    memcpy(Args[I], &Known[I], sizeof(gj_arg));
  gj_launch_config LC = config1D(1, 16);
  report("arg_size 4096", gj_launch(LM, "saxpy", &LC, (const gj_arg *)Args, 4, MaxStruct));
}

/* The number of arguments: checked against the kernel's parameters before
   anything is allocated or read for them (SIZE_MAX aborted inside LLVM). */
static void argumentCounts(gj_loaded_module LM, gj_buffer B) {
  gj_arg Args[4] = {scalarI(GJ_I32, 16), scalarF32(0), bufferArg(B, GJ_F32), bufferArg(B, GJ_F32)};
  gj_launch_config LC = config1D(1, 16);
  report("2^64-1 args", gj_launch(LM, "saxpy", &LC, Args, MAX64, sizeof(gj_arg)));
  report("2^63 args", gj_launch(LM, "saxpy", &LC, Args, POW63, sizeof(gj_arg)));
  report("5 args", gj_launch(LM, "saxpy", &LC, Args, 5, sizeof(gj_arg)));
  report("4 args", gj_launch(LM, "saxpy", &LC, Args, 4, sizeof(gj_arg)));
}

/* Buffer sizes: beyond the limit is refused naming it, before the runtime
   rounds the size up (to 64 bytes, pages, guard regions); the limit itself
   passes the check and fails as memory the host cannot map. */
static void bufferSizes(gj_runtime R) {
  static const uint64_t Sizes[] = {MAX64, MAX64 - 63, POW63, MAX_BUFFER + 1, MAX_BUFFER};
  static const char *const Names[] = {"2^64-1", "2^64-64", "2^63", "2^62+1", "2^62"};
  char What[64];
  for (int I = 0; I < 5; ++I) {
    gj_buffer B = NULL;
    snprintf(What, sizeof What, "buffer of %s bytes", Names[I]);
    report(What, gj_buffer_alloc(R, Sizes[I], &B));
    EXPECT(B == NULL);
  }
}

/* Copies: offset + bytes is never computed where it could wrap. */
static void copies(gj_buffer B) {
  static const uint64_t Ranges[][2] = {{MAX64, 1},     {1, MAX64},       {POW63, POW63},
                                       {MAX64, MAX64}, {64, MAX64 - 63}, {63, 2},
                                       {0, 64},        {64, 0},          {32, 32}};
  static unsigned char Host[64];
  char What[96];
  for (size_t I = 0; I < sizeof(Ranges) / sizeof(Ranges[0]); ++I) {
    snprintf(What, sizeof What, "write %llu at %llu", (unsigned long long)Ranges[I][1],
             (unsigned long long)Ranges[I][0]);
    report(What, gj_buffer_write(B, Ranges[I][0], Host, Ranges[I][1]));
    snprintf(What, sizeof What, "read %llu at %llu", (unsigned long long)Ranges[I][1],
             (unsigned long long)Ranges[I][0]);
    report(What, gj_buffer_read(B, Ranges[I][0], Host, Ranges[I][1]));
  }
}

/* Launch configurations: a block whose thread count does not fit in 64
   bits is counted exactly (it wrapped to 0 before); shared memory at the
   host's limit. */
static void configurations(gj_loaded_module LM, gj_buffer B) {
  gj_arg Args[4] = {scalarI(GJ_I32, 16), scalarF32(0), bufferArg(B, GJ_F32), bufferArg(B, GJ_F32)};
  gj_launch_config LC = config1D(1, 1);
  LC.block[0] = LC.block[1] = 1u << 22;
  LC.block[2] = 1u << 20;
  report("block of 2^64 threads", gj_launch(LM, "saxpy", &LC, Args, 4, sizeof(gj_arg)));
  LC.block[0] = LC.block[1] = LC.block[2] = UINT32_MAX;
  report("block of (2^32-1)^3 threads", gj_launch(LM, "saxpy", &LC, Args, 4, sizeof(gj_arg)));
  LC = config1D(UINT32_MAX, 1);
  LC.grid[1] = LC.grid[2] = UINT32_MAX;
  report("grid of (2^32-1)^3 blocks", gj_launch(LM, "saxpy", &LC, Args, 4, sizeof(gj_arg)));

  gj_arg Out = bufferArg(B, GJ_I32);
  LC = config1D(1, 16);
  LC.dynamic_shared_bytes = UINT32_MAX;
  report("dynamic shared 2^32-1", gj_launch(LM, "dyn", &LC, &Out, 1, sizeof(gj_arg)));
  LC.dynamic_shared_bytes = (1u << 20) + 1;
  report("dynamic shared 2^20+1", gj_launch(LM, "dyn", &LC, &Out, 1, sizeof(gj_arg)));
  LC.dynamic_shared_bytes = 1u << 20;
  report("dynamic shared 2^20", gj_launch(LM, "dyn", &LC, &Out, 1, sizeof(gj_arg)));
  int32_t Got[16];
  MUST(gj_buffer_read(B, 0, Got, sizeof Got));
  for (int I = 0; I < 16; ++I)
    EXPECT(Got[I] == 7);
}

/* Source sizes: refused before a byte is read (the buffer here is small:
   reading it as that long would run off it). */
static void sourceSizes(gj_compiler C) {
  static const uint64_t Sizes[] = {MAX64, POW63, MAX_SOURCE + 1};
  static const char *const Names[] = {"2^64-1", "2^63", "2^32"};
  char What[64];
  for (int I = 0; I < 3; ++I) {
    gj_module M = NULL;
    snprintf(What, sizeof What, "compile %s bytes", Names[I]);
    report(What, gj_compile(C, Source, (size_t)Sizes[I], "big.kir", NULL, &M));
    EXPECT(M == NULL);
    gj_compile_job J = NULL;
    snprintf(What, sizeof What, "compile_async %s bytes", Names[I]);
    report(What, gj_compile_async(C, Source, (size_t)Sizes[I], "big.kir", NULL, &J));
    EXPECT(J == NULL);
  }
}

int main(void) {
  gj_compiler C = newCompiler(NULL);
  gj_module M = NULL;
  MUST(gj_compile(C, Source, strlen(Source), "sizes.kir", NULL, &M));
  gj_runtime R = newHostRuntime(2);
  gj_loaded_module LM = NULL;
  MUST(gj_runtime_load(R, M, &LM));
  gj_buffer B = NULL;
  MUST(gj_buffer_alloc(R, 64, &B));

  structSizes(M, LM, B);
  argumentCounts(LM, B);
  bufferSizes(R);
  copies(B);
  configurations(LM, B);
  sourceSizes(C);

  gj_buffer_free(B);
  gj_loaded_module_destroy(LM);
  gj_runtime_destroy(R);
  gj_module_release(M);
  gj_compiler_destroy(C);
  printf("%s\n", Failures ? "FAILED" : "PASS");
  return Failures ? 1 : 0;
}
