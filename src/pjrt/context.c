/* cjrt: PJRT_ExecuteContext_*. Contexts hold nothing yet; executions accept them. */
#include "pjrt/internal.h"

PJRT_Error *cjp_PJRT_ExecuteContext_Create(PJRT_ExecuteContext_Create_Args *args) {
  CJP_CHECK_ARGS(PJRT_ExecuteContext_Create, args, context);
  cj_exec_context *c;
  cj_status st = cj_exec_context_create(&c);
  if (st) return cjp_error_in("PJRT_ExecuteContext_Create", st);
  args->context = (PJRT_ExecuteContext *)c;
  return NULL;
}

CJP_DESTROY_SLOT(PJRT_ExecuteContext_Destroy, context,
                 cj_exec_context, cj_exec_context_check, cj_exec_context_destroy)
