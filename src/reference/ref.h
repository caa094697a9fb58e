/* cjrt reference backend: shared declarations of the interpreter (src/reference/).
 *
 * The reference backend runs the optimized program (one func.func after the compiler passes and
 * late inlining) by walking its ops in order. Every value is a `rv`: a dense row-major host
 * buffer of its tensor type, a tuple of rvs, or a token. Elements are read and written through
 * the generic helpers below: floats of every format as double, integers as int64 (wrapped to
 * the dtype's width on write), complex as double complex, booleans as 0/1. Arithmetic is done in
 * those wide types and rounded once to the result type.
 *
 * Nothing here depends on src/cpu/: this backend is the template a new backend starts from and
 * a second oracle for the CPU kernels.
 */
#ifndef CJ_REFERENCE_REF_H
#define CJ_REFERENCE_REF_H

#include <complex.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/dtype.h"
#include "base/status.h"
#include "ir/ir.h"
#include "runtime/backend.h"

/* glibc's <complex.h> defines CMPLX only for GCC (it tests the GCC version, which clang reports
 * as 4.2); clang has the same builtin, which keeps infinite and NaN parts as they are. */
#ifndef CMPLX
#define CMPLX(x, y) __builtin_complex((double)(x), (double)(y))
#endif

enum { RF_MAX_RANK = 16 };

/* ---------------------------------------------------------------- values */

typedef enum rv_kind { RV_TENSOR, RV_TUPLE, RV_TOKEN } rv_kind;

typedef struct rv {
  rv_kind kind;
  cj_dtype dt;
  int32_t rank;
  int64_t dims[RF_MAX_RANK];
  int64_t n;        /* elements */
  int esize;        /* bytes per element */
  unsigned char *data; /* n * esize bytes (malloc'ed, at least 1 byte) */
  int32_t nmem;     /* tuple members */
  struct rv **mem;
} rv;

/* A new zeroed tensor of static type t (a TENSOR type), of dtype/dims, or a token/tuple. */
CJ_MUST_USE cj_status cj_rv_new_type(const cj_type *t, rv **out);
CJ_MUST_USE cj_status cj_rv_new(cj_dtype dt, int32_t rank, const int64_t *dims, rv **out);
CJ_MUST_USE cj_status cj_rv_clone(const rv *v, rv **out);
void cj_rv_free(rv *v);

/* ---------------------------------------------------------------- elements */

double cj_rf_getf(cj_dtype dt, const void *data, int64_t i);
void cj_rf_setf(cj_dtype dt, void *data, int64_t i, double v);
int64_t cj_rf_geti(cj_dtype dt, const void *data, int64_t i); /* signed: sign-extended; unsigned:
                                                             * zero-extended */
void cj_rf_seti(cj_dtype dt, void *data, int64_t i, int64_t v);
double complex cj_rf_getc(cj_dtype dt, const void *data, int64_t i);
void cj_rf_setc(cj_dtype dt, void *data, int64_t i, double complex v);
/* Wraps an integer to the width of dt (sign- or zero-extending). */
int64_t cj_rf_wrap(cj_dtype dt, int64_t v);

/* One scalar of any dtype. */
typedef struct rs {
  double f;
  int64_t i;
  double complex c;
} rs;
rs cj_rs_get(cj_dtype dt, const void *data, int64_t i);
void cj_rs_set(cj_dtype dt, void *data, int64_t i, rs v);
/* The scalar rounded (or wrapped) to what dt can hold. */
rs cj_rs_round(cj_dtype dt, rs v);
/* Converts a scalar between dtypes (stablehlo.convert semantics). */
rs cj_rs_convert(cj_dtype from, cj_dtype to, rs v);

