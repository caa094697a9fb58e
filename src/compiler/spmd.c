/* cjrt: the per-device program of a multi-partition module whose sharded values are all handled
 * manually (see spmd.h).
 *
 * What JAX (jaxlib 0.10.2, Shardy on) sends for jax.shard_map and jax.pmap over N devices:
 * num_replicas = 1, num_partitions = N, an `sdy.mesh @mesh = <["i"=N]>`, @main arguments with
 * `sdy.sharding = #sdy.sharding<@mesh, [{"i"}, {}]>` (their global shapes), and the body in one
 * `sdy.manual_computation(%args) in_shardings=[...] out_shardings=[...] manual_axes={"i"}` whose
 * region works on per-device (local) shapes; its collectives name devices of the mesh by their
 * partition ids (replica_groups with use_global_device_ids). Every device receives its own shard
 * of each sharded argument, so the per-device program is: @main with local argument and result
 * types, the manual body inlined, the sharding attributes dropped.
 *
 * Shardy's attributes are carried as text (#sdy.mesh<["a"=2, "b"=4]>, #sdy.sharding<@mesh,
 * [{"a"}, {"b", "c":(1)2}], replicated={"d"}>, #sdy.sharding_per_value<[<@mesh, [...]>, ...]>,
 * #sdy<manual_axes{"a", "b"}>); the small parser below reads what the pass needs: the size each
 * dimension is divided by, and the axis names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "compiler/spmd.h"
#include "compiler/spmd_internal.h"


/* ======================================================================== a tiny text scanner */

typedef struct scan {
  const char *p, *e;
  bool bad;
} scan;

static void ws(scan *s) {
  while (s->p < s->e && (*s->p == ' ' || *s->p == '\n' || *s->p == '\t' || *s->p == '\r')) s->p++;
}

static bool eat(scan *s, const char *tok) {
  ws(s);
  size_t n = strlen(tok);
  if ((size_t)(s->e - s->p) >= n && memcmp(s->p, tok, n) == 0) {
    s->p += n;
    return true;
  }
  return false;
}

static void expect(scan *s, const char *tok) {
  if (!eat(s, tok)) s->bad = true;
}

/* "name" (escapes kept as written) or a bare identifier, into buf */
static bool name_of(scan *s, char *buf, size_t cap) {
  ws(s);
  size_t n = 0;
  if (s->p < s->e && *s->p == '"') {
    s->p++;
    while (s->p < s->e && *s->p != '"') {
      if (*s->p == '\\' && s->p + 1 < s->e) {
        if (n + 1 < cap) buf[n++] = *s->p;
        s->p++;
      }
      if (n + 1 < cap) buf[n++] = *s->p;
      s->p++;
    }
    if (s->p >= s->e) return false;
    s->p++;
  } else {
    while (s->p < s->e && (((*s->p | 32) >= 'a' && (*s->p | 32) <= 'z') ||
                           (*s->p >= '0' && *s->p <= '9') || *s->p == '_' || *s->p == '.' ||
                           *s->p == '$' || *s->p == '-')) {
      if (n + 1 < cap) buf[n++] = *s->p;
      s->p++;
    }
    if (!n) return false;
  }
  buf[n] = 0;
  return true;
}

static bool int_of(scan *s, int64_t *v) {
  ws(s);
  char *end = NULL;
  char tmp[32];
  size_t n = 0;
  while (s->p + n < s->e && n + 1 < sizeof tmp &&
         ((s->p[n] >= '0' && s->p[n] <= '9') || (n == 0 && s->p[n] == '-')))
    n++;
  if (!n) return false;
  memcpy(tmp, s->p, n);
  tmp[n] = 0;
  *v = strtoll(tmp, &end, 10);
  s->p += n;
  return true;
}

/* skips a balanced group starting at the current bracket */
static void skip_group(scan *s) {
  int depth = 0;
  while (s->p < s->e) {
    char c = *s->p++;
    if (c == '"') {
      while (s->p < s->e && *s->p != '"') s->p += *s->p == '\\' ? 2 : 1;
      if (s->p < s->e) s->p++;
    } else if (c == '[' || c == '{' || c == '<' || c == '(') {
      depth++;
    } else if (c == ']' || c == '}' || c == '>' || c == ')') {
      if (--depth <= 0) return;
    }
  }
}

/* ======================================================================== meshes */

/* <["a"=2, "b"=4]> or <["a"=2], device_ids=[...]> (after "#sdy.mesh" or "mesh") */
static bool parse_mesh_body(scan *s, mesh *m) {
  m->n = 0;
  m->total = 1;
  expect(s, "<");
  expect(s, "[");
  if (s->bad) return false;
  if (!eat(s, "]")) {
    do {
      if (m->n >= MAX_AXES) return false;
      if (!name_of(s, m->axes[m->n], NAME_MAX_LEN)) return false;
      expect(s, "=");
      int64_t v;
      if (s->bad || !int_of(s, &v) || v < 1) return false;
      m->sizes[m->n++] = v;
      m->total *= v;
    } while (eat(s, ","));
    expect(s, "]");
  }
  /* device_ids=[...]: the partition id at each position (without it, position p is partition
   * p); anything else is skipped */
  m->ids = NULL;
  m->nids = 0;
  while (!s->bad && eat(s, ",")) {
    char key[32];
    if (!name_of(s, key, sizeof key)) return false;
    expect(s, "=");
    ws(s);
    if (!strcmp(key, "device_ids") && eat(s, "[")) {
      if (m->total > MAX_MESH_IDS) return false;
      m->ids = malloc(sizeof(int64_t) * (size_t)(m->total ? m->total : 1));
      if (!m->ids) return false;
      if (!eat(s, "]")) {
        do {
          int64_t v;
          if (m->nids >= m->total || !int_of(s, &v)) return false;
          m->ids[m->nids++] = v;
        } while (eat(s, ","));
        expect(s, "]");
      }
      if (m->nids != m->total) return false;
    } else if (s->p < s->e && (*s->p == '[' || *s->p == '<' || *s->p == '{' || *s->p == '(')) {
      skip_group(s);
    } else {
      while (s->p < s->e && *s->p != ',' && *s->p != '>') s->p++;
    }
  }
  expect(s, ">");
  return !s->bad;
}

static void meshes_free(meshes *ms) {
  for (int i = 0; i < ms->n; i++) free(ms->m[i].ids);
  ms->n = 0;
}

/* ---- Shardy's round-trip form ----
 * What jaxlib's serialize_portable_artifact makes of Shardy (its StableHLO keeps no sdy ops):
 * the meshes in the module's mhlo.frontend_attributes {xla.sdy.meshes = "{mesh = #sdy.mesh<...>,
 * ...}"}, the shardings of @main's arguments and results in their mhlo.frontend_attributes
 * {xla.sdy.sharding = "#sdy.sharding<...>"}, and each manual computation as
 *   %l = custom_call @xla.sdy.GlobalToLocalShape(%g...)   {xla.sdy.in_shardings, xla.sdy.manual_axes}
 *   %r = call @xla.sdy.manual_computation_body(%l...)
 *   %o = custom_call @xla.sdy.LocalToGlobalShape(%r...)   {xla.sdy.out_shardings, xla.sdy.manual_axes}
 * They are read back as their sdy forms here (meshes, shardings) and in from_round_trip (the
 * manual computations). */

/* the string `key` of an mhlo.frontend_attributes dictionary, or NULL */
static const char *frontend_str(const cj_attr *fe, const char *key, size_t *len) {
  const char *v = NULL;
  if (!cj_attr_get_str(cj_attr_dict_get(fe, key), &v, len)) return NULL;
  return v;
}

static CJ_MUST_USE cj_status round_trip_meshes(cj_module *m, meshes *out) {
  size_t len = 0;
  const char *text = NULL;
  const cj_attr *ma = cj_module_attr(m, "mhlo.frontend_attributes");
  if (!cj_attr_get_str(cj_attr_dict_get(ma, "xla.sdy.meshes"), &text, &len)) return NULL;
  scan s = {text, text + len, false};
  expect(&s, "{");
  ws(&s);
  if (eat(&s, "}")) return NULL;
  while (!s.bad) {
    if (out->n == MAX_MESHES) return cj_unimplemented("more than %d meshes", MAX_MESHES);
    mesh *me = &out->m[out->n];
    memset(me, 0, sizeof *me);
    out->n++; /* counted first: meshes_free releases its ids whatever happens */
    if (!name_of(&s, me->name, sizeof me->name)) break;
    expect(&s, "=");
    ws(&s);
    eat(&s, "#sdy.mesh");
    if (s.bad || !parse_mesh_body(&s, me)) break;
    ws(&s);
    if (eat(&s, "}")) return NULL;
    expect(&s, ",");
  }
  return cj_invalid("cannot read the meshes of the module's xla.sdy.meshes: %.*s", (int)len, text);
}

static CJ_MUST_USE cj_status collect_meshes(cj_module *m, meshes *out) {
  out->n = 0;
  cj_block *b = cj_module_block(m);
  for (cj_op *op = b ? b->first : NULL; op; op = op->next) {
    if (op->kind != CJ_OP_SDY_MESH) continue;
    const cj_attr *name = cj_op_attr(op, "sym_name"), *ma = cj_op_attr(op, "mesh");
    const char *nm;
    size_t nl;
    if (!cj_attr_get_str(name, &nm, &nl) || !ma || ma->kind != CJ_ATTR_OPAQUE)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "sdy.mesh without a name or a mesh");
    if (out->n == MAX_MESHES) return cj_op_error(op, CJ_UNIMPLEMENTED, "more than %d meshes", MAX_MESHES);
    mesh *me = &out->m[out->n];
    memset(me, 0, sizeof *me);
    snprintf(me->name, sizeof me->name, "%.*s", (int)nl, nm);
    scan s = {ma->opaque.text, ma->opaque.text + ma->opaque.len, false};
    eat(&s, "#sdy.mesh");
    out->n++; /* counted first: meshes_free releases its ids whatever happens */
    if (!parse_mesh_body(&s, me))
      return cj_op_error(op, CJ_UNIMPLEMENTED, "cannot read the mesh %.*s",
                         (int)ma->opaque.len, ma->opaque.text);
  }
  return round_trip_meshes(m, out);
}

static const mesh *find_mesh(const meshes *ms, const char *name) {
  for (int i = 0; i < ms->n; i++)
    if (!strcmp(ms->m[i].name, name)) return &ms->m[i];
  return NULL;
}

static int64_t axis_size(const mesh *m, const char *axis) {
  for (int i = 0; i < m->n; i++)
    if (!strcmp(m->axes[i], axis)) return m->sizes[i];
  return -1;
}

/* ======================================================================== shardings */


/* <@mesh, [{"a"}, {}], replicated={...}> or <mesh<[...]>, [...]>, after the mnemonic */
static bool parse_sharding_body(scan *s, const meshes *ms, mesh *inline_mesh, sharding *out,
                                char *why, size_t whycap) {
  memset(out, 0, sizeof *out);
  expect(s, "<");
  char mname[NAME_MAX_LEN];
  if (eat(s, "@")) {
    if (!name_of(s, mname, sizeof mname)) return false;
    out->mesh = find_mesh(ms, mname);
    if (!out->mesh) {
      snprintf(why, whycap, "names the mesh @%s, which the module does not define", mname);
      return false;
    }
  } else if (eat(s, "#sdy.mesh") || eat(s, "mesh")) {
    if (!parse_mesh_body(s, inline_mesh)) return false;
    out->mesh = inline_mesh;
  } else {
    return false;
  }
  expect(s, ",");
  expect(s, "[");
  if (s->bad) return false;
  size_t cl = 0;
  if (!eat(s, "]")) {
    do {
      if (out->rank >= 64) return false;
      int64_t d = 1;
      expect(s, "{");
      if (s->bad) return false;
      cl += (size_t)snprintf(out->canon + cl, cl < sizeof out->canon ? sizeof out->canon - cl : 0,
                             "%s{", out->rank ? ", " : "");
      int nax_written = 0;
      if (!eat(s, "}")) {
        do {
          if (eat(s, "?")) { /* open dimension: may be split further */
            out->open |= (uint64_t)1 << out->rank;
            continue;
          }
          char ax[NAME_MAX_LEN];
          if (!name_of(s, ax, sizeof ax)) return false;
          int64_t size = axis_size(out->mesh, ax);
          for (int i = 0; i < out->mesh->n; i++)
            if (!strcmp(out->mesh->axes[i], ax) && out->nax[out->rank] < 8)
              out->ax[out->rank][out->nax[out->rank]++] = (int8_t)i;
          if (size < 0) {
            snprintf(why, whycap, "names the axis \"%s\", which its mesh does not have", ax);
            return false;
          }
          if (eat(s, ":")) { /* sub-axis: ":(pre)size" */
            int64_t pre, sz;
            expect(s, "(");
            if (s->bad || !int_of(s, &pre)) return false;
            expect(s, ")");
            if (s->bad || !int_of(s, &sz) || sz < 1) return false;
            size = sz;
            out->subaxis = true;
            cl += (size_t)snprintf(out->canon + cl,
                                   cl < sizeof out->canon ? sizeof out->canon - cl : 0,
                                   "%s\"%s\":(%lld)%lld", nax_written++ ? ", " : "", ax,
                                   (long long)pre, (long long)sz);
          } else {
            cl += (size_t)snprintf(out->canon + cl,
                                   cl < sizeof out->canon ? sizeof out->canon - cl : 0, "%s\"%s\"",
                                   nax_written++ ? ", " : "", ax);
          }
          d *= size;
        } while (eat(s, ","));
        expect(s, "}");
      }
      cl += (size_t)snprintf(out->canon + cl, cl < sizeof out->canon ? sizeof out->canon - cl : 0,
                             "}");
      ws(s);
      if (s->p < s->e && *s->p == 'p') { /* priority p<N> */
        s->p++;
        int64_t pr;
        int_of(s, &pr);
      }
      out->div[out->rank++] = d;
      if (d > 1) out->split = true;
    } while (eat(s, ","));
    expect(s, "]");
  }
  /* replicated={...} says nothing about the shape; unreduced={...} means partial values */
  while (!s->bad && eat(s, ",")) {
    char key[32];
    if (!name_of(s, key, sizeof key)) return false;
    expect(s, "=");
    ws(s);
    if (!strcmp(key, "unreduced") && out->mesh && s->p < s->e && *s->p != '{') {
      char kind[16]; /* unreduced=max{...}, unreduced=min{...} */
      if (!name_of(s, kind, sizeof kind)) return false;
      out->ukind = !strcmp(kind, "max") ? 1 : !strcmp(kind, "min") ? 2 : 0;
      if (out->ukind == 0 && strcmp(kind, "sum")) {
        snprintf(why, whycap, "has unreduced axes of the kind \"%s\"", kind);
        return false;
      }
      ws(s);
    }
    if (!strcmp(key, "unreduced") && out->mesh && eat(s, "{")) {
      /* partial sums over these axes: the value is the sum of the devices' values along them */
      if (!eat(s, "}")) {
        do {
          char ax[NAME_MAX_LEN];
          if (!name_of(s, ax, sizeof ax)) return false;
          int found = -1;
          for (int i = 0; i < out->mesh->n; i++)
            if (!strcmp(out->mesh->axes[i], ax)) found = i;
          if (found < 0) {
            snprintf(why, whycap, "names the unreduced axis \"%s\", which its mesh does not have", ax);
            return false;
          }
          if (out->mesh->sizes[found] > 1) out->unred |= (uint64_t)1 << found;
        } while (eat(s, ","));
        expect(s, "}");
      }
      out->partial = out->unred != 0;
      continue;
    }
    /* reduced={...}: whole along those axes (only its gradient is unreduced): replicated */
    if (s->p < s->e && (*s->p == '{' || *s->p == '[' || *s->p == '<'))
      skip_group(s);
    else
      return false;
  }
  expect(s, ">");
  return !s->bad;
}

