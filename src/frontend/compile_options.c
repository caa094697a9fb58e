/* cjrt: xla.CompileOptionsProto, read with our own protobuf wire-format reader (see
 * compile_options.h for the fields). */
#include "frontend/compile_options.h"
#include "frontend/proto_wire.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { WT_VARINT = CJ_WT_VARINT, WT_I64 = CJ_WT_I64, WT_LEN = CJ_WT_LEN, WT_SGROUP = CJ_WT_SGROUP,
       WT_EGROUP = CJ_WT_EGROUP, WT_I32 = CJ_WT_I32 };
enum { MAX_DEVICES = 1 << 20, MAX_DEPTH = 64 };

typedef struct rd {
  const uint8_t *p, *end, *base;
  const char *what; /* message being read */
} rd;

static CJ_MUST_USE cj_status rd_err(const rd *r, const char *msg) {
  return cj_invalid("compile options: %s: %s at byte %zu", r->what, msg,
                    (size_t)(r->p - r->base));
}

CJ_PB_READER_PRIMITIVES(rd, rd_err)

static CJ_MUST_USE cj_status rd_len(rd *r, rd *sub, const char *what) {
  uint64_t n;
  CJ_RETURN_IF_ERROR(rd_varint(r, &n));
  if (n > (uint64_t)(r->end - r->p)) return rd_err(r, "length runs past the end");
  sub->p = r->p;
  sub->end = r->p + n;
  sub->base = r->base;
  sub->what = what;
  r->p += n;
  return NULL;
}

/* Skips one field's value of wire type wt (groups nest). */
static CJ_MUST_USE cj_status rd_skip(rd *r, uint32_t field, int wt, int depth) {
  cj_pb_err e = cj_pb_skip(&r->p, r->end, field, wt, depth, MAX_DEPTH, false);
  return e ? rd_err(r, cj_pb_err_text(e)) : NULL;
}

static CJ_MUST_USE cj_status expect_wt(const rd *r, int wt, int want, const char *field) {
  if (wt == want) return NULL;
  return cj_invalid("compile options: %s.%s has wire type %d, expected %d at byte %zu", r->what,
                    field, wt, want, (size_t)(r->p - r->base));
}

/* A varint field's value, checking its wire type first. */
static CJ_MUST_USE cj_status read_varint(rd *r, int wt, const char *name, uint64_t *v) {
  CJ_RETURN_IF_ERROR(expect_wt(r, wt, WT_VARINT, name));
  return rd_varint(r, v);
}

/* ---- DeviceAssignmentProto ---- */

typedef struct dev_assign {
  int64_t replica_count, computation_count;
  int64_t *ids; /* as read: computation-major */
  int64_t nids, cap;
  int64_t ncomputations; /* computation_devices entries seen */
  bool present;
} dev_assign;

static CJ_MUST_USE cj_status push_id(rd *r, dev_assign *da, int64_t v) {
  if (da->nids >= MAX_DEVICES) return rd_err(r, "too many device ids");
  if (da->nids == da->cap) {
    int64_t ncap = da->cap ? da->cap * 2 : 16;
    int64_t *n = realloc(da->ids, sizeof(int64_t) * (size_t)ncap);
    if (!n) return cj_oom();
    da->ids = n;
    da->cap = ncap;
  }
  da->ids[da->nids++] = v;
  return NULL;
}

static CJ_MUST_USE cj_status read_computation_devices(rd *r, dev_assign *da, int64_t *count) {
  *count = 0;
  while (r->p < r->end) {
    uint32_t f = 0;
    int wt = 0;
    CJ_RETURN_IF_ERROR(rd_tag(r, &f, &wt));
    if (f == 1) {
      if (wt == WT_VARINT) {
        uint64_t v;
        CJ_RETURN_IF_ERROR(rd_varint(r, &v));
        CJ_RETURN_IF_ERROR(push_id(r, da, (int64_t)v));
        (*count)++;
      } else if (wt == WT_LEN) { /* packed */
        rd sub;
        CJ_RETURN_IF_ERROR(rd_len(r, &sub, "ComputationDevice.replica_device_ids"));
        while (sub.p < sub.end) {
          uint64_t v;
          CJ_RETURN_IF_ERROR(rd_varint(&sub, &v));
          CJ_RETURN_IF_ERROR(push_id(&sub, da, (int64_t)v));
          (*count)++;
        }
      } else {
        return expect_wt(r, wt, WT_VARINT, "replica_device_ids");
      }
    } else {
      CJ_RETURN_IF_ERROR(rd_skip(r, f, wt, 0));
    }
  }
  return NULL;
}

