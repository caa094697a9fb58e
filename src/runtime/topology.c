/* cjrt: device topologies (see topology.h). */
#include "runtime/topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/threadpool.h"
#include "runtime/buffer.h"

static const char kTopoMagic[8] = {'C', 'J', 'R', 'T', 'T', 'O', 'P', 'O'};
enum { kTopoVersion = 1, kMaxNameLen = 64 };

bool cj_topology_check(const void *p) { return cj_object_is(p, CJ_TAG_TOPOLOGY); }

static cj_topology *topology_new(void) {
  cj_topology *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  if (pthread_mutex_init(&t->proc_mu, NULL) != 0) {
    free(t);
    return NULL;
  }
  cj_object_init(&t->hdr, CJ_TAG_TOPOLOGY);
  return t;
}

static void procs_free(cj_process_info *p, size_t n) {
  for (size_t i = 0; i < n; i++) free(p[i].error_message);
  free(p);
}

void cj_topology_free(cj_topology *t) {
  if (!t) return;
  if (t->front_free) t->front_free(t->front);
  procs_free(t->procs, t->nprocs);
  pthread_mutex_destroy(&t->proc_mu);
  if (t->owned)
    for (int i = 0; i < t->ndevices; i++) t->owned[i].desc.hdr.tag = CJ_TAG_DEAD;
  free(t->owned);
  free(t->descs);
  t->hdr.tag = CJ_TAG_DEAD;
  free(t);
}

void cj_topology_set_front(cj_topology *t, void *front, void (*free_fn)(void *)) {
  t->front = front;
  t->front_free = free_fn;
}

/* A described topology of n devices with these ids and process indices. */
static CJ_MUST_USE cj_status described(int process_count, int n, const int32_t *ids, const int32_t *procs,
                           cj_topology **out) {
  *out = NULL;
  cj_topology *t = topology_new();
  if (!t) return cj_oom();
  t->process_count = process_count;
  t->ndevices = n;
  t->owned = calloc((size_t)n, sizeof *t->owned);
  t->descs = calloc((size_t)n, sizeof *t->descs);
  if (!t->owned || !t->descs) {
    cj_topology_free(t);
    return cj_oom();
  }
  for (int i = 0; i < n; i++) {
    cj_device *d = &t->owned[i];
    /* d->hdr stays zero: this is no device, only a description */
    cj_object_init(&d->desc.hdr, CJ_TAG_DEVDESC);
    d->desc.device = d;
    d->index = i;
    d->id = ids[i];
    d->process_index = procs[i];
    d->local_hardware_id = -1;
    snprintf(d->to_string, sizeof d->to_string, "CjrtDevice(id=%d)", ids[i]);
    snprintf(d->debug_string, sizeof d->debug_string, "cjrt:%d (%s, process %d)", ids[i],
             CJ_TOPOLOGY_DEVICE_KIND, procs[i]);
    t->descs[i] = &d->desc;
  }
  snprintf(t->platform_version, sizeof t->platform_version,
           "cjrt 0.1.0 (topology: %d process%s, %d devices)", process_count,
           process_count == 1 ? "" : "es", n);
  *out = t;
  return NULL;
}

static bool name_ok(const char *name, size_t len) {
  static const char *const names[] = {"", "cjrt", "cpu"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strlen(names[i]) == len && (len == 0 || memcmp(names[i], name, len) == 0)) return true;
  return false;
}

cj_status cj_topology_create(const char *name, size_t name_len, int devices_per_process,
                             int process_count, cj_topology **out) {
  *out = NULL;
  if (!name && name_len) return cj_invalid("the topology name is NULL but its size is %zu", name_len);
  if (!name_ok(name, name_len))
    return cj_invalid("unknown topology name \"%.*s\" (cjrt describes " CJ_TOPOLOGY_NAMES ")",
                      (int)(name_len < 64 ? name_len : 64), name);
  if (devices_per_process == 0) devices_per_process = cj_num_cores();
  if (devices_per_process < 1 || devices_per_process > CJ_MAX_DEVICES)
    return cj_invalid("%d devices per process is outside [1, %d]", devices_per_process,
                      CJ_MAX_DEVICES);
  if (process_count < 1 || (int64_t)process_count * devices_per_process > CJ_MAX_DEVICES)
    return cj_invalid("%d processes of %d devices is outside [1, %d] devices in all",
                      process_count, devices_per_process, CJ_MAX_DEVICES);
  int n = process_count * devices_per_process;
  int32_t *ids = malloc(sizeof(int32_t) * (size_t)n * 2);
  if (!ids) return cj_oom();
  int32_t *procs = ids + n;
  for (int i = 0; i < n; i++) {
    ids[i] = i;
    procs[i] = i / devices_per_process;
  }
  cj_status st = described(process_count, n, ids, procs, out);
  free(ids);
  return st;
}

