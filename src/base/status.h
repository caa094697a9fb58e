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

/* Where a status was made: every constructor below is a macro that passes the caller's
 * __FILE__/__LINE__/__func__ to its *_at function (CMake maps the source root away, so files read
 * "src/cpu/lower.c"). The location is NOT part of cj_status_message(), which is what users see
 * (PJRT_Error_Message, the cjrt CLI, tests that match texts); read it with cj_status_file/line/
 * func, or the whole chain with cj_status_where(). */
#define CJ_LOC __FILE__, __LINE__, __func__

/* Makes an error status with a printf-style message. Never returns NULL for a non-OK code: if
 * memory is exhausted it returns a static "out of memory" status that cj_status_free ignores. */
#define cj_status_make(code, ...) cj_status_make_at(CJ_LOC, (code), __VA_ARGS__)
#define cj_status_makev(code, fmt, ap) cj_status_makev_at(CJ_LOC, (code), (fmt), (ap))
/* Wraps `st` (consumed; NULL gives NULL) in a new status made here whose message is
 * "context: <st's message>" and whose cause is `st`, kept whole with its own location. The new
 * status has `code`, or st's code when `code` is CJ_OK. */
#define cj_status_wrap(st, code, ...) cj_status_wrap_at(CJ_LOC, (st), (code), __VA_ARGS__)
/* cj_status_wrap keeping the code: prepends "context: " to the message of `st`. */
#define cj_status_annotate(st, ...) cj_status_wrap_at(CJ_LOC, (st), CJ_OK, __VA_ARGS__)
/* Drops a status on purpose (the caller has a reason, said in a comment beside the call).
 * Unlike cj_status_free on a status just returned, it states that an error is discarded. */
#define cj_status_ignore(st) cj_status_free(st)

CJ_MUST_USE cj_status cj_status_make_at(const char *file, int line, const char *func, cj_code code,
                                        const char *fmt, ...) CJ_PRINTF(5, 6);
CJ_MUST_USE cj_status cj_status_makev_at(const char *file, int line, const char *func,
                                         cj_code code, const char *fmt, va_list ap);
CJ_MUST_USE cj_status cj_status_wrap_at(const char *file, int line, const char *func, cj_status st,
                                        cj_code code, const char *fmt, ...) CJ_PRINTF(6, 7);

cj_code cj_status_code(cj_status st);        /* CJ_OK for NULL */
const char *cj_status_message(cj_status st); /* "" for NULL; lives as long as the status */
void cj_status_free(cj_status st);           /* NULL is fine; frees the causes too */
CJ_MUST_USE cj_status cj_status_copy(cj_status st); /* an independent deep copy (NULL for NULL) */
const char *cj_code_name(cj_code code);      /* "INVALID_ARGUMENT", ... */

/* The location a status was made at ("" and 0 for NULL or the static out-of-memory status),
 * and the status it wraps (NULL if none; owned by st). */
const char *cj_status_file(cj_status st);
int cj_status_line(cj_status st);
const char *cj_status_func(cj_status st);
CJ_MUST_USE cj_status cj_status_cause(cj_status st);
/* Writes the chain of locations, outermost first, as "src/a.c:12 (f) <- src/b.c:40 (g)" into
 * buf (always NUL-terminated when cap > 0); returns the length the full text needs. */
size_t cj_status_where(cj_status st, char *buf, size_t cap);
/* True when the CJRT_ERROR_LOCATIONS environment variable is set to a non-empty value other than
 * "0": then the API boundary and the cjrt CLI append " [at <cj_status_where>]" to messages. */
int cj_status_locations_wanted(void);

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