/* #sdy.sharding<...> on a value of type t */
cj_status cj_spmd_read_sharding(const cj_op *where, const char *what, const cj_attr *a,
                               const meshes *ms, const cj_type *t, sharding *out) {
  char why[256] = "";
  mesh inl;
  memset(&inl, 0, sizeof inl);
  if (!a || a->kind != CJ_ATTR_OPAQUE)
    return cj_op_error(where, CJ_INVALID_ARGUMENT, "%s: the sharding is not an #sdy.sharding", what);
  scan s = {a->opaque.text, a->opaque.text + a->opaque.len, false};
  eat(&s, "#sdy.sharding");
  bool ok = parse_sharding_body(&s, ms, &inl, out, why, sizeof why) && !s.bad;
  free(inl.ids);
  if (!ok)
    return cj_op_error(where, CJ_UNIMPLEMENTED, "%s: cannot use the sharding %.*s%s%s", what,
                       (int)a->opaque.len, a->opaque.text, why[0] ? ": it " : "", why);
  if (out->mesh == &inl) out->mesh = NULL; /* inline meshes only matter for sizes */
  if (!cj_type_is_static(t) || out->rank != t->rank)
    return cj_op_error(where, CJ_INVALID_ARGUMENT, "%s: the sharding %.*s does not fit %s", what,
                       (int)a->opaque.len, a->opaque.text,
                       cj_type_is_static(t) ? "the value's rank" : "a dynamic shape");
  return NULL;
}

/* #sdy.sharding_per_value<[<...>, <...>]>: the i-th sharding */
static CJ_MUST_USE cj_status read_per_value(const cj_op *where, const char *what, const cj_attr *a,
                                const meshes *ms, uint32_t i, const cj_type *t, sharding *out) {
  char why[256] = "";
  mesh inl;
  memset(&inl, 0, sizeof inl);
  if (!a || a->kind != CJ_ATTR_OPAQUE)
    return cj_op_error(where, CJ_INVALID_ARGUMENT, "%s: missing or unreadable shardings", what);
  scan s = {a->opaque.text, a->opaque.text + a->opaque.len, false};
  eat(&s, "#sdy.sharding_per_value");
  expect(&s, "<");
  expect(&s, "[");
  for (uint32_t k = 0; k < i && !s.bad; k++) {
    ws(&s);
    skip_group(&s);
    expect(&s, ",");
  }
  bool ok = !s.bad && parse_sharding_body(&s, ms, &inl, out, why, sizeof why);
  free(inl.ids);
  if (!ok)
    return cj_op_error(where, CJ_UNIMPLEMENTED, "%s: cannot use sharding %u of %.*s%s%s", what, i,
                       (int)a->opaque.len, a->opaque.text, why[0] ? ": it " : "", why);
  if (out->mesh == &inl) out->mesh = NULL;
  if (t->kind == CJ_TYPE_TOKEN && out->rank == 0) return NULL; /* a token (io_callback's) */
  if (!cj_type_is_static(t) || out->rank != t->rank)
    return cj_op_error(where, CJ_INVALID_ARGUMENT, "%s: sharding %u does not fit the value", what, i);
  return NULL;
}

/* The per-device type of a value of global type t split as sh. */
cj_status cj_spmd_local_type(cj_module *m, const cj_op *where, const char *what, const cj_type *t,
                            const sharding *sh, const cj_type **out) {
  if (t->kind != CJ_TYPE_TENSOR) { /* a token: nothing to split */
    *out = t;
    return NULL;
  }
  int64_t dims[64];
  for (int32_t d = 0; d < t->rank; d++) {
    if (t->dims[d] % sh->div[d])
      return cj_op_error(where, CJ_INVALID_ARGUMENT,
                         "%s: dimension %d of size %lld is split over %lld devices, which does not "
                         "divide it",
                         what, d, (long long)t->dims[d], (long long)sh->div[d]);
    dims[d] = t->dims[d] / sh->div[d];
  }
  *out = cj_type_tensor(m, t->elem, t->rank, dims, NULL, t->encoding);
  return *out ? NULL : cj_oom();
}

/* ======================================================================== mesh-axes groups */

/* A list of integers as a mesh's device_ids may be written: [0, 1], dense<[[0, 1]]> : tensor<..>,
 * dense<0> (a splat), array<i64: 0, 1>. Reads into ids (at most cap; *n is how many). */
static bool id_list(scan *s, int64_t *ids, int64_t cap, int64_t *n) {
  *n = 0;
  bool dense = eat(s, "dense"), arr = !dense && eat(s, "array");
  if (dense || arr) expect(s, "<");
  if (arr) {
    char ty[16];
    if (!name_of(s, ty, sizeof ty)) return false;
    expect(s, ":");
  }
  int depth = 0;
  while (!s->bad) {
    ws(s);
    if (eat(s, "[")) {
      depth++;
    } else if (depth && eat(s, "]")) {
      if (--depth == 0) break;
    } else if (eat(s, ",")) {
      continue;
    } else {
      int64_t v;
      if (*n >= cap || !int_of(s, &v)) return false;
      ids[(*n)++] = v;
      if (!depth) break; /* a splat or an array<...> item */
      continue;
    }
  }
  if (arr) {
    while (eat(s, ",")) {
      int64_t v;
      if (*n >= cap || !int_of(s, &v)) return false;
      ids[(*n)++] = v;
    }
  }
  if (dense || arr) expect(s, ">");
  if (dense && eat(s, ":")) { /* the type: tensor<...> */
    char ty[16];
    if (!name_of(s, ty, sizeof ty)) return false;
    ws(s);
    if (s->p < s->e && *s->p == '<') skip_group(s);
  }
  return !s->bad;
}

/* #stablehlo.mesh<axes=[#stablehlo.mesh_axis<name = "x", size = 2>, ...], device_ids=...>, after
 * the mnemonic */
static bool parse_shlo_mesh(scan *s, mesh *m) {
  memset(m, 0, sizeof *m);
  m->total = 1;
  expect(s, "<");
  expect(s, "axes");
  expect(s, "=");
  expect(s, "[");
  if (s->bad) return false;
  if (!eat(s, "]")) {
    do {
      if (m->n >= MAX_AXES) return false;
      eat(s, "#stablehlo.mesh_axis");
      expect(s, "<");
      bool have_name = false, have_size = false;
      do {
        char key[16];
        if (!name_of(s, key, sizeof key)) return false;
        expect(s, "=");
        if (!strcmp(key, "name")) {
          have_name = name_of(s, m->axes[m->n], NAME_MAX_LEN);
        } else if (!strcmp(key, "size")) {
          have_size = int_of(s, &m->sizes[m->n]) && m->sizes[m->n] >= 1;
        } else {
          return false;
        }
      } while (!s->bad && eat(s, ","));
      expect(s, ">");
      if (s->bad || !have_name || !have_size || m->total > MAX_MESH_IDS) return false;
      m->total *= m->sizes[m->n++];
    } while (eat(s, ","));
    expect(s, "]");
  }
  if (!s->bad && eat(s, ",")) {
    expect(s, "device_ids");
    expect(s, "=");
    if (s->bad || m->total > MAX_MESH_IDS) return false;
    m->ids = malloc(sizeof(int64_t) * (size_t)m->total);
    if (!m->ids || !id_list(s, m->ids, m->total, &m->nids)) return false;
    if (m->nids == 1 && m->total > 1) /* a splat */
      for (int64_t k = 1; k < m->total; k++) m->ids[m->nids++] = m->ids[0];
    if (m->nids != m->total) return false;
  }
  expect(s, ">");
  return !s->bad;
}

/* The groups of devices along `axes` of mesh me (indices, the first major): one group per
 * position along the other axes (major to minor, in mesh order), each listing the mesh's
 * device ids at its positions; [*ng x *gs], malloc'd (NULL: out of memory). As StableHLO's
 * reference flattening of mesh-axes replica groups (ReplicaGroupUtils.cpp) defines them. */
int64_t *cj_spmd_mesh_groups(const mesh *me, const int *axes, int naxes, int64_t *ng, int64_t *gs) {
  int order[MAX_AXES], no = 0;
  bool named[MAX_AXES] = {false};
  for (int j = 0; j < naxes; j++) named[axes[j]] = true;
  for (int k = 0; k < me->n; k++)
    if (!named[k]) order[no++] = k;
  for (int j = 0; j < naxes; j++) order[no++] = axes[j];
  *gs = 1;
  for (int j = 0; j < naxes; j++) *gs *= me->sizes[axes[j]];
  int64_t total = me->total;
  *ng = total / *gs;
  int64_t *ids = malloc(sizeof(int64_t) * (size_t)(total ? total : 1));
  if (!ids) return NULL;
  for (int64_t t = 0; t < total; t++) {
    /* t's coordinates in the reordered grid (row-major), back to a mesh position */
    int64_t rest = t, coord[MAX_AXES];
    for (int i = no - 1; i >= 0; i--) {
      coord[order[i]] = rest % me->sizes[order[i]];
      rest /= me->sizes[order[i]];
    }
    int64_t pos = 0;
    for (int k = 0; k < me->n; k++) pos = pos * me->sizes[k] + coord[k];
    ids[t] = me->ids ? me->ids[pos] : pos;
  }
  return ids;
}

/* Reads #stablehlo.replica_group_mesh_axes<mesh = @m | #stablehlo.mesh<...>, axes = [...]>
 * into the mesh it names (*me points into ms, or at inl) and the axes it groups by (indices
 * into the mesh, in the order given). why explains a failure. */
static bool parse_mesh_axes(const cj_attr *a, const meshes *ms, mesh *inl, const mesh **me,
                            int *axes, int *naxes, char *why, size_t whycap) {
  scan s = {a->opaque.text, a->opaque.text + a->opaque.len, false};
  *me = NULL;
  *naxes = 0;
  char names[MAX_AXES][NAME_MAX_LEN];
  int nn = 0;
  bool have_axes = false;
  eat(&s, "#stablehlo.replica_group_mesh_axes");
  expect(&s, "<");
  do {
    char key[16];
    if (s.bad || !name_of(&s, key, sizeof key)) return false;
    expect(&s, "=");
    if (!strcmp(key, "mesh")) {
      if (eat(&s, "@")) {
        char nm[NAME_MAX_LEN];
        if (!name_of(&s, nm, sizeof nm)) return false;
        *me = find_mesh(ms, nm);
        if (!*me) {
          snprintf(why, whycap, "names the mesh @%s, which is not an sdy.mesh of the module", nm);
          return false;
        }
      } else if (eat(&s, "#stablehlo.mesh")) {
        if (!parse_shlo_mesh(&s, inl)) return false;
        *me = inl;
      } else {
        return false;
      }
    } else if (!strcmp(key, "axes")) {
      have_axes = true;
      expect(&s, "[");
      if (s.bad) return false;
      if (!eat(&s, "]")) {
        do {
          if (nn == MAX_AXES) return false;
          eat(&s, "#stablehlo.axis_ref");
          expect(&s, "<");
          bool have_name = false;
          do {
            char k2[16];
            if (s.bad || !name_of(&s, k2, sizeof k2)) return false;
            expect(&s, "=");
            if (!strcmp(k2, "name")) {
              have_name = name_of(&s, names[nn], NAME_MAX_LEN);
            } else if (!strcmp(k2, "sub_axis_info")) {
              snprintf(why, whycap, "groups by a sub-axis, which is not supported");
              return false;
            } else {
              return false;
            }
          } while (!s.bad && eat(&s, ","));
          expect(&s, ">");
          if (s.bad || !have_name) return false;
          nn++;
        } while (eat(&s, ","));
        expect(&s, "]");
      }
    } else {
      return false;
    }
  } while (!s.bad && eat(&s, ","));
  expect(&s, ">");
  if (s.bad || !*me || !have_axes) return false;
  for (int i = 0; i < nn; i++) {
    int k = 0;
    while (k < (*me)->n && strcmp((*me)->axes[k], names[i]) != 0) k++;
    if (k == (*me)->n) {
      snprintf(why, whycap, "groups by the axis \"%s\", which its mesh does not have", names[i]);
      return false;
    }
    for (int j = 0; j < *naxes; j++)
      if (axes[j] == k) {
        snprintf(why, whycap, "names the axis \"%s\" twice", names[i]);
        return false;
      }
    axes[(*naxes)++] = k;
  }
  return true;
}

