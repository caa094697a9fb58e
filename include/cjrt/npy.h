/* libcjrt: reading and writing numpy's .npy files (format versions 1.0, 2.0 and 3.0).
 *
 * Element types: every numeric dtype numpy writes ('|b1' bool, '|i1'..'<i8', '|u1'..'<u8',
 * '<f2' '<f4' '<f8', '<c8' '<c16', big-endian '>' variants, byte-swapped on read), and the
 * ml_dtypes extension types as ml_dtypes writes them: numpy records those by size only,
 * bfloat16 as '<V2' and every 1-byte type (float8_*, float6_*, float4_*, int4, int2 ...) as '<V1'
 * (float8_e5m2 as '<f1'). So '<V2' reads as bf16 and '<f1' as f8e5m2 unless a type is given;
 * '<V1' needs the type (the error says so). Other dtypes (strings, objects, records, datetimes,
 * float128) are rejected with their descr in the message.
 * Order: C and Fortran ('fortran_order': True) files are read; the array is always returned in
 * C (row-major) order. Writing is C order unless asked for Fortran.
 *
 * Ownership: read functions fill an owned cjrt_array (cjrt_array_free); write functions only read
 * the array; cjrt_npy_write_mem hands out an owned buffer (cjrt_free).
 */
#ifndef CJRT_NPY_H
#define CJRT_NPY_H

#include "cjrt/array.h"

#ifdef __cplusplus
extern "C" {
#endif

/* `type`: CJRT_INVALID to take the file's type; else the element type the data holds (required
 * for '<V1' files; for other files it must agree in size with the file's and, for numeric
 * descrs, be the same type). `what` names the source in errors (a path; NULL: "npy"). */
CJRT_API cjrt_error *cjrt_npy_read_mem(const void *bytes, size_t size, cjrt_dtype type,
                                       const char *what, cjrt_array *out);
CJRT_API cjrt_error *cjrt_npy_read_file(const char *path, cjrt_dtype type, cjrt_array *out);

/* The descr numpy would read for a dtype ("<f4", "|b1", "<V2" for bf16, "<V1" for other
 * ml_dtypes types); NULL for TOKEN/INVALID. */
CJRT_API const char *cjrt_npy_descr(cjrt_dtype dtype);
CJRT_API cjrt_error *cjrt_npy_write_mem(const cjrt_array *a, bool fortran_order, void **out_bytes,
                                        size_t *out_size);
CJRT_API cjrt_error *cjrt_npy_write_file(const char *path, const cjrt_array *a,
                                         bool fortran_order);

#ifdef __cplusplus
}
#endif

#endif
