/* cjrt: the CPU custom calls JAX emits for platform cpu (jaxlib's `lapack_<t><routine>_ffi`
 * typed-FFI targets), run with LAPACK (private to src/cpu/; implemented in k_lapack.c, routed by
 * cj_lower_custom_call).
 *
 * Targets (t = s, d, c, z: f32, f64, complex64, complex128; batched over leading dimensions):
 * trsm, getrf, geqrf, geqp3, orgqr/ungqr, potrf, gesdd, gesvd, syevd/heevd, gehrd, sytrd/hetrd,
 * gtsv; and tridiagonal_solve_perturbed_ffi (k_tridiag.c). Operands, results and attributes follow jaxlib's kernels (jaxlib/cpu/lapack_kernels.cc):
 * the attributes come from the call's `mhlo.backend_config` dictionary, and the matrices are
 * seen in the layouts the call's operand_layouts / result_layouts give (JAX asks for
 * column-major), so buffers are transposed on the way in and out of LAPACK.
 */
#ifndef CJ_CPU_K_LAPACK_H
#define CJ_CPU_K_LAPACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpu/lower.h"

/* Whether `target` (len bytes) names one of jaxlib's LAPACK targets (lapack_*). */
bool cj_lapack_is_target(const char *target, size_t len);
/* Lowers such a call; an unknown lapack_* name or an unsupported one fails naming it. */
CJ_MUST_USE cj_status cj_lower_cc_lapack(cj_lw *L, cj_op *op, const char *target, size_t len);
/* stablehlo.triangular_solve with BLAS's ?trsm (k_linalg.c): whether this build has it for
 * matrices of order m and right-hand sides rows x cols (the sizes fit BLAS's int). */
bool cj_lapack_has_trsm(int64_t m, int64_t rows, int64_t cols);
/* Whether LAPACK calls from several threads run at once (else they take turns on one lock). */
bool cj_lapack_concurrent(void);
/* Solves op(M) X = B (left) or X op(M) = B in place in X: t 0..3 for f32, f64, complex64,
 * complex128; M (m x m) and X (rows x cols) row-major, only M's `lower` (else upper) triangle
 * read, its diagonal taken as 1 when `unit`; trans 'N', 'T' or 'C' (conjugate transpose). Only
 * where cj_lapack_has_trsm said yes. */
void cj_lapack_trsm(int t, bool left, bool lower, char trans, bool unit, int64_t m, const void *M,
                    void *X, int64_t rows, int64_t cols);
/* @cjrt_lu_pivots_to_permutation, cjrt's own target for lu_pivots_to_permutation
 * (k_lapack_perm.c; needs no LAPACK). */
CJ_MUST_USE cj_status cj_lower_cc_lu_permutation(cj_lw *L, cj_op *op);
/* jaxlib's tridiagonal_solve_perturbed_ffi (k_tridiag.c; needs no LAPACK). */
CJ_MUST_USE cj_status cj_lower_cc_tridiagonal_perturbed(cj_lw *L, cj_op *op);


/* ---- The LAPACK and BLAS routines in use, exported by the plugin (src/pjrt/exports.map) ----
 * Every kernel calls its routines through one table of entry points, which starts with the
 * LAPACK linked into the plugin. A host that has another LAPACK may install its routines there:
 * python/jax_plugins/cjrt installs SciPy's (scipy.linalg.cython_lapack / cython_blas, the
 * LAPACK XLA:CPU's jaxlib calls), so that cjrt's results are XLA:CPU's. An installed routine
 * takes the arguments of SciPy's cython_lapack / cython_blas function of that name: Fortran's,
 * every one by pointer (int is 32 bits), with NO hidden character-length arguments. Programs
 * compiled afterwards use it (a compiled program keeps the routines it was compiled with);
 * installing while another thread compiles or runs a program is not supported. Installed
 * routines must be reentrant (programs running at once call them from their own threads); the
 * elements of one batch run one after another, as jaxlib runs them. */
#if defined(__GNUC__)
#define CJ_LAPACK_API __attribute__((visibility("default")))
#else
#define CJ_LAPACK_API
#endif
/* The i-th routine's name (0 <= i), as SciPy's: "strsm", "sgetrf", ..., "cungqr", "zheevd",
 * "zgtsv"; NULL past the last (at once when this build has no LAPACK). */
CJ_LAPACK_API const char *cjrt_lapack_routine_name(int i);
/* Installs `fn` as routine `name`; NULL restores the linked one. 0 on success, -1 for a name
 * that is not one of cjrt_lapack_routine_name's. */
CJ_LAPACK_API CJ_MUST_USE int cjrt_lapack_set_routine(const char *name, void *fn);
/* The entry point of routine `name` in use, or NULL for an unknown name. */
CJ_LAPACK_API void *cjrt_lapack_routine(const char *name);

#endif