/* Mesh-axes replica groups on op become the explicit groups they stand for (mesh_groups). */
static CJ_MUST_USE cj_status resolve_mesh_axes(cj_module *m, cj_op *op, const cj_attr *a, const meshes *ms) {
  mesh inl;
  memset(&inl, 0, sizeof inl);
  const mesh *me = NULL;
  int axes[MAX_AXES], naxes = 0;
  char why[160] = "";
  if (!parse_mesh_axes(a, ms, &inl, &me, axes, &naxes, why, sizeof why)) {
    free(inl.ids);
    return cj_op_error(op, why[0] ? CJ_UNIMPLEMENTED : CJ_INVALID_ARGUMENT,
                       "replica_groups %.*s: %s", (int)a->opaque.len, a->opaque.text,
                       why[0] ? why : "cannot read it");
  }
  int64_t ng = 0, gs = 0;
  int64_t *ids = cj_spmd_mesh_groups(me, axes, naxes, &ng, &gs);
  free(inl.ids);
  if (!ids) return cj_oom();
  int64_t total = ng * gs;
  int64_t dims[2] = {ng, gs};
  const cj_type *tt = cj_type_tensor_of(m, CJ_S64, 2, dims);
  const cj_attr *g = tt ? cj_attr_dense(m, tt, ids, sizeof(int64_t) * (size_t)total, false) : NULL;
  free(ids);
  if (!g) return cj_oom();
  return cj_op_set_attr(m, op, "replica_groups", g);
}

typedef struct groups_ctx {
  cj_module *m;
  const meshes *ms;
} groups_ctx;

static CJ_MUST_USE cj_status resolve_op_groups(cj_op *op, void *ctx) {
  groups_ctx *G = ctx;
  const cj_attr *a = cj_op_attr(op, "replica_groups");
  if (!a || a->kind != CJ_ATTR_OPAQUE) return NULL;
  return resolve_mesh_axes(G->m, op, a, G->ms);
}

static CJ_MUST_USE cj_status find_mesh_axes_groups(cj_op *op, void *ctx) {
  const cj_attr *a = cj_op_attr(op, "replica_groups");
  if (a && a->kind == CJ_ATTR_OPAQUE) *(bool *)ctx = true;
  return NULL;
}

cj_status cj_spmd_resolve_groups(cj_module *m) {
  bool any = false;
  CJ_RETURN_IF_ERROR(cj_walk_module(m, find_mesh_axes_groups, &any));
  if (!any) return NULL;
  meshes ms;
  memset(&ms, 0, sizeof ms);
  cj_status st = collect_meshes(m, &ms);
  groups_ctx G = {m, &ms};
  if (!st) st = cj_walk_module(m, resolve_op_groups, &G);
  meshes_free(&ms);
  return st;
}

/* ======================================================================== the pass */


/* Room for one more element in the array *p of *cap elements of `size` bytes, n in use. */
static bool grow(void **p, uint32_t *cap, uint32_t n, size_t size) {
  if (n < *cap) return true;
  uint32_t nc = *cap ? *cap * 2 : 16;
  void *np = realloc(*p, size * nc);
  if (!np) return false;
  *p = np;
  *cap = nc;
  return true;
}

cj_status cj_spmd_mark(state *S, cj_value *v, const sharding *sh) {
  if (!grow((void **)&S->sv, &S->capsv, S->nsv, sizeof *S->sv)) return cj_oom();
  S->sv[S->nsv].v = v;
  snprintf(S->sv[S->nsv].canon, sizeof S->sv[S->nsv].canon, "%s", sh->canon);
  S->sv[S->nsv].sh = *sh;
  S->sv[S->nsv].whole = NULL;
  S->sv[S->nsv].argument = false;
  S->nsv++;
  v->id = S->nsv; /* the scratch number finds the entry (checked: stale numbers miss) */
  return NULL;
}

const sharded_val *cj_spmd_find(const state *S, const cj_value *v) {
  if (v->id >= 1 && v->id <= S->nsv && S->sv[v->id - 1].v == v) return &S->sv[v->id - 1];
  return NULL;
}

/* ---- unreduced values: held as partial sums where a program takes or gives them so ---- */

/* The partial sums (over exactly `unred`) whose all_reduce `sum` is, or NULL. */
static cj_value *partial_of(const state *S, const cj_value *sum, const sharding *sh) {
  for (uint32_t i = 0; i < S->npv; i++)
    if (S->pv[i].sum == sum && S->pv[i].unred == sh->unred && S->pv[i].ukind == sh->ukind)
      return S->pv[i].part;
  return NULL;
}

static bool is_partial_sum(const state *S, const cj_value *v) {
  for (uint32_t i = 0; i < S->npv; i++)
    if (S->pv[i].sum == v) return true;
  return false;
}

/* `part` (a per-device value split as sh, partial over sh's unreduced axes) is summed once, before
 * `before`; `*uses` (a use of the global value: @main's argument, the manual computation's result)
 * are moved to the sum, which is recorded split as sh without the unreduced axes. */
static CJ_MUST_USE cj_status record_partial_sum(state *S, cj_value *part, cj_value *uses, cj_value *sum,
                                                const sharding *sh) {
  cj_replace_all_uses(S->main, uses, sum);
  sum->def->operands[sum->index] = part;
  if (!grow((void **)&S->pv, &S->cappv, S->npv, sizeof *S->pv)) return cj_oom();
  S->pv[S->npv++] = (partial_val){sum, part, sh->unred, sh->ukind};
  if (!cj_spmd_find(S, part)) CJ_RETURN_IF_ERROR(cj_spmd_mark(S, part, sh)); /* (its output sharding) */
  sharding whole = *sh;
  whole.unred = 0;
  whole.partial = false;
  return whole.split ? cj_spmd_mark(S, sum, &whole) : NULL;
}

static CJ_MUST_USE cj_status reduce_partial_value(state *S, cj_op *before, cj_value *part,
                                                  cj_value *uses, const sharding *sh) {
  cj_value *sum;
  CJ_RETURN_IF_ERROR(cj_spmd_reduce_partial(S, before, part, sh, &sum));
  return record_partial_sum(S, part, uses, sum, sh);
}

/* parts[0..k) (partial values over sh's unreduced axes, of one element type) summed by one
 * all_reduce before `before`, as XLA's combiner leaves a loop's gradient accumulators: sums[i]
 * is parts[i]'s sum. */
static CJ_MUST_USE cj_status sum_partials_at_once(state *S, cj_op *before, cj_value **parts, uint32_t k,
                                                  const sharding *sh, cj_value **sums) {
  CJ_RETURN_IF_ERROR(cj_spmd_reduce_partial(S, before, parts[0], sh, &sums[0]));
  cj_op *one = sums[0]->def;
  if (k == 1 || !one || one->kind != CJ_OP_ALL_REDUCE || one->nregions != 1) return NULL;
  cj_op *all = cj_op_create(S->m, CJ_OP_ALL_REDUCE, NULL, k, k, 0);
  if (!all) return cj_oom();
  for (uint32_t i = 0; i < k; i++) {
    all->operands[i] = parts[i];
    all->results[i].type = parts[i]->type;
    sums[i] = &all->results[i];
  }
  all->regions = one->regions; /* (the combiner moves over) */
  all->nregions = 1;
  all->regions[0].op = all;
  all->attrs = one->attrs;
  all->nattrs = one->nattrs;
  all->loc = one->loc;
  all->pos = one->pos;
  cj_block_insert_before(one->block, one, all);
  cj_block_remove(one->block, one);
  return NULL;
}

/* A sharding constraint asks for v unreduced over sh's axes (jnp.einsum(..., out_sharding=
 * P(unreduced=...))): when v is an all_reduce that the partitioner put after a contraction or a
 * reduction, over those axes and maybe others, its operand is the partial values over all of them
 * that XLA leaves on the devices; an unreduced use (a result, a manual computation) takes them,
 * summed over the axes it does not keep unreduced (partial_for). */
static CJ_MUST_USE cj_status note_partial(state *S, cj_value *v, const sharding *sh) {
  cj_op *ar = v->def;
  if (!sh->unred || !ar || ar->kind != CJ_OP_ALL_REDUCE || ar->nopnds != 1 || is_partial_sum(S, v) ||
      sh->mesh->n > 8)
    return NULL;
  const cj_block *rb = ar->regions[0].first;
  cj_op_kind want = sh->ukind == 1 ? CJ_OP_MAXIMUM : sh->ukind == 2 ? CJ_OP_MINIMUM
                    : v->type->dtype == CJ_PRED ? CJ_OP_OR : CJ_OP_ADD;
  if (!rb || !rb->first || rb->first->kind != want) return NULL;
  const cj_attr *g = cj_op_attr(ar, "replica_groups");
  if (!g || g->kind != CJ_ATTR_DENSE) return NULL;
  uint64_t over = 0; /* the axes the all_reduce sums over: a superset of the unreduced ones */
  for (uint64_t set = 1; set < ((uint64_t)1 << sh->mesh->n) && !over; set++) {
    if ((set & sh->unred) != sh->unred) continue;
    int axes[MAX_AXES], na = 0;
    for (int a = 0; a < sh->mesh->n; a++)
      if (set >> a & 1) axes[na++] = a;
    int64_t ng = 0, gs = 0;
    int64_t *ids = cj_spmd_mesh_groups(sh->mesh, axes, na, &ng, &gs);
    if (!ids) return cj_oom();
    if (g->dense.nbytes == sizeof(int64_t) * (size_t)(ng * gs) && !memcmp(g->dense.data, ids, g->dense.nbytes))
      over = set;
    free(ids);
  }
  if (!over) return NULL;
  cj_value *part = ar->operands[0];
  if (!grow((void **)&S->pv, &S->cappv, S->npv, sizeof *S->pv)) return cj_oom();
  S->pv[S->npv++] = (partial_val){v, part, over, sh->ukind};
  /* (its only other user is the all_reduce: recorded again, now with the unreduced axes) */
  const sharded_val *sv = cj_spmd_find(S, part);
  if (!sv) sv = cj_spmd_find(S, v);
  sharding ps = sv ? sv->sh : *sh;
  ps.mesh = sh->mesh;
  ps.unred = over;
  ps.ukind = sh->ukind;
  ps.partial = true;
  return cj_spmd_mark(S, part, &ps);
}

/* The partial values over exactly sh's unreduced axes whose sum is v, or NULL: those recorded, or
 * partial values over more axes summed over the others before `before` (as XLA reshards
 * unreduced={x, y} to unreduced={x}). */
static CJ_MUST_USE cj_status partial_for(state *S, cj_op *before, cj_value *v, const sharding *sh,
                                         cj_value **out) {
  *out = sh->unred ? partial_of(S, v, sh) : NULL;
  for (uint32_t i = 0; i < S->npv && sh->unred && !*out; i++) {
    partial_val pv = S->pv[i];
    if (pv.sum != v || pv.ukind != sh->ukind || (pv.unred & sh->unred) != sh->unred) continue;
    const sharded_val *psv = cj_spmd_find(S, pv.part);
    if (!psv) continue; /* (partial values are always recorded with their sharding) */
    sharding rest = psv->sh;
    rest.mesh = sh->mesh;
    rest.unred = pv.unred & ~sh->unred;
    rest.ukind = pv.ukind;
    CJ_RETURN_IF_ERROR(cj_spmd_reduce_partial(S, before, pv.part, &rest, out));
    rest.unred = sh->unred;
    CJ_RETURN_IF_ERROR(cj_spmd_mark(S, *out, &rest));
    if (before->block != cj_func_body(S->main)) return NULL; /* (not for the uses after a loop) */
    if (!grow((void **)&S->pv, &S->cappv, S->npv, sizeof *S->pv)) return cj_oom();
    S->pv[S->npv++] = (partial_val){v, *out, sh->unred, sh->ukind};
  }
  return NULL;
}

/* The partial values (sum) over exactly `unred` recorded for v, or NULL */
static cj_value *sum_partial_of(const state *S, const cj_value *v, uint64_t unred) {
  for (uint32_t j = 0; j < S->npv; j++)
    if (S->pv[j].sum == v && S->pv[j].unred == unred && !S->pv[j].ukind) return S->pv[j].part;
  return NULL;
}

/* How many leading operands of op it is linear in (their sum in, the sum out), the others being
 * indices it takes whole; 0 for other ops. */
static uint32_t linear_operands(const cj_op *op) {
  switch (op->kind) {
  case CJ_OP_ADD:
  case CJ_OP_SUBTRACT:
  case CJ_OP_DYNAMIC_UPDATE_SLICE:
    return 2;
  case CJ_OP_NEGATE:
  case CJ_OP_TRANSPOSE:
  case CJ_OP_RESHAPE:
  case CJ_OP_BROADCAST_IN_DIM:
  case CJ_OP_SLICE:
  case CJ_OP_DYNAMIC_SLICE:
    return 1;
  case CJ_OP_CONVERT: /* between floating types (as XLA converts partial gradients) */
    return op->nopnds == 1 && cj_dtype_is_float(op->operands[0]->type->dtype) &&
           cj_dtype_is_float(op->results[0].type->dtype);
  default:
    return 0;
  }
}

/* An op linear in its operands (add, subtract, negate, a reshape, a broadcast, a slice, an update
 * of a slice, a conversion between floating types) of values that all have partial values over
 * the same unreduced axes (gradients transposed, converted, stacked and accumulated in a loop): the
 * same op of the partial values is the result's partial values, so that an unreduced use of the
 * result sums nothing. Inserted before op's next op. */
