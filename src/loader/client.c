/* libcjrt: clients, devices and memories. Everything a client can describe is read once at
 * creation, so accessors never fail and never call into the plugin. */
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"

/* Reads a (pointer, size) string out-parameter into an owned C string; "" when the call fails
 * (descriptive strings are not worth failing a client for). */
#define READ_STRING(lib, fn, ArgsT, objfield, obj, strfield, sizefield, out)             \
  do {                                                                                  \
    ArgsT a_ = {.struct_size = ArgsT##_STRUCT_SIZE, .objfield = (obj)};                 \
    cjrt_error *e_ = CJRT_PJRT(lib, fn, &a_);                                           \
    (out) = cjrt__strndup(e_ ? NULL : a_.strfield, e_ ? 0 : a_.sizefield);              \
    cjrt_error_free(e_);                                                                \
    if (!(out)) return cjrt__oom();                                                     \
  } while (0)

static cjrt_memory *find_memory(const cjrt_client *c, PJRT_Memory *raw) {
  for (size_t i = 0; i < c->num_memories; i++)
    if (c->memories[i]->raw == raw) return c->memories[i];
  return NULL;
}

cjrt_device *cjrt__client_find_device(const cjrt_client *c, PJRT_Device *raw) {
  for (size_t i = 0; i < c->num_devices; i++)
    if (c->devices[i].raw == raw) return &c->devices[i];
  return NULL;
}

/* Registers a memory the first time it is seen (device lists are filled in later). */
static cjrt_error *add_memory(cjrt_client *c, PJRT_Memory *raw, cjrt_memory **out) {
  *out = find_memory(c, raw);
  if (*out) return NULL;
  cjrt_lib *lib = c->lib;
  cjrt_memory **mv = realloc(c->memories, (c->num_memories + 1) * sizeof *mv);
  if (!mv) return cjrt__oom();
  c->memories = mv;
  cjrt_memory *m = calloc(1, sizeof *m);
  if (!m) return cjrt__oom();
  c->memories[c->num_memories++] = m;
  m->client = c;
  m->raw = raw;
  m->kind_id = -1;
  PJRT_Memory_Id_Args ia = {.struct_size = PJRT_Memory_Id_Args_STRUCT_SIZE, .memory = raw};
  cjrt_error *e = CJRT_PJRT(lib, PJRT_Memory_Id, &ia);
  m->id = e ? -1 : ia.id;
  cjrt_error_free(e);
  PJRT_Memory_Kind_Id_Args ka = {.struct_size = PJRT_Memory_Kind_Id_Args_STRUCT_SIZE, .memory = raw};
  e = CJRT_PJRT(lib, PJRT_Memory_Kind_Id, &ka);
  if (!e) m->kind_id = ka.kind_id;
  cjrt_error_free(e);
  READ_STRING(lib, PJRT_Memory_Kind, PJRT_Memory_Kind_Args, memory, raw, kind, kind_size, m->kind);
  READ_STRING(lib, PJRT_Memory_DebugString, PJRT_Memory_DebugString_Args, memory, raw,
              debug_string, debug_string_size, m->debug_string);
  READ_STRING(lib, PJRT_Memory_ToString, PJRT_Memory_ToString_Args, memory, raw, to_string,
              to_string_size, m->to_string);
  *out = m;
  return NULL;
}

/* The wrappers of memories raw[0..n) (a device's or the client's list) into *out. */
static cjrt_error *add_memories(cjrt_client *c, PJRT_Memory *const *raw, size_t n,
                                cjrt_memory ***out, size_t *nout) {
  if (!n) return NULL;
  *out = calloc(n, sizeof **out);
  if (!*out) return cjrt__oom();
  for (size_t i = 0; i < n; i++) {
    CJRT_TRY(add_memory(c, raw[i], &(*out)[i]));
    (*nout)++;
  }
  return NULL;
}

static cjrt_error *read_device(cjrt_client *c, cjrt_device *d) {
  cjrt_lib *lib = c->lib;
  PJRT_Device_GetDescription_Args ga = {.struct_size = PJRT_Device_GetDescription_Args_STRUCT_SIZE,
                                        .device = d->raw};
  CJRT_TRY(CJRT_PJRT(lib, PJRT_Device_GetDescription, &ga));
  PJRT_DeviceDescription *desc = ga.device_description;
  PJRT_DeviceDescription_Id_Args ia = {.struct_size = PJRT_DeviceDescription_Id_Args_STRUCT_SIZE,
                                       .device_description = desc};
  CJRT_TRY(CJRT_PJRT(lib, PJRT_DeviceDescription_Id, &ia));
  d->id = ia.id;
  PJRT_DeviceDescription_ProcessIndex_Args pa = {
      .struct_size = PJRT_DeviceDescription_ProcessIndex_Args_STRUCT_SIZE, .device_description = desc};
  cjrt_error *e = CJRT_PJRT(lib, PJRT_DeviceDescription_ProcessIndex, &pa);
  d->process_index = e ? 0 : pa.process_index;
  cjrt_error_free(e);
  READ_STRING(lib, PJRT_DeviceDescription_Kind, PJRT_DeviceDescription_Kind_Args,
              device_description, desc, device_kind, device_kind_size, d->kind);
  READ_STRING(lib, PJRT_DeviceDescription_DebugString, PJRT_DeviceDescription_DebugString_Args,
              device_description, desc, debug_string, debug_string_size, d->debug_string);
  READ_STRING(lib, PJRT_DeviceDescription_ToString, PJRT_DeviceDescription_ToString_Args,
              device_description, desc, to_string, to_string_size, d->to_string);
  PJRT_DeviceDescription_Attributes_Args aa = {
      .struct_size = PJRT_DeviceDescription_Attributes_Args_STRUCT_SIZE, .device_description = desc};
  e = CJRT_PJRT(lib, PJRT_DeviceDescription_Attributes, &aa);
  if (!e) {
    CJRT_TRY(cjrt__copy_named_values(aa.attributes, aa.num_attributes, &d->attrs, &d->attr_storage));
    d->num_attrs = d->attrs ? aa.num_attributes : 0;
  }
  cjrt_error_free(e);
  PJRT_Device_IsAddressable_Args da = {.struct_size = PJRT_Device_IsAddressable_Args_STRUCT_SIZE,
                                       .device = d->raw};
  e = CJRT_PJRT(lib, PJRT_Device_IsAddressable, &da);
  d->addressable = e ? false : da.is_addressable;
  cjrt_error_free(e);
  PJRT_Device_LocalHardwareId_Args la = {.struct_size = PJRT_Device_LocalHardwareId_Args_STRUCT_SIZE,
                                         .device = d->raw};
  e = CJRT_PJRT(lib, PJRT_Device_LocalHardwareId, &la);
  d->local_hardware_id = e ? -1 : la.local_hardware_id;
  cjrt_error_free(e);
  if (!d->addressable) return NULL;
  PJRT_Device_AddressableMemories_Args ma = {
      .struct_size = PJRT_Device_AddressableMemories_Args_STRUCT_SIZE, .device = d->raw};
  e = CJRT_PJRT(lib, PJRT_Device_AddressableMemories, &ma);
  if (!e) CJRT_TRY(add_memories(c, ma.memories, ma.num_memories, &d->memories, &d->num_memories));
  cjrt_error_free(e);
  PJRT_Device_DefaultMemory_Args dm = {.struct_size = PJRT_Device_DefaultMemory_Args_STRUCT_SIZE,
                                       .device = d->raw};
  e = CJRT_PJRT(lib, PJRT_Device_DefaultMemory, &dm);
  if (!e && dm.memory) CJRT_TRY(add_memory(c, dm.memory, &d->default_memory));
  cjrt_error_free(e);
  return NULL;
}

cjrt_error *cjrt__client_map_devices(const cjrt_client *c, PJRT_Device *const *raw, size_t n,
                                     const char *missing, cjrt_device ***out, size_t *nout) {
  if (!n) return NULL;
  *out = calloc(n, sizeof **out);
  if (!*out) return cjrt__oom();
  for (size_t i = 0; i < n; i++) {
    cjrt_device *d = cjrt__client_find_device(c, raw[i]);
    if (d)
      (*out)[(*nout)++] = d;
    else if (missing)
      return cjrt__error(CJRT_INTERNAL, "%s", missing);
  }
  return NULL;
}

static cjrt_error *read_client(cjrt_client *c) {
  cjrt_lib *lib = c->lib;
  READ_STRING(lib, PJRT_Client_PlatformName, PJRT_Client_PlatformName_Args, client, c->raw,
              platform_name, platform_name_size, c->platform_name);
  READ_STRING(lib, PJRT_Client_PlatformVersion, PJRT_Client_PlatformVersion_Args, client, c->raw,
              platform_version, platform_version_size, c->platform_version);
  PJRT_Client_ProcessIndex_Args pa = {.struct_size = PJRT_Client_ProcessIndex_Args_STRUCT_SIZE,
                                      .client = c->raw};
  cjrt_error *e = CJRT_PJRT(lib, PJRT_Client_ProcessIndex, &pa);
  c->process_index = e ? 0 : pa.process_index;
  cjrt_error_free(e);

  PJRT_Client_Devices_Args da = {.struct_size = PJRT_Client_Devices_Args_STRUCT_SIZE, .client = c->raw};
  CJRT_TRY(CJRT_PJRT(lib, PJRT_Client_Devices, &da));
  if (da.num_devices) {
    c->devices = calloc(da.num_devices, sizeof *c->devices);
    if (!c->devices) return cjrt__oom();
    for (size_t i = 0; i < da.num_devices; i++) {
      c->devices[i].client = c;
      c->devices[i].raw = da.devices[i];
      c->num_devices++;
      CJRT_TRY(cjrt__annotate(read_device(c, &c->devices[i]), "reading device %zu", i));
    }
  }
  PJRT_Client_AddressableDevices_Args aa = {
      .struct_size = PJRT_Client_AddressableDevices_Args_STRUCT_SIZE, .client = c->raw};
  CJRT_TRY(CJRT_PJRT(lib, PJRT_Client_AddressableDevices, &aa));
  CJRT_TRY(cjrt__client_map_devices(c, aa.addressable_devices, aa.num_addressable_devices,
                                     "PJRT_Client_AddressableDevices returned a device that "
                                     "PJRT_Client_Devices does not list",
                                     &c->addressable, &c->num_addressable));
  PJRT_Client_AddressableMemories_Args ma = {
      .struct_size = PJRT_Client_AddressableMemories_Args_STRUCT_SIZE, .client = c->raw};
  e = CJRT_PJRT(lib, PJRT_Client_AddressableMemories, &ma);
  if (!e)
    CJRT_TRY(add_memories(c, ma.addressable_memories, ma.num_addressable_memories,
                          &c->client_memories, &c->num_client_memories));
  cjrt_error_free(e);
  /* which devices can reach each memory */
  for (size_t i = 0; i < c->num_memories; i++) {
    cjrt_memory *m = c->memories[i];
    PJRT_Memory_AddressableByDevices_Args ba = {
        .struct_size = PJRT_Memory_AddressableByDevices_Args_STRUCT_SIZE, .memory = m->raw};
    e = CJRT_PJRT(lib, PJRT_Memory_AddressableByDevices, &ba);
    if (!e)
      CJRT_TRY(cjrt__client_map_devices(c, ba.devices, ba.num_devices, NULL, &m->devices,
                                         &m->num_devices));
    cjrt_error_free(e);
  }
  return NULL;
}

static void client_destroy(cjrt_client *c) {
  if (c->raw) {
    PJRT_Client_Destroy_Args d = {.struct_size = PJRT_Client_Destroy_Args_STRUCT_SIZE, .client = c->raw};
    cjrt_error_free(CJRT_PJRT(c->lib, PJRT_Client_Destroy, &d));
  }
  for (size_t i = 0; i < c->num_devices; i++) {
    cjrt_device *d = &c->devices[i];
    free(d->kind);
    free(d->debug_string);
    free(d->to_string);
    free(d->attr_storage);
    free(d->memories);
  }
  free(c->devices);
  free(c->addressable);
  for (size_t i = 0; i < c->num_memories; i++) {
    cjrt_memory *m = c->memories[i];
    free(m->kind);
    free(m->debug_string);
    free(m->to_string);
    free(m->devices);
    free(m);
  }
  free(c->memories);
  free(c->client_memories);
  free(c->platform_name);
  free(c->platform_version);
  cjrt_plugin_close(c->plugin);
  free(c);
}

CJRT_API cjrt_error *cjrt_client_create(cjrt_plugin *p, const cjrt_value *options,
                                        size_t num_options, cjrt_client **out) {
  *out = NULL;
  if (!p) return cjrt__error(CJRT_INVALID_ARGUMENT, "client: plugin is NULL");
  if (num_options && !options)
    return cjrt__error(CJRT_INVALID_ARGUMENT, "client: %zu options but the array is NULL", num_options);
  PJRT_NamedValue *nv = NULL;
  if (num_options) {
    nv = calloc(num_options, sizeof *nv);
    if (!nv) return cjrt__oom();
  }
  for (size_t i = 0; i < num_options; i++) {
    const cjrt_value *o = &options[i];
    if (!o->name || !*o->name) {
      free(nv);
      return cjrt__error(CJRT_INVALID_ARGUMENT, "client: option %zu has no name", i);
    }
    nv[i].struct_size = PJRT_NamedValue_STRUCT_SIZE;
    nv[i].name = o->name;
    nv[i].name_size = strlen(o->name);
    nv[i].type = (PJRT_NamedValue_Type)o->kind;
    switch (o->kind) {
      case CJRT_VALUE_STRING:
        nv[i].string_value = o->string_value ? o->string_value : "";
        nv[i].value_size = o->string_value ? o->size : 0;
        break;
      case CJRT_VALUE_INT64: nv[i].int64_value = o->int64_value; nv[i].value_size = 1; break;
      case CJRT_VALUE_INT64_LIST:
        nv[i].int64_array_value = o->int64_list;
        nv[i].value_size = o->int64_list ? o->size : 0;
        break;
      case CJRT_VALUE_FLOAT: nv[i].float_value = o->float_value; nv[i].value_size = 1; break;
      case CJRT_VALUE_BOOL: nv[i].bool_value = o->bool_value; nv[i].value_size = 1; break;
      default:
        free(nv);
        return cjrt__error(CJRT_INVALID_ARGUMENT, "client: option '%s' has unknown kind %d",
                           o->name, (int)o->kind);
    }
  }
  cjrt_client *c = calloc(1, sizeof *c);
  if (!c) {
    free(nv);
    return cjrt__oom();
  }
  atomic_init(&c->refs, 1);
  atomic_init(&c->on_cpu, -1);
  c->plugin = cjrt__plugin_retain(p);
  c->lib = p->lib;
  PJRT_Client_Create_Args ca = {.struct_size = PJRT_Client_Create_Args_STRUCT_SIZE,
                                .create_options = nv,
                                .num_options = num_options};
  cjrt_error *err = CJRT_PJRT(c->lib, PJRT_Client_Create, &ca);
  free(nv);
  if (!err) {
    c->raw = ca.client;
    if (!c->raw) err = cjrt__error(CJRT_INTERNAL, "PJRT_Client_Create returned no client");
  }
  if (!err) err = read_client(c);
  if (err) {
    client_destroy(c);
    return err;
  }
  *out = c;
  return NULL;
}

cjrt_client *cjrt__client_retain(cjrt_client *c) {
  atomic_fetch_add(&c->refs, 1);
  return c;
}
void cjrt__client_release(cjrt_client *c) {
  if (c && atomic_fetch_sub(&c->refs, 1) == 1) client_destroy(c);
}
CJRT_API void cjrt_client_free(cjrt_client *c) { cjrt__client_release(c); }

cjrt_device *cjrt__default_device(cjrt_client *c, cjrt_device *d, cjrt_error **err) {
  *err = NULL;
  if (d) {
    if (d->client != c) {
      *err = cjrt__error(CJRT_INVALID_ARGUMENT, "device %lld belongs to another client",
                         (long long)d->id);
      return NULL;
    }
    if (!d->addressable) {
      *err = cjrt__error(CJRT_INVALID_ARGUMENT, "device %lld is not addressable from this process",
                         (long long)d->id);
      return NULL;
    }
    return d;
  }
  if (!c->num_addressable) {
    *err = cjrt__error(CJRT_FAILED_PRECONDITION, "the client has no addressable devices");
    return NULL;
  }
  return c->addressable[0];
}

CJRT_API cjrt_plugin *cjrt_client_plugin(const cjrt_client *c) { return c->plugin; }
CJRT_API const char *cjrt_client_platform_name(const cjrt_client *c) { return c->platform_name; }
CJRT_API const char *cjrt_client_platform_version(const cjrt_client *c) { return c->platform_version; }
CJRT_API int cjrt_client_process_index(const cjrt_client *c) { return c->process_index; }
CJRT_API size_t cjrt_client_num_devices(const cjrt_client *c) { return c->num_devices; }
CJRT_API cjrt_device *cjrt_client_device(const cjrt_client *c, size_t i) {
  return i < c->num_devices ? &c->devices[i] : NULL;
}
CJRT_API size_t cjrt_client_num_addressable_devices(const cjrt_client *c) { return c->num_addressable; }
CJRT_API cjrt_device *cjrt_client_addressable_device(const cjrt_client *c, size_t i) {
  return i < c->num_addressable ? c->addressable[i] : NULL;
}
CJRT_API cjrt_device *cjrt_client_lookup_device(const cjrt_client *c, int64_t id) {
  for (size_t i = 0; i < c->num_devices; i++)
    if (c->devices[i].id == id) return &c->devices[i];
  return NULL;
}
CJRT_API size_t cjrt_client_num_memories(const cjrt_client *c) { return c->num_client_memories; }
CJRT_API cjrt_memory *cjrt_client_memory(const cjrt_client *c, size_t i) {
  return i < c->num_client_memories ? c->client_memories[i] : NULL;
}
CJRT_API struct PJRT_Client *cjrt_client_raw(const cjrt_client *c) { return c->raw; }

CJRT_API int64_t cjrt_device_id(const cjrt_device *d) { return d->id; }
CJRT_API int cjrt_device_process_index(const cjrt_device *d) { return d->process_index; }
CJRT_API int cjrt_device_local_hardware_id(const cjrt_device *d) { return d->local_hardware_id; }
CJRT_API bool cjrt_device_is_addressable(const cjrt_device *d) { return d->addressable; }
CJRT_API const char *cjrt_device_kind(const cjrt_device *d) { return d->kind; }
CJRT_API const char *cjrt_device_debug_string(const cjrt_device *d) { return d->debug_string; }
CJRT_API const char *cjrt_device_to_string(const cjrt_device *d) { return d->to_string; }
CJRT_API size_t cjrt_device_num_attributes(const cjrt_device *d) { return d->num_attrs; }
CJRT_API const cjrt_value *cjrt_device_attribute(const cjrt_device *d, size_t i) {
  return i < d->num_attrs ? &d->attrs[i] : NULL;
}
CJRT_API size_t cjrt_device_num_memories(const cjrt_device *d) { return d->num_memories; }
CJRT_API cjrt_memory *cjrt_device_memory(const cjrt_device *d, size_t i) {
  return i < d->num_memories ? d->memories[i] : NULL;
}
CJRT_API cjrt_memory *cjrt_device_default_memory(const cjrt_device *d) { return d->default_memory; }
CJRT_API struct PJRT_Device *cjrt_device_raw(const cjrt_device *d) { return d->raw; }

CJRT_API cjrt_error *cjrt_device_bytes_in_use(const cjrt_device *d, int64_t *out) {
  *out = -1;
  PJRT_Device_MemoryStats_Args a = {.struct_size = PJRT_Device_MemoryStats_Args_STRUCT_SIZE,
                                    .device = d->raw};
  CJRT_TRY(CJRT_PJRT(d->client->lib, PJRT_Device_MemoryStats, &a));
  *out = a.bytes_in_use;
  return NULL;
}

CJRT_API int cjrt_memory_id(const cjrt_memory *m) { return m->id; }
CJRT_API const char *cjrt_memory_kind(const cjrt_memory *m) { return m->kind; }
CJRT_API int cjrt_memory_kind_id(const cjrt_memory *m) { return m->kind_id; }
CJRT_API const char *cjrt_memory_debug_string(const cjrt_memory *m) { return m->debug_string; }
CJRT_API const char *cjrt_memory_to_string(const cjrt_memory *m) { return m->to_string; }
CJRT_API size_t cjrt_memory_num_devices(const cjrt_memory *m) { return m->num_devices; }
CJRT_API cjrt_device *cjrt_memory_device(const cjrt_memory *m, size_t i) {
  return i < m->num_devices ? m->devices[i] : NULL;
}
CJRT_API struct PJRT_Memory *cjrt_memory_raw(const cjrt_memory *m) { return m->raw; }