cj_status cj_topology_for_client(cj_client *c, cj_topology **out) {
  *out = NULL;
  cj_topology *t = topology_new();
  if (!t) return cj_oom();
  t->client = c;
  t->process_count = c->opts.process_count;
  /* every process's devices (a multi-process client's all_devices; one process: its own) */
  t->ndevices = c->nall_devices;
  t->descs = calloc((size_t)(c->nall_devices ? c->nall_devices : 1), sizeof *t->descs);
  if (!t->descs) {
    cj_topology_free(t);
    return cj_oom();
  }
  for (int i = 0; i < c->nall_devices; i++) t->descs[i] = &c->all_devices[i]->desc;
  snprintf(t->platform_version, sizeof t->platform_version, "%s", c->platform_version);
  *out = t;
  return NULL;
}

cj_device_desc *cj_topology_lookup(const cj_topology *t, int64_t id) {
  for (int i = 0; i < t->ndevices; i++)
    if (t->descs[i]->device->id == id) return t->descs[i];
  return NULL;
}

/* ---- serialization ---- */

static void put_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get_u32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
  return v;
}
static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

cj_status cj_topology_serialize(const cj_topology *t, void **out, size_t *len) {
  *out = NULL;
  *len = 0;
  const char *name = CJ_PLATFORM_NAME;
  size_t nl = strlen(name);
  size_t n = 8 + 4 + 4 + nl + 4 + 4 + (size_t)t->ndevices * 8 + 8;
  unsigned char *b = malloc(n);
  if (!b) return cj_oom();
  size_t k = 0;
  memcpy(b, kTopoMagic, 8);
  k += 8;
  put_u32(b + k, kTopoVersion);
  k += 4;
  put_u32(b + k, (uint32_t)nl);
  k += 4;
  memcpy(b + k, name, nl);
  k += nl;
  put_u32(b + k, (uint32_t)t->process_count);
  k += 4;
  put_u32(b + k, (uint32_t)t->ndevices);
  k += 4;
  for (int i = 0; i < t->ndevices; i++) {
    const cj_device *d = t->descs[i]->device;
    put_u32(b + k, (uint32_t)d->id);
    put_u32(b + k + 4, (uint32_t)d->process_index);
    k += 8;
  }
  put_u64(b + k, cj_fnv64(b, k, CJ_FNV64_SEED));
  k += 8;
  *out = b;
  *len = k;
  return NULL;
}

cj_status cj_topology_deserialize(const void *data, size_t len, cj_topology **out) {
  *out = NULL;
  const unsigned char *d = data;
  if (!d && len) return cj_invalid("the serialized topology is NULL but its size is %zu", len);
  if (len < 8 || memcmp(d, kTopoMagic, 8) != 0)
    return cj_invalid("these %zu bytes are not a serialized cjrt topology (bad magic)", len);
  const size_t fixed = 8 + 4 + 4 + 4 + 4 + 8; /* everything but the name and the devices */
  if (len < fixed)
    return cj_invalid("%zu bytes are too few for a serialized cjrt topology (at least %zu)", len,
                      fixed);
  uint32_t version = get_u32(d + 8);
  if (version != kTopoVersion)
    return cj_invalid("serialized cjrt topology version %u is not supported (this cjrt reads "
                      "version %d)",
                      version, kTopoVersion);
  uint32_t nl = get_u32(d + 12);
  if (nl > kMaxNameLen || len < fixed + nl)
    return cj_invalid("the serialized topology is truncated or corrupt (name of %u bytes in %zu "
                      "bytes)",
                      nl, len);
  size_t k = 16 + nl;
  uint32_t procs = get_u32(d + k), n = get_u32(d + k + 4);
  k += 8;
  if (n < 1 || n > CJ_MAX_DEVICES)
    return cj_invalid("the serialized topology has %u devices, outside [1, %d]", n,
                      CJ_MAX_DEVICES);
  if (len != k + (size_t)n * 8 + 8)
    return cj_invalid("the serialized topology is truncated or has trailing bytes: %zu bytes, "
                      "expected %zu for %u devices",
                      len, k + (size_t)n * 8 + 8, n);
  uint64_t sum = get_u64(d + len - 8);
  if (sum != cj_fnv64(d, len - 8, CJ_FNV64_SEED))
    return cj_invalid("the serialized topology is corrupt (checksum mismatch)");
  if (nl != strlen(CJ_PLATFORM_NAME) || memcmp(d + 16, CJ_PLATFORM_NAME, nl) != 0)
    return cj_invalid("the serialized topology is for platform \"%.*s\", not \"" CJ_PLATFORM_NAME
                      "\"",
                      (int)nl, (const char *)(d + 16));
  if (procs < 1 || procs > CJ_MAX_DEVICES)
    return cj_invalid("the serialized topology has %u processes, outside [1, %d]", procs,
                      CJ_MAX_DEVICES);
  int32_t *ids = malloc(sizeof(int32_t) * (size_t)n * 2);
  if (!ids) return cj_oom();
  int32_t *pidx = ids + n;
  cj_status st = NULL;
  for (uint32_t i = 0; i < n && !st; i++) {
    ids[i] = (int32_t)get_u32(d + k + (size_t)i * 8);
    pidx[i] = (int32_t)get_u32(d + k + (size_t)i * 8 + 4);
    if (ids[i] < 0 || pidx[i] < 0 || (uint32_t)pidx[i] >= procs)
      st = cj_invalid("the serialized topology's device %u has id %d and process %d (of %u)", i,
                      ids[i], pidx[i], procs);
    for (uint32_t j = 0; j < i && !st; j++)
      if (ids[j] == ids[i])
        st = cj_invalid("the serialized topology lists device id %d twice", ids[i]);
  }
  if (!st) st = described((int)procs, (int)n, ids, pidx, out);
  free(ids);
  return st;
}

