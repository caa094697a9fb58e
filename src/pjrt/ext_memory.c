/* cjrt: the memory-descriptions extension. Every cjrt device, a client's or a described
 * topology's, has the same three memory kinds (runtime/client.h): "device" (the default),
 * "pinned_host" and "unpinned_host", whose kind ids are the PJRT_Memory_Kind_Id values of a
 * client's memories. The descriptions are static and shared by all devices. */
#include <string.h>

#include "pjrt/internal.h"
#include "pjrt_c_api_memory_descriptions_extension.h"

typedef struct memory_desc {
  uint32_t tag; /* kMemDescTag: lets Kind reject other pointers */
  cj_memory_kind kind;
} memory_desc;

enum { kMemDescTag = 0x6d646573u /* "mdes" */ };

static const memory_desc descs[CJ_MEMORY_KIND_COUNT] = {
    {kMemDescTag, CJ_MEMORY_DEVICE},
    {kMemDescTag, CJ_MEMORY_PINNED_HOST},
    {kMemDescTag, CJ_MEMORY_UNPINNED_HOST},
};
static const PJRT_MemoryDescription *const desc_list[CJ_MEMORY_KIND_COUNT] = {
    (const PJRT_MemoryDescription *)&descs[0], (const PJRT_MemoryDescription *)&descs[1],
    (const PJRT_MemoryDescription *)&descs[2]};

static PJRT_Error *memory_descriptions(PJRT_DeviceDescription_MemoryDescriptions_Args *args) {
  CJP_CHECK_ARGS(PJRT_DeviceDescription_MemoryDescriptions, args, default_memory_index);
  CJP_HANDLE(PJRT_DeviceDescription_MemoryDescriptions, cj_device_desc, cj_device_desc_check, d,
             args->device_description, "device_description");
  (void)d;
  args->memory_descriptions = desc_list;
  args->num_memory_descriptions = CJ_MEMORY_KIND_COUNT;
  args->default_memory_index = 0;
  return NULL;
}

static bool desc_check(const void *p) {
  for (int i = 0; i < CJ_MEMORY_KIND_COUNT; i++)
    if (p == &descs[i]) return true;
  return false;
}

static PJRT_Error *memory_kind(PJRT_MemoryDescription_Kind_Args *args) {
  CJP_CHECK_ARGS(PJRT_MemoryDescription_Kind, args, kind_id);
  CJP_HANDLE(PJRT_MemoryDescription_Kind, const memory_desc, desc_check, m,
             args->memory_description, "memory_description");
  const char *kind = cj_memory_kind_name(m->kind);
  CJP_SET_STR(args, kind, kind);
  args->kind_id = (int)m->kind;
  return NULL;
}

PJRT_MemoryDescriptions_Extension cjp_memory_extension = {
    .base = {.struct_size = PJRT_MemoryDescriptions_Extension_STRUCT_SIZE,
             .type = PJRT_Extension_Type_MemoryDescriptions,
             .next = NULL},
    .PJRT_DeviceDescription_MemoryDescriptions = memory_descriptions,
    .PJRT_MemoryDescription_Kind = memory_kind,
};
