/* cjrt: GetPjrtApi, the plugin's only exported symbol, and the stubs of the slots that are not
 * implemented yet. The table is built from slots.def. */
#include <stddef.h>

#include "pjrt/internal.h"
#include "pjrt_c_api_ffi_extension.h"

/* Stubs: every one names itself, so a missing feature diagnoses itself. */
#define SLOT_STUB(name)                                                                  \
  static PJRT_Error *stub_##name(name##_Args *args) {                                   \
    (void)args;                                                                          \
    return cjp_errorf(CJ_UNIMPLEMENTED, #name " is not implemented by cjrt");            \
  }
#define SLOT_REAL(name)
#define SLOT(name, kind) SLOT_##kind(name)
#include "pjrt/slots.def"
#undef SLOT
#undef SLOT_REAL
#undef SLOT_STUB

/* The table has one row per slot, and the slot list covers the whole struct. */
enum {
#define SLOT(name, kind) slot_index_##name,
#include "pjrt/slots.def"
#undef SLOT
  slot_count
};
_Static_assert(slot_count == 138, "PJRT 0.114 has 138 slots");
_Static_assert(sizeof(PJRT_Api) == offsetof(PJRT_Api, PJRT_Error_Destroy) +
                                       slot_count * sizeof(void (*)(void)),
               "slots.def does not cover PJRT_Api");

extern PJRT_FFI_Extension cjp_ffi_extension; /* ext_ffi.c: the first extension (ext_memory.c next) */

static const PJRT_Api api = {
    .struct_size = PJRT_Api_STRUCT_SIZE,
    .extension_start = &cjp_ffi_extension.base,
    .pjrt_api_version =
        {
            .struct_size = PJRT_Api_Version_STRUCT_SIZE,
            .extension_start = NULL,
            .major_version = PJRT_API_MAJOR,
            .minor_version = PJRT_API_MINOR,
        },
#define SLOT_REAL(name) .name = cjp_##name,
#define SLOT_STUB(name) .name = stub_##name,
#define SLOT(name, kind) SLOT_##kind(name)
#include "pjrt/slots.def"
#undef SLOT
#undef SLOT_REAL
#undef SLOT_STUB
};

__attribute__((visibility("default"))) const PJRT_Api *GetPjrtApi(void) { return &api; }