uint64_t cj_topology_fingerprint(const cj_topology *t) {
  uint64_t h = cj_fnv64(CJ_PLATFORM_NAME, strlen(CJ_PLATFORM_NAME), CJ_FNV64_SEED);
  int32_t v[2] = {t->process_count, t->ndevices};
  h = cj_fnv64(v, sizeof v, h);
  for (int i = 0; i < t->ndevices; i++) {
    const cj_device *d = t->descs[i]->device;
    v[0] = d->id;
    v[1] = d->process_index;
    h = cj_fnv64(v, sizeof v, h);
  }
  return h;
}

cj_status cj_topology_check_assignment(const cj_topology *t, int64_t num_replicas,
                                       int64_t num_partitions, const int64_t *ids) {
  int64_t need = num_replicas * num_partitions;
  if (need > t->ndevices)
    return cj_invalid("the program needs %lld replicas x %lld partitions = %lld devices; the "
                      "topology has only %d",
                      (long long)num_replicas, (long long)num_partitions, (long long)need,
                      t->ndevices);
  if (!ids) return NULL;
  for (int64_t i = 0; i < need; i++)
    if (!cj_topology_lookup(t, ids[i]))
      return cj_invalid("the device assignment names device %lld, which the topology (%d "
                        "devices) does not have",
                        (long long)ids[i], t->ndevices);
  return NULL;
}

/* ---- memory spaces ---- */

const int *cj_topology_memory_kind_ids(size_t *out_n) {
  static const int ids[CJ_MEMORY_KIND_COUNT] = {CJ_MEMORY_DEVICE, CJ_MEMORY_PINNED_HOST,
                                                CJ_MEMORY_UNPINNED_HOST};
  *out_n = CJ_MEMORY_KIND_COUNT;
  return ids;
}

/* Protobuf writing into a fixed buffer sized by the caller. */
static size_t pb_varint(unsigned char *p, uint64_t v) {
  size_t n = 0;
  do {
    p[n] = (unsigned char)(v & 0x7f);
    v >>= 7;
    if (v) p[n] |= 0x80;
    n++;
  } while (v);
  return n;
}
static size_t pb_varint_len(uint64_t v) {
  size_t n = 1;
  while (v >>= 7) n++;
  return n;
}

