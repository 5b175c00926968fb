/*===- fork_child.c - The C API in a child of fork() ---------------------===*\
|*                                                                            *|
|* Part of gridjit's test suite (test/CAPI/fork.test). A process uses a       *|
|* compiler (asynchronous compiles: its pool has threads), a host runtime     *|
|* (its worker pool has threads) and a disk cache, then forks; the child      *|
|* compiles asynchronously and synchronously, launches on the parent's        *|
|* runtime and on a new one, and waits for a compile the parent had not       *|
|* finished at the fork, all under alarm(): a child that hangs dies of        *|
|* SIGALRM, which the parent reports, instead of hanging the test. Then a     *|
|* thread keeps compiling and launching while the main thread forks again     *|
|* and again. `fork_child cuda` does the same with a CUDA runtime (the fake   *|
|* driver): in the child it refuses every call with an error, never hangs.    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#define _POSIX_C_SOURCE 200809L

#include "gridjit-c/gridjit.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capi_report.h"
#include "capi_setup.h"

/* Seconds a child may take: far more than it needs. */
enum { DeadlineSeconds = 120 };

static const char Count[] = "kernel count(hits: ptr<u64>) {\n"
                            "  atomic_add(&hits[0], 1u64);\n"
                            "}\n";


/* A kernel of its own for each \p Tag: a compile nothing cached. */
static char *source(const char *Tag, int N, int Kernels) {
  size_t Size = 256 * (size_t)Kernels + 64;
  char *S = malloc(Size);
  size_t Used = 0;
  for (int K = 0; K < Kernels; ++K)
    Used += (size_t)snprintf(S + Used, Size - Used,
                             "kernel %s_%d_%d(out: ptr<i32>, n: i32) {\n"
                             "  var i: i32 = 0;\n"
                             "  while i < n { out[i] = out[i] * 3 + i; i = i + 1; }\n"
                             "}\n",
                             Tag, N, K);
  return S;
}

/* Launches count on \p Grid blocks of 8 threads on \p LM; 0 when every
   thread counted. */
static int countOn(gj_loaded_module LM, uint32_t Grid, const char *What) {
  uint64_t Hits = 0;
  gj_launch_config C = setupConfig(Grid, 8);
  gj_arg A = setupHostArg(&Hits, GJ_U64);
  gj_status S = gj_launch(LM, "count", &C, &A, 1, sizeof A);
  if (S != GJ_OK || Hits != (uint64_t)Grid * 8) {
    printf("FAIL: %s: %s %s, %llu hits\n", What, gj_status_name(S), gj_last_error(),
           (unsigned long long)Hits);
    return 1;
  }
  return 0;
}

/* Forks; the child runs \p Body under alarm() and exits with what it
   returns. Returns the child's exit status, or 128 + the signal that
   ended it. */
static int inChild(int (*Body)(void *), void *Arg) {
  fflush(stdout);
  pid_t Pid = fork();
  if (Pid == 0) {
    alarm(DeadlineSeconds);
    int R = Body(Arg);
    fflush(stdout);
    _exit(R);
  }
  int Status = 0;
  if (Pid < 0 || waitpid(Pid, &Status, 0) < 0)
    return -1;
  return WIFEXITED(Status) ? WEXITSTATUS(Status) : 128 + WTERMSIG(Status);
}

/*===-- host --------------------------------------------------------------===*/

struct Host {
  const char *CacheDir;
  gj_compiler C;
  gj_runtime R;
  gj_module M;
  gj_loaded_module LM;
  gj_compile_job Pending; /* submitted just before the fork */
};

