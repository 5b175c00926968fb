/*===- capi_objects.h - What the C API's test programs make ---*- C -*-===*\
|*                                                                            *|
|* Part of gridjit's test suite: the compilers, runtimes, arguments and      *|
|* launch configurations that capi-test.c and sizes.c (test/CAPI) make, the  *|
|* same way in both. A program includes it after gridjit-c/gridjit.h (of     *|
|* this version), <stdint.h>, <stdlib.h>, <string.h> and capi_report.h.      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef GRIDJIT_TEST_CAPI_OBJECTS_H
#define GRIDJIT_TEST_CAPI_OBJECTS_H

/* A compiler of \p Targets (NULL: the default) without a disk cache. */
static inline gj_compiler newCompiler(const char *Targets) {
  gj_compiler_options O;
  gj_compiler_options_init(&O, sizeof O);
  O.targets = Targets;
  O.use_disk_cache = 0;
  gj_compiler C = NULL;
  MUST(gj_compiler_create(&O, &C));
  return C;
}

/* A host runtime of \p Threads threads (0: one per CPU). */
static inline gj_runtime newHostRuntime(unsigned Threads) {
  gj_runtime_options O;
  gj_runtime_options_init(&O, sizeof O);
  O.threads = Threads;
  gj_runtime R = NULL;
  MUST(gj_runtime_create(&O, &R));
  return R;
}

/* Kernel arguments: scalars of each union member, pointers of each kind. */
static inline gj_arg scalarI(gj_scalar_type T, int64_t V) {
  gj_arg A;
  memset(&A, 0, sizeof(A));
  A.kind = GJ_ARG_SCALAR;
  A.type = T;
  A.value.i = V;
  return A;
}
static inline gj_arg scalarU(gj_scalar_type T, uint64_t V) {
  gj_arg A = scalarI(T, 0);
  A.value.u = V;
  return A;
}
static inline gj_arg scalarF32(float V) {
  gj_arg A = scalarI(GJ_F32, 0);
  A.value.f32 = V;
  return A;
}
static inline gj_arg bufferArg(gj_buffer B, gj_scalar_type Pointee) {
  gj_arg A = scalarI(Pointee, 0);
  A.kind = GJ_ARG_BUFFER;
  A.value.buffer = B;
  return A;
}
static inline gj_arg hostArg(void *P, gj_scalar_type Pointee) {
  gj_arg A = scalarI(Pointee, 0);
  A.kind = GJ_ARG_HOST_POINTER;
  A.value.pointer = P;
  return A;
}
static inline gj_arg deviceArg(uint64_t Addr, gj_scalar_type Pointee) {
  gj_arg A = scalarI(Pointee, 0);
  A.kind = GJ_ARG_DEVICE_POINTER;
  A.value.address = Addr;
  return A;
}

/* \p Grid blocks of \p Block threads. */
static inline gj_launch_config config1D(uint32_t Grid, uint32_t Block) {
  gj_launch_config C;
  gj_launch_config_init(&C, sizeof C);
  C.grid[0] = Grid;
  C.block[0] = Block;
  return C;
}

#endif /* GRIDJIT_TEST_CAPI_OBJECTS_H */
