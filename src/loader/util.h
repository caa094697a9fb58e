/* libcjrt internals that do not need the PJRT header: errors, a growable string, dtype facts. */
#ifndef CJRT_LOADER_UTIL_H
#define CJRT_LOADER_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cjrt/cjrt.h"

#pragma GCC visibility push(hidden)

cjrt_error *cjrt__errorv(cjrt_code code, const char *fmt, va_list ap);
cjrt_error *cjrt__error(cjrt_code code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prepends "context: " to err's message (consumes and returns err; NULL stays NULL). */
cjrt_error *cjrt__annotate(cjrt_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
cjrt_error *cjrt__oom(void);
#define CJRT_TRY(expr)                       \
  do {                                       \
    cjrt_error *cjrt_e__ = (expr);           \
    if (cjrt_e__) return cjrt_e__;           \
  } while (0)

/* A growable NUL-terminated string. On allocation failure `failed` is set and appends stop. */
typedef struct cjrt_sb {
  char *p;
  size_t len, cap;
  bool failed;
} cjrt_sb;
void cjrt_sb_add(cjrt_sb *sb, const char *s, size_t n);
void cjrt_sb_puts(cjrt_sb *sb, const char *s);
void cjrt_sb_printf(cjrt_sb *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cjrt_sb_spaces(cjrt_sb *sb, size_t n);
/* Hands out the string (owned) or an out-of-memory error; the builder is emptied. */
cjrt_error *cjrt_sb_finish(cjrt_sb *sb, char **out);
void cjrt_sb_free(cjrt_sb *sb);

/* Dtype facts from src/base/dtypes.def (for codes 0..33). */
typedef enum { CJRT__K_INVALID, CJRT__K_BOOL, CJRT__K_SINT, CJRT__K_UINT, CJRT__K_FLOAT,
               CJRT__K_COMPLEX, CJRT__K_TOKEN } cjrt__kind;
cjrt__kind cjrt__dtype_kind(cjrt_dtype dt);
int cjrt__dtype_xla(cjrt_dtype dt); /* its xla::PrimitiveType number, 0 if none */
bool cjrt__dtype_valid_array(cjrt_dtype dt); /* a dtype host arrays can hold (not token/invalid) */
/* Number of elements, or -1 when a dim is negative or the product overflows int64/size_t bytes. */
int64_t cjrt__num_elements(const int64_t *dims, size_t rank, size_t elem_size);

/* Reads a whole file (owned; cjrt_free). A NUL is appended (not counted in *out_size). */
cjrt_error *cjrt__read_file(const char *path, void **out, size_t *out_size);

#pragma GCC visibility pop

#endif