static int hostChild(void *P) {
  struct Host *H = P;
  /* Asynchronous compiles on the parent's compiler. */
  gj_compile_job Jobs[4];
  for (int I = 0; I < 4; ++I) {
    char *S = source("child", I, 1);
    MUST(gj_compile_async(H->C, S, strlen(S), "child.kir", NULL, &Jobs[I]));
    free(S);
  }
  int Ok = 0;
  for (int I = 0; I < 4; ++I) {
    gj_module M = NULL;
    Ok += gj_compile_job_wait(Jobs[I], &M) == GJ_OK;
    gj_module_release(M);
    gj_compile_job_destroy(Jobs[I]);
  }
  printf("child: asynchronous compiles: %d of 4\n", Ok);
  /* The source the parent was compiling at the fork, compiled here (its
     key may have been in flight there). */
  char *S = source("pending", 0, 40);
  gj_module M = NULL;
  report("child: the parent's pending source, compiled", gj_compile(H->C, S, strlen(S), "p.kir", NULL, &M));
  gj_module_release(M);
  free(S);
  /* The parent's job: finished before the fork, or abandoned. */
  M = NULL;
  gj_status Pending = gj_compile_job_wait(H->Pending, &M);
  if (Pending == GJ_OK)
    printf("child: the parent's pending job: finished\n");
  else
    printf("child: the parent's pending job: %s: %s\n", gj_status_name(Pending), gj_last_error());
  gj_module_release(M);
  gj_compile_job_destroy(H->Pending);
  /* Launches on the parent's runtime and on one of the child's own. */
  int Bad = countOn(H->LM, 4096, "the parent's runtime");
  gj_runtime Own = setupRuntime("host", 3);
  gj_loaded_module LM = NULL;
  MUST(gj_runtime_load(Own, H->M, &LM));
  Bad += countOn(LM, 4096, "the child's runtime");
  printf("child: launches: %s\n", Bad ? "wrong" : "right");
  gj_loaded_module_destroy(LM);
  gj_runtime_destroy(Own);
  gj_loaded_module_destroy(H->LM);
  gj_runtime_destroy(H->R);
  gj_module_release(H->M);
  gj_compiler_destroy(H->C);
  printf("child: destroyed everything\n");
  return Bad || Ok != 4 || Failures;
}

/* The stress part: a thread keeps taking the locks the fork handlers
   take (compiles that hit the memory cache, launches) while the main
   thread forks. */
struct Busy {
  struct Host *H;
  volatile int Stop;
  int Errors;
};

static void *busyMain(void *P) {
  struct Busy *B = P;
  while (!B->Stop) {
    gj_module M = NULL;
    if (gj_compile(B->H->C, Count, strlen(Count), "count.kir", NULL, &M) != GJ_OK)
      ++B->Errors;
    gj_module_release(M);
    gj_compile_job J = NULL;
    if (gj_compile_async(B->H->C, Count, strlen(Count), "count.kir", NULL, &J) != GJ_OK ||
        gj_compile_job_wait(J, &M) != GJ_OK)
      ++B->Errors;
    gj_module_release(M);
    gj_compile_job_destroy(J);
    B->Errors += countOn(B->H->LM, 64, "the busy thread");
  }
  return NULL;
}

static int stressChild(void *P) {
  struct Host *H = P;
  gj_compile_job J = NULL;
  gj_module M = NULL;
  if (gj_compile_async(H->C, Count, strlen(Count), "count.kir", NULL, &J) != GJ_OK ||
      gj_compile_job_wait(J, &M) != GJ_OK)
    return 1;
  gj_module_release(M);
  gj_compile_job_destroy(J);
  return countOn(H->LM, 512, "a stress child");
}

static int caseHost(const char *CacheDir) {
  struct Host H;
  memset(&H, 0, sizeof H);
  H.CacheDir = CacheDir;
  H.C = setupCompiler("host", CacheDir, 2);
  /* The compiler's threads start. */
  for (int I = 0; I < 4; ++I) {
    char *S = source("parent", I, 1);
    gj_compile_job J = NULL;
    gj_module M = NULL;
    MUST(gj_compile_async(H.C, S, strlen(S), "parent.kir", NULL, &J));
    MUST(gj_compile_job_wait(J, &M));
    gj_module_release(M);
    gj_compile_job_destroy(J);
    free(S);
  }
  MUST(gj_compile(H.C, Count, strlen(Count), "count.kir", NULL, &H.M));
  /* The runtime's threads start. */
  H.R = setupRuntime("host", 4);
  MUST(gj_runtime_load(H.R, H.M, &H.LM));
  EXPECT(countOn(H.LM, 4096, "the parent") == 0);
  /* A compile that takes a while, submitted just before the fork, behind
     another: the child's copy cannot finish. */
  char *Big = source("pending", 0, 40);
  MUST(gj_compile_async(H.C, Big, strlen(Big), "p.kir", NULL, &H.Pending));
  free(Big);
  int Status = inChild(hostChild, &H);
  printf("host child: exit status %d\n", Status);
  gj_module M = NULL;
  report("parent: the pending job", gj_compile_job_wait(H.Pending, &M));
  gj_module_release(M);
  gj_compile_job_destroy(H.Pending);
  EXPECT(countOn(H.LM, 4096, "the parent, after") == 0);

  struct Busy B = {&H, 0, 0};
  pthread_t T;
  if (pthread_create(&T, NULL, busyMain, &B) != 0) {
    printf("FAIL: no busy thread\n");
    return 1;
  }
  int Failed = 0;
  for (int I = 0; I < 20; ++I) {
    int S = inChild(stressChild, &H);
    if (S != 0) {
      printf("stress child %d: exit status %d\n", I, S);
      ++Failed;
    }
  }
  B.Stop = 1;
  pthread_join(T, NULL);
  printf("stress: 20 children, %d failed; busy thread: %d errors\n", Failed, B.Errors);
  gj_loaded_module_destroy(H.LM);
  gj_runtime_destroy(H.R);
  gj_module_release(H.M);
  gj_compiler_destroy(H.C);
  return Status != 0 || Failed != 0 || B.Errors != 0;
}