static CJ_MUST_USE cj_status partial_linear(state *S, cj_op *op) {
  uint32_t nlin = linear_operands(op);
  if (!nlin || op->nopnds < nlin || op->nresults != 1 || op->nregions || !op->next ||
      is_partial_sum(S, &op->results[0]))
    return NULL;
  cj_value *r = &op->results[0];
  const sharded_val *rs = cj_spmd_find(S, r);
  for (uint32_t i = 0; i < S->npv; i++) {
    partial_val a = S->pv[i];
    if (a.sum != op->operands[0] || a.ukind) continue;
    cj_value *from[2], *to[2];
    bool ok = true;
    for (uint32_t q = 0; q < nlin && ok; q++) {
      from[q] = op->operands[q];
      to[q] = sum_partial_of(S, from[q], a.unred);
      const sharded_val *os = cj_spmd_find(S, from[q]), *ps = to[q] ? cj_spmd_find(S, to[q]) : NULL;
      bool osplit = os && os->sh.split;
      ok = to[q] && ps && to[q]->type == from[q]->type && ps->sh.split == osplit &&
           (!osplit || !strcmp(ps->sh.canon, os->sh.canon));
    }
    const sharded_val *as = cj_spmd_find(S, a.part);
    if (!ok || !as || (rs && rs->sh.split && rs->sh.mesh != as->sh.mesh)) continue;
    cj_op *c = cj_op_clone(S->m, op, nlin, from, to);
    if (!c) return cj_oom();
    cj_block_insert_before(op->block, op->next, c);
    sharding ps = rs && rs->sh.split ? rs->sh : as->sh;
    ps.unred = a.unred;
    ps.ukind = 0;
    ps.partial = true;
    CJ_RETURN_IF_ERROR(cj_spmd_mark(S, &c->results[0], &ps));
    if (!grow((void **)&S->pv, &S->cappv, S->npv, sizeof *S->pv)) return cj_oom();
    S->pv[S->npv++] = (partial_val){r, &c->results[0], a.unred, 0};
    return NULL;
  }
  return NULL;
}

/* A sharding constraint asks for a whole value (not from a partitioner's all_reduce) unreduced:
 * its partial values (itself on the first device of each group, zeros on the others) are
 * recorded for the unreduced uses that follow (a loop carrying it unreduced, a result). */
static CJ_MUST_USE cj_status note_whole_partial(state *S, cj_op *at, cj_value *v, const sharding *sh) {
  if (!sh->unred || sh->ukind || sh->split || is_partial_sum(S, v) || at->block != cj_func_body(S->main))
    return NULL;
  cj_value *p;
  CJ_RETURN_IF_ERROR(cj_spmd_make_partial(S, at, v, sh, &p));
  CJ_RETURN_IF_ERROR(cj_spmd_mark(S, p, sh));
  if (!grow((void **)&S->pv, &S->cappv, S->npv, sizeof *S->pv)) return cj_oom();
  S->pv[S->npv++] = (partial_val){v, p, sh->unred, 0};
  return NULL;
}

/* The all_reduces that sum partial values for their other uses, when every use took the partial
 * values: removed, as XLA leaves none there (pjit's test_unreduced_einsum_lowers_to_reduce_sum).
 * Renumbers the values: after the last cj_spmd_find. */
static CJ_MUST_USE cj_status drop_unused_sums(state *S, cj_block *body) {
  uint32_t nv;
  /* (sums in a loop's dry-run copy, no longer in the program, keep this id: never removed) */
  for (uint32_t i = 0; i < S->npv; i++) S->pv[i].sum->id = UINT32_MAX;
  uint32_t *u = cj_use_counts(body, &nv);
  if (!u) return cj_oom();
  for (bool again = true; again;) { /* (a sum of sums: its operands' sums next) */
    again = false;
    for (uint32_t i = 0; i < S->npv; i++) {
      cj_value *sum = S->pv[i].sum;
      cj_op *op = sum->def;
      bool kind = op && (op->kind == CJ_OP_ALL_REDUCE || linear_operands(op));
      for (uint32_t k = 0; kind && k < op->nresults; k++) /* (a combined all_reduce: every result) */
        kind = op->results[k].id < nv && !u[op->results[k].id];
      if (!kind || !op->block) continue;
      for (uint32_t k = 0; k < op->nopnds; k++)
        if (op->operands[k]->id < nv && u[op->operands[k]->id]) u[op->operands[k]->id]--;
      cj_block_remove(op->block, op);
      again = true;
    }
  }
  free(u);
  return NULL;
}

/* v as the partial sums over sh's unreduced axes that a use asks for: the partial values it was
 * summed from, or v on one device of each group and zeros on the others. */
static CJ_MUST_USE cj_status as_partial(state *S, cj_op *before, cj_value *v, const sharding *sh,
                                        cj_value **out) {
  cj_value *p;
  CJ_RETURN_IF_ERROR(partial_for(S, before, v, sh, &p));
  if (p) {
    *out = p;
    return NULL;
  }
  return cj_spmd_make_partial(S, before, v, sh, out);
}

/* The whole (global) value of v, sharded as sh, on every device: an all_gather per divided
 * dimension over the mesh axes that divide it (in their order, the first major: the order of
 * the tiles), inserted before `before`. Resharding as XLA's partitioner would, without its
 * cleverness: only the data movement a program asks for by using shards outside shard_map. */
cj_status cj_spmd_gather_whole(state *S, cj_op *before, cj_value *v, const sharding *sh,
                              cj_value **out) {
  const mesh *me = sh->mesh;
  cj_module *m = S->m;
  if (!me || sh->subaxis || me->total != S->ndev)
    return cj_op_error(before, CJ_UNIMPLEMENTED,
                       "SPMD partitioning is not implemented by cjrt: a value sharded as [%s] "
                       "over %s would have to be gathered whole here",
                       sh->canon, sh->subaxis ? "sub-axes" : "another mesh");
  const cj_type *t = v->type;
  int64_t dims[64];
  for (int32_t d = 0; d < t->rank; d++) dims[d] = t->dims[d];
  const cj_type *i64 = cj_type_elem(m, CJ_S64);
  const cj_attr *ch[CJ_SF_CHANNEL_HANDLE__COUNT];
  ch[CJ_SF_CHANNEL_HANDLE_handle] = cj_attr_int(m, 1, i64);
  ch[CJ_SF_CHANNEL_HANDLE_type] = cj_attr_int(m, 1, i64);
  const cj_attr *cha = ch[0] && ch[1] ? cj_attr_struct(m, CJ_SK_CHANNEL_HANDLE, ch) : NULL;
  const cj_attr *unit = cj_attr_unit(m);
  if (!cha || !unit) return cj_oom();
  cj_value *cur = v;
  for (int32_t d = 0; d < t->rank && d < sh->rank; d++) {
    if (sh->div[d] <= 1) continue;
    int axes[8];
    for (int j = 0; j < sh->nax[d]; j++) axes[j] = sh->ax[d][j];
    int64_t ng = 0, gs = 0;
    int64_t *ids = cj_spmd_mesh_groups(me, axes, sh->nax[d], &ng, &gs);
    if (!ids) return cj_oom();
    int64_t gd[2] = {ng, gs};
    const cj_type *gt = cj_type_tensor_of(m, CJ_S64, 2, gd);
    const cj_attr *ga =
        gt ? cj_attr_dense(m, gt, ids, sizeof(int64_t) * (size_t)(ng * gs), false) : NULL;
    free(ids);
    dims[d] *= gs;
    const cj_type *rt = cj_type_tensor(m, t->elem, t->rank, dims, NULL, t->encoding);
    cj_op *g = ga && rt ? cj_build_op(m, before, before, CJ_OP_ALL_GATHER, 1, &cur, rt) : NULL;
    const cj_attr *gdim = cj_attr_int(m, d, i64);
    if (!g || !gdim) return cj_oom();
    CJ_RETURN_IF_ERROR(cj_op_set_attr(m, g, "all_gather_dim", gdim));
    CJ_RETURN_IF_ERROR(cj_op_set_attr(m, g, "replica_groups", ga));
    CJ_RETURN_IF_ERROR(cj_op_set_attr(m, g, "channel_handle", cha));
    CJ_RETURN_IF_ERROR(cj_op_set_attr(m, g, "use_global_device_ids", unit));
    cur = &g->results[0];
  }
  *out = cur;
  return NULL;
}

/* Clones the body of manual computation `mc` before it with its arguments mapped to mc's
 * operands; the terminator's mapped operands are returned in rets. */
static CJ_MUST_USE cj_status inline_manual(state *S, cj_op *mc, cj_value ***rets) {
  cj_block *body = mc->regions[0].first;
  uint32_t cap = body->nargs + 64, n = 0;
  cj_value **from = malloc(sizeof(cj_value *) * cap), **to = malloc(sizeof(cj_value *) * cap);
  cj_status st = (!from || !to) ? cj_oom() : NULL;
  for (uint32_t i = 0; i < body->nargs && !st; i++) {
    from[n] = &body->args[i];
    to[n++] = mc->operands[i];
  }
  *rets = NULL;
  for (cj_op *o = body->first; o && !st; o = o->next) {
    if (o == body->last) { /* sdy.return */
      *rets = cj_alloc(S->m, sizeof(cj_value *) * (o->nopnds ? o->nopnds : 1));
      if (!*rets) {
        st = cj_oom();
        break;
      }
      for (uint32_t i = 0; i < o->nopnds; i++) {
        cj_value *v = o->operands[i];
        (*rets)[i] = v;
        for (uint32_t k = n; k-- > 0;)
          if (from[k] == v) {
            (*rets)[i] = to[k];
            break;
          }
      }
      break;
    }
    cj_op *c = cj_op_clone(S->m, o, n, from, to);
    if (!c) {
      st = cj_oom();
      break;
    }
    cj_block_insert_before(mc->block, mc, c);
    if (!cj_value_map_add_results(&from, &to, &n, &cap, o, c)) {
      st = cj_oom();
      break;
    }
  }
  if (!st && !*rets) st = cj_op_error(mc, CJ_INVALID_ARGUMENT, "manual computation without sdy.return");
  free(from);
  free(to);
  return st;
}

/* manual_axes = #sdy<manual_axes{"a", "b"}>: every axis of size > 1 must be manual */
/* The axes a manual computation makes manual (its manual_axes). */
typedef struct manual_axes {
  char names[MAX_AXES][NAME_MAX_LEN];
  int n;
} manual_axes;

static CJ_MUST_USE cj_status read_manual_axes(cj_op *mc, manual_axes *ma) {
  const cj_attr *a = cj_op_attr(mc, "manual_axes");
  if (!a || a->kind != CJ_ATTR_OPAQUE)
    return cj_op_error(mc, CJ_INVALID_ARGUMENT, "sdy.manual_computation without manual_axes");
  ma->n = 0;
  scan s = {a->opaque.text, a->opaque.text + a->opaque.len, false};
  while (s.p < s.e && *s.p != '{') s.p++;
  expect(&s, "{");
  if (!eat(&s, "}")) {
    do {
      if (ma->n == MAX_AXES || !name_of(&s, ma->names[ma->n], NAME_MAX_LEN)) {
        s.bad = true;
        break;
      }
      ma->n++;
    } while (eat(&s, ","));
    expect(&s, "}");
  }
  if (s.bad)
    return cj_op_error(mc, CJ_UNIMPLEMENTED, "cannot read manual_axes %.*s", (int)a->opaque.len,
                       a->opaque.text);
  return NULL;
}

/* sh without the axes that are not manual: shard_map over part of the mesh leaves the others
 * automatic, and its body holds its values whole along them (so it runs as written; its
 * collectives name their own axes). True if it dropped some. */
static bool only_manual(sharding *sh, const manual_axes *ma) {
  bool dropped = false;
  for (int d = 0; sh->mesh && d < sh->rank; d++) {
    int k = 0;
    for (int j = 0; j < sh->nax[d]; j++) {
      bool manual = false;
      for (int i = 0; i < ma->n && !manual; i++) manual = !strcmp(ma->names[i], sh->mesh->axes[sh->ax[d][j]]);
      if (manual) sh->ax[d][k++] = sh->ax[d][j];
    }
    dropped |= k != sh->nax[d];
    sh->nax[d] = (int8_t)k;
  }
  if (dropped) cj_spmd_canon(sh);
  return dropped;
}

/* A replicated value that a manual computation takes in shards (jit(shard_map(f))(x) with x
 * not sharded beforehand): each device slices its own shard out of its whole copy, as XLA's
 * partitioner reshards replicated to sharded. The offsets of every partition are computed here
 * into a constant table [rank x partitions]; at run time the device picks its column by
 * partition_id and takes a dynamic_slice of the local type `lt`. */
