/* cjrt: status values, the one way a core function reports failure.
 *
 * Ownership: a function that can fail returns a cj_status. NULL means OK. A non-NULL status is
 * owned by the caller, who either returns it upward or frees it with cj_status_free(). Statuses
 * are turned into PJRT_Error only at the API boundary (src/pjrt/).
 *
 * We live inside someone else's process: core code never aborts, exits or asserts on input.
 * Every error names what was wrong and where.
 */
#ifndef CJ_BASE_STATUS_H
#define CJ_BASE_STATUS_H

#include <stdarg.h>
#include <stddef.h>

/* The codes are absl's (and PJRT_Error_Code's) numeric values on purpose, so the API layer can
 * pass them through unchanged. */
typedef enum cj_code {
  CJ_OK = 0,
  CJ_CANCELLED = 1,
  CJ_UNKNOWN = 2,
  CJ_INVALID_ARGUMENT = 3,
  CJ_DEADLINE_EXCEEDED = 4,
  CJ_NOT_FOUND = 5,
  CJ_ALREADY_EXISTS = 6,
  CJ_PERMISSION_DENIED = 7,
  CJ_RESOURCE_EXHAUSTED = 8,
  CJ_FAILED_PRECONDITION = 9,
  CJ_ABORTED = 10,
  CJ_OUT_OF_RANGE = 11,
  CJ_UNIMPLEMENTED = 12,
  CJ_INTERNAL = 13,
  CJ_UNAVAILABLE = 14,
  CJ_DATA_LOSS = 15,
  CJ_UNAUTHENTICATED = 16,
} cj_code;

typedef struct cj_status_s *cj_status; /* NULL = OK */

#if defined(__GNUC__)
#define CJ_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define CJ_MUST_USE __attribute__((warn_unused_result))
#else
#define CJ_PRINTF(a, b)
#define CJ_MUST_USE
#endif

/* Makes an error status with a printf-style message. Never returns NULL for a non-OK code: if
 * memory is exhausted it returns a static "out of memory" status that cj_status_free ignores. */
cj_status cj_status_make(cj_code code, const char *fmt, ...) CJ_PRINTF(2, 3);
cj_status cj_status_makev(cj_code code, const char *fmt, va_list ap);
/* Prepends "context: " to the message of `st` (which it consumes and returns). */
cj_status cj_status_annotate(cj_status st, const char *fmt, ...) CJ_PRINTF(2, 3);

cj_code cj_status_code(cj_status st);        /* CJ_OK for NULL */
const char *cj_status_message(cj_status st); /* "" for NULL; lives as long as the status */
void cj_status_free(cj_status st);           /* NULL is fine */
cj_status cj_status_copy(cj_status st);      /* an independent copy (NULL for NULL) */
const char *cj_code_name(cj_code code);      /* "INVALID_ARGUMENT", ... */

#define CJ_RETURN_IF_ERROR(expr)          \
  do {                                    \
    cj_status cj_st__ = (expr);           \
    if (cj_st__ != NULL) return cj_st__;  \
  } while (0)

/* Convenience constructors. */
#define cj_invalid(...) cj_status_make(CJ_INVALID_ARGUMENT, __VA_ARGS__)
#define cj_unimplemented(...) cj_status_make(CJ_UNIMPLEMENTED, __VA_ARGS__)
#define cj_internal(...) cj_status_make(CJ_INTERNAL, __VA_ARGS__)
#define cj_oom() cj_status_make(CJ_RESOURCE_EXHAUSTED, "out of memory")

#endif
