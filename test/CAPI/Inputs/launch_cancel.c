/*===- launch_cancel.c - Timeouts and cancellation of launches, from C ---===*\
|*                                                                            *|
|* Part of gridjit's test suite (test/CAPI/launch-cancel.test). A host        *|
|* launch of 2^31 - 1 blocks, which would take minutes to run them all, is    *|
|* stopped between blocks by a token another thread cancels (and by a         *|
|* timeout): gj_launch returns GJ_ERROR_CANCELLED (GJ_ERROR_TIMEOUT) and the  *|
|* runtime goes on. The waits are bounded: a launch that does not stop        *|
|* within a generous deadline is a failure, never a hang, and no time is      *|
|* measured. `launch_cancel cuda` checks that the CUDA runtime (the fake      *|
|* driver) refuses both, launching nothing.                                   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#define _POSIX_C_SOURCE 200809L

#include "gridjit-c/gridjit.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capi_report.h"
#include "capi_setup.h"

static const char Source[] = "kernel count(hits: ptr<u64>) {\n"
                             "  atomic_add(&hits[0], 1u64);\n"
                             "}\n"
                             "kernel phases(out: ptr<i32>) {\n"
                             "  out[block_idx.x] = 1;\n"
                             "  grid_sync();\n"
                             "}\n";

/* How long a launch may take to stop once asked: far more than it needs on
   any machine (it stops after the blocks already running), far less than
   running every block would take. */
enum { DeadlineSeconds = 120 };

/* The kernels above, for \p Target's runtime; the compiler, the module
   and the runtime into \p C, \p M, \p R. */
static gj_loaded_module load(const char *Target, gj_compiler *C, gj_module *M, gj_runtime *R) {
  *C = setupCompiler(strcmp(Target, "cuda") == 0 ? "nvptx:sm_80" : "host", NULL, 0);
  MUST(gj_compile(*C, Source, strlen(Source), "cancel.kir", NULL, M));
  *R = setupRuntime(Target, 2);
  gj_loaded_module LM = NULL;
  MUST(gj_runtime_load(*R, *M, &LM));
  return LM;
}

static gj_arg hostArg(void *P) { return setupHostArg(P, GJ_ANY); }

static gj_launch_config config1D(uint32_t Grid) { return setupConfig(Grid, 1); }

static uint64_t hits(const uint64_t *H) { return __atomic_load_n(H, __ATOMIC_RELAXED); }

/* The launch, on a thread of its own so that the main thread can wait for
   it with a deadline. */
struct Launch {
  gj_loaded_module LM;
  gj_launch_config Config;
  gj_arg Arg;
  gj_status Status;
  char Message[1024];
  int Done;
  pthread_mutex_t Lock;
  pthread_cond_t Finished;
};

static void *launchMain(void *P) {
  struct Launch *L = P;
  gj_status S = gj_launch(L->LM, "count", &L->Config, &L->Arg, 1, sizeof(gj_arg));
  pthread_mutex_lock(&L->Lock);
  L->Status = S;
  snprintf(L->Message, sizeof L->Message, "%s", S == GJ_OK ? "" : gj_last_error());
  L->Done = 1;
  pthread_cond_signal(&L->Finished);
  pthread_mutex_unlock(&L->Lock);
  return NULL;
}

/* Waits for \p L until the deadline; 0 if it did not finish by then. */
static int waitFor(struct Launch *L) {
  struct timespec Until;
  clock_gettime(CLOCK_REALTIME, &Until);
  Until.tv_sec += DeadlineSeconds;
  pthread_mutex_lock(&L->Lock);
  int Err = 0;
  while (!L->Done && Err != ETIMEDOUT)
    Err = pthread_cond_timedwait(&L->Finished, &L->Lock, &Until);
  int Done = L->Done;
  pthread_mutex_unlock(&L->Lock);
  return Done;
}

/* Waits until the kernel has run at least one block (bounded). */
static int started(const uint64_t *H) {
  struct timespec Step = {0, 1000000};
  for (long I = 0; I < DeadlineSeconds * 1000L; ++I) {
    if (hits(H) > 0)
      return 1;
    nanosleep(&Step, NULL);
  }
  return 0;
}

