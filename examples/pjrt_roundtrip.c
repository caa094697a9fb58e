/* cjrt example: drive a PJRT plugin through its C API alone, as a framework does. Loads the
 * plugin, creates a client, lists its devices and memories, and round-trips a buffer.
 *
 *   cc -std=c11 -Iinclude examples/pjrt_roundtrip.c -ldl -o build/pjrt_roundtrip
 *   build/pjrt_roundtrip build/pjrt_c_api_cjrt_plugin.so [cpu_device_count]
 *
 * Any PJRT plugin of API 0.114 works; errors are printed with the plugin's message.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pjrt_c_api.h"

static const PJRT_Api *api;

/* Zeroed *_Args with struct_size set. */
#define ARGS(T, v)         \
  T##_Args v;              \
  memset(&v, 0, sizeof v); \
  v.struct_size = T##_Args_STRUCT_SIZE

/* Prints and frees an error; returns 1 if there was one. */
static int failed(PJRT_Error *e, const char *what) {
  if (!e) return 0;
  ARGS(PJRT_Error_Message, m);
  m.error = e;
  api->PJRT_Error_Message(&m);
  fprintf(stderr, "%s: %.*s\n", what, (int)m.message_size, m.message);
  ARGS(PJRT_Error_Destroy, d);
  d.error = e;
  api->PJRT_Error_Destroy(&d);
  return 1;
}

static int wait_event(PJRT_Event *ev, const char *what) {
  ARGS(PJRT_Event_Await, a);
  a.event = ev;
  int bad = failed(api->PJRT_Event_Await(&a), what);
  ARGS(PJRT_Event_Destroy, d);
  d.event = ev;
  bad |= failed(api->PJRT_Event_Destroy(&d), "PJRT_Event_Destroy");
  return bad;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s PLUGIN.so [cpu_device_count]\n", argv[0]);
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
    return 1;
  }
  const PJRT_Api *(*get_api)(void);
  *(void **)&get_api = dlsym(lib, "GetPjrtApi");
  if (!get_api) {
    fprintf(stderr, "%s does not export GetPjrtApi\n", argv[1]);
    return 1;
  }
  api = get_api();
  printf("PJRT API %d.%d\n", api->pjrt_api_version.major_version,
         api->pjrt_api_version.minor_version);
  ARGS(PJRT_Plugin_Initialize, init);
  if (failed(api->PJRT_Plugin_Initialize(&init), "PJRT_Plugin_Initialize")) return 1;

  PJRT_NamedValue opt;
  memset(&opt, 0, sizeof opt);
  opt.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  opt.name = "cpu_device_count";
  opt.name_size = strlen(opt.name);
  opt.type = PJRT_NamedValue_kInt64;
  opt.int64_value = argc > 2 ? atoll(argv[2]) : 2;
  opt.value_size = 1;
  ARGS(PJRT_Client_Create, cc);
  cc.create_options = &opt;
  cc.num_options = 1;
  if (failed(api->PJRT_Client_Create(&cc), "PJRT_Client_Create")) return 1;
  PJRT_Client *client = cc.client;

  ARGS(PJRT_Client_PlatformName, pn);
  pn.client = client;
  ARGS(PJRT_Client_PlatformVersion, pv);
  pv.client = client;
  if (failed(api->PJRT_Client_PlatformName(&pn), "PJRT_Client_PlatformName") ||
      failed(api->PJRT_Client_PlatformVersion(&pv), "PJRT_Client_PlatformVersion"))
    return 1;
  printf("platform %.*s: %.*s\n", (int)pn.platform_name_size, pn.platform_name,
         (int)pv.platform_version_size, pv.platform_version);

  ARGS(PJRT_Client_Devices, dv);
  dv.client = client;
  if (failed(api->PJRT_Client_Devices(&dv), "PJRT_Client_Devices")) return 1;
  for (size_t i = 0; i < dv.num_devices; i++) {
    ARGS(PJRT_Device_GetDescription, gd);
    gd.device = dv.devices[i];
    ARGS(PJRT_DeviceDescription_ToString, ts);
    ARGS(PJRT_Device_AddressableMemories, am);
    am.device = dv.devices[i];
    if (failed(api->PJRT_Device_GetDescription(&gd), "PJRT_Device_GetDescription")) return 1;
    ts.device_description = gd.device_description;
    if (failed(api->PJRT_DeviceDescription_ToString(&ts), "PJRT_DeviceDescription_ToString") ||
        failed(api->PJRT_Device_AddressableMemories(&am), "PJRT_Device_AddressableMemories"))
      return 1;
    printf("  %.*s, memories:", (int)ts.to_string_size, ts.to_string);
    for (size_t k = 0; k < am.num_memories; k++) {
      ARGS(PJRT_Memory_Kind, mk);
      mk.memory = am.memories[k];
      if (failed(api->PJRT_Memory_Kind(&mk), "PJRT_Memory_Kind")) return 1;
      printf(" %.*s", (int)mk.kind_size, mk.kind);
    }
    printf("\n");
  }

  /* Round trip a 2x2 f32 array through the last device. */
  float in[4] = {1, 2, 3, 4}, out[4] = {0};
  int64_t dims[2] = {2, 2};
  ARGS(PJRT_Client_BufferFromHostBuffer, bh);
  bh.client = client;
  bh.data = in;
  bh.type = PJRT_Buffer_Type_F32;
  bh.dims = dims;
  bh.num_dims = 2;
  bh.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
  bh.device = dv.devices[dv.num_devices - 1];
  if (failed(api->PJRT_Client_BufferFromHostBuffer(&bh), "PJRT_Client_BufferFromHostBuffer") ||
      wait_event(bh.done_with_host_buffer, "done_with_host_buffer"))
    return 1;
  ARGS(PJRT_Buffer_ToHostBuffer, th);
  th.src = bh.buffer;
  th.dst = out;
  th.dst_size = sizeof out;
  if (failed(api->PJRT_Buffer_ToHostBuffer(&th), "PJRT_Buffer_ToHostBuffer") ||
      wait_event(th.event, "ToHostBuffer event"))
    return 1;
  printf("round trip: [[%g, %g], [%g, %g]] -> [[%g, %g], [%g, %g]] %s\n", in[0], in[1], in[2],
         in[3], out[0], out[1], out[2], out[3], memcmp(in, out, sizeof in) ? "MISMATCH" : "ok");

  ARGS(PJRT_Buffer_Destroy, bd);
  bd.buffer = bh.buffer;
  ARGS(PJRT_Client_Destroy, cd);
  cd.client = client;
  int bad = failed(api->PJRT_Buffer_Destroy(&bd), "PJRT_Buffer_Destroy") |
            failed(api->PJRT_Client_Destroy(&cd), "PJRT_Client_Destroy");
  dlclose(lib);
  return bad || memcmp(in, out, sizeof in) ? 1 : 0;
}
