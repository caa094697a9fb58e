/* libcjrt: errors, strings, small helpers shared by the loader's files. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "loader/util.h"

struct cjrt_error {
  cjrt_code code;
  bool is_static;
  char *message;
};

static cjrt_error oom_error = {CJRT_RESOURCE_EXHAUSTED, true, "out of memory"};

cjrt_error *cjrt__oom(void) { return &oom_error; }

static void sb_vprintf(cjrt_sb *sb, const char *fmt, va_list ap);

cjrt_error *cjrt__errorv(cjrt_code code, const char *fmt, va_list ap) {
  if (code == CJRT_OK) code = CJRT_UNKNOWN; /* an error always carries a failure code */
  cjrt_sb sb = {0};
  sb_vprintf(&sb, fmt, ap);
  char *message;
  if (cjrt_sb_finish(&sb, &message)) return &oom_error;
  cjrt_error *e = malloc(sizeof *e);
  if (!e) {
    free(message);
    return &oom_error;
  }
  *e = (cjrt_error){code, false, message};
  return e;
}

cjrt_error *cjrt__error(cjrt_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cjrt_error *e = cjrt__errorv(code, fmt, ap);
  va_end(ap);
  return e;
}

CJRT_API cjrt_error *cjrt_error_make(cjrt_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cjrt_error *e = cjrt__errorv(code, fmt, ap);
  va_end(ap);
  return e;
}

cjrt_error *cjrt__annotate(cjrt_error *err, const char *fmt, ...) {
  if (!err || err->is_static) return err;
  va_list ap;
  va_start(ap, fmt);
  char prefix[512];
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  size_t a = strlen(prefix), b = strlen(err->message);
  char *m = malloc(a + 2 + b + 1);
  if (!m) return err; /* keep the original message rather than lose it */
  memcpy(m, prefix, a);
  memcpy(m + a, ": ", 2);
  memcpy(m + a + 2, err->message, b + 1);
  free(err->message);
  err->message = m;
  return err;
}

CJRT_API cjrt_code cjrt_error_code(const cjrt_error *err) { return err ? err->code : CJRT_OK; }
CJRT_API const char *cjrt_error_message(const cjrt_error *err) { return err ? err->message : ""; }
CJRT_API void cjrt_error_free(cjrt_error *err) {
  if (!err || err->is_static) return;
  free(err->message);
  free(err);
}

CJRT_API const char *cjrt_code_name(cjrt_code code) {
  static const char *const names[] = {
      "OK",        "CANCELLED",          "UNKNOWN",      "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
      "NOT_FOUND", "ALREADY_EXISTS",     "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
      "FAILED_PRECONDITION", "ABORTED",  "OUT_OF_RANGE", "UNIMPLEMENTED",    "INTERNAL",
      "UNAVAILABLE", "DATA_LOSS",        "UNAUTHENTICATED"};
  if ((int)code < 0 || (size_t)code >= sizeof names / sizeof names[0]) return "UNKNOWN_CODE";
  return names[code];
}

CJRT_API void cjrt_free(void *p) { free(p); }

/* ---- strings ---- */

static bool sb_reserve(cjrt_sb *sb, size_t extra) {
  if (sb->failed) return false;
  if (extra > SIZE_MAX - sb->len - 1 || !cj_grow(&sb->p, &sb->cap, sb->len + extra + 1, 64))
    sb->failed = true;
  return !sb->failed;
}

void cjrt_sb_add(cjrt_sb *sb, const char *s, size_t n) {
  if (!sb_reserve(sb, n)) return;
  memcpy(sb->p + sb->len, s, n);
  sb->len += n;
  sb->p[sb->len] = 0;
}

void cjrt_sb_puts(cjrt_sb *sb, const char *s) { cjrt_sb_add(sb, s, strlen(s)); }

void cjrt_sb_spaces(cjrt_sb *sb, size_t n) {
  if (!sb_reserve(sb, n)) return;
  memset(sb->p + sb->len, ' ', n);
  sb->len += n;
  sb->p[sb->len] = 0;
}

static void sb_vprintf(cjrt_sb *sb, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n >= 0 && sb_reserve(sb, (size_t)n)) {
    vsnprintf(sb->p + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
  }
}

void cjrt_sb_printf(cjrt_sb *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(sb, fmt, ap);
  va_end(ap);
}

cjrt_error *cjrt_sb_finish(cjrt_sb *sb, char **out) {
  *out = NULL;
  if (sb->failed) {
    cjrt_sb_free(sb);
    return cjrt__oom();
  }
  if (!sb->p) {
    sb->p = malloc(1);
    if (!sb->p) return cjrt__oom();
    sb->p[0] = 0;
  }
  *out = sb->p;
  sb->p = NULL;
  sb->len = sb->cap = 0;
  return NULL;
}

void cjrt_sb_free(cjrt_sb *sb) {
  free(sb->p);
  sb->p = NULL;
  sb->len = sb->cap = 0;
  sb->failed = false;
}

int64_t cjrt__num_elements(const int64_t *dims, size_t rank, size_t elem_size) {
  int64_t n = 1;
  for (size_t i = 0; i < rank; i++) {
    if (dims[i] < 0) return -1;
    if (dims[i] != 0 && n > INT64_MAX / dims[i]) return -1;
    n *= dims[i];
  }
  if (elem_size && (uint64_t)n > (uint64_t)(SIZE_MAX / 2) / elem_size) return -1;
  return n;
}

cjrt_error *cjrt__read_file(const char *path, void **out, size_t *out_size) {
  *out = NULL;
  *out_size = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return cjrt__error(CJRT_NOT_FOUND, "cannot open '%s': %s", path, strerror(errno));
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  if (!buf) {
    fclose(f);
    return cjrt__oom();
  }
  for (;;) {
    if (len + 1 >= cap) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        fclose(f);
        return cjrt__oom();
      }
      buf = nb;
      cap *= 2;
    }
    size_t got = fread(buf + len, 1, cap - len - 1, f);
    len += got;
    if (got == 0) break;
  }
  int err = ferror(f);
  fclose(f);
  if (err) {
    free(buf);
    return cjrt__error(CJRT_DATA_LOSS, "error reading '%s'", path);
  }
  buf[len] = 0;
  *out = buf;
  *out_size = len;
  return NULL;
}
