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

PJRT_Error *cjp_PJRT_Memory_Id(PJRT_Memory_Id_Args *args) {
  CJP_CHECK_ARGS(PJRT_Memory_Id, args, id);
  CJP_MEMORY(PJRT_Memory_Id, m, args->memory, "memory");
  args->id = m->id;
  return NULL;
}

PJRT_Error *cjp_PJRT_Memory_Kind(PJRT_Memory_Kind_Args *args) {
  CJP_CHECK_ARGS(PJRT_Memory_Kind, args, kind_size);
  CJP_MEMORY(PJRT_Memory_Kind, m, args->memory, "memory");
  args->kind = cj_memory_kind_name(m->kind);
  args->kind_size = strlen(args->kind);
  return NULL;
}

PJRT_Error *cjp_PJRT_Memory_Kind_Id(PJRT_Memory_Kind_Id_Args *args) {
  CJP_CHECK_ARGS(PJRT_Memory_Kind_Id, args, kind_id);
  CJP_MEMORY(PJRT_Memory_Kind_Id, m, args->memory, "memory");
  args->kind_id = (int)m->kind;
  return NULL;
}

PJRT_Error *cjp_PJRT_Memory_DebugString(PJRT_Memory_DebugString_Args *args) {
  CJP_CHECK_ARGS(PJRT_Memory_DebugString, args, debug_string_size);
  CJP_MEMORY(PJRT_Memory_DebugString, m, args->memory, "memory");
  args->debug_string = m->debug_string;
  args->debug_string_size = strlen(m->debug_string);
  return NULL;
}

PJRT_Error *cjp_PJRT_Memory_ToString(PJRT_Memory_ToString_Args *args) {
  CJP_CHECK_ARGS(PJRT_Memory_ToString, args, to_string_size);
  CJP_MEMORY(PJRT_Memory_ToString, m, args->memory, "memory");
  args->to_string = m->to_string;
  args->to_string_size = strlen(m->to_string);
  return NULL;
}

PJRT_Error *cjp_PJRT_Memory_AddressableByDevices(PJRT_Memory_AddressableByDevices_Args *args) {
  CJP_CHECK_ARGS(PJRT_Memory_AddressableByDevices, args, num_devices);
  CJP_MEMORY(PJRT_Memory_AddressableByDevices, m, args->memory, "memory");
  /* Each memory belongs to one device: a one-element list. */
  args->devices = (PJRT_Device *const *)&m->device;
  args->num_devices = 1;
  return NULL;
}
