/* cjrt: the XLA FFI C ABI, as cjrt implements it: the call frame an FFI handler receives and
 * the XLA_FFI_Api table of functions it calls back.
 *
 * Written for cjrt from the ABI's facts (struct layouts, enum values, the order of the
 * function-pointer slots), which are fixed by XLA (xla/ffi/api/c_api.h, API version 0.5 here;
 * tests/abi/ffi_abi_test.c checks sizes and offsets against that header's numbers). A handler
 * compiled against XLA's own header or its C++ wrapper (xla/ffi/api/ffi.h) runs unchanged.
 *
 * Conventions (the same as PJRT's): every argument struct starts with `struct_size` (the size
 * the caller compiled with; fields are only ever appended) and `extension_start`. A function
 * returns NULL on success or an XLA_FFI_Error the caller destroys with XLA_FFI_Error_Destroy;
 * an error a handler returns is destroyed by the runtime. Strings are (pointer, length) spans.
 */
#ifndef CJRT_XLA_FFI_C_API_H
#define CJRT_XLA_FFI_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XLA_FFI_STRUCT_SIZE(type, last) (offsetof(type, last) + sizeof(((type*)0)->last))
#define XLA_FFI_DEFINE_STRUCT_TRAITS(sname, last)  \
  typedef struct sname sname;                      \
  enum { sname##_STRUCT_SIZE = XLA_FFI_STRUCT_SIZE(sname, last) }

#define XLA_FFI_API_MAJOR 0
#define XLA_FFI_API_MINOR 5

typedef struct XLA_FFI_Api XLA_FFI_Api;
typedef struct XLA_FFI_InternalApi XLA_FFI_InternalApi; /* XLA's own; always NULL in cjrt */
typedef struct XLA_FFI_Error XLA_FFI_Error;             /* opaque */
typedef struct XLA_FFI_InvokeContext XLA_FFI_InvokeContext; /* opaque: one call's context */
typedef XLA_FFI_InvokeContext XLA_FFI_ExecutionContext;     /* its older name */
typedef struct XLA_FFI_Future XLA_FFI_Future;               /* opaque */

/* ---- extensions: a chain hung off a struct's extension_start (type 1 = handler metadata) ---- */
typedef enum { XLA_FFI_Extension_Metadata = 1 } XLA_FFI_InternalExtension_Type;

typedef struct XLA_FFI_InternalExtension {
  size_t struct_size;
  XLA_FFI_InternalExtension_Type type;
  struct XLA_FFI_InternalExtension* next;
} XLA_FFI_InternalExtension;

/* Runtime extensions a handler may look up by id (InvokeContext_FindExtension). */
typedef struct XLA_FFI_ExtensionId {
  int64_t extension_type;
  int32_t major_version, minor_version;
} XLA_FFI_ExtensionId;

typedef struct XLA_FFI_Extension {
  size_t struct_size;
  XLA_FFI_ExtensionId id;
  const struct XLA_FFI_Extension* next;
} XLA_FFI_Extension;

typedef struct XLA_FFI_Api_Version {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  int major_version; /* out */
  int minor_version; /* out */
} XLA_FFI_Api_Version;
enum { XLA_FFI_Api_Version_STRUCT_SIZE = XLA_FFI_STRUCT_SIZE(XLA_FFI_Api_Version, minor_version) };

/* ---- errors: absl status codes ---- */
typedef enum {
  XLA_FFI_Error_Code_OK = 0,
  XLA_FFI_Error_Code_CANCELLED = 1,
  XLA_FFI_Error_Code_UNKNOWN = 2,
  XLA_FFI_Error_Code_INVALID_ARGUMENT = 3,
  XLA_FFI_Error_Code_DEADLINE_EXCEEDED = 4,
  XLA_FFI_Error_Code_NOT_FOUND = 5,
  XLA_FFI_Error_Code_ALREADY_EXISTS = 6,
  XLA_FFI_Error_Code_PERMISSION_DENIED = 7,
  XLA_FFI_Error_Code_RESOURCE_EXHAUSTED = 8,
  XLA_FFI_Error_Code_FAILED_PRECONDITION = 9,
  XLA_FFI_Error_Code_ABORTED = 10,
  XLA_FFI_Error_Code_OUT_OF_RANGE = 11,
  XLA_FFI_Error_Code_UNIMPLEMENTED = 12,
  XLA_FFI_Error_Code_INTERNAL = 13,
  XLA_FFI_Error_Code_UNAVAILABLE = 14,
  XLA_FFI_Error_Code_DATA_LOSS = 15,
  XLA_FFI_Error_Code_UNAUTHENTICATED = 16
} XLA_FFI_Error_Code;

struct XLA_FFI_Error_Create_Args {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  const char* message; /* NUL-terminated; copied */
  XLA_FFI_Error_Code errc;
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Error_Create_Args, errc);

/* Before API 0.2 this struct ended at `message` (XLA_FFI_Error_GetMessage). */
struct XLA_FFI_Error_GetDetails_Args {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  XLA_FFI_Error* error;
  const char* message;     /* out: lives as long as the error */
  XLA_FFI_Error_Code errc; /* out */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Error_GetDetails_Args, errc);

struct XLA_FFI_Error_Destroy_Args {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  XLA_FFI_Error* error;
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Error_Destroy_Args, error);

/* ---- element types: xla::PrimitiveType numbers ---- */
typedef enum {
  XLA_FFI_DataType_INVALID = 0,
  XLA_FFI_DataType_PRED = 1,
  XLA_FFI_DataType_S8 = 2,
  XLA_FFI_DataType_S16 = 3,
  XLA_FFI_DataType_S32 = 4,
  XLA_FFI_DataType_S64 = 5,
  XLA_FFI_DataType_U8 = 6,
  XLA_FFI_DataType_U16 = 7,
  XLA_FFI_DataType_U32 = 8,
  XLA_FFI_DataType_U64 = 9,
  XLA_FFI_DataType_F16 = 10,
  XLA_FFI_DataType_F32 = 11,
  XLA_FFI_DataType_F64 = 12,
  XLA_FFI_DataType_C64 = 15,
  XLA_FFI_DataType_BF16 = 16,
  XLA_FFI_DataType_TOKEN = 17,
  XLA_FFI_DataType_C128 = 18,
  XLA_FFI_DataType_F8E5M2 = 19,
  XLA_FFI_DataType_F8E4M3FN = 20,
  XLA_FFI_DataType_S4 = 21,
  XLA_FFI_DataType_U4 = 22,
  XLA_FFI_DataType_F8E4M3B11FNUZ = 23,
  XLA_FFI_DataType_F8E5M2FNUZ = 24,
  XLA_FFI_DataType_F8E4M3FNUZ = 25,
  XLA_FFI_DataType_S2 = 26,
  XLA_FFI_DataType_U2 = 27,
  XLA_FFI_DataType_F8E4M3 = 28,
  XLA_FFI_DataType_F8E3M4 = 29,
  XLA_FFI_DataType_S1 = 30,
  XLA_FFI_DataType_U1 = 31,
  XLA_FFI_DataType_F4E2M1FN = 32,
  XLA_FFI_DataType_F8E8M0FNU = 33,
} XLA_FFI_DataType;

/* ---- arguments, results, attributes ---- */

/* A dense row-major array (cjrt passes only the default layout). */
struct XLA_FFI_Buffer {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  XLA_FFI_DataType dtype;
  void* data;
  int64_t rank;
  int64_t* dims; /* rank entries */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Buffer, dims);

typedef enum { XLA_FFI_ArgType_BUFFER = 1 } XLA_FFI_ArgType;
typedef enum { XLA_FFI_RetType_BUFFER = 1 } XLA_FFI_RetType;
typedef enum {
  XLA_FFI_AttrType_ARRAY = 1,      /* XLA_FFI_Array* */
  XLA_FFI_AttrType_DICTIONARY = 2, /* XLA_FFI_Attrs* */
  XLA_FFI_AttrType_SCALAR = 3,     /* XLA_FFI_Scalar* */
  XLA_FFI_AttrType_STRING = 4,     /* XLA_FFI_ByteSpan* */
} XLA_FFI_AttrType;

typedef struct XLA_FFI_ByteSpan {
  const char* ptr;
  size_t len;
} XLA_FFI_ByteSpan;

typedef struct XLA_FFI_Scalar {
  XLA_FFI_DataType dtype;
  void* value;
} XLA_FFI_Scalar;

typedef struct XLA_FFI_Array {
  XLA_FFI_DataType dtype;
  size_t size; /* elements */
  void* data;
} XLA_FFI_Array;

typedef struct XLA_FFI_TypeId {
  int64_t type_id; /* 0: unknown (ask the registry for one) */
} XLA_FFI_TypeId;

typedef struct XLA_FFI_TypeInfo {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  void (*deleter)(void* object);
} XLA_FFI_TypeInfo;
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_TypeInfo, deleter);

