/* Test helpers: compile a StableHLO text program with the CPU backend and run it. The checked
 * forms (tu_compile_ok, tu_run_ok) count a failure through check.h's CHECK_MSG. */
#ifndef CJ_TESTS_PROG_UTIL_H
#define CJ_TESTS_PROG_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "base/threadpool.h"
#include "frontend/frontend.h"
#include "runtime/backend.h"
#include "runtime/compile.h"

static cj_threadpool *tu_pool(void) {
  static cj_threadpool *p;
  if (!p) {
    cj_status st = NULL;
    p = cj_pool_create(0, &st);
    cj_status_free(st);
  }
  return p;
}

/* Compiles the module m (consumed) with the CPU backend and the tests' options (one thread). */
static inline CJ_MUST_USE cj_status tu_compile_module(cj_module *m, cj_compiled **p) {
  cj_compile_options o = {1, 1, NULL, false, false};
  return cj_compile_module(cj_backend_cpu(), m, &o, p);
}

/* Compiles `text`; on failure returns NULL and *err gets the status (caller frees). */
static cj_compiled *tu_compile_named(const char *text, const char *file, cj_status *err) {
  cj_module *m = NULL;
  cj_status st = cj_parse_mlir_text(text, strlen(text), file, &m);
  if (!st) st = cj_verify_module(m);
  if (st) {
    cj_module_free(m);
    *err = st;
    return NULL;
  }
  cj_compiled *p = NULL;
  *err = tu_compile_module(m, &p);
  return p;
}

/* tu_compile_named for a program that is no file of its own: positions name "test.mlir". */
static cj_compiled *tu_compile(const char *text, cj_status *err) {
  return tu_compile_named(text, "test.mlir", err);
}

static const cj_program_info *tu_info(cj_compiled *p) { return &p->info; }

/* Runs p with args; results are malloc'ed into res[j] (caller frees). Returns the status. */
static CJ_MUST_USE cj_status tu_run(cj_compiled *p, void *const *args, void **res, cj_threadpool *pool) {
  const cj_program_info *in = tu_info(p);
  for (int32_t j = 0; j < in->num_results; j++) {
    if (!res[j]) res[j] = calloc(1, in->results[j].nbytes + 64);
  }
  cj_exec_args a;
  memset(&a, 0, sizeof a);
  a.args = args;
  a.results = res;
  a.pool = pool;
  return cj_backend_cpu()->vt->execute(cj_backend_cpu(), p->program, &a);
}

static void tu_free(cj_compiled *p) { cj_compiled_free(p); }

/* tu_compile for a program that must compile: a failure is a CHECK failure naming `what` and
 * the status (then NULL). */
static inline cj_compiled *tu_compile_ok(const char *what, const char *text) {
  cj_status err = NULL;
  cj_compiled *p = tu_compile(text, &err);
  CHECK_MSG(p != NULL, "%s: %s", what, cj_status_message(err));
  cj_status_free(err);
  return p;
}

/* tu_run that must succeed: a failure is a CHECK failure naming `what` and the status.
 * Returns whether it ran. */
static inline bool tu_run_ok(const char *what, cj_compiled *p, void *const *args, void **res,
                             cj_threadpool *pool) {
  cj_status st = tu_run(p, args, res, pool);
  bool ok = st == NULL;
  CHECK_MSG(ok, "%s: %s", what, cj_status_message(st));
  cj_status_free(st);
  return ok;
}

/* the next 16 bits of the linear congruential sequence in *s (the tests' input data) */
static inline uint32_t tu_rand16(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return (*s >> 8) & 0xffff;
}

/* a value in [-0.5, 0.5) from tu_rand16 */
static inline float tu_frand(uint32_t *s) { return (float)tu_rand16(s) / 65536.0f - 0.5f; }

/* Compiles and runs a program without arguments with one result, compares the result bytes.
 * Returns 1 on match. */
static int tu_expect_bytes(const char *what, const char *text, const void *expect, size_t n) {
  cj_status err = NULL;
  cj_compiled *p = tu_compile(text, &err);
  if (!p) {
    fprintf(stderr, "%s: compile failed: %s\n", what, cj_status_message(err));
    cj_status_free(err);
    return 0;
  }
  void *res[4] = {0};
  cj_status st = tu_run(p, NULL, res, tu_pool());
  int ok = 1;
  if (st) {
    fprintf(stderr, "%s: execute failed: %s\n", what, cj_status_message(st));
    cj_status_free(st);
    ok = 0;
  } else if (memcmp(res[0], expect, n) != 0) {
    fprintf(stderr, "%s: result differs:", what);
    for (size_t i = 0; i < n; i++)
      fprintf(stderr, " %02x/%02x", ((unsigned char *)res[0])[i], ((const unsigned char *)expect)[i]);
    fprintf(stderr, " (got/expected bytes)\n");
    ok = 0;
  }
  for (int j = 0; j < 4; j++) free(res[j]);
  tu_free(p);
  return ok;
}

#endif
