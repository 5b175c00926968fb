/*===- capi_setup.h - Compilers, runtimes and arguments for C tests -*- C -*-===*\
|*                                                                            *|
|* Part of gridjit's test suite: what launch_cancel.c and fork_child.c        *|
|* (test/CAPI) both make. A program includes it after capi_report.h and       *|
|* <string.h>.                                                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef GRIDJIT_TEST_CAPI_SETUP_H
#define GRIDJIT_TEST_CAPI_SETUP_H

/* A compiler for \p Targets (NULL: host) with \p Threads for asynchronous
   compiles, its disk cache in \p CacheDir (NULL: none). */
static gj_compiler setupCompiler(const char *Targets, const char *CacheDir, uint32_t Threads) {
  gj_compiler_options O;
  gj_compiler_options_init(&O, sizeof O);
  O.targets = Targets;
  O.cache_dir = CacheDir;
  O.use_disk_cache = CacheDir != NULL;
  O.threads = Threads;
  gj_compiler C = NULL;
  MUST(gj_compiler_create(&O, &C));
  return C;
}

/* A runtime of \p Target ("host", "cuda"; no cubin cache) with \p Threads. */
static gj_runtime setupRuntime(const char *Target, uint32_t Threads) {
  gj_runtime_options O;
  gj_runtime_options_init(&O, sizeof O);
  O.target = Target;
  O.threads = Threads;
  O.use_cubin_cache = 0;
  gj_runtime R = NULL;
  MUST(gj_runtime_create(&O, &R));
  return R;
}

/* A pointer argument: host memory \p P, or buffer \p B, claimed to point
   to \p Type. */
static gj_arg setupHostArg(void *P, gj_scalar_type Type) {
  gj_arg A;
  memset(&A, 0, sizeof A);
  A.kind = GJ_ARG_HOST_POINTER;
  A.type = Type;
  A.value.pointer = P;
  return A;
}
static gj_arg setupBufferArg(gj_buffer B, gj_scalar_type Type) {
  gj_arg A = setupHostArg(NULL, Type);
  A.kind = GJ_ARG_BUFFER;
  A.value.buffer = B;
  return A;
}

/* \p Grid blocks of \p Block threads. */
static gj_launch_config setupConfig(uint32_t Grid, uint32_t Block) {
  gj_launch_config C;
  gj_launch_config_init(&C, sizeof C);
  C.grid[0] = Grid;
  C.block[0] = Block;
  return C;
}

#endif /* GRIDJIT_TEST_CAPI_SETUP_H */
