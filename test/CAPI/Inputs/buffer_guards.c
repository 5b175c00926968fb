/*===- buffer_guards.c - Device buffers between guard regions, from C ----===*|
|*                                                                            *|
|* Part of gridjit's tests (test/CAPI/buffer-guards.test). A kernel writes    *|
|* past a gj_buffer of the host runtime: the launch fails with the            *|
|* kernel-fault error and the program goes on, with the buffer's neighbours,  *|
|* the heap and the runtime intact.                                           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "gridjit-c/gridjit.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int Failures = 0;

#define MUST(Call)                                                                                 \
  do {                                                                                             \
    gj_status S_ = (Call);                                                                         \
    if (S_ != GJ_OK) {                                                                             \
      printf("FAIL: line %d: %s: %s: %s\n", __LINE__, #Call, gj_status_name(S_), gj_last_error());  \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static const char Poke[] = "kernel poke(n: i32, buf: ptr<f32>) { buf[n] = 7.0; }\n";

/* buf[n] = 7 in one thread; prints the outcome. */
static gj_status poke(gj_loaded_module LM, gj_buffer B, int32_t N) {
  gj_arg Args[2];
  memset(Args, 0, sizeof(Args));
  Args[0].kind = GJ_ARG_SCALAR;
  Args[0].type = GJ_I32;
  Args[0].value.i = N;
  Args[1].kind = GJ_ARG_BUFFER;
  Args[1].type = GJ_F32;
  Args[1].value.buffer = B;
  gj_launch_config C;
  gj_launch_config_init(&C);
  gj_status S = gj_launch(LM, "poke", &C, Args, 2);
  if (S == GJ_OK)
    printf("poke %d: GJ_OK\n", (int)N);
  else
    printf("poke %d: %s: %s\n", (int)N, gj_status_name(S), gj_last_error());
  return S;
}

static int wrong(gj_buffer B, float Want) {
  float V[100];
  MUST(gj_buffer_read(B, 0, V, sizeof(V)));
  int Bad = 0;
  for (int I = 0; I < 100; ++I)
    Bad += V[I] != Want;
  return Bad;
}

int main(void) {
  gj_compiler_options CO;
  gj_compiler_options_init(&CO);
  CO.use_disk_cache = 0;
  gj_compiler Comp = NULL;
  MUST(gj_compiler_create(&CO, &Comp));
  gj_module M = NULL;
  MUST(gj_compile(Comp, Poke, strlen(Poke), "poke.kir", "host", &M));
  gj_runtime_options RO;
  gj_runtime_options_init(&RO);
  RO.threads = 2;
  gj_runtime R = NULL;
  MUST(gj_runtime_create(&RO, &R));
  gj_loaded_module LM = NULL;
  MUST(gj_runtime_load(R, M, &LM));

  /* 100 floats each: 400 bytes, 448 with the padding to 64 bytes. */
  float Ones[100], Twos[100];
  for (int I = 0; I < 100; ++I) {
    Ones[I] = 1.0f;
    Twos[I] = 2.0f;
  }
  gj_buffer A = NULL, B = NULL, C = NULL;
  MUST(gj_buffer_alloc(R, sizeof(Ones), &A));
  MUST(gj_buffer_alloc(R, sizeof(Twos), &B));
  MUST(gj_buffer_alloc(R, sizeof(Ones), &C));
  MUST(gj_buffer_write(A, 0, Ones, sizeof(Ones)));
  MUST(gj_buffer_write(B, 0, Twos, sizeof(Twos)));
  MUST(gj_buffer_write(C, 0, Ones, sizeof(Ones)));

  /* The padding is the buffer's own; the next element is the guard's. */
  Failures += poke(LM, B, 111) != GJ_OK;
  Failures += poke(LM, B, 112) == GJ_OK;
  Failures += poke(LM, B, -1200) == GJ_OK;

  int Bad = wrong(A, 1.0f) + wrong(B, 2.0f) + wrong(C, 1.0f);
  printf("neighbours: %d wrong\n", Bad);
  Failures += Bad != 0;

  /* The heap still allocates and frees; the runtime still runs. */
  for (int I = 0; I < 2000; ++I) {
    char *P = malloc((size_t)I * 37 + 1);
    if (!P)
      return 1;
    P[(size_t)I * 37] = (char)I;
    free(P);
  }
  gj_buffer D = NULL;
  MUST(gj_buffer_alloc(R, 64, &D));
  Failures += poke(LM, D, 15) != GJ_OK;
  float Last = 0;
  MUST(gj_buffer_read(D, 15 * sizeof(float), &Last, sizeof(Last)));
  Failures += Last != 7.0f;

  gj_buffer_free(A);
  gj_buffer_free(B);
  gj_buffer_free(C);
  gj_buffer_free(D);
  gj_loaded_module_destroy(LM);
  gj_module_release(M);
  gj_runtime_destroy(R);
  gj_compiler_destroy(Comp);
  printf(Failures ? "FAILED\n" : "PASS\n");
  return Failures != 0;
}
