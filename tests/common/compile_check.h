/* cjrt tests: compile a StableHLO text program with the CPU backend and check that it compiles,
 * or that it fails naming what it should. Include check.h first. */
#ifndef CJ_TESTS_COMPILE_CHECK_H
#define CJ_TESTS_COMPILE_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/frontend.h"
#include "runtime/backend.h"
#include "runtime/compile.h"

/* Parses (as "prog.mlir"), verifies and compiles `text`; returns the compile error message
 * (malloc'ed) or NULL when it compiled. A parse or verify failure's message starts with
 * "(parse or verify) ". */
static inline char *tc_compile_error(const char *text) {
  cj_module *m = NULL;
  cj_status st = cj_parse_mlir_text(text, strlen(text), "prog.mlir", &m);
  if (!st) st = cj_verify_module(m);
  if (st) {
    char *msg = malloc(strlen(cj_status_message(st)) + 32);
    if (msg) sprintf(msg, "(parse or verify) %s", cj_status_message(st));
    cj_status_free(st);
    cj_module_free(m);
    return msg;
  }
  cj_backend *b = cj_backend_cpu();
  cj_compiled *p = NULL;
  cj_compile_options o = {1, 1, NULL, false, false};
  st = cj_compile_module(b, m, &o, &p); /* consumes m */
  if (!st) {
    cj_compiled_free(p);
    return NULL;
  }
  char *msg = strdup(cj_status_message(st));
  cj_status_free(st);
  return msg;
}

/* `text` must fail to compile (not to parse or verify) with a message containing `where` and
 * `what`; `line` is the test's line, for the report. */
static inline void tc_expect_compile_error_at(const char *text, const char *where,
                                              const char *what, int line) {
  char *e = tc_compile_error(text);
  CHECK_MSG(e != NULL, "line %d: compiled, expected \"%s\"", line, what);
  if (e) {
    CHECK_MSG(strstr(e, where) != NULL, "line %d: \"%s\" does not name \"%s\"", line, e, where);
    CHECK_MSG(strstr(e, what) != NULL, "line %d: \"%s\" does not contain \"%s\"", line, e, what);
    CHECK_MSG(strstr(e, "(parse or verify)") == NULL, "line %d: %s", line, e);
  }
  free(e);
}

static inline void tc_expect_compiles_at(const char *text, int line) {
  char *e = tc_compile_error(text);
  CHECK_MSG(e == NULL, "line %d: %s", line, e ? e : "");
  free(e);
}
#define expect_ok(text) tc_expect_compiles_at((text), __LINE__)

#endif
