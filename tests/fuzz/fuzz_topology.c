/* Fuzz target: the serialized-topology reader (src/runtime/topology.c). Whatever the bytes, it
 * either makes a topology or fails with a status; a topology it makes serializes back to the
 * same bytes. (The checksum makes random inputs rare successes; the seeds are real topologies
 * and near misses.) */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cj_topology *t = NULL;
  cj_status st = cj_topology_deserialize(data, size, &t);
  if (st) {
    cj_status_free(st);
    return 0;
  }
  void *buf = NULL;
  size_t len = 0;
  st = cj_topology_serialize(t, &buf, &len);
  if (!st && (len != size || memcmp(buf, data, size) != 0))
    abort(); /* a topology that does not serialize to its own bytes: reader or writer bug */
  (void)cj_topology_fingerprint(t);
  cj_status_free(st);
  free(buf);
  cj_topology_free(t);
  return 0;
}
