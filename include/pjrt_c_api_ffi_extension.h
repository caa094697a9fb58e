/* cjrt: the PJRT FFI extension (PJRT_Extension_Type_FFI), in a header of its own beside
 * pjrt_c_api.h, as upstream keeps it; the struct layouts are upstream's, written here from its
 * facts. */
#ifndef CJRT_PJRT_C_API_FFI_EXTENSION_H
#define CJRT_PJRT_C_API_FFI_EXTENSION_H

#include "pjrt_c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ================================== The FFI extension ================================== */
/* PJRT_Extension_Type_FFI, hung off PJRT_Api.extension_start: registers XLA FFI handlers
 * (include/xla_ffi_c_api.h) and types with the plugin, and passes user data to one execution
 * through its PJRT_ExecuteContext. Version 3 of the extension; the argument structs of version 2
 * differ in size (Register_Handler had `api_version`, UserData a deleter, TypeID_Register no
 * type_info), and an implementation tells them apart by struct_size. */
#define PJRT_API_FFI_EXTENSION_VERSION 3

typedef struct PJRT_FFI_Type_Info {
  void (*deleter)(void* object);
  void (*serialize)(void);   /* reserved */
  void (*deserialize)(void); /* reserved */
} PJRT_FFI_Type_Info;

struct PJRT_FFI_Type_Register_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const char* type_name;
  size_t type_name_size;
  int64_t type_id;                /* in-out: 0 asks for a new id */
  PJRT_FFI_Type_Info* type_info;  /* version 3 */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_FFI_Type_Register_Args, type_info);
typedef PJRT_Error* PJRT_FFI_Type_Register(PJRT_FFI_Type_Register_Args* args);

typedef struct PJRT_FFI_UserData {
  int64_t type_id;
  void* data; /* the caller keeps it alive while the context lives */
} PJRT_FFI_UserData;

struct PJRT_FFI_UserData_Add_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_ExecuteContext* context;
  PJRT_FFI_UserData user_data;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_FFI_UserData_Add_Args, user_data);
typedef PJRT_Error* PJRT_FFI_UserData_Add(PJRT_FFI_UserData_Add_Args* args);

typedef enum PJRT_FFI_Handler_TraitsBits {
  PJRT_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE = 1u << 0,
} PJRT_FFI_Handler_TraitsBits;

/* (this struct has no extension_start) */
struct PJRT_FFI_Register_Handler_Args {
  size_t struct_size;
  const char* target_name;
  size_t target_name_size;
  void* handler; /* an XLA_FFI_Handler* */
  const char* platform_name;
  size_t platform_name_size;
  PJRT_FFI_Handler_TraitsBits traits;
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_FFI_Register_Handler_Args, traits);
typedef PJRT_Error* PJRT_FFI_Register_Handler(PJRT_FFI_Register_Handler_Args* args);

typedef struct PJRT_FFI_Extension {
  PJRT_Extension_Base base;
  PJRT_FFI_Type_Register* type_register; /* type_id_register in version 2 */
  PJRT_FFI_UserData_Add* user_data_add;
  PJRT_FFI_Register_Handler* register_handler;
} PJRT_FFI_Extension;
PJRT_DEFINE_STRUCT_TRAITS(PJRT_FFI_Extension, register_handler);

#ifdef __cplusplus
}
#endif

#endif
