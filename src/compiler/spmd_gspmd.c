/* cjrt: GSPMD's shardings (HloSharding text in mhlo.sharding attributes) read as the partitioner's
 * shardings over meshes (docs/SPMD.md, "GSPMD input").
 *
 * What frameworks send without Shardy (JAX with jax_use_shardy_partitioner off, TensorFlow,
 * torch_xla): `mhlo.sharding = "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"` on @main's
 * arguments and results and on `custom_call @Sharding` ops. A tiled sharding is a tile
 * assignment: an array of device (partition) ids of shape [t0, ..., tk], one tile dim per
 * value dim plus trailing dims that only replicate (last_tile_dim_replicate,
 * last_tile_dims={replicated}). It is read as a mesh whose axes are the tile dims larger than
 * one (named "a0", "a1", ... in order), whose device ids are the tile assignment flattened, and a
 * sharding that splits value dim d over the axis of tile dim d. Two shardings with the same tile
 * sizes and devices share their mesh, so resharding between them moves only what differs;
 * shardings on different meshes reshard through replicated (correct, more data moved).
 *
 * {replicated}, {maximal device=N} (every device computes the value; device N's copy is the one)
 * and {unknown} read as replicated; {manual} says the value is already per-device (shard_map's
 * body between @SPMDFullToShardShape and @SPMDShardToFullShape).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/spmd_internal.h"

enum { MAX_TILE_DIMS = 32 };

typedef struct hlo_text {
  const char *p, *e;
} hlo_text;

/* Takes `tok` after any blanks ("" only skips the blanks). */
static bool take(hlo_text *t, const char *tok) {
  while (t->p < t->e && strchr(" \n\t\r", *t->p) && *t->p) t->p++;
  size_t n = strlen(tok);
  if ((size_t)(t->e - t->p) < n || memcmp(t->p, tok, n)) return false;
  t->p += n;
  return true;
}

static bool take_int(hlo_text *t, int64_t *v) {
  take(t, "");
  bool neg = t->p < t->e && *t->p == '-';
  const char *q = t->p + neg;
  if (q >= t->e || *q < '0' || *q > '9') return false;
  int64_t x = 0;
  while (q < t->e && *q >= '0' && *q <= '9') {
    if (x > (INT64_MAX - 9) / 10) return false;
    x = x * 10 + (*q++ - '0');
  }
  t->p = q;
  *v = neg ? -x : x;
  return true;
}

/* "[a, b, ...]" into v (at most cap; *n items) */
static bool take_int_list(hlo_text *t, int64_t *v, int cap, int *n) {
  *n = 0;
  if (!take(t, "[")) return false;
  if (take(t, "]")) return true;
  do {
    if (*n == cap || !take_int(t, &v[*n])) return false;
    (*n)++;
  } while (take(t, ","));
  return take(t, "]");
}

/* Skips a balanced {...} group (metadata={...}). */
static bool skip_braces(hlo_text *t) {
  int depth = 0;
  take(t, "");
  do {
    if (t->p >= t->e) return false;
    if (*t->p == '{') depth++;
    if (*t->p == '}') depth--;
    t->p++;
  } while (depth > 0);
  return true;
}

/* The device list of a tile assignment of `total` devices: "<=[r0,r1,...]" optionally followed by
 * "T(p0,p1,...)" (iota(total) reshaped to r, transposed by p, flattened), or total explicit ids. */
