/* cjrt ABI test: include/pjrt_c_api.h against tables measured from the upstream 0.114 header.
 *
 * Reads <reference dir>/pjrt_api_fields_0.114.txt (every PJRT_Api slot, in ABI order) and
 * pjrt_struct_sizes_0.114_x86_64.txt (every *_STRUCT_SIZE) and checks, for each entry, our
 * slot offset and struct size. Both directions: every table entry must exist here and every
 * struct we declare must be in the table. Also checks the plugin's slot list (slots.def) follows
 * the same order, and the enum values frameworks depend on.
 *
 * Usage: test_abi <reference dir>
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "pjrt_c_api.h"

typedef struct entry {
  const char *name;
  size_t value;
  int seen;
} entry;

/* Every struct of the header with its *_STRUCT_SIZE. */
static entry structs[] = {
#define S(name) {#name, (size_t)name##_STRUCT_SIZE, 0},
  S(PJRT_Api_Version)
  S(PJRT_AsyncHostToDeviceTransferManager_AddMetadata_Args)
  S(PJRT_AsyncHostToDeviceTransferManager_BufferCount_Args)
  S(PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args)
  S(PJRT_AsyncHostToDeviceTransferManager_Destroy_Args)
  S(PJRT_AsyncHostToDeviceTransferManager_Device_Args)
  S(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args)
  S(PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args)
  S(PJRT_AsyncHostToDeviceTransferManager_TransferData_Args)
  S(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args)
  S(PJRT_AsyncTrackingEvent_Destroy_Args)
  S(PJRT_Buffer_Bitcast_Args)
  S(PJRT_Buffer_CopyRawToHostFuture_Args)
  S(PJRT_Buffer_CopyRawToHostFuture_Callback_Args)
  S(PJRT_Buffer_CopyRawToHost_Args)
  S(PJRT_Buffer_CopyToDevice_Args)
  S(PJRT_Buffer_CopyToMemory_Args)
  S(PJRT_Buffer_DecreaseExternalReferenceCount_Args)
  S(PJRT_Buffer_Delete_Args)
  S(PJRT_Buffer_Destroy_Args)
  S(PJRT_Buffer_Device_Args)
  S(PJRT_Buffer_Dimensions_Args)
  S(PJRT_Buffer_DonateWithControlDependency_Args)
  S(PJRT_Buffer_DonateWithControlDependency_Callback_Args)
  S(PJRT_Buffer_DynamicDimensionIndices_Args)
  S(PJRT_Buffer_ElementType_Args)
  S(PJRT_Buffer_GetMemoryLayout_Args)
  S(PJRT_Buffer_IncreaseExternalReferenceCount_Args)
  S(PJRT_Buffer_IsDeleted_Args)
  S(PJRT_Buffer_IsOnCpu_Args)
  S(PJRT_Buffer_MemoryLayout)
  S(PJRT_Buffer_MemoryLayout_Strides)
  S(PJRT_Buffer_MemoryLayout_Tiled)
  S(PJRT_Buffer_Memory_Args)
  S(PJRT_Buffer_OnDeviceSizeInBytes_Args)
  S(PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args)
  S(PJRT_Buffer_ReadyEvent_Args)
  S(PJRT_Buffer_ToHostBuffer_Args)
  S(PJRT_Buffer_UnpaddedDimensions_Args)
  S(PJRT_Buffer_UnsafePointer_Args)
  S(PJRT_Client_AddressableDevices_Args)
  S(PJRT_Client_AddressableMemories_Args)
  S(PJRT_Client_BufferFromHostBuffer_Args)
  S(PJRT_Client_Compile_Args)
  S(PJRT_Client_CreateAliasBuffer_Args)
  S(PJRT_Client_CreateBuffersForAsyncHostToDevice_Args)
  S(PJRT_Client_CreateErrorBuffer_Args)
  S(PJRT_Client_CreateUninitializedBuffer_Args)
  S(PJRT_Client_CreateViewOfDeviceBuffer_Args)
  S(PJRT_Client_Create_Args)
  S(PJRT_Client_DefaultDeviceAssignment_Args)
  S(PJRT_Client_Destroy_Args)
  S(PJRT_Client_Devices_Args)
  S(PJRT_Client_DmaMap_Args)
  S(PJRT_Client_DmaUnmap_Args)
  S(PJRT_Client_FulfillAliasBuffer_Args)
  S(PJRT_Client_Load_Args)
  S(PJRT_Client_LookupAddressableDevice_Args)
  S(PJRT_Client_LookupDevice_Args)
  S(PJRT_Client_PlatformName_Args)
  S(PJRT_Client_PlatformVersion_Args)
  S(PJRT_Client_ProcessIndex_Args)
  S(PJRT_Client_TopologyDescription_Args)
  S(PJRT_Client_UpdateGlobalProcessInfo_Args)
  S(PJRT_Compile_Args)
  S(PJRT_CopyToDeviceStream_AddChunk_Args)
  S(PJRT_CopyToDeviceStream_CurrentBytes_Args)
  S(PJRT_CopyToDeviceStream_Destroy_Args)
  S(PJRT_CopyToDeviceStream_GranuleSize_Args)
  S(PJRT_CopyToDeviceStream_TotalBytes_Args)
  S(PJRT_DeviceDescription_Attributes_Args)
  S(PJRT_DeviceDescription_DebugString_Args)
  S(PJRT_DeviceDescription_Id_Args)
  S(PJRT_DeviceDescription_Kind_Args)
  S(PJRT_DeviceDescription_ProcessIndex_Args)
  S(PJRT_DeviceDescription_ToString_Args)
  S(PJRT_Device_AddressableMemories_Args)
  S(PJRT_Device_ClearMemoryStats_Args)
  S(PJRT_Device_CreateAsyncTrackingEvent_Args)
  S(PJRT_Device_DefaultMemory_Args)
  S(PJRT_Device_GetAttributes_Args)
  S(PJRT_Device_GetDescription_Args)
  S(PJRT_Device_IsAddressable_Args)
  S(PJRT_Device_LocalHardwareId_Args)
  S(PJRT_Device_MemoryStats_Args)
  S(PJRT_Device_PoisonExecution_Args)
  S(PJRT_Error)
  S(PJRT_Error_Destroy_Args)
  S(PJRT_Error_ForEachPayload_Args)
  S(PJRT_Error_FunctionTable)
  S(PJRT_Error_GetCode_Args)
  S(PJRT_Error_Message_Args)
  S(PJRT_Event_Await_Args)
  S(PJRT_Event_Create_Args)
  S(PJRT_Event_Destroy_Args)
  S(PJRT_Event_Error_Args)
  S(PJRT_Event_IsReady_Args)
  S(PJRT_Event_OnReady_Args)
  S(PJRT_Event_Set_Args)
  S(PJRT_Executable_DeserializeAndLoad_Args)
  S(PJRT_Executable_Destroy_Args)
  S(PJRT_Executable_Fingerprint_Args)
  S(PJRT_Executable_GetCompileOptions_Args)
  S(PJRT_Executable_GetCompiledMemoryStats_Args)
  S(PJRT_Executable_GetCostAnalysis_Args)
  S(PJRT_Executable_Name_Args)
  S(PJRT_Executable_NumOutputs_Args)
  S(PJRT_Executable_NumPartitions_Args)
  S(PJRT_Executable_NumReplicas_Args)
  S(PJRT_Executable_OptimizedProgram_Args)
  S(PJRT_Executable_OutputDimensions_Args)
  S(PJRT_Executable_OutputElementTypes_Args)
  S(PJRT_Executable_OutputMemoryKinds_Args)
  S(PJRT_Executable_ParameterMemoryKinds_Args)
  S(PJRT_Executable_Serialize_Args)
  S(PJRT_Executable_SizeOfGeneratedCodeInBytes_Args)
  S(PJRT_ExecuteContext_Create_Args)
  S(PJRT_ExecuteContext_Destroy_Args)
  S(PJRT_ExecuteOptions)
  S(PJRT_Extension_Base)
  S(PJRT_HloOutputCallbackInfo)
  S(PJRT_KeyValueGetCallback_Args)
  S(PJRT_KeyValuePutCallback_Args)
  S(PJRT_KeyValueTryGetCallback_Args)
  S(PJRT_LoadOptions)
  S(PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args)
  S(PJRT_LoadedExecutable_AddressableDevices_Args)
  S(PJRT_LoadedExecutable_Delete_Args)
  S(PJRT_LoadedExecutable_Destroy_Args)
  S(PJRT_LoadedExecutable_Execute_Args)
  S(PJRT_LoadedExecutable_Fingerprint_Args)
  S(PJRT_LoadedExecutable_GetDeviceAssignment_Args)
  S(PJRT_LoadedExecutable_GetExecutable_Args)
  S(PJRT_LoadedExecutable_IsDeleted_Args)
  S(PJRT_Memory)
  S(PJRT_Memory_AddressableByDevices_Args)
  S(PJRT_Memory_DebugString_Args)
  S(PJRT_Memory_FunctionTable)
  S(PJRT_Memory_Id_Args)
  S(PJRT_Memory_Kind_Args)
  S(PJRT_Memory_Kind_Id_Args)
  S(PJRT_Memory_ToString_Args)
  S(PJRT_NamedValue)
  S(PJRT_Plugin_Attributes_Args)
  S(PJRT_Plugin_Initialize_Args)
  S(PJRT_ProcessInfo)
  S(PJRT_Program)
  S(PJRT_RecvCallbackInfo)
  S(PJRT_SendCallbackInfo)
  S(PJRT_ShapeSpec)
  S(PJRT_TopologyDescription_Attributes_Args)
  S(PJRT_TopologyDescription_Create_Args)
  S(PJRT_TopologyDescription_Deserialize_Args)
  S(PJRT_TopologyDescription_Destroy_Args)
  S(PJRT_TopologyDescription_Fingerprint_Args)
  S(PJRT_TopologyDescription_GetDeviceDescriptions_Args)
  S(PJRT_TopologyDescription_GetMemorySpaceKindIds_Args)
  S(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args)
  S(PJRT_TopologyDescription_PlatformName_Args)
  S(PJRT_TopologyDescription_PlatformVersion_Args)
  S(PJRT_TopologyDescription_Serialize_Args)
#undef S
};

