/* cjrt: the linear algebra custom calls JAX emits for platforms other than cpu/cuda/rocm
 * (private to src/cpu/; implemented in k_linalg_house.c, routed by cj_lower_custom_call):
 *
 *   @Qr(a) -> (a_factored, taus)                        LAPACK geqrf, batched
 *   @ProductOfElementaryHouseholderReflectors(a, taus) -> q   LAPACK orgqr/ungqr, batched
 *   @Eigh(a) -> (eigenvectors, eigenvalues)             backend_config "lower,sort,max_iter,tol"
 */
#ifndef CJ_CPU_K_LINALG_HOUSE_H
#define CJ_CPU_K_LINALG_HOUSE_H

#include "cpu/lower.h"

CJ_MUST_USE cj_status cj_lower_cc_qr(cj_lw *L, cj_op *op);
CJ_MUST_USE cj_status cj_lower_cc_householder_product(cj_lw *L, cj_op *op);
CJ_MUST_USE cj_status cj_lower_cc_eigh(cj_lw *L, cj_op *op);

#endif
