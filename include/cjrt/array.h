/* libcjrt: host arrays. A dense row-major array of any cjrt_dtype, literals ("[[1, 2], [3, 4]]"),
 * numpy-style printing, and moving arrays in and out of buffers.
 *
 * Ownership: a cjrt_array filled by a cjrt function owns its `dims` and `data` (malloc'd);
 * release both with cjrt_array_free(), which also zeroes the struct (so freeing twice is safe).
 * An array you fill yourself is yours; pass it to functions that only read it.
 */
#ifndef CJRT_ARRAY_H
#define CJRT_ARRAY_H

#include "cjrt/cjrt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cjrt_array {
  cjrt_dtype dtype;
  size_t rank;
  int64_t *dims;  /* rank entries (NULL when rank is 0) */
  void *data;     /* num_elements * cjrt_dtype_size(dtype) bytes, dense row-major */
  size_t nbytes;
} cjrt_array;

/* Allocates a zero-filled array. Dims must be >= 0. */
CJRT_API cjrt_error *cjrt_array_alloc(cjrt_dtype dtype, const int64_t *dims, size_t rank,
                                      cjrt_array *out);
CJRT_API void cjrt_array_free(cjrt_array *a);
CJRT_API int64_t cjrt_array_num_elements(const cjrt_array *a);

/* Parses a literal of the given dtype: a number ("3", "-1.5e3", "inf", "nan", "0x1f", "true",
 * "1+2j") or nested lists of them ("[[1, 2], [3, 4]]"; commas optional, so numpy's printed form
 * "[[1. 2.] [3. 4.]]" reads back). The shape comes from the nesting and must be rectangular.
 * Values must fit the type: integers in range, no fractions for integer types, 0/1/true/false
 * for pred; floats round to nearest even. Errors name the position. */
CJRT_API cjrt_error *cjrt_array_parse(const char *literal, cjrt_dtype dtype, cjrt_array *out);
/* "LITERAL:TYPE", e.g. "[[1, 2], [3, 4]]:f32" or "3:i32" (the type after the last ':'). */
CJRT_API cjrt_error *cjrt_array_parse_typed(const char *spec, cjrt_array *out);

/* Formats like numpy's str(array): "[[ 1.  2.]\n [ 3. 40.]]" (numpy's default print options:
 * precision 8, line width 75, summarized with "..." beyond 1000 elements); 0-d arrays print as
 * numpy scalars ("3.0", "True", "(1+2j)"); bfloat16/float8/float6/float4 and int4-style types print
 * per element as ml_dtypes' scalars do. *out_text is owned (cjrt_free). */
CJRT_API cjrt_error *cjrt_array_format(const cjrt_array *a, char **out_text);
/* A short type description: "f32[2,3]" (and "f32[]" for a scalar). */
CJRT_API cjrt_error *cjrt_array_describe(cjrt_dtype dtype, const int64_t *dims, size_t rank,
                                         char **out_text);

/* Buffers from and to arrays (the buffer's device is `device`, NULL: the first addressable). */
CJRT_API cjrt_error *cjrt_buffer_from_array(cjrt_client *c, cjrt_device *device,
                                            const cjrt_array *a, cjrt_buffer **out);
CJRT_API cjrt_error *cjrt_buffer_to_array(cjrt_buffer *b, cjrt_array *out);

#ifdef __cplusplus
}
#endif

#endif