/* Every slot of PJRT_Api with its offset, in the order of the plugin's slot table. */
static entry slots[] = {
#define SLOT(name, kind) {#name, offsetof(PJRT_Api, name), 0},
#include "pjrt/slots.def"
#undef SLOT
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static entry *find(entry *tab, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(tab[i].name, name) == 0) return &tab[i];
  return NULL;
}

static FILE *open_ref(const char *dir, const char *file) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  FILE *f = fopen(path, "r");
  CHECK_MSG(f != NULL, "cannot open %s", path);
  return f;
}

static void check_slots(const char *dir) {
  FILE *f = open_ref(dir, "pjrt_api_fields_0.114.txt");
  if (!f) return;
  char line[512];
  size_t i = 0;
  while (fgets(line, sizeof line, f)) {
    int no;
    char name[256];
    if (sscanf(line, "%d %255s", &no, name) != 2) continue;
    CHECK_EQ_INT(no, (long long)i + 1);
    entry *e = find(slots, COUNT(slots), name);
    CHECK_MSG(e != NULL, "slot %s is missing from PJRT_Api", name);
    if (e) {
      e->seen = 1;
      size_t want = offsetof(PJRT_Api, PJRT_Error_Destroy) + i * sizeof(void *);
      CHECK_MSG(e->value == want, "slot %d %s at offset %zu, upstream %zu", no, name, e->value,
                want);
      /* slots.def must list the slots in ABI order too. */
      CHECK_MSG(i < COUNT(slots) && strcmp(slots[i].name, name) == 0,
                "slots.def row %zu is %s, upstream slot %d is %s", i + 1,
                i < COUNT(slots) ? slots[i].name : "(none)", no, name);
    }
    i++;
  }
  fclose(f);
  CHECK_EQ_INT(i, 138);
  CHECK_EQ_INT(COUNT(slots), 138);
  for (size_t k = 0; k < COUNT(slots); k++)
    CHECK_MSG(slots[k].seen, "slot %s is not in the upstream table", slots[k].name);
}

