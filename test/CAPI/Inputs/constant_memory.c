/*===- constant_memory.c - Constant memory through the C API --------------===*\
|*                                                                            *|
|* Part of gridjit's test suite (test/CAPI/constant-memory.test). A module   *|
|* with constant memory: gj_module_constant describes it, a kernel reads     *|
|* zeros before gj_loaded_module_set_constant and the set values after,      *|
|* another load of the module has its own contents, and a wrong size, an     *|
|* unknown name and NULLs are errors of their kinds. Prints "what: STATUS"   *|
|* lines for FileCheck and "FAIL: ..." for a wrong result.                   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "gridjit-c/gridjit.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_report.h"
#include "capi_objects.h"

static const char Source[] = "constant SCALE: [f32; 4];\n"
                             "constant SHIFT: [[i32; 2]; 2];\n"
                             "kernel k(out: ptr<f32>) {\n"
                             "  let i = thread_idx.x;\n"
                             "  out[i] = SCALE[i] * 2.0 + SHIFT[i / 2][i % 2] as f32;\n"
                             "}\n";

/* Runs k over 4 threads into Out. */
static void run(gj_loaded_module LM, float Out[4]) {
  gj_launch_config C;
  gj_launch_config_init(&C, sizeof C);
  C.block[0] = 4;
  memset(Out, 0xff, 4 * sizeof(float));
  gj_arg A = hostArg(Out, GJ_F32);
  MUST(gj_launch(LM, "k", &C, &A, 1, sizeof A));
}

int main(void) {
  gj_compiler C = newCompiler("host");
  gj_module M = NULL;
  MUST(gj_compile(C, Source, sizeof Source - 1, "constant.kir", "host", &M));

  EXPECT(gj_module_constant_count(M) == 2);
  EXPECT(gj_module_constant_count(NULL) == 0);
  const char *Name = NULL;
  int32_t Elem = -1;
  uint64_t Bytes = 0;
  MUST(gj_module_constant(M, 0, &Name, &Elem, &Bytes));
  printf("constant 0: %s %s %llu\n", Name, gj_scalar_type_name((gj_scalar_type)Elem),
         (unsigned long long)Bytes);
  MUST(gj_module_constant(M, 1, &Name, NULL, &Bytes));
  printf("constant 1: %s %llu\n", Name, (unsigned long long)Bytes);
  report("constant 2", gj_module_constant(M, 2, &Name, &Elem, &Bytes));

  gj_runtime R = newHostRuntime(2);
  gj_loaded_module LM = NULL, Other = NULL;
  MUST(gj_runtime_load(R, M, &LM));
  MUST(gj_runtime_load(R, M, &Other));
  float Out[4];
  run(LM, Out);
  EXPECT(Out[0] == 0 && Out[1] == 0 && Out[2] == 0 && Out[3] == 0);

  const float Scale[4] = {1, 2, 3, 4};
  const int32_t Shift[2][2] = {{10, 20}, {30, 40}};
  report("set SCALE", gj_loaded_module_set_constant(LM, "SCALE", Scale, sizeof Scale));
  report("set SHIFT", gj_loaded_module_set_constant(LM, "SHIFT", Shift, sizeof Shift));
  run(LM, Out);
  EXPECT(Out[0] == 12 && Out[1] == 24 && Out[2] == 36 && Out[3] == 48);
  /* The other load of the same module still reads zeros. */
  run(Other, Out);
  EXPECT(Out[0] == 0 && Out[1] == 0 && Out[2] == 0 && Out[3] == 0);

  report("wrong size", gj_loaded_module_set_constant(LM, "SCALE", Scale, 12));
  report("unknown", gj_loaded_module_set_constant(LM, "SCALES", Scale, sizeof Scale));
  report("null module", gj_loaded_module_set_constant(NULL, "SCALE", Scale, sizeof Scale));
  report("null name", gj_loaded_module_set_constant(LM, NULL, Scale, sizeof Scale));
  report("null data", gj_loaded_module_set_constant(LM, "SCALE", NULL, sizeof Scale));
  /* The failed sets changed nothing. */
  run(LM, Out);
  EXPECT(Out[0] == 12 && Out[1] == 24 && Out[2] == 36 && Out[3] == 48);

  gj_loaded_module_destroy(Other);
  gj_loaded_module_destroy(LM);
  gj_runtime_destroy(R);
  gj_module_release(M);
  gj_compiler_destroy(C);
  printf("%s\n", Failures ? "FAILED" : "PASS");
  return Failures != 0;
}