static CJ_MUST_USE cj_status slice_replicated(state *S, cj_op *mc, cj_value *v, const sharding *sh,
                                  const cj_type *lt, cj_value **out) {
  const mesh *me = sh->mesh;
  int32_t rank = lt->rank;
  int64_t np = S->ndev;
  if (!me || sh->subaxis || me->total != np || rank < 1)
    return cj_op_error(mc, CJ_UNIMPLEMENTED,
                       "SPMD partitioning is not implemented by cjrt: a replicated value taken "
                       "in shards [%s] over sub-axes or another mesh",
                       sh->canon);
  cj_module *m = S->m;
  int64_t *tab = malloc(sizeof(int64_t) * (size_t)(rank * np));
  if (!tab) return cj_oom();
  for (int64_t pid = 0; pid < np; pid++) {
    int64_t pos = pid; /* the mesh position holding partition pid */
    if (me->ids) {
      pos = -1;
      for (int64_t k = 0; k < me->nids; k++)
        if (me->ids[k] == pid) pos = k;
      if (pos < 0) pos = pid;
    }
    int64_t coord[MAX_AXES];
    for (int a = me->n - 1; a >= 0; a--) { /* row-major: the last axis varies fastest */
      coord[a] = pos % me->sizes[a];
      pos /= me->sizes[a];
    }
    for (int32_t d = 0; d < rank; d++) {
      int64_t idx = 0;
      for (int j = 0; j < sh->nax[d]; j++) {
        int a = sh->ax[d][j];
        idx = idx * me->sizes[a] + coord[a];
      }
      tab[d * np + pid] = idx * lt->dims[d];
    }
  }
  const cj_type *i64 = cj_type_elem(m, CJ_S64);
  int64_t tdims[2] = {rank, np};
  const cj_type *tt = cj_type_tensor_of(m, CJ_S64, 2, tdims);
  const cj_attr *tv = tt ? cj_attr_dense(m, tt, tab, sizeof(int64_t) * (size_t)(rank * np), false) : NULL;
  free(tab);
  if (!tv) return cj_oom();
  cj_op *c = cj_build_op(m, mc, mc, CJ_OP_CONSTANT, 0, NULL, tt);
  if (!c) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, c, "value", tv));
  cj_op *pid = cj_build_op(m, mc, mc, CJ_OP_PARTITION_ID, 0, NULL, cj_type_tensor_of(m, CJ_U32, 0, NULL));
  cj_value *pv = pid ? &pid->results[0] : NULL;
  cj_op *cv = pv ? cj_build_op(m, mc, mc, CJ_OP_CONVERT, 1, &pv, cj_type_tensor_of(m, CJ_S64, 0, NULL)) : NULL;
  if (!cv || !i64) return cj_oom();
  cj_value *opnds[1 + 64];
  if (rank > 64) return cj_op_error(mc, CJ_UNIMPLEMENTED, "rank %d", rank);
  opnds[0] = v;
  const cj_type *one = cj_type_tensor_of(m, CJ_S64, 2, (int64_t[]){1, 1});
  const cj_type *sc = cj_type_tensor_of(m, CJ_S64, 0, NULL);
  int64_t sizes11[2] = {1, 1};
  for (int32_t d = 0; d < rank; d++) {
    /* tab[d, pid]: a dynamic_slice of the table, then a scalar */
    cj_op *zd = cj_build_op(m, mc, mc, CJ_OP_CONSTANT, 0, NULL, sc);
    int64_t dv = d;
    const cj_attr *za = zd ? cj_attr_dense(m, sc, &dv, sizeof dv, false) : NULL;
    if (!za) return cj_oom();
    CJ_RETURN_IF_ERROR(cj_op_set_attr(m, zd, "value", za));
    cj_value *ds_in[3] = {&c->results[0], &zd->results[0], &cv->results[0]};
    cj_op *ds = cj_build_op(m, mc, mc, CJ_OP_DYNAMIC_SLICE, 3, ds_in, one);
    if (!ds) return cj_oom();
    CJ_RETURN_IF_ERROR(cj_op_set_attr(m, ds, "slice_sizes", cj_attr_i64_array(m, 2, sizes11)));
    cj_value *dsv = &ds->results[0];
    cj_op *rs = cj_build_op(m, mc, mc, CJ_OP_RESHAPE, 1, &dsv, sc);
    if (!rs) return cj_oom();
    opnds[1 + d] = &rs->results[0];
  }
  cj_op *sl = cj_build_op(m, mc, mc, CJ_OP_DYNAMIC_SLICE, (uint32_t)(1 + rank), opnds, lt);
  if (!sl) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, sl, "slice_sizes", cj_attr_i64_array(m, rank, lt->dims)));
  *out = &sl->results[0];
  return NULL;
}

static CJ_MUST_USE cj_status nested_manuals(state *S, cj_op *first, cj_op *mc, cj_value **outer,
                                             uint32_t nouter);

/* mc's body (checked against its operands) and manual axes. */
static CJ_MUST_USE cj_status manual_start(cj_op *mc, cj_block **body, manual_axes *ma) {
  *body = mc->nregions == 1 ? mc->regions[0].first : NULL;
  if (!*body || (*body)->nargs != mc->nopnds)
    return cj_op_error(mc, CJ_INVALID_ARGUMENT, "manual computation body does not match its operands");
  return read_manual_axes(mc, ma);
}

/* The sharding mc takes operand i in, along its manual axes. */
static CJ_MUST_USE cj_status manual_in_sharding(state *S, cj_op *mc, const manual_axes *ma,
                                                uint32_t i, sharding *sh) {
  CJ_RETURN_IF_ERROR(read_per_value(mc, "in_shardings", cj_op_attr(mc, "in_shardings"), &S->ms, i,
                                    mc->regions[0].first->args[i].type, sh));
  only_manual(sh, ma);
  return NULL;
}

/* `full` (a manual computation's out_sharding) with the automatic axes that the sharding
 * constraint `c` in its body gives its result added (as XLA propagates them out of the body).
 * True if it added some. */
static bool with_auto_axes(state *S, const cj_op *c, const manual_axes *ma, sharding *full) {
  sharding cs;
  cj_status st = cj_spmd_read_sharding(c, "the sharding constraint", cj_op_attr(c, "sharding"),
                                       &S->ms, c->results[0].type, &cs);
  if (st || cs.mesh != full->mesh || cs.rank != full->rank || cs.subaxis || !full->mesh) {
    cj_status_ignore(st); /* not usable: the result stays as its out_sharding says */
    return false;
  }
  bool added = false;
  for (int d = 0; d < cs.rank; d++)
    for (int k = 0; k < cs.nax[d]; k++) {
      int a = cs.ax[d][k];
      bool manual = false, used = false;
      for (int i = 0; i < ma->n && !manual; i++) manual = !strcmp(ma->names[i], full->mesh->axes[a]);
      for (int e = 0; e < full->rank && !used; e++)
        for (int j = 0; j < full->nax[e]; j++) used |= full->ax[e][j] == a;
      if (manual || used || full->nax[d] >= 8 || c->results[0].type->dims[d] % (full->div[d] * full->mesh->sizes[a]))
        continue;
      full->ax[d][full->nax[d]++] = (int8_t)a;
      cj_spmd_canon(full);
      added = true;
    }
  return added;
}

/* A manual computation inside another's body (shard_map over part of the mesh nests one for the
 * axes left automatic, e.g. for axis_index): its operands are held whole along its manual axes
 * there, so each device slices its shards out of them, and its results are gathered whole.
 * outer[nouter]: the enclosing body's results, rewritten where they are mc's. */
static CJ_MUST_USE cj_status manual_nested(state *S, cj_op *mc, cj_value **outer, uint32_t nouter) {
  cj_block *body;
  manual_axes ma;
  CJ_RETURN_IF_ERROR(manual_start(mc, &body, &ma));
  const cj_attr *outs = cj_op_attr(mc, "out_shardings");
  for (uint32_t i = 0; i < mc->nopnds; i++) {
    sharding sh;
    CJ_RETURN_IF_ERROR(manual_in_sharding(S, mc, &ma, i, &sh));
    const cj_type *lt = mc->operands[i]->type;
    if (sh.split) CJ_RETURN_IF_ERROR(cj_spmd_local_type(S->m, mc, "in_shardings", lt, &sh, &lt));
    if (sh.unred || lt != body->args[i].type)
      return cj_op_error(mc, CJ_UNIMPLEMENTED,
                         "operand %u of a nested manual computation is taken as [%s]%s, which "
                         "does not give its body's shape",
                         i, sh.canon, sh.unred ? " with unreduced axes" : "");
    if (sh.split) CJ_RETURN_IF_ERROR(slice_replicated(S, mc, mc->operands[i], &sh, lt, &mc->operands[i]));
  }
  cj_op *before = mc->prev;
  cj_value **rets = NULL;
  CJ_RETURN_IF_ERROR(inline_manual(S, mc, &rets));
  for (uint32_t j = 0; j < mc->nresults; j++) {
    sharding sh;
    CJ_RETURN_IF_ERROR(read_per_value(mc, "out_shardings", outs, &S->ms, j, mc->results[j].type, &sh));
    only_manual(&sh, &ma);
    const cj_type *lt;
    CJ_RETURN_IF_ERROR(cj_spmd_local_type(S->m, mc, "out_shardings", mc->results[j].type, &sh, &lt));
    if (sh.unred || lt != rets[j]->type)
      return cj_op_error(mc, CJ_UNIMPLEMENTED,
                         "result %u of a nested manual computation is given as [%s]%s, which does "
                         "not fit its body's result",
                         j, sh.canon, sh.unred ? " with unreduced axes" : "");
    cj_value *w = rets[j];
    if (sh.split) CJ_RETURN_IF_ERROR(cj_spmd_gather_whole(S, mc, w, &sh, &w));
    cj_replace_all_uses(S->main, &mc->results[j], w);
    for (uint32_t k = 0; k < nouter; k++)
      if (outer[k] == &mc->results[j]) outer[k] = w;
  }
  CJ_RETURN_IF_ERROR(nested_manuals(S, before, mc, outer, nouter));
  cj_block_remove(mc->block, mc);
  return NULL;
}

/* The manual computations among the ops after `first` (NULL: from the block's start) up to mc,
 * which were inlined from mc's body. */
static CJ_MUST_USE cj_status nested_manuals(state *S, cj_op *first, cj_op *mc, cj_value **outer,
                                             uint32_t nouter) {
  for (cj_op *op = first ? first->next : mc->block->first, *next; op && op != mc; op = next) {
    next = op->next;
    if (op->kind == CJ_OP_SDY_MANUAL_COMPUTATION)
      CJ_RETURN_IF_ERROR(manual_nested(S, op, outer, nouter));
  }
  return NULL;
}

static CJ_MUST_USE cj_status manual(state *S, cj_op *mc) {
  cj_block *body;
  manual_axes ma;
  CJ_RETURN_IF_ERROR(manual_start(mc, &body, &ma));
  const cj_attr *outs = cj_op_attr(mc, "out_shardings");
  const mesh *me = NULL;
  uint64_t took = 0; /* operands replaced by their partial values */
  for (uint32_t i = 0; i < mc->nopnds; i++) {
    sharding sh;
    CJ_RETURN_IF_ERROR(manual_in_sharding(S, mc, &ma, i, &sh));
    if (sh.mesh) me = sh.mesh;
    cj_value *p;
    CJ_RETURN_IF_ERROR(partial_for(S, mc, mc->operands[i], &sh, &p));
    if (p) mc->operands[i] = p; /* unreduced in, as it was made */
    if (p && i < 64) took |= (uint64_t)1 << i;
    cj_value *v = mc->operands[i];
    const sharded_val *sv = cj_spmd_find(S, v);
    if (sv && strcmp(sv->canon, sh.canon) != 0) { /* resharded: gathered whole, then sliced */
      sharded_val *w = (sharded_val *)sv;
      if (mc->block != cj_func_body(S->main)) { /* in a loop: gathered there, not kept */
        CJ_RETURN_IF_ERROR(cj_spmd_gather_whole(S, mc, w->v, &w->sh, &v));
        mc->operands[i] = v;
      } else {
        if (!w->whole) CJ_RETURN_IF_ERROR(cj_spmd_gather_whole(S, mc, w->v, &w->sh, &w->whole));
        v = mc->operands[i] = w->whole;
      }
      sv = NULL;
    }
    if (!sv && sh.split && v->type != body->args[i].type) {
      const cj_type *lt;
      CJ_RETURN_IF_ERROR(cj_spmd_local_type(S->m, mc, "in_shardings", v->type, &sh, &lt));
      if (lt == body->args[i].type) {
        CJ_RETURN_IF_ERROR(slice_replicated(S, mc, v, &sh, lt, &v));
        mc->operands[i] = v;
        sh.split = false; /* now a local value: no further check against a sharding */
        continue;
      }
    }
    if (v->type != body->args[i].type) {
      return cj_op_error(mc, CJ_UNIMPLEMENTED,
                         "SPMD partitioning is not implemented by cjrt: operand %u of the manual "
                         "computation is a %s value on each device but the computation takes "
                         "shards of it ([%s]); pass it in already sharded (as an argument of the "
                         "jitted function with that sharding)",
                         i, sv ? "differently sharded" : "replicated", sh.canon);
    }
    if (sv ? strcmp(sv->canon, sh.canon) != 0 : sh.split)
      return cj_op_error(mc, CJ_UNIMPLEMENTED,
                         "SPMD partitioning is not implemented by cjrt: operand %u is sharded as "
                         "[%s] but the manual computation takes it as [%s] (resharding needs a "
                         "partitioner)",
                         i, sv ? sv->canon : "replicated", sh.canon);
  }
  for (uint32_t i = 0; i < mc->nopnds; i++) { /* the other unreduced operands: made partial */
    sharding sh;
    CJ_RETURN_IF_ERROR(manual_in_sharding(S, mc, &ma, i, &sh));
    bool made = false;
    for (uint32_t k = 0; k < S->npv && !made; k++) made = S->pv[k].part == mc->operands[i];
    made |= i < 64 && (took >> i & 1); /* (partial values summed over fewer axes) */
    if (sh.unred && !made)
      CJ_RETURN_IF_ERROR(cj_spmd_make_partial(S, mc, mc->operands[i], &sh, &mc->operands[i]));
  }
  if (!me && mc->nresults > 0) {
    sharding sh;
    cj_status st = read_per_value(mc, "out_shardings", outs, &S->ms, 0, mc->results[0].type, &sh);
    if (!st) me = sh.mesh;
    /* unreadable out_shardings name no mesh: the module's only mesh is used, if it has one */
    cj_status_ignore(st);
  }
  if (!me && S->ms.n == 1) me = &S->ms.m[0];
  if (me && me->total != S->ndev)
    return cj_op_error(mc, CJ_INVALID_ARGUMENT,
                       "the mesh @%s has %lld devices but the program runs on %lld", me->name,
                       (long long)me->total, (long long)S->ndev);
  cj_op *before = mc->prev;
  cj_value **rets = NULL;
  CJ_RETURN_IF_ERROR(inline_manual(S, mc, &rets));
  CJ_RETURN_IF_ERROR(nested_manuals(S, before, mc, rets, mc->nresults));
  for (uint32_t j = 0; j < mc->nresults; j++) {
    const cj_op *made = rets[j]->def; /* (a sharding constraint on automatic axes?) */
    /* a value the body passes through (an operand), or gives twice, or that already has a
     * sharding, is copied: the result is another global value, sharded its own way */
    bool seen = cj_spmd_find(S, rets[j]) != NULL;
    for (uint32_t k = 0; k < mc->nopnds && !seen; k++) seen = mc->operands[k] == rets[j];
    for (uint32_t k = 0; k < j && !seen; k++) seen = rets[k] == rets[j];
    if (seen) {
      cj_op *copy = cj_build_op(S->m, mc, mc, CJ_OP_RESHAPE, 1, &rets[j], rets[j]->type);
      if (!copy) return cj_oom();
      rets[j] = &copy->results[0];
    }
    sharding sh;
    CJ_RETURN_IF_ERROR(read_per_value(mc, "out_shardings", outs, &S->ms, j, mc->results[j].type, &sh));
    sharding full = sh;
    bool auto_split = only_manual(&sh, &ma) && full.split;
    if (made && made->kind == CJ_OP_SDY_SHARDING_CONSTRAINT)
      auto_split |= with_auto_axes(S, made, &ma, &full);
    const cj_type *lt;
    CJ_RETURN_IF_ERROR(cj_spmd_local_type(S->m, mc, "out_shardings", mc->results[j].type, &sh, &lt));
    if (lt != rets[j]->type)
      return cj_op_error(mc, CJ_INVALID_ARGUMENT,
                         "result %u of the manual computation: its body returns a different shape "
                         "than the out_sharding gives",
                         j);
    if (sh.unred) { /* partial sums out: summed for every use but an unreduced one */
      CJ_RETURN_IF_ERROR(reduce_partial_value(S, mc, rets[j], &mc->results[j], &sh));
      continue;
    }
    if (auto_split) { /* split along automatic axes too: each device keeps its slice (free) */
      cj_value *w;
      CJ_RETURN_IF_ERROR(cj_spmd_reshard(S, mc, rets[j], &sh, &full, &w));
      CJ_RETURN_IF_ERROR(cj_spmd_mark(S, w, &full));
      cj_replace_all_uses(S->main, &mc->results[j], w);
      continue;
    }
    cj_replace_all_uses(S->main, &mc->results[j], rets[j]);
    if (sh.split) CJ_RETURN_IF_ERROR(cj_spmd_mark(S, rets[j], &sh));
  }
  cj_block_remove(mc->block, mc);
  return NULL;
}

