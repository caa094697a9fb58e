/* A tiny fake PJRT plugin for libcjrt's loader tests, built in several variants:
 *   FAKE_MAJOR / FAKE_MINOR   the version it declares
 *   FAKE_LAST_SLOT            the last slot its struct_size covers (an older plugin's table);
 *                             the slots beyond hold garbage pointers that crash if called
 *   FAKE_NO_SYMBOL            no GetPjrtApi at all
 *   FAKE_INIT_FAILS           PJRT_Plugin_Initialize returns an error
 *   FAKE_NULL_API             GetPjrtApi returns NULL
 * It has one device and a client that can only describe itself; PJRT_Plugin_Attributes reports
 * how many times Initialize ran ("init_count"). */
#include <stdlib.h>
#include <string.h>

#include "pjrt_c_api.h"

#ifndef FAKE_MAJOR
#define FAKE_MAJOR PJRT_API_MAJOR
#endif
#ifndef FAKE_MINOR
#define FAKE_MINOR PJRT_API_MINOR
#endif

#define EXPORT __attribute__((visibility("default")))

struct fake_error {
  PJRT_Error base; /* vtable pointer first, as 0.107 wants; unused here */
  PJRT_Error_Code code;
  char msg[128];
};

static PJRT_Error *make_error(PJRT_Error_Code code, const char *msg) {
  struct fake_error *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  e->code = code;
  strncpy(e->msg, msg, sizeof e->msg - 1);
  return &e->base;
}
static void error_destroy(PJRT_Error_Destroy_Args *a) { free(a->error); }
static void error_message(PJRT_Error_Message_Args *a) {
  const struct fake_error *e = (const struct fake_error *)a->error;
  a->message = e->msg;
  a->message_size = strlen(e->msg);
}
static PJRT_Error *error_get_code(PJRT_Error_GetCode_Args *a) {
  a->code = ((const struct fake_error *)a->error)->code;
  return NULL;
}

static int64_t init_count = 0;
static PJRT_Error *plugin_initialize(PJRT_Plugin_Initialize_Args *a) {
  (void)a;
  init_count++;
#ifdef FAKE_INIT_FAILS
  return make_error(PJRT_Error_Code_INTERNAL, "fake initialization failure");
#else
  return NULL;
#endif
}
static PJRT_NamedValue attrs[2];
static PJRT_Error *plugin_attributes(PJRT_Plugin_Attributes_Args *a) {
  static const int64_t ver[3] = {1, 2, 3};
  attrs[0] = (PJRT_NamedValue){.struct_size = PJRT_NamedValue_STRUCT_SIZE, .name = "init_count",
                               .name_size = 10, .type = PJRT_NamedValue_kInt64, .value_size = 1};
  attrs[0].int64_value = init_count;
  attrs[1] = (PJRT_NamedValue){.struct_size = PJRT_NamedValue_STRUCT_SIZE,
                               .name = "some_version_xyz", /* name_size cuts it: not terminated */
                               .name_size = 12, .type = PJRT_NamedValue_kInt64List, .value_size = 3};
  attrs[1].int64_array_value = ver;
  a->attributes = attrs;
  a->num_attributes = 2;
  return NULL;
}

