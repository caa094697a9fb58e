/* A PJRT plugin for tests/cli that wraps another one ($CJRT_PERTURB_PLUGIN, a path) and changes
 * what it returns: every PJRT_Buffer_ToHostBuffer copy gets bit 6 of its last byte flipped (for
 * a little-endian f32 array: the last element's exponent). Everything else is the wrapped
 * plugin's. `cjrt bench --peer` against it must report the outputs as different. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "pjrt_c_api.h"

static PJRT_Api api;
static const PJRT_Api *real;

static PJRT_Error *to_host(PJRT_Buffer_ToHostBuffer_Args *a) {
  PJRT_Error *e = real->PJRT_Buffer_ToHostBuffer(a);
  if (e || !a->dst || !a->dst_size) return e;
  if (a->event) {
    PJRT_Event_Await_Args w = {.struct_size = PJRT_Event_Await_Args_STRUCT_SIZE, .event = a->event};
    e = real->PJRT_Event_Await(&w);
    PJRT_Event_Destroy_Args d = {.struct_size = PJRT_Event_Destroy_Args_STRUCT_SIZE, .event = a->event};
    PJRT_Error *e2 = real->PJRT_Event_Destroy(&d);
    if (e2) {
      PJRT_Error_Destroy_Args ed = {.struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE, .error = e2};
      real->PJRT_Error_Destroy(&ed);
    }
    a->event = NULL;
    if (e) return e;
  }
  ((unsigned char *)a->dst)[a->dst_size - 1] ^= 0x40;
  return NULL;
}

__attribute__((visibility("default"))) const PJRT_Api *GetPjrtApi(void) {
  if (real) return &api;
  const char *path = getenv("CJRT_PERTURB_PLUGIN");
  void *h = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
  const PJRT_Api *(*get)(void) = h ? (const PJRT_Api *(*)(void))dlsym(h, "GetPjrtApi") : NULL;
  real = get ? get() : NULL;
  if (!real) return NULL;
  size_t n = real->struct_size < sizeof api ? real->struct_size : sizeof api;
  memcpy(&api, real, n);
  api.struct_size = n;
  api.PJRT_Buffer_ToHostBuffer = to_host;
  return &api;
}