/* ---- futures: a handler may finish asynchronously ---- */
struct XLA_FFI_Future_Create_Args {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  XLA_FFI_Future* future; /* out */
};
/* (XLA's traits name extension_start as the last field, so its size stops before `future`) */
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Future_Create_Args, extension_start);

struct XLA_FFI_Future_SetAvailable_Args {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  XLA_FFI_Future* future;
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Future_SetAvailable_Args, future);

struct XLA_FFI_Future_SetError_Args {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  XLA_FFI_Future* future;
  XLA_FFI_Error* error; /* the runtime takes it */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Future_SetError_Args, error);

/* ---- the call frame ---- */
typedef enum {
  XLA_FFI_ExecutionStage_INSTANTIATE = 0,
  XLA_FFI_ExecutionStage_PREPARE = 1,
  XLA_FFI_ExecutionStage_INITIALIZE = 2,
  XLA_FFI_ExecutionStage_EXECUTE = 3,
  XLA_FFI_ExecutionStage_RECORD = 4,
} XLA_FFI_ExecutionStage;

struct XLA_FFI_Args {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  int64_t size;
  XLA_FFI_ArgType* types; /* size entries */
  void** args;            /* size entries: XLA_FFI_Buffer* */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Args, args);

struct XLA_FFI_Rets {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  int64_t size;
  XLA_FFI_RetType* types;
  void** rets; /* XLA_FFI_Buffer* */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Rets, rets);