/* Removes the shardings from a dictionary of argument/result attributes once the partitioner
 * has applied them: sdy.sharding and mhlo.sharding (Shardy's, when both say it, or GSPMD's). */
static const cj_attr *without_sharding(cj_module *m, const cj_attr *dict) {
  if (!dict || dict->kind != CJ_ATTR_DICT) return dict;
  cj_named_attr items[64];
  int32_t n = 0;
  for (int32_t k = 0; k < dict->dict.n && n < 64; k++) {
    const char *nm = dict->dict.items[k].name;
    if (!strcmp(nm, "sdy.sharding") || !strcmp(nm, "mhlo.sharding")) continue;
    items[n++] = dict->dict.items[k];
  }
  if (n == dict->dict.n) return dict;
  return cj_attr_dict(m, n, items);
}

static CJ_MUST_USE cj_status strip_attrs(cj_module *m, cj_op *main, const char *key, int32_t count) {
  const cj_attr *arr = cj_op_attr(main, key);
  if (!arr || arr->kind != CJ_ATTR_ARRAY) return NULL;
  const cj_attr **items = cj_alloc(m, sizeof(cj_attr *) * (size_t)(arr->arr.n ? arr->arr.n : 1));
  if (!items) return cj_oom();
  for (int32_t i = 0; i < arr->arr.n; i++) items[i] = without_sharding(m, arr->arr.items[i]);
  (void)count;
  const cj_attr *na = cj_attr_array(m, arr->arr.n, items);
  if (!na) return cj_oom();
  return cj_op_set_attr(m, main, key, na);
}

/* ======================================================================== output shardings */

/* A growing string. */
typedef struct sbuf {
  char *p;
  size_t n, cap;
  bool oom;
} sbuf;

static void sb_add(sbuf *b, const char *s) {
  size_t k = strlen(s);
  if (b->oom) return;
  if (b->n + k + 1 > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 128;
    while (cap < b->n + k + 1) cap *= 2;
    char *np = realloc(b->p, cap);
    if (!np) {
      b->oom = true;
      return;
    }
    b->p = np;
    b->cap = cap;
  }
  memcpy(b->p + b->n, s, k + 1);
  b->n += k;
}

/* The HloSharding text of `sh` (e.g. "{devices=[4,1]0,1,2,3}"), whose devices are the partition
 * ids: mesh position p is partition p. False if it cannot be written (sub-axes). */
static bool hlo_sharding(const sharding *sh, sbuf *b) {
  if (!sh || (!sh->split && !sh->unred)) {
    sb_add(b, "{replicated}");
    return true;
  }
  const mesh *me = sh->mesh;
  if (!me || sh->subaxis || me->total > 65536) return false;
  bool used[MAX_AXES] = {false};
  for (int d = 0; d < sh->rank; d++)
    for (int k = 0; k < sh->nax[d]; k++) used[sh->ax[d][k]] = true;
  int64_t rep = 1, unr = 1; /* trailing tile dims: the unreduced axes, then the replicated */
  for (int a = 0; a < me->n; a++) {
    if (sh->unred >> a & 1) unr *= me->sizes[a];
    else if (!used[a]) rep *= me->sizes[a];
  }
  /* max and min partial values: the reduction in the metadata, as XLA's HloSharding keeps it */
  const char *kind = !sh->unred || !sh->ukind ? ""
                     : sh->ukind == 1 ? " metadata={op_type=\"sdy::reduction_op\" op_name=\"MAX\"}"
                                      : " metadata={op_type=\"sdy::reduction_op\" op_name=\"MIN\"}";
  if (!sh->split && rep == 1) {
    sb_add(b, "{unreduced");
    sb_add(b, kind);
    sb_add(b, "}");
    return true;
  }
  int64_t *assign = malloc(sizeof(int64_t) * (size_t)me->total);
  if (!assign) {
    b->oom = true;
    return false;
  }
  for (int64_t p = 0; p < me->total; p++) {
    int64_t c[MAX_AXES], q = p;
    for (int a = me->n - 1; a >= 0; a--) {
      c[a] = q % me->sizes[a];
      q /= me->sizes[a];
    }
    int64_t lin = 0;
    for (int d = 0; d < sh->rank; d++) {
      int64_t t = 0;
      for (int k = 0; k < sh->nax[d]; k++) t = t * me->sizes[sh->ax[d][k]] + c[sh->ax[d][k]];
      lin = lin * sh->div[d] + t;
    }
    int64_t r = 0, u = 0;
    for (int a = 0; a < me->n; a++) {
      if (sh->unred >> a & 1) u = u * me->sizes[a] + c[a];
      else if (!used[a]) r = r * me->sizes[a] + c[a];
    }
    lin = (lin * unr + u) * rep + r;
    assign[lin] = me->ids ? me->ids[p] : p;
  }
  char tmp[32];
  sb_add(b, "{devices=[");
  for (int d = 0; d < sh->rank; d++) {
    snprintf(tmp, sizeof tmp, "%s%lld", d ? "," : "", (long long)sh->div[d]);
    sb_add(b, tmp);
  }
  /* (a scalar has no tile dims of its own: no comma before the first trailing one) */
  if (unr > 1) {
    snprintf(tmp, sizeof tmp, "%s%lld", sh->rank ? "," : "", (long long)unr);
    sb_add(b, tmp);
  }
  if (rep > 1) {
    snprintf(tmp, sizeof tmp, "%s%lld", sh->rank || unr > 1 ? "," : "", (long long)rep);
    sb_add(b, tmp);
  }
  sb_add(b, "]");
  for (int64_t i = 0; i < me->total; i++) {
    snprintf(tmp, sizeof tmp, "%s%lld", i ? "," : "", (long long)assign[i]);
    sb_add(b, tmp);
  }
  free(assign);
  sb_add(b, unr > 1 ? (rep > 1 ? " last_tile_dims={unreduced, replicated}" : " last_tile_dims={unreduced}")
             : rep > 1 ? " last_tile_dim_replicate"
                       : "");
  sb_add(b, kind);
  sb_add(b, "}");
  return !b->oom;
}

/* mhlo.spmd_parameters_shardings / mhlo.spmd_output_sharding on the module: how the values each
 * device holds make up @main's global arguments and results. Frameworks read them back from
 * PJRT_Executable_OptimizedProgram (JAX's output shardings come from there). */
static CJ_MUST_USE cj_status set_sharding_attrs(state *S, const sharding *const *args, int32_t nargs,
                                    const sharding *const *results, int32_t nresults) {
  cj_module *m = S->m;
  const cj_attr **items = cj_alloc(m, sizeof(cj_attr *) * (size_t)(nargs ? nargs : 1));
  if (!items) return cj_oom();
  for (int32_t i = 0; i < nargs; i++) {
    sbuf b = {0};
    if (!hlo_sharding(args[i], &b)) {
      free(b.p);
      return b.oom ? cj_oom() : NULL; /* not expressible: say nothing */
    }
    items[i] = cj_attr_string(m, b.p, b.n);
    free(b.p);
    if (!items[i]) return cj_oom();
  }
  sbuf out = {0};
  if (nresults != 1) sb_add(&out, "{");
  for (int32_t j = 0; j < nresults; j++) {
    if (j) sb_add(&out, ", ");
    if (!hlo_sharding(results[j], &out)) {
      bool oom = out.oom;
      free(out.p);
      return oom ? cj_oom() : NULL;
    }
  }
  if (nresults != 1) sb_add(&out, "}");
  if (out.oom) {
    free(out.p);
    return cj_oom();
  }
  const cj_attr *os = cj_attr_string(m, out.p, out.n);
  free(out.p);
  const cj_attr *ps = cj_attr_array(m, nargs, items);
  if (!os || !ps) return cj_oom();
  /* no results: no output sharding at all. JAX reads an empty tuple's sharding as a tuple of one
   * element (an empty one fails there, and its MLIR-to-HLO conversion crashes on a tuple of one
   * for a function without results) */
  if (nresults) CJ_RETURN_IF_ERROR(cj_module_set_attr(m, "mhlo.spmd_output_sharding", os));
  return cj_module_set_attr(m, "mhlo.spmd_parameters_shardings", ps);
}

/* An argument's or result's sharding: sdy.sharding, or its round-trip spelling (NULL: none) */
static const cj_attr *sharding_attr(cj_module *m, const cj_attr *attrs) {
  const cj_attr *a = cj_attr_dict_get(attrs, "sdy.sharding");
  if (a) return a;
  size_t len = 0;
  const char *t = frontend_str(cj_attr_dict_get(attrs, "mhlo.frontend_attributes"), "xla.sdy.sharding", &len);
  return t ? cj_attr_opaque(m, t, len) : NULL;
}

/* The sharding an argument's or result's attributes give a value of global type t: Shardy's
 * (sdy.sharding or its round-trip spelling), else GSPMD's mhlo.sharding. *have: either was
 * there; a {manual} or {maximal} one reads as replicated. */
static CJ_MUST_USE cj_status value_sharding(state *S, const cj_attr *attrs, const cj_type *t,
                                            const char *what, sharding *sh, bool *have) {
  const cj_attr *a = sharding_attr(S->m, attrs);
  const char *txt = NULL;
  size_t len = 0;
  *have = a || cj_attr_get_str(cj_attr_dict_get(attrs, "mhlo.sharding"), &txt, &len);
  if (a) return cj_spmd_read_sharding(S->main, what, a, &S->ms, t, sh);
  if (!*have) return NULL;
  bool manual;
  return cj_spmd_read_hlo(&S->ms, S->ndev, S->main, what, txt, len, t, sh, &manual);
}

static bool is_call_target(const cj_op *op, const char *name) {
  const char *t = NULL;
  size_t n = 0;
  return op && op->kind == CJ_OP_CUSTOM_CALL &&
         cj_attr_get_str(cj_op_attr(op, "call_target_name"), &t, &n) && n == strlen(name) &&
         memcmp(t, name, n) == 0;
}

/* The op using every result of `op`, in order, as its operands (and nothing else), or NULL. */
static cj_op *sole_consumer(cj_op *op) {
  cj_op *u = op->next;
  if (!u || u->nopnds != op->nresults) return NULL;
  for (uint32_t i = 0; i < op->nresults; i++)
    if (u->operands[i] != &op->results[i]) return NULL;
  return u;
}