static void check_structs(const char *dir) {
  FILE *f = open_ref(dir, "pjrt_struct_sizes_0.114_x86_64.txt");
  if (!f) return;
  char line[512];
  size_t n = 0;
  while (fgets(line, sizeof line, f)) {
    char name[256];
    unsigned long long v, v2;
    if (sscanf(line, "PJRT_Api_STRUCT_SIZE=%llu sizeof(PJRT_Api)=%llu", &v, &v2) == 2) {
      CHECK_EQ_INT(PJRT_Api_STRUCT_SIZE, v);
      CHECK_EQ_INT(sizeof(PJRT_Api), v2);
      continue;
    }
    if (sscanf(line, "offsetof(PJRT_Api,PJRT_Error_Destroy)=%llu", &v) == 1) {
      CHECK_EQ_INT(offsetof(PJRT_Api, PJRT_Error_Destroy), v);
      continue;
    }
    if (sscanf(line, "%255s %llu", name, &v) != 2) continue;
    entry *e = find(structs, COUNT(structs), name);
    CHECK_MSG(e != NULL, "struct %s is missing from our header", name);
    if (e) {
      e->seen = 1;
      CHECK_MSG(e->value == v, "%s_STRUCT_SIZE is %zu, upstream %llu", name, e->value, v);
    }
    n++;
  }
  fclose(f);
  CHECK_EQ_INT(n, COUNT(structs));
  for (size_t k = 0; k < COUNT(structs); k++)
    CHECK_MSG(structs[k].seen, "struct %s is not in the upstream table", structs[k].name);
}