/* One client, one device: enough to create a client and fail cleanly beyond that. */
static int the_client, the_device;
static PJRT_Device *const devices[1] = {(PJRT_Device *)&the_device};
static PJRT_Error *client_create(PJRT_Client_Create_Args *a) {
  for (size_t i = 0; i < a->num_options; i++)
    if (a->create_options[i].name_size == 4 && !memcmp(a->create_options[i].name, "fail", 4))
      return make_error(PJRT_Error_Code_INVALID_ARGUMENT, "fake: option 'fail' was given");
  a->client = (PJRT_Client *)&the_client;
  return NULL;
}
static PJRT_Error *client_destroy(PJRT_Client_Destroy_Args *a) {
  (void)a;
  return NULL;
}
static PJRT_Error *client_platform_name(PJRT_Client_PlatformName_Args *a) {
  a->platform_name = "fakeplatform";
  a->platform_name_size = 4; /* not NUL-terminated where it ends: "fake" */
  return NULL;
}
static PJRT_Error *client_devices(PJRT_Client_Devices_Args *a) {
  a->devices = devices;
  a->num_devices = 1;
  return NULL;
}
static PJRT_Error *client_addressable_devices(PJRT_Client_AddressableDevices_Args *a) {
  a->addressable_devices = devices;
  a->num_addressable_devices = 1;
  return NULL;
}
static PJRT_Error *device_get_description(PJRT_Device_GetDescription_Args *a) {
  a->device_description = (PJRT_DeviceDescription *)a->device;
  return NULL;
}
static PJRT_Error *description_id(PJRT_DeviceDescription_Id_Args *a) {
  a->id = 7;
  return NULL;
}
static PJRT_Error *device_is_addressable(PJRT_Device_IsAddressable_Args *a) {
  a->is_addressable = true;
  return NULL;
}
#ifndef FAKE_OK
static PJRT_Error *compile(PJRT_Client_Compile_Args *a) {
  (void)a;
  return make_error(PJRT_Error_Code_UNIMPLEMENTED, "fake: cannot compile");
}
#else
/* FAKE_OK also has host buffers, events, and "programs" named by their text:
 *   "add"   one output, the elementwise sum of two f32 arguments of equal shape
 *   "fail"  executes, but its completion event carries an error
 * anything else fails to compile. The last compile options are kept for the test to decode. */
struct fake_buffer {
  PJRT_Buffer_Type type;
  int64_t dims[8];
  size_t rank, nbytes;
  void *data;
};
struct fake_event {
  PJRT_Error_Code code; /* 0: success */
  char msg[64];
};
struct fake_exe {
  int kind; /* 1 add, 2 fail */
};
static char last_options[4096];
static size_t last_options_size;
static int live_buffers, live_events, live_exes;

EXPORT void fake_last_compile_options(const char **data, size_t *size, int *buffers, int *events,
                                      int *exes);
EXPORT void fake_last_compile_options(const char **data, size_t *size, int *buffers, int *events,
                                      int *exes) {
  *data = last_options;
  *size = last_options_size;
  *buffers = live_buffers;
  *events = live_events;
  *exes = live_exes;
}