static CJ_MUST_USE cj_status read_device_assignment(rd *r, dev_assign *da) {
  da->present = true;
  int64_t per = -1;
  while (r->p < r->end) {
    uint32_t f = 0;
    int wt = 0;
    CJ_RETURN_IF_ERROR(rd_tag(r, &f, &wt));
    uint64_t v = 0;
    switch (f) {
      case 1:
        CJ_RETURN_IF_ERROR(read_varint(r, wt, "replica_count", &v));
        da->replica_count = (int32_t)v;
        break;
      case 2:
        CJ_RETURN_IF_ERROR(read_varint(r, wt, "computation_count", &v));
        da->computation_count = (int32_t)v;
        break;
      case 3: {
        CJ_RETURN_IF_ERROR(expect_wt(r, wt, WT_LEN, "computation_devices"));
        rd sub;
        CJ_RETURN_IF_ERROR(rd_len(r, &sub, "DeviceAssignmentProto.ComputationDevice"));
        int64_t n;
        CJ_RETURN_IF_ERROR(read_computation_devices(&sub, da, &n));
        if (per >= 0 && n != per)
          return rd_err(r, "computation_devices entries have different replica counts");
        per = n;
        da->ncomputations++;
        break;
      }
      default:
        CJ_RETURN_IF_ERROR(rd_skip(r, f, wt, 0));
    }
  }
  return NULL;
}

/* ---- ExecutableBuildOptionsProto ---- */

typedef struct build_opts {
  int64_t num_replicas, num_partitions, device_ordinal;
  bool spmd, shardy;
  dev_assign da;
} build_opts;

static CJ_MUST_USE cj_status read_int64(rd *r, int wt, const char *name, int64_t *out) {
  uint64_t v;
  CJ_RETURN_IF_ERROR(read_varint(r, wt, name, &v));
  *out = (int64_t)v;
  return NULL;
}

static CJ_MUST_USE cj_status read_bool(rd *r, int wt, const char *name, bool *out) {
  uint64_t v;
  CJ_RETURN_IF_ERROR(read_varint(r, wt, name, &v));
  *out = v != 0;
  return NULL;
}

static CJ_MUST_USE cj_status read_build_options(rd *r, build_opts *b) {
  while (r->p < r->end) {
    uint32_t f = 0;
    int wt = 0;
    CJ_RETURN_IF_ERROR(rd_tag(r, &f, &wt));
    switch (f) {
      case 1:
        CJ_RETURN_IF_ERROR(read_int64(r, wt, "device_ordinal", &b->device_ordinal));
        break;
      case 4:
        CJ_RETURN_IF_ERROR(read_int64(r, wt, "num_replicas", &b->num_replicas));
        break;
      case 5:
        CJ_RETURN_IF_ERROR(read_int64(r, wt, "num_partitions", &b->num_partitions));
        break;
      case 6:
        CJ_RETURN_IF_ERROR(read_bool(r, wt, "use_spmd_partitioning", &b->spmd));
        break;
      case 19:
        CJ_RETURN_IF_ERROR(read_bool(r, wt, "use_shardy_partitioner", &b->shardy));
        break;
      case 9: {
        CJ_RETURN_IF_ERROR(expect_wt(r, wt, WT_LEN, "device_assignment"));
        rd sub;
        CJ_RETURN_IF_ERROR(rd_len(r, &sub, "DeviceAssignmentProto"));
        if (b->da.present) { /* a repeated message field merges; we keep the last */
          free(b->da.ids);
          memset(&b->da, 0, sizeof b->da);
        }
        CJ_RETURN_IF_ERROR(read_device_assignment(&sub, &b->da));
        break;
      }
      default:
        CJ_RETURN_IF_ERROR(rd_skip(r, f, wt, 0));
    }
  }
  return NULL;
}

/* ============================================== env_option_overrides (XLA DebugOptions) */

typedef enum { OK_BOOL, OK_INT, OK_FLOAT, OK_STRING, OK_ENUM, OK_REPEATED, OK_MAP, OK_MESSAGE } opt_kind;

