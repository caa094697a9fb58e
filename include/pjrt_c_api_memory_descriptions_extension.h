/* cjrt: the PJRT memory-descriptions extension (PJRT_Extension_Type_MemoryDescriptions), in a
 * header of its own beside pjrt_c_api.h, as upstream keeps it; the struct layouts are
 * upstream's, written here from its facts. */
#ifndef CJRT_PJRT_C_API_MEMORY_DESCRIPTIONS_EXTENSION_H
#define CJRT_PJRT_C_API_MEMORY_DESCRIPTIONS_EXTENSION_H

#include "pjrt_c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kinds of memory a device description offers, without a client: what ahead-of-time
 * compilation for a topology needs to place arrays in non-default memories. Version 1. */
#define PJRT_API_MEMORY_DESCRIPTIONS_EXTENSION_VERSION 1

typedef struct PJRT_MemoryDescription PJRT_MemoryDescription;

struct PJRT_DeviceDescription_MemoryDescriptions_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_DeviceDescription* device_description;
  const PJRT_MemoryDescription* const* memory_descriptions; /* out; owned by the plugin */
  size_t num_memory_descriptions;                           /* out */
  size_t default_memory_index; /* out: index into memory_descriptions; (size_t)-1 for none */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_DeviceDescription_MemoryDescriptions_Args, default_memory_index);

/* Every memory description of the device, in no particular order. */
typedef PJRT_Error* PJRT_DeviceDescription_MemoryDescriptions(
    PJRT_DeviceDescription_MemoryDescriptions_Args* args);

struct PJRT_MemoryDescription_Kind_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const PJRT_MemoryDescription* memory_description;
  const char* kind; /* out; lives as long as memory_description */
  size_t kind_size; /* out */
  int kind_id;      /* out */
};
PJRT_DEFINE_STRUCT_TRAITS(PJRT_MemoryDescription_Kind_Args, kind_id);

/* The platform-specific kind of a memory description, as text and as a number. */
typedef PJRT_Error* PJRT_MemoryDescription_Kind(PJRT_MemoryDescription_Kind_Args* args);

typedef struct PJRT_MemoryDescriptions_Extension {
  PJRT_Extension_Base base;
  PJRT_DeviceDescription_MemoryDescriptions* PJRT_DeviceDescription_MemoryDescriptions;
  PJRT_MemoryDescription_Kind* PJRT_MemoryDescription_Kind;
} PJRT_MemoryDescriptions_Extension;
PJRT_DEFINE_STRUCT_TRAITS(PJRT_MemoryDescriptions_Extension, PJRT_MemoryDescription_Kind);

#ifdef __cplusplus
}
#endif

#endif