/* Index helpers: row-major strides and unravel. */
void cj_rf_strides(int32_t rank, const int64_t *dims, int64_t *strides);
void cj_rf_unravel(int64_t i, int32_t rank, const int64_t *dims, int64_t *idx);
/* The row-major position of index idx in dims (cj_rf_unravel's inverse). */
int64_t cj_rf_ravel(int32_t rank, const int64_t *dims, const int64_t *idx);
/* Whether d is one of l[0..n). */
bool cj_rf_in_list(int64_t d, const int64_t *l, int64_t n);

/* ---------------------------------------------------------------- programs and execution */

typedef struct rf_launch rf_launch;

struct cj_program {
  cj_program_info info;
  cj_arena arena;             /* info's arrays */
  cj_module *module;          /* a copy of the optimized entry function's module (owned) */
  cj_op *main;                /* its one function */
  uint32_t nvalues;           /* values numbered 0..nvalues-1 (cj_value.id) */
  char *probe_dir;            /* $CJRT_PROBE_DIR at compile time (interp_probe.c), or NULL */
};

/* One execution (one device's share). */
typedef struct rf_exec {
  const cj_program *prog;
  rv **env;                   /* nvalues slots */
  int32_t replica, partition;
  int32_t nreplicas, npartitions;
  rf_launch *launch;          /* NULL for one device */
  uint64_t coll_seq;          /* collectives this device has joined (meeting keys) */
  rs *senv;                   /* nvalues scalar slots for scalar regions */
  int32_t dev;                /* replica * npartitions + partition */
} rf_exec;

/* interp.c */
CJ_MUST_USE cj_status cj_rf_run_block(rf_exec *x, cj_block *b, rv **args, uint32_t nargs, rv ***results,
                       uint32_t *nresults);
void cj_rf_free_results(rv **res, uint32_t n);
rv *cj_rf_in(rf_exec *x, const cj_op *op, uint32_t i);
/* Scalar regions (reduce bodies, comparators): args are scalars of the block's arg dtypes. */
CJ_MUST_USE cj_status cj_rf_call_scalar(rf_exec *x, cj_block *b, const rs *args, rs *res);
CJ_MUST_USE cj_status cj_rf_number_values(cj_program *p);
bool cj_rf_supports(const cj_op *op, const char **why);

/* interp_ew.c: elementwise ops */
bool cj_rf_is_ew(cj_op_kind k);
bool cj_rf_is_transcendental(cj_op_kind k); /* a REF_EWT row (the cost estimate) */
CJ_MUST_USE cj_status cj_rf_ew(rf_exec *x, cj_op *op, rv **ins, rv **outs); /* every REF_EW* row */
CJ_MUST_USE cj_status cj_rf_ew_scalar(const cj_op *op, const rs *a, rs *r); /* dtypes from op's types */
int cj_rf_compare_total(cj_dtype dt, rs a, rs b); /* -1, 0, 1 in the total order */

/* The functions ref.def's rows name, in the interpreter's files (interp*.c). */
#define REF(OP, fn) CJ_MUST_USE cj_status fn(rf_exec *x, cj_op *op, rv **ins, rv **outs);
#define REF_IF(OP, fn, can) CJ_MUST_USE cj_status fn(rf_exec *x, cj_op *op, rv **ins, rv **outs);
#define REF_BIND(OP, fn) CJ_MUST_USE cj_status fn(rf_exec *x, cj_op *op);
#include "reference/ref.def"

/* launches (interp_coll.c) */
CJ_MUST_USE cj_status cj_rf_launch_new(int32_t nr, int32_t np, rf_launch **out);
void cj_rf_launch_free(rf_launch *l);
void cj_rf_launch_abort(rf_launch *l, cj_status why);

/* compile.c: the backend's `lower` (m, main and opts borrowed) */
CJ_MUST_USE cj_status cj_rf_lower(cj_module *m, cj_op *main, const cj_compile_options *opts, cj_program **out);
void cj_rf_program_free(cj_program *p);
/* copy.c: the entry function `main` of src, deep-copied into a new module */
CJ_MUST_USE cj_status cj_rf_copy_main(const cj_module *src, cj_op *main, cj_module **out_m, cj_op **out_main);

#endif