cj_status cj_topology_canonical_shape(const cj_topology *t, int kind_id, cj_dtype dt,
                                      const int64_t *dims, size_t rank, void **out, size_t *len) {
  (void)t;
  *out = NULL;
  *len = 0;
  if (kind_id < 0 || kind_id >= CJ_MEMORY_KIND_COUNT)
    return cj_invalid("memory space kind id %d is not one of cjrt's (0 device, 1 pinned_host, 2 "
                      "unpinned_host)",
                      kind_id);
  size_t nbytes;
  CJ_RETURN_IF_ERROR(cj_shape_check(dt, dims, rank, &nbytes));
  int xla = cj_dtype_get(dt)->xla;
  if (!xla) return cj_invalid("element type %s has no xla::PrimitiveType", cj_dtype_get(dt)->id);
  /* ShapeProto: element_type = 2, dimensions = 3 (packed), layout = 5 (LayoutProto:
   * minor_to_major = 1, packed), is_dynamic_dimension = 6 (packed bools). */
  size_t dims_len = 0, m2m_len = 0;
  for (size_t i = 0; i < rank; i++) {
    dims_len += pb_varint_len((uint64_t)dims[i]);
    m2m_len += pb_varint_len((uint64_t)(rank - 1 - i));
  }
  size_t layout_len = rank ? 1 + pb_varint_len(m2m_len) + m2m_len : 0;
  size_t cap = 1 + pb_varint_len((uint64_t)xla);
  if (rank) cap += 1 + pb_varint_len(dims_len) + dims_len + 1 + pb_varint_len(rank) + rank;
  cap += 1 + pb_varint_len(layout_len) + layout_len;
  unsigned char *b = malloc(cap);
  if (!b) return cj_oom();
  size_t k = 0;
  b[k++] = (2 << 3) | 0;
  k += pb_varint(b + k, (uint64_t)xla);
  if (rank) {
    b[k++] = (3 << 3) | 2;
    k += pb_varint(b + k, dims_len);
    for (size_t i = 0; i < rank; i++) k += pb_varint(b + k, (uint64_t)dims[i]);
  }
  b[k++] = (5 << 3) | 2;
  k += pb_varint(b + k, layout_len);
  if (rank) {
    b[k++] = (1 << 3) | 2;
    k += pb_varint(b + k, m2m_len);
    for (size_t i = 0; i < rank; i++) k += pb_varint(b + k, (uint64_t)(rank - 1 - i));
    b[k++] = (6 << 3) | 2;
    k += pb_varint(b + k, rank);
    for (size_t i = 0; i < rank; i++) b[k++] = 0;
  }
  *out = b;
  *len = k;
  return NULL;
}

/* ---- processes ---- */

cj_status cj_topology_set_processes(cj_topology *t, const cj_process_info *infos, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (infos[i].task_id < 0)
      return cj_invalid("process info %zu has a negative task_id (%d)", i, infos[i].task_id);
    if (infos[i].state < 0 || infos[i].state > 4)
      return cj_invalid("process info %zu (task %d) has state %d, not a PJRT_ProcessState", i,
                        infos[i].task_id, infos[i].state);
    for (size_t j = 0; j < i; j++)
      if (infos[j].task_id == infos[i].task_id)
        return cj_invalid("process infos %zu and %zu both describe task %d", j, i,
                          infos[i].task_id);
  }
  cj_process_info *copy = calloc(n ? n : 1, sizeof *copy);
  if (!copy) return cj_oom();
  for (size_t i = 0; i < n; i++) {
    copy[i] = infos[i];
    size_t ml = infos[i].error_message ? infos[i].error_message_size : 0;
    copy[i].error_message = malloc(ml + 1);
    if (copy[i].error_message) {
      if (ml) memcpy(copy[i].error_message, infos[i].error_message, ml);
      copy[i].error_message[ml] = 0;
      copy[i].error_message_size = ml;
    } else {
      procs_free(copy, i);
      return cj_oom();
    }
  }
  pthread_mutex_lock(&t->proc_mu);
  cj_process_info *old = t->procs;
  size_t nold = t->nprocs;
  t->procs = copy;
  t->nprocs = n;
  pthread_mutex_unlock(&t->proc_mu);
  procs_free(old, nold);
  return NULL;
}

cj_status cj_topology_process(cj_topology *t, int task_id, cj_process_info *out) {
  memset(out, 0, sizeof *out);
  cj_status st = NULL;
  pthread_mutex_lock(&t->proc_mu);
  size_t i = 0;
  while (i < t->nprocs && t->procs[i].task_id != task_id) i++;
  if (i == t->nprocs) {
    st = cj_status_make(CJ_NOT_FOUND, "no process info for task %d", task_id);
  } else {
    *out = t->procs[i];
    out->error_message = malloc(t->procs[i].error_message_size + 1);
    if (out->error_message)
      memcpy(out->error_message, t->procs[i].error_message, t->procs[i].error_message_size + 1);
    if (!out->error_message) st = cj_oom();
  }
  pthread_mutex_unlock(&t->proc_mu);
  return st;
}
