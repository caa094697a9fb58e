/* cjrt: the linear algebra kernels (k_linalg_kern.c) compiled for AVX2 with FMA: 6 x 16 f32
 * and 6 x 8 f64 micro-kernels. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3", "fp-contract=fast", "no-math-errno", "no-trapping-math")
#pragma GCC target("avx2,fma")
#define LA_KERN_BODY 1
#define LA_SFX avx2
#define LA_VBYTES 32
#define LA_MR 6
#define LA_ISA_NAME "avx2"
#define LA_TABLE cj_la_table_avx2
#include "cpu/k_linalg_kern.c"
#else
typedef int cj_k_linalg_isa_avx2_unused;
#endif
