/* The XLA FFI ABI: include/xla_ffi_c_api.h against the sizes and offsets that XLA's own
 * xla/ffi/api/c_api.h (API 0.5, as shipped in jaxlib 0.12's include/ folder) gives on x86-64.
 * Compile-time checks only: the test builds or it does not. */
#include <stddef.h>

#include "xla_ffi_c_api.h"

#define CHECK_SIZE(t, n) _Static_assert(sizeof(t) == (n), "sizeof " #t)
#define CHECK_OFF(t, f, n) _Static_assert(offsetof(t, f) == (n), "offsetof " #t "." #f)
#define CHECK_SSIZE(t, n) _Static_assert(t##_STRUCT_SIZE == (n), #t "_STRUCT_SIZE")

static void checks(void) {
  CHECK_SIZE(XLA_FFI_Buffer, 48);
  CHECK_OFF(XLA_FFI_Buffer, dtype, 16);
  CHECK_OFF(XLA_FFI_Buffer, data, 24);
  CHECK_OFF(XLA_FFI_Buffer, rank, 32);
  CHECK_OFF(XLA_FFI_Buffer, dims, 40);
  CHECK_SSIZE(XLA_FFI_Buffer, 48);
  CHECK_SIZE(XLA_FFI_CallFrame, 176);
  CHECK_OFF(XLA_FFI_CallFrame, api, 16);
  CHECK_OFF(XLA_FFI_CallFrame, ctx, 24);
  CHECK_OFF(XLA_FFI_CallFrame, stage, 32);
  CHECK_OFF(XLA_FFI_CallFrame, args, 40);
  CHECK_OFF(XLA_FFI_CallFrame, rets, 80);
  CHECK_OFF(XLA_FFI_CallFrame, attrs, 120);
  CHECK_OFF(XLA_FFI_CallFrame, future, 168);
  CHECK_SSIZE(XLA_FFI_CallFrame, 168);
  CHECK_SIZE(XLA_FFI_Args, 40);
  CHECK_OFF(XLA_FFI_Args, size, 16);
  CHECK_OFF(XLA_FFI_Args, types, 24);
  CHECK_OFF(XLA_FFI_Args, args, 32);
  CHECK_SIZE(XLA_FFI_Attrs, 48);
  CHECK_OFF(XLA_FFI_Attrs, names, 32);
  CHECK_OFF(XLA_FFI_Attrs, attrs, 40);
  CHECK_SIZE(XLA_FFI_Scalar, 16);
  CHECK_OFF(XLA_FFI_Scalar, value, 8);
  CHECK_SIZE(XLA_FFI_Array, 24);
  CHECK_OFF(XLA_FFI_Array, size, 8);
  CHECK_OFF(XLA_FFI_Array, data, 16);
  CHECK_SIZE(XLA_FFI_ByteSpan, 16);
  CHECK_SIZE(XLA_FFI_Api, 208);
  CHECK_OFF(XLA_FFI_Api, api_version, 16);
  CHECK_OFF(XLA_FFI_Api, internal_api, 40);
  CHECK_OFF(XLA_FFI_Api, XLA_FFI_Error_Create, 48);
  CHECK_OFF(XLA_FFI_Api, XLA_FFI_Handler_Register, 72);
  CHECK_OFF(XLA_FFI_Api, XLA_FFI_Type_Register, 88);
  CHECK_OFF(XLA_FFI_Api, XLA_FFI_InvokeContext_Get, 96);
  CHECK_OFF(XLA_FFI_Api, XLA_FFI_State_Get, 112);
  CHECK_OFF(XLA_FFI_Api, XLA_FFI_ThreadPool_Schedule, 136);
  CHECK_OFF(XLA_FFI_Api, XLA_FFI_Future_Create, 152);
  CHECK_OFF(XLA_FFI_Api, XLA_FFI_DeviceOrdinal_Get, 184);
  CHECK_OFF(XLA_FFI_Api, XLA_FFI_CustomOptions_Get, 200);
  CHECK_SSIZE(XLA_FFI_Api, 208);
  CHECK_SIZE(XLA_FFI_Handler_Register_Args, 96);
  CHECK_OFF(XLA_FFI_Handler_Register_Args, platform, 32);
  CHECK_OFF(XLA_FFI_Handler_Register_Args, bundle, 48);
  CHECK_OFF(XLA_FFI_Handler_Register_Args, traits, 88);
  CHECK_SIZE(XLA_FFI_Handler_Bundle, 40);
  CHECK_OFF(XLA_FFI_Handler_Bundle, execute, 24);
  CHECK_SSIZE(XLA_FFI_Type_Register_Args, 40);
  CHECK_OFF(XLA_FFI_Type_Register_Args, type_id, 32);
  CHECK_OFF(XLA_FFI_Type_Register_Args, type_info, 40);
  CHECK_SSIZE(XLA_FFI_InvokeContext_Get_Args, 40);
  CHECK_OFF(XLA_FFI_InvokeContext_Get_Args, data, 32);
  CHECK_SSIZE(XLA_FFI_State_Set_Args, 48);
  CHECK_OFF(XLA_FFI_State_Set_Args, type_id, 32);
  CHECK_OFF(XLA_FFI_State_Set_Args, state, 40);
  CHECK_SSIZE(XLA_FFI_Error_Create_Args, 28);
  CHECK_OFF(XLA_FFI_Error_Create_Args, errc, 24);
  CHECK_SSIZE(XLA_FFI_Error_GetDetails_Args, 36);
  CHECK_OFF(XLA_FFI_Error_GetDetails_Args, errc, 32);
  CHECK_SSIZE(XLA_FFI_Metadata, 36);
  CHECK_OFF(XLA_FFI_Metadata, api_version, 8);
  CHECK_OFF(XLA_FFI_Metadata, traits, 32);
  CHECK_OFF(XLA_FFI_Metadata, state_type_id, 40);
  CHECK_SSIZE(XLA_FFI_Metadata_Extension, 32);
  CHECK_OFF(XLA_FFI_Metadata_Extension, metadata, 24);
  CHECK_SSIZE(XLA_FFI_DeviceMemory_Allocate_Args, 48);
  CHECK_SSIZE(XLA_FFI_ThreadPool_Schedule_Args, 40);
  CHECK_SSIZE(XLA_FFI_DeviceOrdinal_Get_Args, 28);
  CHECK_SSIZE(XLA_FFI_Future_Create_Args, 16);
  CHECK_SSIZE(XLA_FFI_Future_SetError_Args, 32);
  CHECK_SSIZE(XLA_FFI_Api_Version, 24);
  CHECK_SIZE(XLA_FFI_Extension, 32);
  CHECK_OFF(XLA_FFI_Extension, next, 24);
  _Static_assert(XLA_FFI_DataType_BF16 == 16 && XLA_FFI_DataType_TOKEN == 17 &&
                     XLA_FFI_DataType_C128 == 18 && XLA_FFI_DataType_F8E8M0FNU == 33 &&
                     XLA_FFI_DataType_S1 == 30 && XLA_FFI_DataType_F4E2M1FN == 32,
                 "data type numbers");
  _Static_assert(XLA_FFI_AttrType_ARRAY == 1 && XLA_FFI_AttrType_DICTIONARY == 2 &&
                     XLA_FFI_AttrType_SCALAR == 3 && XLA_FFI_AttrType_STRING == 4,
                 "attribute kinds");
  _Static_assert(XLA_FFI_ExecutionStage_EXECUTE == 3 && XLA_FFI_Error_Code_UNIMPLEMENTED == 12,
                 "stages and codes");
}

int main(void) {
  checks();
  return 0;
}