/*===-- cuda --------------------------------------------------------------===*/

struct Cuda {
  gj_compiler C;
  gj_runtime R;
  gj_module M;
  gj_loaded_module LM;
  gj_buffer B;
};

static int cudaLaunch(struct Cuda *K) {
  gj_launch_config C = setupConfig(4, 1);
  gj_arg A = setupBufferArg(K->B, GJ_U64);
  return gj_launch(K->LM, "count", &C, &A, 1, sizeof A);
}

static int cudaChild(void *P) {
  struct Cuda *K = P;
  report("child: launch", cudaLaunch(K));
  uint64_t V = 0;
  report("child: write", gj_buffer_write(K->B, 0, &V, sizeof V));
  report("child: synchronize", gj_runtime_synchronize(K->R));
  gj_runtime_options O;
  gj_runtime_options_init(&O, sizeof O);
  O.target = "cuda";
  O.use_cubin_cache = 0;
  gj_runtime R = NULL;
  report("child: a new CUDA runtime", gj_runtime_create(&O, &R));
  printf("child: CUDA devices: %d\n", gj_cuda_device_count());
  /* The host still works here. */
  gj_compiler C = setupCompiler("host", NULL, 1);
  gj_module M = NULL;
  MUST(gj_compile(C, Count, strlen(Count), "count.kir", NULL, &M));
  gj_runtime H = setupRuntime("host", 2);
  gj_loaded_module LM = NULL;
  MUST(gj_runtime_load(H, M, &LM));
  printf("child: host launch: %s\n", countOn(LM, 256, "the child's host runtime") ? "wrong" : "right");
  gj_loaded_module_destroy(LM);
  gj_runtime_destroy(H);
  gj_module_release(M);
  gj_compiler_destroy(C);
  /* Destroying the parent's CUDA objects calls nothing of the driver. */
  gj_buffer_free(K->B);
  gj_loaded_module_destroy(K->LM);
  gj_runtime_destroy(K->R);
  printf("child: destroyed everything\n");
  return 0;
}

static int caseCuda(void) {
  struct Cuda K;
  memset(&K, 0, sizeof K);
  K.C = setupCompiler("nvptx:sm_80", NULL, 1);
  MUST(gj_compile(K.C, Count, strlen(Count), "count.kir", NULL, &K.M));
  K.R = setupRuntime("cuda", 0);
  MUST(gj_runtime_load(K.R, K.M, &K.LM));
  MUST(gj_buffer_alloc(K.R, 8, &K.B));
  report("parent: launch", cudaLaunch(&K));
  int Status = inChild(cudaChild, &K);
  printf("cuda child: exit status %d\n", Status);
  report("parent: launch after", cudaLaunch(&K));
  report("parent: synchronize", gj_runtime_synchronize(K.R));
  gj_buffer_free(K.B);
  gj_loaded_module_destroy(K.LM);
  gj_runtime_destroy(K.R);
  gj_module_release(K.M);
  gj_compiler_destroy(K.C);
  return Status != 0;
}

int main(int Argc, char **Argv) {
  int R = Argc > 2 && strcmp(Argv[1], "host") == 0 ? caseHost(Argv[2])
          : Argc > 1 && strcmp(Argv[1], "cuda") == 0 ? caseCuda()
                                                     : 2;
  if (R || Failures)
    return 1;
  printf("PASS\n");
  return 0;
}