typedef struct debug_option {
  const char *name;
  opt_kind kind;
} debug_option;

static const debug_option kDebugOptions[] = {
#define DEBUG_OPTION(name, kind) {#name, OK_##kind},
#include "frontend/debug_options.def"
#undef DEBUG_OPTION
};

static const debug_option *find_debug_option(const char *name, size_t n) {
  size_t lo = 0, hi = sizeof kDebugOptions / sizeof kDebugOptions[0];
  while (lo < hi) { /* the table is sorted by name */
    size_t mid = (lo + hi) / 2;
    const char *m = kDebugOptions[mid].name;
    int c = strncmp(m, name, n);
    if (c == 0 && m[n] != 0) c = 1;
    if (c == 0) return &kDebugOptions[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}

static bool str_is(const uint8_t *s, size_t n, const char *w) {
  size_t k = strlen(w);
  if (n != k) return false;
  for (size_t i = 0; i < n; i++) {
    char c = (char)s[i];
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    if (c != w[i]) return false;
  }
  return true;
}

static bool str_is_bool(const uint8_t *s, size_t n) {
  static const char *const words[] = {"true", "false", "t", "f", "yes", "no", "y", "n", "1", "0"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (str_is(s, n, words[i])) return true;
  return false;
}

static bool str_is_number(const uint8_t *s, size_t n, bool integer) {
  char buf[64];
  if (n == 0 || n >= sizeof buf) return false;
  memcpy(buf, s, n);
  buf[n] = 0;
  char *end = NULL;
  if (integer)
    (void)strtoll(buf, &end, 10);
  else
    (void)strtod(buf, &end);
  return end && end != buf && *end == 0;
}

/* One map entry of env_option_overrides: key = 1 (string), value = 2 (OptionOverrideProto{
 * string_field = 1, bool_field = 2, int_field = 3, double_field = 4}). XLA applies each to the
 * DebugOptions field of that name and refuses unknown names and values of the wrong type; so do
 * we, although cjrt acts on none of them (docs/JAX.md). */
static CJ_MUST_USE cj_status read_option_override(rd *r) {
  const uint8_t *key = NULL;
  size_t klen = 0;
  int vfield = 0; /* which OptionOverrideProto field was set */
  const uint8_t *sval = NULL;
  size_t slen = 0;
  while (r->p < r->end) {
    uint32_t f = 0;
    int wt = 0;
    CJ_RETURN_IF_ERROR(rd_tag(r, &f, &wt));
    if (f == 1) {
      CJ_RETURN_IF_ERROR(expect_wt(r, wt, WT_LEN, "env_option_overrides.key"));
      rd k;
      CJ_RETURN_IF_ERROR(rd_len(r, &k, "env_option_overrides.key"));
      key = k.p;
      klen = (size_t)(k.end - k.p);
    } else if (f == 2) {
      CJ_RETURN_IF_ERROR(expect_wt(r, wt, WT_LEN, "env_option_overrides.value"));
      rd v;
      CJ_RETURN_IF_ERROR(rd_len(r, &v, "OptionOverrideProto"));
      while (v.p < v.end) {
        uint32_t vf = 0;
        int vwt = 0;
        CJ_RETURN_IF_ERROR(rd_tag(&v, &vf, &vwt));
        if (vf == 1) {
          CJ_RETURN_IF_ERROR(expect_wt(&v, vwt, WT_LEN, "string_field"));
          rd sv;
          CJ_RETURN_IF_ERROR(rd_len(&v, &sv, "string_field"));
          sval = sv.p;
          slen = (size_t)(sv.end - sv.p);
        } else if (vf >= 2 && vf <= 4) {
          CJ_RETURN_IF_ERROR(expect_wt(&v, vwt, vf == 4 ? WT_I64 : WT_VARINT,
                                       vf == 2 ? "bool_field" : vf == 3 ? "int_field" : "double_field"));
          CJ_RETURN_IF_ERROR(rd_skip(&v, vf, vwt, 0));
        } else {
          CJ_RETURN_IF_ERROR(rd_skip(&v, vf, vwt, 0));
          continue;
        }
        vfield = (int)vf;
      }
    } else {
      CJ_RETURN_IF_ERROR(rd_skip(r, f, wt, 0));
    }
  }
  if (!key) return rd_err(r, "an env_option_overrides entry without a name");
  const debug_option *o = find_debug_option((const char *)key, klen);
  int kl = klen > 200 ? 200 : (int)klen;
  if (!o)
    return cj_invalid("compile options: No such compile option: '%.*s' (env_option_overrides name "
                      "XLA DebugOptions fields)",
                      kl, (const char *)key);
  static const char *const kinds[] = {"bool", "integer", "floating-point", "string",
                                      "enum", "repeated", "map", "message"};
  static const char *const given[] = {"no value", "a string", "a bool", "an integer", "a double"};
  bool ok = false;
  switch (o->kind) {
    case OK_BOOL: ok = vfield == 2 || (vfield == 1 && str_is_bool(sval, slen)); break;
    case OK_INT: ok = vfield == 3 || (vfield == 1 && str_is_number(sval, slen, true)); break;
    case OK_FLOAT:
      ok = vfield == 4 || vfield == 3 || (vfield == 1 && str_is_number(sval, slen, false));
      break;
    case OK_ENUM: ok = vfield == 1 || vfield == 3; break;
    case OK_STRING: case OK_REPEATED: case OK_MAP: case OK_MESSAGE: ok = vfield == 1; break;
  }
  if (!ok) {
    if (vfield == 1)
      return cj_invalid("compile options: option %.*s: '%.*s' is not a valid %s value.", kl,
                        (const char *)key, slen > 100 ? 100 : (int)slen, (const char *)sval,
                        kinds[o->kind]);
    return cj_invalid("compile options: option %.*s takes a %s value, given %s", kl,
                      (const char *)key, kinds[o->kind], given[vfield]);
  }
  return NULL;
}

/* ================================================= argument_layouts (repeated ShapeProto) */

enum { MAX_ARGS = 1 << 16, MAX_ARG_RANK = 64 };

typedef struct arg_list {
  int32_t n, cap;
  cj_shape *shapes;
  int64_t *dims; /* MAX_ARG_RANK per shape */
} arg_list;

static CJ_MUST_USE cj_status read_arg_shape(rd *r, arg_list *al) {
  if (al->n >= MAX_ARGS) return rd_err(r, "more than 65536 argument_layouts");
  if (al->n == al->cap) {
    int32_t cap = al->cap ? al->cap * 2 : 8;
    cj_shape *ns = realloc(al->shapes, sizeof *ns * (size_t)cap);
    if (!ns) return cj_oom();
    al->shapes = ns;
    int64_t *nd = realloc(al->dims, sizeof *nd * (size_t)cap * MAX_ARG_RANK);
    if (!nd) return cj_oom();
    al->dims = nd;
    al->cap = cap;
  }
  int32_t idx = al->n;
  int64_t *dims = al->dims + (size_t)idx * MAX_ARG_RANK;
  int32_t rank = 0;
  uint64_t et = 0;
  while (r->p < r->end) {
    uint32_t f = 0;
    int wt = 0;
    CJ_RETURN_IF_ERROR(rd_tag(r, &f, &wt));
    if (f == 2) {
      CJ_RETURN_IF_ERROR(read_varint(r, wt, "ShapeProto.element_type", &et));
    } else if (f == 3 && (wt == WT_LEN || wt == WT_VARINT)) {
      rd packed, *src = r; /* packed (proto3's default) or one varint per entry */
      if (wt == WT_LEN) {
        CJ_RETURN_IF_ERROR(rd_len(r, &packed, "ShapeProto.dimensions"));
        src = &packed;
      }
      do {
        if (wt == WT_LEN && src->p >= src->end) break;
        uint64_t v;
        CJ_RETURN_IF_ERROR(rd_varint(src, &v));
        if (rank >= MAX_ARG_RANK) return rd_err(src, "a ShapeProto with too many dimensions");
        if ((int64_t)v < 0) return rd_err(src, "a negative ShapeProto dimension");
        dims[rank++] = (int64_t)v;
      } while (wt == WT_LEN);
    } else if (f == 4) {
      return rd_err(r, "tuple argument_layouts are not supported");
    } else {
      CJ_RETURN_IF_ERROR(rd_skip(r, f, wt, 0));
    }
  }
  cj_dtype dt = cj_dtype_from_xla((int64_t)et);
  if (dt == CJ_INVALID)
    return cj_invalid("compile options: argument_layouts[%d] has element type %llu, which cjrt "
                      "does not know",
                      idx, (unsigned long long)et);
  al->shapes[idx] = (cj_shape){dt, rank, NULL, 0};
  al->n++;
  return NULL;
}

static void set_defaults(cj_compile_options_storage *out) {
  memset(out, 0, sizeof *out);
  out->nargs = -1;
  out->opts.num_replicas = 1;
  out->opts.num_partitions = 1;
  out->device_ordinal = -1;
}

cj_status cj_compile_options_read(const void *data, size_t len, cj_compile_options_storage *out) {
  set_defaults(out);
  if (len && !data) return cj_invalid("compile options: NULL data with length %zu", len);
  rd r = {data, (const uint8_t *)data + len, data, "CompileOptionsProto"};
  build_opts b;
  memset(&b, 0, sizeof b);
  b.device_ordinal = -1;
  arg_list al = {0, 0, NULL, NULL};
  bool have_args = false;
  cj_status st = NULL;
  while (!st && r.p < r.end) {
    uint32_t f = 0;
    int wt = 0;
    st = rd_tag(&r, &f, &wt);
    if (st) break;
    if (f == 1) {
      st = expect_wt(&r, wt, WT_LEN, "argument_layouts");
      rd sub;
      if (!st) st = rd_len(&r, &sub, "ShapeProto");
      if (!st) st = read_arg_shape(&sub, &al);
      have_args = true;
    } else if (f == 3) {
      st = expect_wt(&r, wt, WT_LEN, "executable_build_options");
      rd sub;
      if (!st) st = rd_len(&r, &sub, "ExecutableBuildOptionsProto");
      if (!st) st = read_build_options(&sub, &b);
    } else if (f == 7) {
      st = expect_wt(&r, wt, WT_LEN, "env_option_overrides");
      rd sub;
      if (!st) st = rd_len(&r, &sub, "env_option_overrides");
      if (!st) st = read_option_override(&sub);
    } else {
      st = rd_skip(&r, f, wt, 0);
    }
  }
  if (!st) {
    if (b.num_replicas < 0 || b.num_replicas > MAX_DEVICES)
      st = cj_invalid("compile options: num_replicas = %lld is out of range",
                      (long long)b.num_replicas);
    else if (b.num_partitions < 0 || b.num_partitions > MAX_DEVICES)
      st = cj_invalid("compile options: num_partitions = %lld is out of range",
                      (long long)b.num_partitions);
  }
  int64_t nr = b.num_replicas ? b.num_replicas : 1;
  int64_t np = b.num_partitions ? b.num_partitions : 1;
  if (!st && nr * np > MAX_DEVICES)
    st = cj_invalid("compile options: %lld replicas x %lld partitions is too many",
                    (long long)nr, (long long)np);
  if (!st && b.da.present) {
    dev_assign *da = &b.da;
    int64_t ncomp = da->ncomputations;
    int64_t nrep = ncomp ? da->nids / ncomp : 0;
    if (da->replica_count && da->replica_count != nrep && ncomp)
      st = cj_invalid("compile options: device_assignment.replica_count = %lld but each "
                      "computation lists %lld devices",
                      (long long)da->replica_count, (long long)nrep);
    else if (da->computation_count && da->computation_count != ncomp)
      st = cj_invalid("compile options: device_assignment.computation_count = %lld but %lld "
                      "computations are listed",
                      (long long)da->computation_count, (long long)ncomp);
    else if (ncomp && (nrep != nr || ncomp != np))
      st = cj_invalid("compile options: device_assignment is %lld replicas x %lld partitions "
                      "but the options ask for %lld x %lld",
                      (long long)nrep, (long long)ncomp, (long long)nr, (long long)np);
    if (!st && ncomp) {
      for (int64_t i = 0; i < da->nids && !st; i++)
        if (da->ids[i] < 0)
          st = cj_invalid("compile options: device_assignment holds a negative device id %lld",
                          (long long)da->ids[i]);
      if (!st) {
        out->devices = malloc(sizeof(int64_t) * (size_t)(nr * np));
        if (!out->devices) {
          st = cj_oom();
        } else {
          /* proto: [partition][replica]; ours: [replica * np + partition] */
          for (int64_t p = 0; p < np; p++)
            for (int64_t rr = 0; rr < nr; rr++) out->devices[rr * np + p] = da->ids[p * nr + rr];
          out->ndevices = nr * np;
        }
      }
    }
  }
  free(b.da.ids);
  if (st) {
    free(out->devices);
    free(al.shapes);
    free(al.dims);
    set_defaults(out);
    return st;
  }
  if (have_args) {
    for (int32_t i = 0; i < al.n; i++) al.shapes[i].dims = al.dims + (size_t)i * MAX_ARG_RANK;
    out->nargs = al.n;
    out->args = al.shapes;
    out->arg_dims = al.dims;
  }
  out->opts.num_replicas = nr;
  out->opts.num_partitions = np;
  out->opts.use_spmd_partitioning = b.spmd;
  out->opts.use_shardy_partitioner = b.shardy;
  out->opts.device_assignment = out->devices;
  out->device_ordinal = b.device_ordinal;
  return NULL;
}

void cj_compile_options_storage_free(cj_compile_options_storage *s) {
  if (!s) return;
  free(s->devices);
  free(s->args);
  free(s->arg_dims);
  set_defaults(s);
}

cj_status cj_compile_options_copy(const cj_compile_options *opts, cj_compile_options_storage *out) {
  set_defaults(out);
  if (!opts) return NULL;
  out->opts = *opts;
  out->opts.device_assignment = NULL;
  if (opts->num_replicas < 1 || opts->num_partitions < 1 ||
      opts->num_replicas * opts->num_partitions > MAX_DEVICES) {
    set_defaults(out);
    return cj_invalid("compile options: %lld replicas x %lld partitions is out of range",
                      (long long)opts->num_replicas, (long long)opts->num_partitions);
  }
  if (opts->device_assignment) {
    int64_t n = opts->num_replicas * opts->num_partitions;
    out->devices = malloc(sizeof(int64_t) * (size_t)n);
    if (!out->devices) {
      set_defaults(out);
      return cj_oom();
    }
    memcpy(out->devices, opts->device_assignment, sizeof(int64_t) * (size_t)n);
    out->ndevices = n;
    out->opts.device_assignment = out->devices;
  }
  return NULL;
}

/* ---- writing ---- */

typedef cj_pb_buf wbuf;

cj_status cj_compile_options_write(const cj_compile_options *opts, void **out, size_t *len) {
  *out = NULL;
  *len = 0;
  if (!opts) return cj_invalid("cj_compile_options_write: no options");
  wbuf eb = {0}, da = {0}, top = {0};
  cj_pb_put_key(&eb, 4, WT_VARINT);
  cj_pb_put_varint(&eb, (uint64_t)opts->num_replicas);
  cj_pb_put_key(&eb, 5, WT_VARINT);
  cj_pb_put_varint(&eb, (uint64_t)opts->num_partitions);
  cj_pb_put_key(&eb, 6, WT_VARINT);
  cj_pb_put_varint(&eb, opts->use_spmd_partitioning ? 1 : 0);
  if (opts->device_assignment) {
    cj_pb_put_key(&da, 1, WT_VARINT);
    cj_pb_put_varint(&da, (uint64_t)opts->num_replicas);
    cj_pb_put_key(&da, 2, WT_VARINT);
    cj_pb_put_varint(&da, (uint64_t)opts->num_partitions);
    for (int64_t p = 0; p < opts->num_partitions; p++) {
      wbuf cd = {0}, packed = {0};
      for (int64_t r = 0; r < opts->num_replicas; r++)
        cj_pb_put_varint(&packed, (uint64_t)opts->device_assignment[r * opts->num_partitions + p]);
      cj_pb_put_sub(&cd, 1, &packed);
      cj_pb_put_sub(&da, 3, &cd);
      free(cd.p);
      free(packed.p);
    }
    cj_pb_put_sub(&eb, 9, &da);
  }
  cj_pb_put_key(&eb, 19, WT_VARINT);
  cj_pb_put_varint(&eb, opts->use_shardy_partitioner ? 1 : 0);
  cj_pb_put_sub(&top, 3, &eb);
  bool oom = eb.oom || da.oom || top.oom;
  free(eb.p);
  free(da.p);
  if (oom) {
    free(top.p);
    return cj_oom();
  }
  *out = top.p;
  *len = top.n;
  return NULL;
}
