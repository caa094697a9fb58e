/* cjrt: PJRT_Plugin_*: one-time set-up and plugin-wide attributes. */
#include "pjrt/internal.h"

/* xla_version follows upstream's plugins. The StableHLO version pair is added once the bytecode
 * reader can honour it (advertising versions we cannot read would make frameworks send them). */
static const PJRT_NamedValue attributes[] = {
    {
        .struct_size = PJRT_NamedValue_STRUCT_SIZE,
        .name = "xla_version",
        .name_size = sizeof "xla_version" - 1,
        .type = PJRT_NamedValue_kInt64,
        .int64_value = 2,
        .value_size = 1,
    },
};

PJRT_Error *cjp_PJRT_Plugin_Initialize(PJRT_Plugin_Initialize_Args *args) {
  CJP_CHECK_ARGS(PJRT_Plugin_Initialize, args, extension_start);
  /* Nothing to set up: every client creates what it needs. Calling it again is harmless. */
  return NULL;
}

PJRT_Error *cjp_PJRT_Plugin_Attributes(PJRT_Plugin_Attributes_Args *args) {
  CJP_CHECK_ARGS(PJRT_Plugin_Attributes, args, num_attributes);
  args->attributes = attributes;
  args->num_attributes = sizeof attributes / sizeof attributes[0];
  return NULL;
}
