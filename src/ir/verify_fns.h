/* cjrt: declarations of the spec verifiers named in the VERIFY column of ops.def.
 * Each is defined in src/ir/verify*.c (one file per op family). */
#ifndef CJ_IR_VERIFY_FNS_H
#define CJ_IR_VERIFY_FNS_H

#include "ir/ir.h"

#define OP(id, name, no, nr, ng, syn, fl, vf, attrs) CJ_MUST_USE cj_status vf(const cj_op *op);
#include "ir/ops.def"
#undef OP

#endif