static bool take_devices(hlo_text *t, int64_t *ids, int64_t total) {
  if (take(t, "<=")) {
    int64_t r[MAX_TILE_DIMS], perm[MAX_TILE_DIMS];
    int nr = 0, np = 0;
    if (!take_int_list(t, r, MAX_TILE_DIMS, &nr) || nr == 0) return false;
    int64_t prod = 1;
    for (int k = 0; k < nr; k++) {
      if (r[k] < 1) return false;
      prod *= r[k];
    }
    if (prod != total) return false;
    for (int k = 0; k < nr; k++) perm[k] = k;
    if (take(t, "T")) {
      if (!take(t, "(")) return false;
      do {
        if (np == nr || !take_int(t, &perm[np]) || perm[np] < 0 || perm[np] >= nr) return false;
        np++;
      } while (take(t, ","));
      if (!take(t, ")") || np != nr) return false;
    }
    /* element i of the transposed array: its index j over dims r[perm[k]], the source index
     * s[perm[k]] = j[k], the value the row-major position of s over r */
    for (int64_t i = 0; i < total; i++) {
      int64_t j[MAX_TILE_DIMS], q = i, s[MAX_TILE_DIMS];
      for (int k = nr - 1; k >= 0; k--) {
        j[k] = q % r[perm[k]];
        q /= r[perm[k]];
      }
      for (int k = 0; k < nr; k++) s[perm[k]] = j[k];
      int64_t lin = 0;
      for (int k = 0; k < nr; k++) lin = lin * r[k] + s[k];
      ids[i] = lin;
    }
    return true;
  }
  for (int64_t i = 0; i < total; i++) {
    if (i && !take(t, ",")) return false;
    if (!take_int(t, &ids[i])) return false;
  }
  return true;
}

/* The mesh of a tile assignment: the tile dims larger than one as axes, the ids (NULL: iota)
 * as its devices; one already in ms with the same sizes and devices, or a new one. */
static CJ_MUST_USE cj_status tile_mesh(meshes *ms, const int64_t *tiles, int ntiles, const int64_t *ids,
                                       int64_t total, const mesh **out, int *axis_of) {
  mesh cand;
  memset(&cand, 0, sizeof cand);
  cand.total = total;
  for (int k = 0; k < ntiles; k++) {
    axis_of[k] = -1;
    if (tiles[k] == 1) continue;
    if (cand.n == MAX_AXES) return cj_unimplemented("a tile assignment of more than %d dims", MAX_AXES);
    axis_of[k] = cand.n;
    snprintf(cand.axes[cand.n], NAME_MAX_LEN, "a%d", cand.n);
    cand.sizes[cand.n++] = tiles[k];
  }
  bool iota = true;
  for (int64_t i = 0; i < total && iota; i++) iota = ids[i] == i;
  for (int i = 0; i < ms->n; i++) {
    const mesh *me = &ms->m[i];
    if (strncmp(me->name, "_hlo", 4) || me->n != cand.n || me->total != total) continue;
    bool same = true;
    for (int k = 0; k < cand.n && same; k++) same = me->sizes[k] == cand.sizes[k];
    if (same && iota) same = !me->ids;
    if (same && !iota) same = me->ids && !memcmp(me->ids, ids, sizeof(int64_t) * (size_t)total);
    if (same) {
      *out = me;
      return NULL;
    }
  }
  if (ms->n == MAX_MESHES)
    return cj_unimplemented("more than %d different meshes (tile assignments)", MAX_MESHES);
  snprintf(cand.name, sizeof cand.name, "_hlo%d", ms->n);
  if (!iota) {
    cand.ids = malloc(sizeof(int64_t) * (size_t)total);
    if (!cand.ids) return cj_oom();
    memcpy(cand.ids, ids, sizeof(int64_t) * (size_t)total);
    cand.nids = total;
  }
  ms->m[ms->n] = cand;
  *out = &ms->m[ms->n++];
  return NULL;
}