/* Sorted by name (bytewise), so that a handler may binary-search them. */
struct XLA_FFI_Attrs {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  int64_t size;
  XLA_FFI_AttrType* types;
  XLA_FFI_ByteSpan** names;
  void** attrs;
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Attrs, attrs);

struct XLA_FFI_CallFrame {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start; /* a Metadata extension: "describe yourself" */
  const XLA_FFI_Api* api;
  XLA_FFI_InvokeContext* ctx;
  XLA_FFI_ExecutionStage stage;
  XLA_FFI_Args args;
  XLA_FFI_Rets rets;
  XLA_FFI_Attrs attrs;
  XLA_FFI_Future* future; /* out: set by an asynchronous handler */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_CallFrame, attrs);

typedef XLA_FFI_Error* XLA_FFI_Handler(XLA_FFI_CallFrame* call_frame);

typedef struct XLA_FFI_Handler_Bundle {
  XLA_FFI_Handler* instantiate; /* optional */
  XLA_FFI_Handler* prepare;     /* optional */
  XLA_FFI_Handler* initialize;  /* optional */
  XLA_FFI_Handler* execute;     /* required */
  XLA_FFI_Handler* record;      /* optional (added in 0.4) */
} XLA_FFI_Handler_Bundle;

enum XLA_FFI_Handler_TraitsBits { XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE = 1u << 0 };
typedef uint32_t XLA_FFI_Handler_Traits;

/* A handler answers a call frame whose extension chain holds this with its metadata instead of
 * running. */
struct XLA_FFI_Metadata {
  size_t struct_size;
  XLA_FFI_Api_Version api_version;
  XLA_FFI_Handler_Traits traits;
  XLA_FFI_TypeId state_type_id; /* added in 0.3 */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Metadata, traits);

struct XLA_FFI_Metadata_Extension {
  XLA_FFI_InternalExtension extension_base;
  XLA_FFI_Metadata* metadata;
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Metadata_Extension, metadata);