static void check_enums(void) {
  /* PJRT_Buffer_Type: PJRT's own numbering. */
  CHECK_EQ_INT(PJRT_Buffer_Type_INVALID, 0);
  CHECK_EQ_INT(PJRT_Buffer_Type_PRED, 1);
  CHECK_EQ_INT(PJRT_Buffer_Type_S64, 5);
  CHECK_EQ_INT(PJRT_Buffer_Type_U64, 9);
  CHECK_EQ_INT(PJRT_Buffer_Type_F16, 10);
  CHECK_EQ_INT(PJRT_Buffer_Type_BF16, 13);
  CHECK_EQ_INT(PJRT_Buffer_Type_C128, 15);
  CHECK_EQ_INT(PJRT_Buffer_Type_F8E4M3FNUZ, 20);
  CHECK_EQ_INT(PJRT_Buffer_Type_TOKEN, 23);
  CHECK_EQ_INT(PJRT_Buffer_Type_F8E8M0FNU, 28);
  CHECK_EQ_INT(PJRT_Buffer_Type_F4E2M1FN, 29);
  CHECK_EQ_INT(PJRT_Buffer_Type_S1, 30);
  CHECK_EQ_INT(PJRT_Buffer_Type_U1, 31);
  CHECK_EQ_INT(PJRT_Buffer_Type_F6E2M3FN, 32);
  CHECK_EQ_INT(PJRT_Buffer_Type_F6E3M2FN, 33);
  /* Error codes are absl's. */
  CHECK_EQ_INT(PJRT_Error_Code_OK, 0);
  CHECK_EQ_INT(PJRT_Error_Code_INVALID_ARGUMENT, 3);
  CHECK_EQ_INT(PJRT_Error_Code_UNIMPLEMENTED, 12);
  CHECK_EQ_INT(PJRT_Error_Code_UNAUTHENTICATED, 16);
  CHECK_EQ_INT(PJRT_NamedValue_kString, 0);
  CHECK_EQ_INT(PJRT_NamedValue_kInt64List, 2);
  CHECK_EQ_INT(PJRT_NamedValue_kFloat, 3);
  CHECK_EQ_INT(PJRT_NamedValue_kBool, 4);
  CHECK_EQ_INT(PJRT_HostBufferSemantics_kImmutableOnlyDuringCall, 0);
  CHECK_EQ_INT(PJRT_HostBufferSemantics_kMutableZeroCopy, 3);
  CHECK_EQ_INT(PJRT_Buffer_MemoryLayout_Type_Strides, 1);
  CHECK_EQ_INT(PJRT_Extension_Type_Gpu_Custom_Call, 0);
  CHECK_EQ_INT(PJRT_Extension_Type_Layouts, 4);
  CHECK_EQ_INT(PJRT_Extension_Type_CrossHostTransfers, 12);
  CHECK_EQ_INT(PJRT_Extension_Type_HostMemoryAllocator, 23);
  CHECK_EQ_INT(PJRT_Extension_Type_XlaTransform, 24);
  CHECK_EQ_INT(PJRT_ProcessState_kError, 4);
  CHECK_EQ_INT(PJRT_API_MAJOR, 0);
  CHECK_EQ_INT(PJRT_API_MINOR, 114);
  /* The non-opaque objects: a function table pointer first. */
  CHECK_EQ_INT(offsetof(PJRT_Error, vtable), 0);
  CHECK_EQ_INT(offsetof(PJRT_Memory, vtable), 0);
  CHECK_EQ_INT(offsetof(PJRT_Error_FunctionTable, for_each_payload), 48);
  CHECK_EQ_INT(offsetof(PJRT_Memory_FunctionTable, set_user_data), 32);
  CHECK_EQ_INT(offsetof(PJRT_NamedValue, value_size), 48);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s <reference dir>\n", argv[0]);
    return 2;
  }
  check_slots(argv[1]);
  check_structs(argv[1]);
  check_enums();
  printf("abi: %zu slots, %zu structs compared\n", COUNT(slots), COUNT(structs));
  return check_report("abi");
}