static PJRT_Event *new_event(PJRT_Error_Code code, const char *msg) {
  struct fake_event *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  e->code = code;
  if (msg) strncpy(e->msg, msg, sizeof e->msg - 1);
  live_events++;
  return (PJRT_Event *)e;
}
static PJRT_Error *event_destroy(PJRT_Event_Destroy_Args *a) {
  if (a->event) live_events--;
  free(a->event);
  return NULL;
}
static PJRT_Error *event_await(PJRT_Event_Await_Args *a) {
  const struct fake_event *e = (const struct fake_event *)a->event;
  return e->code ? make_error(e->code, e->msg) : NULL;
}
static size_t type_size(PJRT_Buffer_Type t) {
  switch (t) {
    case PJRT_Buffer_Type_F32: case PJRT_Buffer_Type_S32: return 4;
    case PJRT_Buffer_Type_F64: case PJRT_Buffer_Type_S64: return 8;
    default: return 1;
  }
}
static PJRT_Error *buffer_from_host(PJRT_Client_BufferFromHostBuffer_Args *a) {
  struct fake_buffer *b = calloc(1, sizeof *b);
  if (!b || a->num_dims > 8) return make_error(PJRT_Error_Code_INTERNAL, "fake: too much");
  if (a->byte_strides) {
    free(b);
    return make_error(PJRT_Error_Code_UNIMPLEMENTED, "fake: no strides");
  }
  b->type = a->type;
  b->rank = a->num_dims;
  size_t n = 1;
  for (size_t i = 0; i < a->num_dims; i++) n *= (size_t)(b->dims[i] = a->dims[i]);
  b->nbytes = n * type_size(a->type);
  b->data = malloc(b->nbytes ? b->nbytes : 1);
  memcpy(b->data, a->data, b->nbytes);
  live_buffers++;
  a->buffer = (PJRT_Buffer *)b;
  a->done_with_host_buffer = new_event(0, NULL);
  return NULL;
}
static PJRT_Error *buffer_destroy(PJRT_Buffer_Destroy_Args *a) {
  struct fake_buffer *b = (struct fake_buffer *)a->buffer;
  if (b) {
    live_buffers--;
    free(b->data);
    free(b);
  }
  return NULL;
}
static PJRT_Error *buffer_type(PJRT_Buffer_ElementType_Args *a) {
  a->type = ((struct fake_buffer *)a->buffer)->type;
  return NULL;
}
static PJRT_Error *buffer_dims(PJRT_Buffer_Dimensions_Args *a) {
  struct fake_buffer *b = (struct fake_buffer *)a->buffer;
  a->dims = b->dims;
  a->num_dims = b->rank;
  return NULL;
}
static PJRT_Error *buffer_device(PJRT_Buffer_Device_Args *a) {
  a->device = devices[0];
  return NULL;
}
static PJRT_Error *to_host(PJRT_Buffer_ToHostBuffer_Args *a) {
  struct fake_buffer *b = (struct fake_buffer *)a->src;
  if (a->dst_size < b->nbytes) return make_error(PJRT_Error_Code_INVALID_ARGUMENT, "fake: small dst");
  memcpy(a->dst, b->data, b->nbytes);
  a->event = new_event(0, NULL);
  return NULL;
}
static PJRT_Error *compile(PJRT_Client_Compile_Args *a) {
  const PJRT_Program *p = a->program;
  last_options_size = a->compile_options_size < sizeof last_options ? a->compile_options_size : 0;
  memcpy(last_options, a->compile_options, last_options_size);
  if (p->format_size != 4 || memcmp(p->format, "mlir", 4))
    return make_error(PJRT_Error_Code_INVALID_ARGUMENT, "fake: format is not mlir");
  int kind = p->code_size == 3 && !memcmp(p->code, "add", 3)    ? 1
             : p->code_size == 4 && !memcmp(p->code, "fail", 4) ? 2
                                                                 : 0;
  if (!kind) return make_error(PJRT_Error_Code_INVALID_ARGUMENT, "fake: unknown program");
  struct fake_exe *e = calloc(1, sizeof *e);
  e->kind = kind;
  live_exes++;
  a->executable = (PJRT_LoadedExecutable *)e;
  return NULL;
}
static PJRT_Error *exe_destroy(PJRT_LoadedExecutable_Destroy_Args *a) {
  if (a->executable) live_exes--;
  free(a->executable);
  return NULL;
}
static PJRT_Error *exe_devices(PJRT_LoadedExecutable_AddressableDevices_Args *a) {
  a->addressable_devices = devices;
  a->num_addressable_devices = 1;
  return NULL;
}
static PJRT_Error *exe_get(PJRT_LoadedExecutable_GetExecutable_Args *a) {
  live_exes++; /* a new reference the caller destroys */
  a->executable = (PJRT_Executable *)a->loaded_executable;
  return NULL;
}
static PJRT_Error *x_destroy(PJRT_Executable_Destroy_Args *a) {
  (void)a;
  live_exes--;
  return NULL;
}
static PJRT_Error *x_name(PJRT_Executable_Name_Args *a) {
  a->executable_name = "fakeprog";
  a->executable_name_size = 8;
  return NULL;
}
static PJRT_Error *x_num_outputs(PJRT_Executable_NumOutputs_Args *a) {
  a->num_outputs = 1;
  return NULL;
}
static PJRT_Error *execute(PJRT_LoadedExecutable_Execute_Args *a) {
  const struct fake_exe *e = (const struct fake_exe *)a->executable;
  if (a->num_devices != 1 || a->execute_device)
    return make_error(PJRT_Error_Code_INVALID_ARGUMENT, "fake: one device only");
  if (a->num_args != 2) return make_error(PJRT_Error_Code_INVALID_ARGUMENT, "fake: add takes 2 arguments");
  const struct fake_buffer *x = (const struct fake_buffer *)a->argument_lists[0][0];
  const struct fake_buffer *y = (const struct fake_buffer *)a->argument_lists[0][1];
  if (x->type != PJRT_Buffer_Type_F32 || y->type != PJRT_Buffer_Type_F32 || x->nbytes != y->nbytes)
    return make_error(PJRT_Error_Code_INVALID_ARGUMENT, "fake: add wants two f32 arrays of one shape");
  struct fake_buffer *o = calloc(1, sizeof *o);
  *o = *x;
  o->data = malloc(x->nbytes ? x->nbytes : 1);
  for (size_t i = 0; i < x->nbytes / 4; i++)
    ((float *)o->data)[i] = ((const float *)x->data)[i] + ((const float *)y->data)[i];
  live_buffers++;
  a->output_lists[0][0] = (PJRT_Buffer *)o;
  if (a->device_complete_events)
    a->device_complete_events[0] =
        e->kind == 2 ? new_event(PJRT_Error_Code_INTERNAL, "fake: the program failed") : new_event(0, NULL);
  return NULL;
}
#endif
__attribute__((unused)) static PJRT_Error *create_view(PJRT_Client_CreateViewOfDeviceBuffer_Args *a) {
  (void)a;
  return make_error(PJRT_Error_Code_UNIMPLEMENTED, "fake: no views");
}

