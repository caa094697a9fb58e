/* cjrt: the linear algebra kernels (k_linalg_kern.c) for any CPU (16-byte vectors: SSE2 on
 * x86-64): 4 x 8 f32 and 4 x 4 f64 micro-kernels. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3", "no-math-errno", "no-trapping-math")
#endif
#define LA_KERN_BODY 1
#define LA_SFX generic
#define LA_VBYTES 16
#define LA_MR 4
#define LA_ISA_NAME "generic"
#define LA_TABLE cj_la_table_generic
#include "cpu/k_linalg_kern.c"