/* After "devices=": the tile dims, the devices and the trailing keywords, into a sharding. */
static CJ_MUST_USE cj_status read_tiled(hlo_text *t, meshes *ms, int64_t ndev, const cj_type *ty,
                                        sharding *out, const char **bad) {
  int64_t tiles[MAX_TILE_DIMS];
  int ntiles = 0;
  if (!take_int_list(t, tiles, MAX_TILE_DIMS, &ntiles) || !ntiles) return cj_invalid("its tile dims");
  int64_t total = 1;
  for (int k = 0; k < ntiles; k++) {
    if (tiles[k] < 1 || total > MAX_MESH_IDS) return cj_invalid("its tile dims");
    total *= tiles[k];
  }
  if (total > MAX_MESH_IDS) return cj_unimplemented("more than %d devices", MAX_MESH_IDS);
  int64_t *ids = malloc(sizeof(int64_t) * (size_t)total);
  if (!ids) return cj_oom();
  int extra = -1; /* trailing tile dims that replicate, if said */
  cj_status st = take_devices(t, ids, total) ? NULL : cj_invalid("its device list");
  while (!st && t->p < t->e) {
    if (take(t, "last_tile_dim_replicate")) {
      extra = 1;
    } else if (take(t, "last_tile_dims")) {
      extra = 0;
      if (!take(t, "=") || !take(t, "{")) st = cj_invalid("its last_tile_dims");
      while (!st && !take(t, "}")) {
        if (extra && !take(t, ",")) st = cj_invalid("its last_tile_dims");
        else if (take(t, "replicated")) extra++;
        else if (take(t, "manual")) *bad = "a partly manual sharding (last_tile_dims={manual})";
        else st = cj_invalid("its last_tile_dims");
        if (*bad) break;
      }
    } else if (take(t, "metadata=")) {
      if (!skip_braces(t)) st = cj_invalid("its metadata");
    } else if (take(t, "}")) {
      break;
    } else {
      *bad = "a keyword cjrt does not read (shard_as, shard_like, ...)";
      break;
    }
    if (*bad) break;
  }
  if (!st && !*bad && ntiles - (extra < 0 ? 0 : extra) != ty->rank)
    st = cj_invalid("%d tile dims for a value of rank %d", ntiles, (int)ty->rank);
  if (!st && !*bad && total != ndev)
    *bad = "a tile assignment over other devices than the program's partitions";
  int axis_of[MAX_TILE_DIMS];
  const mesh *me = NULL;
  if (!st && !*bad) st = tile_mesh(ms, tiles, ntiles, ids, total, &me, axis_of);
  free(ids);
  if (st || *bad) return st;
  memset(out, 0, sizeof *out);
  out->mesh = me;
  out->rank = ty->rank;
  for (int d = 0; d < ty->rank; d++)
    if (axis_of[d] >= 0) out->ax[d][out->nax[d]++] = (int8_t)axis_of[d];
  cj_spmd_canon(out);
  return NULL;
}

cj_status cj_spmd_read_hlo(meshes *ms, int64_t ndev, const cj_op *where, const char *what,
                           const char *text, size_t len, const cj_type *ty, sharding *out,
                           bool *manual) {
  *manual = false;
  memset(out, 0, sizeof *out);
  if (!cj_type_is_static(ty) || ty->rank > 64)
    return cj_op_error(where, CJ_INVALID_ARGUMENT, "%s: an mhlo.sharding on a value without a static shape", what);
  out->rank = ty->rank;
  for (int d = 0; d < ty->rank; d++) out->div[d] = 1;
  hlo_text t = {text, text + len};
  const char *bad = NULL;
  cj_status st = NULL;
  if (!take(&t, "{") || take(&t, "{")) {
    bad = "not one HloSharding (a tuple sharding?)";
  } else if (take(&t, "replicated") || take(&t, "unknown")) {
  } else if (take(&t, "maximal")) {
    int64_t dev;
    if (!take(&t, "device") || !take(&t, "=") || !take_int(&t, &dev)) st = cj_invalid("its device");
  } else if (take(&t, "manual")) {
    *manual = true;
  } else if (take(&t, "devices=")) {
    st = read_tiled(&t, ms, ndev, ty, out, &bad);
  } else {
    bad = "a kind of sharding cjrt does not read";
  }
  if (st) {
    cj_status e = cj_op_error(where, cj_status_code(st), "%s: cannot read the sharding %.*s: %s", what,
                              (int)len, text, cj_status_message(st));
    cj_status_free(st);
    return e;
  }
  if (bad)
    return cj_op_error(where, CJ_UNIMPLEMENTED, "%s: cannot use the sharding %.*s: it is %s", what,
                       (int)len, text, bad);
  return NULL;
}
