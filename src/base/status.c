#include "base/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cj_status_s {
  cj_code code;
  int is_static;
  char *message;
  const char *file; /* string literals (__FILE__, __func__): never freed */
  const char *func;
  int line;
  cj_status cause; /* the wrapped status, owned; NULL if none */
};

static struct cj_status_s oom_status = {CJ_RESOURCE_EXHAUSTED, 1, "out of memory", "", "", 0, NULL};

/* A status owning `message` (malloc'ed) and `cause`; on failure frees both. */
static CJ_MUST_USE cj_status status_new(const char *file, int line, const char *func, cj_code code,
                            char *message, cj_status cause) {
  struct cj_status_s *st = message ? malloc(sizeof *st) : NULL;
  if (!st) {
    free(message);
    cj_status_free(cause);
    return &oom_status;
  }
  st->code = code;
  st->is_static = 0;
  st->message = message;
  st->file = file ? file : "";
  st->func = func ? func : "";
  st->line = line;
  st->cause = cause;
  return st;
}

/* vsnprintf into a new buffer with `extra` spare bytes after the text; NULL if out of memory. */
static char *vformat(const char *fmt, va_list ap, size_t extra, int *len) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) n = 0;
  char *buf = malloc((size_t)n + extra + 1);
  if (!buf) return NULL;
  vsnprintf(buf, (size_t)n + 1, fmt, ap);
  *len = n;
  return buf;
}

cj_status cj_status_makev_at(const char *file, int line, const char *func, cj_code code,
                             const char *fmt, va_list ap) {
  if (code == CJ_OK) return NULL;
  int n;
  return status_new(file, line, func, code, vformat(fmt, ap, 0, &n), NULL);
}

cj_status cj_status_make_at(const char *file, int line, const char *func, cj_code code,
                            const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cj_status st = cj_status_makev_at(file, line, func, code, fmt, ap);
  va_end(ap);
  return st;
}

cj_status cj_status_wrap_at(const char *file, int line, const char *func, cj_status st,
                            cj_code code, const char *fmt, ...) {
  /* out of memory stays out of memory: wrapping it would need memory */
  if (!st || st->is_static) return st;
  size_t old = strlen(st->message);
  va_list ap;
  va_start(ap, fmt);
  int n = 0;
  char *msg = vformat(fmt, ap, 2 + old, &n);
  va_end(ap);
  if (msg) {
    memcpy(msg + n, ": ", 2);
    memcpy(msg + n + 2, st->message, old + 1);
  }
  return status_new(file, line, func, code == CJ_OK ? st->code : code, msg, st);
}

cj_code cj_status_code(cj_status st) { return st ? st->code : CJ_OK; }
const char *cj_status_message(cj_status st) { return st ? st->message : ""; }

void cj_status_free(cj_status st) {
  while (st && !st->is_static) {
    cj_status cause = st->cause;
    free(st->message);
    free(st);
    st = cause;
  }
}

cj_status cj_status_copy(cj_status st) {
  if (!st) return NULL;
  if (st->is_static) return st;
  cj_status cause = cj_status_copy(st->cause);
  if (cause && cause->is_static && !st->cause->is_static) {
    cj_status_free(cause);
    return &oom_status;
  }
  size_t n = strlen(st->message);
  char *msg = malloc(n + 1);
  if (msg) memcpy(msg, st->message, n + 1);
  return status_new(st->file, st->line, st->func, st->code, msg, cause);
}

const char *cj_status_file(cj_status st) { return st ? st->file : ""; }
int cj_status_line(cj_status st) { return st ? st->line : 0; }
const char *cj_status_func(cj_status st) { return st ? st->func : ""; }
cj_status cj_status_cause(cj_status st) { return st ? st->cause : NULL; }

size_t cj_status_where(cj_status st, char *buf, size_t cap) {
  size_t need = 0;
  if (cap) buf[0] = 0;
  for (; st && !st->is_static; st = st->cause) {
    char one[512];
    int n = snprintf(one, sizeof one, "%s%s:%d (%s)", need ? " <- " : "", st->file, st->line,
                     st->func);
    if (n < 0) break;
    if ((size_t)n >= sizeof one) n = (int)sizeof one - 1;
    if (cap && need < cap - 1) {
      size_t room = cap - 1 - need, k = (size_t)n < room ? (size_t)n : room;
      memcpy(buf + need, one, k);
      buf[need + k] = 0;
    }
    need += (size_t)n;
  }
  return need;
}

int cj_status_locations_wanted(void) {
  const char *v = getenv("CJRT_ERROR_LOCATIONS");
  return v && v[0] && strcmp(v, "0") != 0;
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
