/*===- capi_report.h - What the C API's test programs print ---*- C -*-===*\
|*                                                                            *|
|* Part of gridjit's test suite: the checks and the reporting that           *|
|* capi-test.c and abi_caller.c (test/CAPI) share. A program includes it     *|
|* after gridjit-c/gridjit.h, <stdio.h> and <stdlib.h>.                      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef GRIDJIT_TEST_CAPI_REPORT_H
#define GRIDJIT_TEST_CAPI_REPORT_H

static int Failures = 0;

#define EXPECT(Cond)                                                                               \
  do {                                                                                             \
    if (!(Cond)) {                                                                                 \
      printf("FAIL: %s:%d: %s\n", __FILE__, __LINE__, #Cond);                                      \
      ++Failures;                                                                                  \
    }                                                                                              \
  } while (0)

/* Prints "WHAT: STATUS: MESSAGE" (the message only for a failure). */
static inline gj_status report(const char *What, gj_status S) {
  if (S == GJ_OK)
    printf("%s: GJ_OK\n", What);
  else
    printf("%s: %s: %s\n", What, gj_status_name(S), gj_last_error());
  return S;
}

/* Stops the case when a call that must succeed fails. */
#define MUST(Call)                                                                                 \
  do {                                                                                             \
    gj_status S_ = (Call);                                                                         \
    if (S_ != GJ_OK) {                                                                             \
      printf("FAIL: %s:%d: %s: %s: %s\n", __FILE__, __LINE__, #Call, gj_status_name(S_),         \
             gj_last_error());                                                                     \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

#endif /* GRIDJIT_TEST_CAPI_REPORT_H */