static int caseHost(void) {
  gj_compiler C;
  gj_module M;
  gj_runtime R;
  gj_loaded_module LM = load("host", &C, &M, &R);
  uint64_t Hits = 0;

  /* A token: created not cancelled, cancelled by another thread while the
     launch runs. */
  gj_cancel_token T = NULL;
  report("create", gj_cancel_token_create(&T));
  printf("cancelled at first: %d\n", gj_cancel_token_is_cancelled(T));
  struct Launch L;
  memset(&L, 0, sizeof L);
  pthread_mutex_init(&L.Lock, NULL);
  pthread_cond_init(&L.Finished, NULL);
  L.LM = LM;
  L.Config = config1D(0x7fffffff);
  L.Config.cancel = T;
  L.Arg = hostArg(&Hits);
  pthread_t Th;
  if (pthread_create(&Th, NULL, launchMain, &L) != 0) {
    printf("FAIL: cannot start the launching thread\n");
    return 1;
  }
  if (!started(&Hits)) {
    printf("FAIL: the kernel did not start within %d s\n", DeadlineSeconds);
    exit(1);
  }
  report("cancel", gj_cancel_token_cancel(T));
  if (!waitFor(&L)) {
    printf("FAIL: the cancelled launch did not return within %d s\n", DeadlineSeconds);
    exit(1); /* the launch cannot be stopped: leave it to the exit */
  }
  pthread_join(Th, NULL);
  printf("cancelled launch: %s: %s\n", gj_status_name(L.Status), L.Message);
  uint64_t Ran = hits(&Hits);
  char Want[128];
  snprintf(Want, sizeof Want, "stopped after %llu of 2147483647 blocks", (unsigned long long)Ran);
  EXPECT(strstr(L.Message, Want) != NULL);
  EXPECT(Ran > 0 && Ran < 0x7fffffff);
  printf("cancelled now: %d\n", gj_cancel_token_is_cancelled(T));

  /* The token stays cancelled: a launch that names it runs no block, a
     cooperative one neither. */
  Hits = 0;
  gj_launch_config Again = config1D(64);
  Again.cancel = T;
  gj_arg A = hostArg(&Hits);
  report("launch with a cancelled token", gj_launch(LM, "count", &Again, &A, 1, sizeof A));
  printf("blocks run: %llu\n", (unsigned long long)Hits);
  int32_t Out[8] = {0};
  gj_arg O = hostArg(Out);
  gj_launch_config Coop = config1D(8);
  Coop.cancel = T;
  report("cooperative launch with a cancelled token", gj_launch(LM, "phases", &Coop, &O, 1, sizeof O));
  EXPECT(Out[0] == 0);

  /* A timeout: its own status, told apart from a cancel. */
  Hits = 0;
  gj_launch_config Timed = config1D(0x7fffffff);
  Timed.timeout_ms = 1;
  gj_status S = gj_launch(LM, "count", &Timed, &A, 1, sizeof A);
  printf("timed out: %s\n", gj_status_name(S));
  snprintf(Want, sizeof Want,
           "kernel 'count' did not finish within 1 ms (LaunchOptions::TimeoutMilliseconds): "
           "stopped after %llu of 2147483647 blocks",
           (unsigned long long)hits(&Hits));
  EXPECT(strstr(gj_last_error(), Want) == gj_last_error());

  /* A fresh token and a long timeout change nothing. */
  gj_cancel_token Fresh = NULL;
  MUST(gj_cancel_token_create(&Fresh));
  Hits = 0;
  Again.cancel = Fresh;
  Again.timeout_ms = 3600000;
  report("launch with a fresh token", gj_launch(LM, "count", &Again, &A, 1, sizeof A));
  printf("blocks run: %llu\n", (unsigned long long)Hits);
  Coop.cancel = Fresh;
  report("cooperative launch with a fresh token", gj_launch(LM, "phases", &Coop, &O, 1, sizeof O));
  EXPECT(Out[0] == 1 && Out[7] == 1);

  report("cancel NULL", gj_cancel_token_cancel(NULL));
  report("create into NULL", gj_cancel_token_create(NULL));
  printf("NULL is cancelled: %d\n", gj_cancel_token_is_cancelled(NULL));
  gj_cancel_token_destroy(NULL);
  gj_cancel_token_destroy(Fresh);
  gj_cancel_token_destroy(T);
  pthread_cond_destroy(&L.Finished);
  pthread_mutex_destroy(&L.Lock);
  gj_loaded_module_destroy(LM);
  gj_runtime_destroy(R);
  gj_module_release(M);
  gj_compiler_destroy(C);
  return 0;
}

/* The CUDA runtime, on the fake driver: a GPU kernel cannot be stopped
   once queued, so both are refused before anything is launched. */
static int caseCuda(void) {
  gj_compiler C;
  gj_module M;
  gj_runtime R;
  gj_loaded_module LM = load("cuda", &C, &M, &R);
  gj_buffer B = NULL;
  MUST(gj_buffer_alloc(R, 8, &B));
  gj_arg A = setupBufferArg(B, GJ_U64);
  gj_launch_config LC = config1D(4);
  LC.timeout_ms = 10;
  report("cuda timeout", gj_launch(LM, "count", &LC, &A, 1, sizeof A));
  gj_cancel_token T = NULL;
  MUST(gj_cancel_token_create(&T));
  LC.timeout_ms = 0;
  LC.cancel = T;
  report("cuda cancel", gj_launch(LM, "count", &LC, &A, 1, sizeof A));
  LC.cancel = NULL;
  report("cuda plain", gj_launch(LM, "count", &LC, &A, 1, sizeof A));
  gj_cancel_token_destroy(T);
  gj_buffer_free(B);
  gj_loaded_module_destroy(LM);
  gj_runtime_destroy(R);
  gj_module_release(M);
  gj_compiler_destroy(C);
  return 0;
}

int main(int Argc, char **Argv) {
  int R = Argc > 1 && strcmp(Argv[1], "cuda") == 0 ? caseCuda() : caseHost();
  if (R || Failures)
    return 1;
  printf("PASS\n");
  return 0;
}