/* ---- registration ---- */
struct XLA_FFI_Handler_Register_Args {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  XLA_FFI_ByteSpan name;
  XLA_FFI_ByteSpan platform;
  XLA_FFI_Handler_Bundle bundle;
  XLA_FFI_Handler_Traits traits;
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Handler_Register_Args, traits);

struct XLA_FFI_Type_Register_Args {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  XLA_FFI_ByteSpan name;
  XLA_FFI_TypeId* type_id;            /* in-out: 0 asks for a new id */
  const XLA_FFI_TypeInfo* type_info;  /* added in 0.3 */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Type_Register_Args, type_id);

/* ---- what a handler may ask of its invocation ---- */
struct XLA_FFI_InvokeContext_FindExtension_Args {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  XLA_FFI_InvokeContext* ctx;
  int64_t extension_type;
  const XLA_FFI_Extension* extension; /* out */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_InvokeContext_FindExtension_Args, extension);

/* User data of the execution (PJRT_FFI_UserData_Add) by type id. */
struct XLA_FFI_InvokeContext_Get_Args {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  XLA_FFI_InvokeContext* ctx;
  XLA_FFI_TypeId* type_id;
  void* data; /* out */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_InvokeContext_Get_Args, data);

struct XLA_FFI_CustomOptions_Get_Args {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  XLA_FFI_InvokeContext* ctx;
  const XLA_FFI_Attrs* attrs; /* out */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_CustomOptions_Get_Args, attrs);

/* Per-call-site state (set at instantiation, read at execution). */
struct XLA_FFI_State_Set_Args {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  XLA_FFI_InvokeContext* ctx;
  XLA_FFI_ExecutionStage stage;
  XLA_FFI_TypeId* type_id;
  void* state;
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_State_Set_Args, state);

struct XLA_FFI_State_Get_Args {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  XLA_FFI_InvokeContext* ctx;
  XLA_FFI_ExecutionStage stage;
  XLA_FFI_TypeId* type_id;
  void* state; /* out */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_State_Get_Args, state);

struct XLA_FFI_Stream_Get_Args {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  XLA_FFI_InvokeContext* ctx;
  void* stream; /* out */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Stream_Get_Args, stream);

struct XLA_FFI_DeviceMemory_Allocate_Args {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  XLA_FFI_InvokeContext* ctx;
  size_t size;
  size_t alignment;
  void* data; /* out */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_DeviceMemory_Allocate_Args, data);

struct XLA_FFI_DeviceMemory_Free_Args {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  XLA_FFI_InvokeContext* ctx;
  size_t size;
  void* data;
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_DeviceMemory_Free_Args, data);

typedef void XLA_FFI_Task(void* data);

struct XLA_FFI_ThreadPool_Schedule_Args {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  XLA_FFI_InvokeContext* ctx;
  XLA_FFI_Task* task;
  void* data;
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_ThreadPool_Schedule_Args, data);

struct XLA_FFI_ThreadPool_NumThreads_Args {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  XLA_FFI_InvokeContext* ctx;
  int64_t* num_threads; /* out (the pointee) */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_ThreadPool_NumThreads_Args, num_threads);

struct XLA_FFI_RunId_Get_Args {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  XLA_FFI_InvokeContext* ctx;
  int64_t run_id; /* out */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_RunId_Get_Args, run_id);

struct XLA_FFI_DeviceOrdinal_Get_Args {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  XLA_FFI_InvokeContext* ctx;
  int32_t device_ordinal; /* out */
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_DeviceOrdinal_Get_Args, device_ordinal);

