/* cjrt: the PJRT FFI extension (PJRT_Extension_Type_FFI): registers XLA FFI handlers and types
 * in the process-wide registry (src/runtime/ffi.h) and adds user data to execute contexts.
 *
 * Version 3 of the extension; callers built against version 2 pass argument structs of other
 * sizes, told apart here by struct_size:
 *   Register_Handler: 60 bytes (an `int api_version` after target_name_size) vs 52;
 *   UserData_Add:     48 bytes (user_data with a deleter) vs 40;
 *   Type_Register:    40 bytes (no type_info) vs 48.
 * Only typed FFI handlers (api_version 1 in version 2's terms) are taken: the untyped custom-call
 * ABI has no call frame to describe its buffers.
 */
#include <string.h>

#include "pjrt/internal.h"
#include "pjrt_c_api_ffi_extension.h"
#include "pjrt_c_api_memory_descriptions_extension.h"
#include "runtime/context.h"
#include "runtime/ffi.h"

enum {
  kRegisterV2Size = 60, /* version 2's PJRT_FFI_Register_Handler_Args */
  kUserDataV2Size = 48,
};

/* Version 2's layout of the registration arguments. */
typedef struct register_v2 {
  size_t struct_size;
  const char *target_name;
  size_t target_name_size;
  int api_version;
  void *handler;
  const char *platform_name;
  size_t platform_name_size;
  PJRT_FFI_Handler_TraitsBits traits;
} register_v2;
_Static_assert(offsetof(register_v2, traits) + sizeof(int) == kRegisterV2Size,
               "version 2 Register_Handler_Args");

/* The fields both layouts have, by the same names. */
#define READ_HANDLER_ARGS(a)                \
  do {                                      \
    target = (a)->target_name;              \
    target_len = (a)->target_name_size;     \
    handler = (a)->handler;                 \
    platform = (a)->platform_name;          \
    platform_len = (a)->platform_name_size; \
    traits = (uint32_t)(a)->traits;         \
  } while (0)

static PJRT_Error *ffi_register_handler(PJRT_FFI_Register_Handler_Args *args) {
  static const char fn[] = "PJRT_FFI_Register_Handler";
  if (!args) return cjp_errorf(CJ_INVALID_ARGUMENT, "%s: args is NULL", fn);
  const char *target, *platform;
  size_t target_len, platform_len;
  void *handler;
  uint32_t traits;
  if (args->struct_size == kRegisterV2Size) {
    const register_v2 *a = (const register_v2 *)args;
    if (a->api_version != 1)
      return cjp_errorf(CJ_UNIMPLEMENTED,
                        "%s: custom call target %.*s: api_version %d (untyped custom calls) is not "
                        "supported by cjrt; register a typed XLA FFI handler (api_version 1)",
                        fn, (int)(a->target_name ? a->target_name_size : 0),
                        a->target_name ? a->target_name : "", a->api_version);
    READ_HANDLER_ARGS(a);
  } else {
    CJP_CHECK_ARGS(PJRT_FFI_Register_Handler, args, traits);
    READ_HANDLER_ARGS(args);
  }
  if (!target || target_len == 0) return cjp_errorf(CJ_INVALID_ARGUMENT, "%s: no target name", fn);
  if (!handler)
    return cjp_errorf(CJ_INVALID_ARGUMENT, "%s: target %.*s: handler is NULL", fn,
                      (int)target_len, target);
  if (!platform) platform_len = 0;
  XLA_FFI_Handler_Bundle b = {0};
  b.execute = (XLA_FFI_Handler *)handler;
  cj_status st = cj_ffi_register_handler(target, target_len, platform ? platform : "", platform_len,
                                         &b, traits);
  return st ? cjp_error_in(fn, st) : NULL;
}
#undef READ_HANDLER_ARGS

static PJRT_Error *ffi_type_register(PJRT_FFI_Type_Register_Args *args) {
  CJP_ENTER(PJRT_FFI_Type_Register, type_id);
  void (*deleter)(void *) = NULL;
  if (CJP_HAS(PJRT_FFI_Type_Register, args, type_info) && args->type_info)
    deleter = args->type_info->deleter;
  cj_status st = cj_ffi_register_type(args->type_name, args->type_name_size, &args->type_id,
                                      deleter);
  return st ? cjp_error_in(fn, st) : NULL;
}

static PJRT_Error *ffi_user_data_add(PJRT_FFI_UserData_Add_Args *args) {
  CJP_ENTER(PJRT_FFI_UserData_Add, user_data);
  CJP_HANDLE(PJRT_FFI_UserData_Add, cj_exec_context, cj_exec_context_check, c, args->context,
             "context");
  /* version 2 carried a deleter after `data`; it runs when the context is destroyed */
  void (*deleter)(void *) = NULL;
  if (args->struct_size >= kUserDataV2Size)
    memcpy(&deleter, (const char *)&args->user_data + sizeof args->user_data, sizeof deleter);
  cj_status st = cj_exec_context_add_user_data(c, args->user_data.type_id, args->user_data.data,
                                               deleter);
  return st ? cjp_error_in(fn, st) : NULL;
}

/* The head of PJRT_Api.extension_start (api.c). */
extern PJRT_MemoryDescriptions_Extension cjp_memory_extension; /* ext_memory.c */

PJRT_FFI_Extension cjp_ffi_extension = {
    .base = {.struct_size = PJRT_FFI_Extension_STRUCT_SIZE,
             .type = PJRT_Extension_Type_FFI,
             .next = &cjp_memory_extension.base}, /* the next extension */
    .type_register = ffi_type_register,
    .user_data_add = ffi_user_data_add,
    .register_handler = ffi_register_handler,
};