/* The round-trip triples of a function's body turned back into sdy.manual_computation ops. */
static CJ_MUST_USE cj_status from_round_trip(cj_module *m, cj_op *main) {
  cj_block *b = cj_func_body(main);
  for (cj_op *g = b ? b->first : NULL; g;) {
    if (!is_call_target(g, "xla.sdy.GlobalToLocalShape")) {
      g = g->next;
      continue;
    }
    cj_op *call = sole_consumer(g);
    cj_op *l = call && call->kind == CJ_OP_FUNC_CALL ? sole_consumer(call) : NULL;
    const cj_attr *ce = call ? cj_op_attr(call, "callee") : NULL;
    cj_op *f = ce && ce->kind == CJ_ATTR_SYMREF ? cj_module_lookup_symbol(m, ce->sym.root) : NULL;
    cj_block *fb = f && f->kind == CJ_OP_FUNC ? cj_func_body(f) : NULL;
    if (!is_call_target(l, "xla.sdy.LocalToGlobalShape") || !fb || fb->nargs != g->nresults ||
        !fb->last || fb->last->nopnds != l->nopnds)
      return cj_op_error(g, CJ_UNIMPLEMENTED,
                         "custom_call @xla.sdy.GlobalToLocalShape not followed by a call of the "
                         "manual computation's body and @xla.sdy.LocalToGlobalShape");
    size_t ni = 0, no = 0, na = 0;
    const cj_attr *gfe = cj_op_attr(g, "mhlo.frontend_attributes");
    const char *ins = frontend_str(gfe, "xla.sdy.in_shardings", &ni);
    const char *outs = frontend_str(cj_op_attr(l, "mhlo.frontend_attributes"), "xla.sdy.out_shardings", &no);
    const char *axes = frontend_str(gfe, "xla.sdy.manual_axes", &na);
    if (!ins || !outs || !axes)
      return cj_op_error(g, CJ_INVALID_ARGUMENT,
                         "a round-trip manual computation without xla.sdy.in_shardings, "
                         "out_shardings or manual_axes");
    cj_op *mc = cj_op_create(m, CJ_OP_SDY_MANUAL_COMPUTATION, NULL, g->nopnds, l->nresults, 1);
    if (!mc) return cj_oom();
    mc->pos = g->pos;
    mc->loc = g->loc;
    for (uint32_t i = 0; i < g->nopnds; i++) mc->operands[i] = g->operands[i];
    for (uint32_t i = 0; i < l->nresults; i++) mc->results[i].type = l->results[i].type;
    CJ_RETURN_IF_ERROR(cj_op_set_attr(m, mc, "in_shardings", cj_attr_opaque(m, ins, ni)));
    CJ_RETURN_IF_ERROR(cj_op_set_attr(m, mc, "out_shardings", cj_attr_opaque(m, outs, no)));
    CJ_RETURN_IF_ERROR(cj_op_set_attr(m, mc, "manual_axes", cj_attr_opaque(m, axes, na)));
    const cj_type **at = cj_alloc(m, sizeof(cj_type *) * (fb->nargs ? fb->nargs : 1));
    if (!at) return cj_oom();
    for (uint32_t i = 0; i < fb->nargs; i++) at[i] = fb->args[i].type;
    cj_block *rb = cj_region_add_block(m, &mc->regions[0], fb->nargs, at);
    if (!rb) return cj_oom();
    uint32_t n = 0, cap = fb->nargs + 16;
    cj_value **from = malloc(sizeof *from * cap), **to = malloc(sizeof *to * cap);
    cj_status st = (!from || !to) ? cj_oom() : NULL;
    for (uint32_t i = 0; !st && i < fb->nargs; i++) {
      from[n] = &fb->args[i];
      to[n++] = &rb->args[i];
    }
    for (cj_op *o = fb->first; o && !st; o = o->next) {
      if (o == fb->last) { /* func.return -> sdy.return */
        cj_value **rv = cj_alloc(m, sizeof(cj_value *) * (o->nopnds ? o->nopnds : 1));
        if (!rv) {
          st = cj_oom();
          break;
        }
        for (uint32_t i = 0; i < o->nopnds; i++) {
          rv[i] = o->operands[i];
          for (uint32_t k = n; k-- > 0;)
            if (from[k] == rv[i]) {
              rv[i] = to[k];
              break;
            }
        }
        cj_op *r = cj_build_op(m, NULL, o, CJ_OP_SDY_RETURN, o->nopnds, rv, NULL);
        if (!r) st = cj_oom();
        else cj_block_append(rb, r);
        break;
      }
      cj_op *c = cj_op_clone(m, o, n, from, to);
      if (!c) {
        st = cj_oom();
        break;
      }
      cj_block_append(rb, c);
      if (!cj_value_map_add_results(&from, &to, &n, &cap, o, c)) st = cj_oom();
    }
    free(from);
    free(to);
    CJ_RETURN_IF_ERROR(st);
    cj_block_insert_before(b, l, mc);
    for (uint32_t i = 0; i < l->nresults; i++) cj_replace_all_uses(main, &l->results[i], &mc->results[i]);
    cj_op *after = l->next;
    cj_block_remove(b, l);
    cj_block_remove(b, call);
    cj_block_remove(b, g);
    g = after;
  }
  return NULL;
}

/* tf.aliasing_output = j on an argument whose per-device type is no longer result j's (they
 * are split differently): the result cannot be written over the argument's buffer, so the
 * alias goes (the donation is then simply not used). */
static CJ_MUST_USE cj_status drop_mismatched_aliases(cj_module *m, cj_op *main, const cj_type **ins,
                                         int32_t nins, const cj_type **outs, int32_t nouts) {
  const cj_attr *arr = cj_op_attr(main, "arg_attrs");
  if (!arr || arr->kind != CJ_ATTR_ARRAY) return NULL;
  const cj_attr **items = NULL;
  for (int32_t i = 0; i < arr->arr.n && i < nins; i++) {
    const cj_attr *d = arr->arr.items[i];
    int64_t j = -1;
    if (!d || d->kind != CJ_ATTR_DICT ||
        !cj_attr_get_i64(cj_attr_dict_get(d, "tf.aliasing_output"), &j) || j < 0 || j >= nouts ||
        ins[i] == outs[j])
      continue;
    if (!items) {
      items = cj_alloc(m, sizeof(cj_attr *) * (size_t)arr->arr.n);
      if (!items) return cj_oom();
      for (int32_t k = 0; k < arr->arr.n; k++) items[k] = arr->arr.items[k];
    }
    cj_named_attr kept[64];
    int32_t n = 0;
    for (int32_t k = 0; k < d->dict.n && n < 64; k++)
      if (strcmp(d->dict.items[k].name, "tf.aliasing_output") != 0) kept[n++] = d->dict.items[k];
    items[i] = cj_attr_dict(m, n, kept);
    if (!items[i]) return cj_oom();
  }
  if (!items) return NULL;
  const cj_attr *na = cj_attr_array(m, arr->arr.n, items);
  return na ? cj_op_set_attr(m, main, "arg_attrs", na) : cj_oom();
}

/* A sharding constraint: sdy.sharding_constraint / sdy.reshard, or their round-trip spelling
 * custom_call @Sharding {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value
 * <[...]>"}} (and xla.sdy.FuncResultSharding, a function result's sharding). */
static bool is_constraint(const cj_op *op) {
  return op->kind == CJ_OP_SDY_SHARDING_CONSTRAINT || op->kind == CJ_OP_SDY_RESHARD ||
         ((is_call_target(op, "Sharding") || is_call_target(op, "xla.sdy.FuncResultSharding") ||
           is_call_target(op, "local_xla.sdy.FuncResultSharding")) &&
          op->nopnds == 1 && op->nresults == 1);
}

bool cj_spmd_regions_marked(const cj_op *op) {
  for (uint32_t r = 0; r < op->nregions; r++)
    for (cj_block *b = op->regions[r].first; b; b = b->next)
      for (cj_op *o = b->first; o; o = o->next)
        if (o->kind == CJ_OP_SDY_MANUAL_COMPUTATION || is_constraint(o) || cj_spmd_regions_marked(o))
          return true;
  return false;
}

static CJ_MUST_USE cj_status find_spmd_markers(cj_op *op, void *ctx) {
  if (op->kind == CJ_OP_SDY_MANUAL_COMPUTATION || is_constraint(op) ||
      is_call_target(op, "xla.sdy.GlobalToLocalShape") || is_call_target(op, "SPMDFullToShardShape"))
    *(bool *)ctx = true;
  return NULL;
}

/* A constraint's open dims ("{?}") keep the axes its operand is split along there,
 * when the constraint uses them nowhere else (as Shardy leaves an open dim to propagation). */
static void keep_open_axes(sharding *sh, const sharding *from) {
  bool empty = sh->mesh && sh->mesh->n == 0 && !sh->split && !sh->unred; /* @empty_mesh: no axes */
  if (empty) sh->mesh = from->mesh;
  if (from->mesh != sh->mesh || !sh->mesh || from->rank != sh->rank || from->subaxis) return;
  bool changed = false;
  for (int d = 0; d < sh->rank && d < 64; d++) {
    if (!(sh->open >> d & 1) || sh->nax[d]) continue; /* (an open dim with no axes of its own) */
    for (int k = 0; k < from->nax[d]; k++) {
      int a = from->ax[d][k];
      bool used = (sh->unred >> a & 1) != 0;
      for (int e = 0; e < sh->rank && !used; e++)
        for (int j = 0; j < sh->nax[e]; j++) used |= sh->ax[e][j] == a;
      if (used || sh->nax[d] >= 8) break; /* (axes stay in order: a prefix of them) */
      sh->ax[d][sh->nax[d]++] = (int8_t)a;
      changed = true;
    }
  }
  if (changed || empty) cj_spmd_canon(sh);
}

/* A sharding constraint asking for unreduced axes that split its operand: p, the operand's tiles
 * in place among zeros (partial over psh's unreduced axes), resharded to the constraint's split
 * and made partial over its other unreduced axes, is what unreduced uses take; the others read
 * its sum (summed once, if any use needs it, as XLA sums an unreduced value for a use that is
 * not). */
static CJ_MUST_USE cj_status constrain_partial(state *S, cj_op *op, cj_value *p, const sharding *psh,
                                               const sharding *sh) {
  cj_value *q;
  CJ_RETURN_IF_ERROR(cj_spmd_reshard(S, op, p, psh, sh, &q));
  sharding rest = *sh;
  rest.unred = sh->unred & ~psh->unred;
  if (rest.unred) CJ_RETURN_IF_ERROR(cj_spmd_make_partial(S, op, q, &rest, &q));
  CJ_RETURN_IF_ERROR(reduce_partial_value(S, op, q, &op->results[0], sh));
  cj_block_remove(op->block, op);
  return NULL;
}

/* The unreduced sharding (sum) a sdy.sharding_constraint `c` asks for, whole otherwise: false when
 * c is no such constraint. */
static bool unreduced_constraint(state *S, const cj_op *c, const cj_type *t, sharding *sh) {
  if (!c || c->kind != CJ_OP_SDY_SHARDING_CONSTRAINT) return false;
  cj_status st = cj_spmd_read_sharding(c, "the sharding constraint", cj_op_attr(c, "sharding"), &S->ms, t, sh);
  if (st) { /* (reported when the constraint is partitioned) */
    cj_status_ignore(st);
    return false;
  }
  return sh->unred && !sh->ukind && !sh->split && sh->mesh && sh->mesh->total == S->ndev;
}

cj_status cj_spmd_partial_carries(state *S, cj_op *w, const bool *split, sharding *ps, bool *pc) {
  cj_block *blocks[2] = {w->regions[0].first, w->regions[1].first};
  cj_op *yield = blocks[1]->last;
  for (uint32_t i = 0; i < w->nopnds; i++) {
    pc[i] = false;
    cj_value *y = yield->operands[i];
    if (split[i] || !unreduced_constraint(S, y->def, y->type, &ps[i])) continue;
    const sharded_val *sv = cj_spmd_find(S, w->operands[i]);
    if (sv && sv->sh.split) continue;
    CJ_RETURN_IF_ERROR(as_partial(S, w, w->operands[i], &ps[i], &w->operands[i]));
    for (int k = 0; k < 2; k++)
      CJ_RETURN_IF_ERROR(reduce_partial_value(S, blocks[k]->first, &blocks[k]->args[i], &blocks[k]->args[i], &ps[i]));
    pc[i] = true;
  }
  return NULL;
}

cj_status cj_spmd_partial_carries_out(state *S, cj_op *w, const sharding *ps, const bool *pc) {
  cj_op *yield = w->regions[1].first->last;
  uint32_t n = w->nopnds;
  for (uint32_t i = 0; i < n; i++)
    if (pc[i]) CJ_RETURN_IF_ERROR(as_partial(S, yield, yield->operands[i], &ps[i], &yield->operands[i]));
  cj_value **parts = malloc(sizeof(cj_value *) * 2 * (n ? n : 1)), **sums = parts ? parts + n : NULL;
  uint32_t *idx = malloc(sizeof(uint32_t) * (n ? n : 1));
  bool *done = calloc(n ? n : 1, sizeof(bool));
  cj_status st = (!parts || !idx || !done) ? cj_oom() : NULL;
  for (uint32_t i = 0; !st && i < n; i++) { /* one sum for the results alike (axes, element type) */
    if (!pc[i] || done[i]) continue;
    uint32_t k = 0;
    for (uint32_t j = i; j < n; j++)
      if (pc[j] && !done[j] && ps[j].unred == ps[i].unred && ps[j].mesh == ps[i].mesh &&
          w->results[j].type->elem == w->results[i].type->elem) {
        done[j] = true;
        idx[k] = j;
        parts[k++] = &w->results[j];
      }
    st = sum_partials_at_once(S, w->next, parts, k, &ps[i], sums);
    for (uint32_t q = 0; !st && q < k; q++) st = record_partial_sum(S, parts[q], parts[q], sums[q], &ps[idx[q]]);
  }
  free(parts);
  free(idx);
  free(done);
  return st;
}

