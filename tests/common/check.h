/* cjrt tests: a minimal assertion helper. Each CHECK that fails prints where and why and counts;
 * a test's main returns check_report() (0 only if every check held). */
#ifndef CJ_TESTS_CHECK_H
#define CJ_TESTS_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_failures = 0;
static int check_count = 0;

#define CHECK(cond)                                                          \
  do {                                                                       \
    check_count++;                                                           \
    if (!(cond)) {                                                           \
      check_failures++;                                                      \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                        \
  } while (0)

#define CHECK_MSG(cond, ...)                                                 \
  do {                                                                       \
    check_count++;                                                           \
    if (!(cond)) {                                                           \
      check_failures++;                                                      \
      fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                          \
      fprintf(stderr, "\n");                                                 \
    }                                                                        \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                                  \
  do {                                                                                      \
    long long a_ = (long long)(a), b_ = (long long)(b);                                     \
    CHECK_MSG(a_ == b_, "%s = %lld, %s = %lld", #a, a_, #b, b_);                            \
  } while (0)

#define CHECK_EQ_STR(a, b)                                                                  \
  do {                                                                                      \
    const char *a_ = (a), *b_ = (b);                                                        \
    CHECK_MSG(a_ && b_ && strcmp(a_, b_) == 0, "%s = \"%s\", expected \"%s\"", #a,         \
              a_ ? a_ : "(null)", b_ ? b_ : "(null)");                                      \
  } while (0)

#define CHECK_CONTAINS(hay, needle)                                                         \
  do {                                                                                      \
    const char *h_ = (hay), *n_ = (needle);                                                 \
    CHECK_MSG(h_ && strstr(h_, n_), "\"%s\" does not contain \"%s\"", h_ ? h_ : "(null)", n_); \
  } while (0)

/* Checks that a cj_status-returning call succeeds (include base/status.h first); a failure
 * prints the status's message and where it was made, and frees it. */
#define CHECK_OK(expr)                                                                       \
  do {                                                                                       \
    cj_status ok_st_ = (expr);                                                               \
    CHECK_MSG(ok_st_ == NULL, "%s: %s (made at %s:%d)", #expr, cj_status_message(ok_st_),    \
              cj_status_file(ok_st_), cj_status_line(ok_st_));                              \
    cj_status_free(ok_st_);                                                                  \
  } while (0)

static inline int check_report(const char *name) {
  if (check_failures)
    fprintf(stderr, "%s: %d of %d checks failed\n", name, check_failures, check_count);
  else
    printf("%s: all %d checks passed\n", name, check_count);
  return check_failures ? 1 : 0;
}

#endif
