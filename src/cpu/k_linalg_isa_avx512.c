/* cjrt: the linear algebra kernels (k_linalg_kern.c) compiled for AVX-512 (F, DQ, VL, BW) with
 * FMA: 8 x 32 f32 and 8 x 16 f64 micro-kernels. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3", "fp-contract=fast", "no-math-errno", "no-trapping-math")
#pragma GCC target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma,prefer-vector-width=512")
#define LA_KERN_BODY 1
#define LA_SFX avx512
#define LA_VBYTES 64
#define LA_MR 8
#define LA_ISA_NAME "avx512"
#define LA_TABLE cj_la_table_avx512
#include "cpu/k_linalg_kern.c"
#else
typedef int cj_k_linalg_isa_avx512_unused;
#endif
