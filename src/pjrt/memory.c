/* cjrt: PJRT_Memory_*. A PJRT_Memory is a cj_memory whose first member points to the function
 * table below (0.105), so frameworks can keep per-memory data in it. */
#include <string.h>

#include "pjrt/internal.h"

static void *get_user_data(PJRT_Memory *memory, const void *key) {
  if (!cj_memory_check(memory)) return NULL;
  return cj_memory_get_user_data((cj_memory *)memory, key);
}

static void set_user_data(PJRT_Memory *memory, const void *key, void *data, void (*dtor)(void *)) {
  if (!cj_memory_check(memory)) return;
  cj_memory_set_user_data((cj_memory *)memory, key, data, dtor);
}

static const PJRT_Memory_FunctionTable memory_vtable = {
    .struct_size = PJRT_Memory_FunctionTable_STRUCT_SIZE,
    .extension_start = NULL,
    .instance_struct_size = PJRT_Memory_STRUCT_SIZE,
    .get_user_data = get_user_data,
    .set_user_data = set_user_data,
};

_Static_assert(offsetof(cj_memory, front_vtable) == 0, "PJRT_Memory needs its table first");

void cjp_memory_attach(cj_client *c) {
  for (int i = 0; i < c->nmemories; i++) c->memories[i]->front_vtable = &memory_vtable;
}

CJP_MEMORY_SLOT(PJRT_Memory_Id, id,
    args->id = m->id;)

CJP_MEMORY_SLOT(PJRT_Memory_Kind, kind_size,
    CJP_SET_STR(args, kind, cj_memory_kind_name(m->kind));)

CJP_MEMORY_SLOT(PJRT_Memory_Kind_Id, kind_id,
    args->kind_id = (int)m->kind;)

CJP_MEMORY_SLOT(PJRT_Memory_DebugString, debug_string_size,
    CJP_SET_STR(args, debug_string, m->debug_string);)

CJP_MEMORY_SLOT(PJRT_Memory_ToString, to_string_size,
    CJP_SET_STR(args, to_string, m->to_string);)

CJP_MEMORY_SLOT(PJRT_Memory_AddressableByDevices, num_devices,
    /* Each memory belongs to one device: a one-element list. */
    args->devices = (PJRT_Device *const *)&m->device;
    args->num_devices = 1;)