/* The value a sharding constraint asks for: its operand resharded; the op goes away. */
static CJ_MUST_USE cj_status constrain(state *S, cj_op *op) {
  sharding sh;
  const cj_type *t = op->results[0].type;
  if (op->kind == CJ_OP_CUSTOM_CALL) {
    size_t len = 0;
    const char *txt = frontend_str(cj_op_attr(op, "mhlo.frontend_attributes"), "xla.sdy.sharding", &len);
    const cj_attr *a = txt ? cj_attr_opaque(S->m, txt, len) : cj_op_attr(op, "sdy.sharding");
    bool manual = false;
    if (a) {
      CJ_RETURN_IF_ERROR(read_per_value(op, "the sharding constraint", a, &S->ms, 0, t, &sh));
    } else if (cj_attr_get_str(cj_op_attr(op, "mhlo.sharding"), &txt, &len)) {
      CJ_RETURN_IF_ERROR(
          cj_spmd_read_hlo(&S->ms, S->ndev, op, "the sharding constraint", txt, len, t, &sh, &manual));
    } else {
      return cj_op_error(op, CJ_UNIMPLEMENTED,
                         "a Sharding custom call without an xla.sdy.sharding or an mhlo.sharding");
    }
    if (manual) { /* a per-device value (shard_map's body) stays as it is */
      cj_replace_all_uses(S->main, &op->results[0], op->operands[0]);
      cj_block_remove(op->block, op);
      return NULL;
    }
  } else {
    CJ_RETURN_IF_ERROR(cj_spmd_read_sharding(op, "the sharding constraint", cj_op_attr(op, "sharding"),
                                             &S->ms, t, &sh));
  }
  /* a dim the constraint would split unevenly (JAX lets with_sharding_constraint ask for it;
   * XLA pads) stays whole: the values are the same, only their placement differs */
  bool uneven = false;
  for (int d = 0; d < sh.rank; d++)
    if (!sh.subaxis && sh.div[d] > 1 && t->dims[d] % sh.div[d]) {
      sh.nax[d] = 0;
      uneven = true;
    }
  if (uneven) cj_spmd_canon(&sh);
  cj_value *v = op->operands[0];
  const sharded_val *sv = cj_spmd_find(S, v);
  if (sv && sv->sh.split && sh.open) keep_open_axes(&sh, &sv->sh);
  sharding from;
  bool split = sv && sv->sh.split;
  if (split) from = sv->sh;
  if (sh.unred && split) {
    sharding psh;
    cj_value *p;
    CJ_RETURN_IF_ERROR(cj_spmd_pad_partial(S, op, v, &from, sh.unred, &psh, &p));
    if (p) return constrain_partial(S, op, p, &psh, &sh);
  }
  cj_value *nv;
  CJ_RETURN_IF_ERROR(cj_spmd_reshard(S, op, v, split ? &from : NULL, &sh, &nv));
  if (sh.split && nv != v) CJ_RETURN_IF_ERROR(cj_spmd_mark(S, nv, &sh));
  if (nv == v) CJ_RETURN_IF_ERROR(note_partial(S, v, &sh));
  if (nv == v && !split) CJ_RETURN_IF_ERROR(note_whole_partial(S, op, v, &sh));
  cj_replace_all_uses(S->main, &op->results[0], nv);
  cj_block_remove(op->block, op);
  return NULL;
}

/* GSPMD's edges of a manual region (shard_map without Shardy):
 *   %l = custom_call @SPMDFullToShardShape(%g) {mhlo.sharding = "{manual}"}: %g's local piece (%g is
 *        sharded by the @Sharding before it);
 *   %g = custom_call @SPMDShardToFullShape(%l) {mhlo.sharding = S}: the global value whose local
 *        piece %l is, sharded as S.
 * Between them the program works on per-device values as written. Each edge becomes a copy (a
 * reshape to the same type), so that the manual values and the sharded ones stay apart. */
static CJ_MUST_USE cj_status manual_edge(state *S, cj_op *op) {
  bool to_full = is_call_target(op, "SPMDShardToFullShape");
  if (op->nopnds != 1 || op->nresults != 1)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "a shard_map edge with %u operands and %u results",
                       op->nopnds, op->nresults);
  cj_value *v = op->operands[0], *r = &op->results[0];
  sharding sh;
  memset(&sh, 0, sizeof sh);
  const cj_type *local = v->type;
  if (to_full) {
    const char *txt = NULL;
    size_t len = 0;
    bool manual = false;
    if (cj_attr_get_str(cj_op_attr(op, "mhlo.sharding"), &txt, &len))
      CJ_RETURN_IF_ERROR(cj_spmd_read_hlo(&S->ms, S->ndev, op, "the result of the manual region", txt,
                                          len, r->type, &sh, &manual));
    if (manual) sh.split = false;
    local = r->type;
    if (sh.split)
      CJ_RETURN_IF_ERROR(cj_spmd_local_type(S->m, op, "the result of the manual region", r->type, &sh,
                                            &local));
  } else {
    const sharded_val *sv = cj_spmd_find(S, v);
    if (sv && sv->sh.split) sh = sv->sh;
    local = r->type;
  }
  if (local != v->type)
    return cj_op_error(op, CJ_UNIMPLEMENTED,
                       "the shard_map edge's per-device shape does not follow from the sharding "
                       "[%s] of its %s",
                       sh.canon, to_full ? "result" : "operand");
  cj_op *copy = cj_build_op(S->m, op, op, CJ_OP_RESHAPE, 1, &v, v->type);
  if (!copy) return cj_oom();
  if (to_full && sh.split) CJ_RETURN_IF_ERROR(cj_spmd_mark(S, &copy->results[0], &sh));
  cj_replace_all_uses(S->main, r, &copy->results[0]);
  cj_block_remove(op->block, op);
  return NULL;
}

cj_status cj_spmd_partition_block(state *S, cj_block *b) {
  for (cj_op *op = b->first; op;) {
    cj_op *next = op->next;
    if (op->kind == CJ_OP_ALL_REDUCE && is_partial_sum(S, &op->results[0])) {
      /* the sum of an unreduced argument: already per-device */
    } else if (op->kind == CJ_OP_SDY_MANUAL_COMPUTATION) {
      CJ_RETURN_IF_ERROR(manual(S, op));
    } else if (is_constraint(op)) {
      CJ_RETURN_IF_ERROR(constrain(S, op));
    } else if (is_call_target(op, "SPMDFullToShardShape") || is_call_target(op, "SPMDShardToFullShape")) {
      CJ_RETURN_IF_ERROR(manual_edge(S, op));
    } else if (!(cj_op_info_get(op->kind)->flags & CJ_OPF_TERMINATOR)) {
      CJ_RETURN_IF_ERROR(cj_spmd_partition_op(S, op));
      CJ_RETURN_IF_ERROR(partial_linear(S, op));
    }
    op = next;
  }
  return NULL;
}

/* Whether an argument's or result's attributes give it a sharding that is not replicated */
static bool has_sharding(cj_module *m, const cj_attr *attrs) {
  const char *txt = NULL;
  size_t len = 0;
  if (sharding_attr(m, attrs)) return true;
  if (!cj_attr_get_str(cj_attr_dict_get(attrs, "mhlo.sharding"), &txt, &len)) return false;
  return !(len == 12 && !memcmp(txt, "{replicated}", 12));
}

cj_status cj_spmd_partition(cj_module *m, int64_t num_replicas, int64_t num_partitions) {
  cj_op *main = cj_module_main(m);
  cj_block *body = main ? cj_func_body(main) : NULL;
  const cj_type *ft = main ? cj_func_type(main) : NULL;
  if (!body || !ft) return NULL; /* the compiler reports it */
  CJ_RETURN_IF_ERROR(cj_spmd_resolve_groups(m));
  int64_t ndev = num_replicas * num_partitions;
  if (ndev <= 1) return NULL; /* one device: the identities pass inlines manual computations */
  /* does anything ask for partitioning? shardings on @main, constraints, manual computations */
  bool marked = false;
  for (int32_t i = 0; i < ft->rank && !marked; i++)
    marked = has_sharding(m, cj_func_arg_attrs(main, (uint32_t)i));
  for (int32_t j = 0; j < ft->nresults && !marked; j++)
    marked = has_sharding(m, cj_func_res_attrs(main, (uint32_t)j));
  if (!marked) CJ_RETURN_IF_ERROR(cj_walk_module(m, find_spmd_markers, &marked));
  if (marked) {
    /* round-trip manual computations (in any function) back as sdy ops, then every call
     * inlined: the partitioner works on @main's body alone */
    cj_block *mb = cj_module_block(m);
    for (cj_op *f = mb ? mb->first : NULL; f; f = f->next)
      if (f->kind == CJ_OP_FUNC && cj_func_body(f)) CJ_RETURN_IF_ERROR(from_round_trip(m, f));
    CJ_RETURN_IF_ERROR(cj_pass_inline(m, main));
    cj_pass_strip_functions(m, main); /* no longer called */
  }
  state S;
  memset(&S, 0, sizeof S);
  S.m = m;
  S.main = main;
  S.ndev = num_partitions; /* meshes span the partitions */
  cj_status st = collect_meshes(m, &S.ms);
  /* arguments: per-device shapes */
  const cj_type **ins = NULL, **outs = NULL;
  if (!st) {
    ins = cj_alloc(m, sizeof(cj_type *) * (size_t)(ft->rank + 1));
    outs = cj_alloc(m, sizeof(cj_type *) * (size_t)(ft->nresults + 1));
    if (!ins || !outs) st = cj_oom();
  }
  for (int32_t i = 0; !st && i < ft->rank; i++) {
    ins[i] = cj_type_fn_input(ft, i);
    char what[48];
    snprintf(what, sizeof what, "argument %d of @main", i);
    sharding sh;
    bool have;
    st = value_sharding(&S, cj_func_arg_attrs(main, (uint32_t)i), ins[i], what, &sh, &have);
    if (st || !have || !(sh.split || sh.unred)) continue;
    if (num_replicas > 1 && num_partitions == 1) {
      st = cj_op_error(main, CJ_UNIMPLEMENTED, "%s is sharded across replicas", what);
      break;
    }
    const cj_type *lt;
    st = cj_spmd_local_type(m, main, what, ins[i], &sh, &lt);
    if (st) break;
    ins[i] = lt;
    body->args[i].type = lt;
    st = cj_spmd_mark(&S, &body->args[i], &sh);
    if (!st) S.sv[S.nsv - 1].argument = true;
    if (!st && sh.unred && body->first) /* partial sums in: summed once for every use */
      st = reduce_partial_value(&S, body->first, &body->args[i], &body->args[i], &sh);
  }
  const sharding **argsh = NULL, **ressh = NULL;
  if (!st) {
    argsh = cj_alloc(m, sizeof(sharding *) * (size_t)(ft->rank + 1));
    ressh = cj_alloc(m, sizeof(sharding *) * (size_t)(ft->nresults + 1));
    if (!argsh || !ressh) st = cj_oom();
  }
  if (!st && !marked) {
    /* a replicated program: every device runs it as written and holds every value whole */
    for (int32_t i = 0; i < ft->rank; i++) argsh[i] = NULL;
    for (int32_t j = 0; j < ft->nresults; j++) ressh[j] = NULL;
    if (num_partitions > 1) st = set_sharding_attrs(&S, argsh, ft->rank, ressh, ft->nresults);
    free(S.sv);
    free(S.pv);
    meshes_free(&S.ms);
    return st;
  }
  if (!st) st = cj_spmd_partition_block(&S, body);
  /* results: per-device shapes, as @main's result shardings ask (unspecified: as propagated) */
  cj_op *ret = body->last;
  if (!st && (!ret || ret->kind != CJ_OP_FUNC_RETURN || ret->nopnds != (uint32_t)ft->nresults))
    st = cj_op_error(main, CJ_INVALID_ARGUMENT, "@main does not end with a return of its results");
  for (int32_t j = 0; !st && j < ft->nresults; j++) {
    outs[j] = ret->operands[j]->type;
    char what[48];
    snprintf(what, sizeof what, "result %d of @main", j);
    sharding sh;
    bool have;
    st = value_sharding(&S, cj_func_res_attrs(main, (uint32_t)j), cj_type_fn_result(ft, j), what,
                        &sh, &have);
    if (st) break;
    if (!have) continue;
    const sharded_val *sv = cj_spmd_find(&S, ret->operands[j]);
    sharding from;
    bool split = sv && sv->sh.split;
    if (split) from = sv->sh;
    cj_value *w = ret->operands[j];
    cj_value *p = NULL;
    st = partial_for(&S, ret, w, &sh, &p);
    if (st) break;
    const sharded_val *psv = p ? cj_spmd_find(&S, p) : NULL;
    if (p && (psv ? !strcmp(psv->canon, sh.canon) : !sh.split)) {
      w = p; /* the partial sums it was made from */
    } else {
      st = cj_spmd_reshard(&S, ret, w, split ? &from : NULL, &sh, &w);
      if (!st && sh.unred) st = as_partial(&S, ret, w, &sh, &w);
      if (!st && (sh.split || sh.unred) && w != ret->operands[j]) st = cj_spmd_mark(&S, w, &sh);
    }
    if (!st) {
      ret->operands[j] = w;
      outs[j] = w->type;
    }
  }
  if (!st) {
    const cj_type *nft = cj_type_function(m, ft->rank, ins, ft->nresults, outs);
    if (!nft) st = cj_oom();
    if (!st) st = cj_op_set_attr(m, main, "function_type", cj_attr_type(m, nft));
  }
  /* (pointers into S.sv only now that it no longer grows) */
  for (int32_t i = 0; !st && i < ft->rank; i++) {
    const sharded_val *sv = cj_spmd_find(&S, &body->args[i]);
    argsh[i] = sv ? &sv->sh : NULL;
  }
  for (int32_t j = 0; !st && j < ft->nresults; j++) {
    const sharded_val *sv = cj_spmd_find(&S, ret->operands[j]);
    ressh[j] = sv ? &sv->sh : NULL;
  }
  if (!st && num_partitions > 1) st = set_sharding_attrs(&S, argsh, ft->rank, ressh, ft->nresults);
  if (!st) st = drop_unused_sums(&S, body);
  free(S.pv);
  if (!st) st = strip_attrs(m, main, "arg_attrs", ft->rank);
  if (!st) st = strip_attrs(m, main, "res_attrs", ft->nresults);
  if (!st) st = drop_mismatched_aliases(m, main, ins, ft->rank, outs, ft->nresults);
  free(S.sv);
  meshes_free(&S.ms);
  return st;
}