/* ---- the table: slot order is ABI ---- */
typedef XLA_FFI_Error* XLA_FFI_Error_Create(XLA_FFI_Error_Create_Args* args);
typedef void XLA_FFI_Error_GetDetails(XLA_FFI_Error_GetDetails_Args* args);
typedef void XLA_FFI_Error_Destroy(XLA_FFI_Error_Destroy_Args* args);
typedef XLA_FFI_Error* XLA_FFI_Handler_Register(XLA_FFI_Handler_Register_Args* args);
typedef XLA_FFI_Error* XLA_FFI_Stream_Get(XLA_FFI_Stream_Get_Args* args);
typedef XLA_FFI_Error* XLA_FFI_Type_Register(XLA_FFI_Type_Register_Args* args);
typedef XLA_FFI_Error* XLA_FFI_InvokeContext_Get(XLA_FFI_InvokeContext_Get_Args* args);
typedef XLA_FFI_Error* XLA_FFI_State_Set(XLA_FFI_State_Set_Args* args);
typedef XLA_FFI_Error* XLA_FFI_State_Get(XLA_FFI_State_Get_Args* args);
typedef XLA_FFI_Error* XLA_FFI_DeviceMemory_Allocate(XLA_FFI_DeviceMemory_Allocate_Args* args);
typedef XLA_FFI_Error* XLA_FFI_DeviceMemory_Free(XLA_FFI_DeviceMemory_Free_Args* args);
typedef XLA_FFI_Error* XLA_FFI_ThreadPool_Schedule(XLA_FFI_ThreadPool_Schedule_Args* args);
typedef XLA_FFI_Error* XLA_FFI_ThreadPool_NumThreads(XLA_FFI_ThreadPool_NumThreads_Args* args);
typedef XLA_FFI_Error* XLA_FFI_Future_Create(XLA_FFI_Future_Create_Args* args);
typedef XLA_FFI_Error* XLA_FFI_Future_SetAvailable(XLA_FFI_Future_SetAvailable_Args* args);
typedef XLA_FFI_Error* XLA_FFI_Future_SetError(XLA_FFI_Future_SetError_Args* args);
typedef XLA_FFI_Error* XLA_FFI_RunId_Get(XLA_FFI_RunId_Get_Args* args);
typedef XLA_FFI_Error* XLA_FFI_DeviceOrdinal_Get(XLA_FFI_DeviceOrdinal_Get_Args* args);
typedef XLA_FFI_Error* XLA_FFI_InvokeContext_FindExtension(
    XLA_FFI_InvokeContext_FindExtension_Args* args);
typedef XLA_FFI_Error* XLA_FFI_CustomOptions_Get(XLA_FFI_CustomOptions_Get_Args* args);

struct XLA_FFI_Api {
  size_t struct_size;
  XLA_FFI_InternalExtension* extension_start;
  XLA_FFI_Api_Version api_version;
  const XLA_FFI_InternalApi* internal_api;

  XLA_FFI_Error_Create* XLA_FFI_Error_Create;
  XLA_FFI_Error_GetDetails* XLA_FFI_Error_GetDetails; /* XLA_FFI_Error_GetMessage before 0.2 */
  XLA_FFI_Error_Destroy* XLA_FFI_Error_Destroy;
  XLA_FFI_Handler_Register* XLA_FFI_Handler_Register;
  XLA_FFI_Stream_Get* XLA_FFI_Stream_Get;
  XLA_FFI_Type_Register* XLA_FFI_Type_Register;
  XLA_FFI_InvokeContext_Get* XLA_FFI_InvokeContext_Get; /* XLA_FFI_ExecutionContext_Get before */
  XLA_FFI_State_Set* XLA_FFI_State_Set;
  XLA_FFI_State_Get* XLA_FFI_State_Get;
  XLA_FFI_DeviceMemory_Allocate* XLA_FFI_DeviceMemory_Allocate;
  XLA_FFI_DeviceMemory_Free* XLA_FFI_DeviceMemory_Free;
  XLA_FFI_ThreadPool_Schedule* XLA_FFI_ThreadPool_Schedule;
  XLA_FFI_ThreadPool_NumThreads* XLA_FFI_ThreadPool_NumThreads;
  XLA_FFI_Future_Create* XLA_FFI_Future_Create;
  XLA_FFI_Future_SetAvailable* XLA_FFI_Future_SetAvailable;
  XLA_FFI_Future_SetError* XLA_FFI_Future_SetError;
  XLA_FFI_RunId_Get* XLA_FFI_RunId_Get;
  XLA_FFI_DeviceOrdinal_Get* XLA_FFI_DeviceOrdinal_Get;
  XLA_FFI_InvokeContext_FindExtension* XLA_FFI_InvokeContext_FindExtension;
  XLA_FFI_CustomOptions_Get* XLA_FFI_CustomOptions_Get;
};
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Api, XLA_FFI_CustomOptions_Get);

#ifdef __cplusplus
}
#endif

#endif