static struct {
  PJRT_Api api;
  void *guard[8];
} table;

EXPORT const PJRT_Api *fake_api_table(void);
#ifndef FAKE_NO_SYMBOL
EXPORT const PJRT_Api *GetPjrtApi(void) {
#ifdef FAKE_NULL_API
  return NULL;
#else
  return fake_api_table();
#endif
}
#endif

EXPORT const PJRT_Api *fake_api_table(void) {
  /* garbage everywhere first: a loader that reads a slot beyond struct_size crashes */
  memset(&table, 0xA5, sizeof table);
  table.api.extension_start = NULL;
  table.api.pjrt_api_version.struct_size = PJRT_Api_Version_STRUCT_SIZE;
  table.api.pjrt_api_version.extension_start = NULL;
  table.api.pjrt_api_version.major_version = FAKE_MAJOR;
  table.api.pjrt_api_version.minor_version = FAKE_MINOR;
#ifdef FAKE_LAST_SLOT
  table.api.struct_size = PJRT_STRUCT_SIZE(PJRT_Api, FAKE_LAST_SLOT);
#else
  table.api.struct_size = PJRT_Api_STRUCT_SIZE;
#endif
  /* in range: NULL unless implemented below */
  char *base = (char *)&table.api;
  for (size_t off = offsetof(PJRT_Api, PJRT_Error_Destroy); off < table.api.struct_size; off += sizeof(void *))
    memset(base + off, 0, sizeof(void *));
  table.api.PJRT_Error_Destroy = error_destroy;
  table.api.PJRT_Error_Message = error_message;
  table.api.PJRT_Error_GetCode = error_get_code;
  table.api.PJRT_Plugin_Initialize = plugin_initialize;
  table.api.PJRT_Plugin_Attributes = plugin_attributes;
  table.api.PJRT_Client_Create = client_create;
  table.api.PJRT_Client_Destroy = client_destroy;
  table.api.PJRT_Client_PlatformName = client_platform_name;
  table.api.PJRT_Client_Devices = client_devices;
  table.api.PJRT_Client_AddressableDevices = client_addressable_devices;
  table.api.PJRT_Device_GetDescription = device_get_description;
  table.api.PJRT_DeviceDescription_Id = description_id;
  table.api.PJRT_Device_IsAddressable = device_is_addressable;
  table.api.PJRT_Client_Compile = compile;
#ifdef FAKE_OK
  table.api.PJRT_Event_Destroy = event_destroy;
  table.api.PJRT_Event_Await = event_await;
  table.api.PJRT_Client_BufferFromHostBuffer = buffer_from_host;
  table.api.PJRT_Buffer_Destroy = buffer_destroy;
  table.api.PJRT_Buffer_ElementType = buffer_type;
  table.api.PJRT_Buffer_Dimensions = buffer_dims;
  table.api.PJRT_Buffer_Device = buffer_device;
  table.api.PJRT_Buffer_ToHostBuffer = to_host;
  table.api.PJRT_LoadedExecutable_Destroy = exe_destroy;
  table.api.PJRT_LoadedExecutable_AddressableDevices = exe_devices;
  table.api.PJRT_LoadedExecutable_GetExecutable = exe_get;
  table.api.PJRT_Executable_Destroy = x_destroy;
  table.api.PJRT_Executable_Name = x_name;
  table.api.PJRT_Executable_NumOutputs = x_num_outputs;
  table.api.PJRT_LoadedExecutable_Execute = execute;
#endif
#ifndef FAKE_LAST_SLOT
  table.api.PJRT_Client_CreateViewOfDeviceBuffer = create_view;
#endif
  return &table.api;
}
