#include "base/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cj_status_s {
  cj_code code;
  int is_static;
  char *message;
};

static struct cj_status_s oom_status = {CJ_RESOURCE_EXHAUSTED, 1, "out of memory"};

cj_status cj_status_makev(cj_code code, const char *fmt, va_list ap) {
  if (code == CJ_OK) return NULL;
  struct cj_status_s *st = malloc(sizeof *st);
  if (!st) return &oom_status;
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) n = 0;
  st->message = malloc((size_t)n + 1);
  if (!st->message) {
    free(st);
    return &oom_status;
  }
  vsnprintf(st->message, (size_t)n + 1, fmt, ap);
  st->code = code;
  st->is_static = 0;
  return st;
}

cj_status cj_status_make(cj_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cj_status st = cj_status_makev(code, fmt, ap);
  va_end(ap);
  return st;
}

cj_status cj_status_annotate(cj_status st, const char *fmt, ...) {
  if (!st || st->is_static) return st;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return st;
  size_t old = strlen(st->message);
  char *msg = malloc((size_t)n + 2 + old + 1);
  if (!msg) return st;
  va_start(ap, fmt);
  vsnprintf(msg, (size_t)n + 1, fmt, ap);
  va_end(ap);
  memcpy(msg + n, ": ", 2);
  memcpy(msg + n + 2, st->message, old + 1);
  free(st->message);
  st->message = msg;
  return st;
}

cj_code cj_status_code(cj_status st) { return st ? st->code : CJ_OK; }
const char *cj_status_message(cj_status st) { return st ? st->message : ""; }

void cj_status_free(cj_status st) {
  if (!st || st->is_static) return;
  free(st->message);
  free(st);
}

cj_status cj_status_copy(cj_status st) {
  if (!st) return NULL;
  if (st->is_static) return st;
  return cj_status_make(st->code, "%s", st->message);
}

const char *cj_code_name(cj_code code) {
  static const char *const names[] = {
      "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
      "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
      "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
      "UNAUTHENTICATED"};
  if ((unsigned)code < sizeof names / sizeof names[0]) return names[code];
  return "UNKNOWN";
}
