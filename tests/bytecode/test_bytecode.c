/* cjrt tests: the MLIR bytecode + VHLO reader on its own (no text parser or printer needed).
 *
 *   test_bytecode <conformance vhlo dir> <fixtures dir>
 *
 * - every portable artifact of the conformance corpus (StableHLO 0.9.0 .. 1.20.0) decodes, and
 *   invalid_vhlo_future.mlir.bc fails naming both versions;
 * - the JAX fixtures (jax.export artifacts and the bytes jax hands a plugin) decode and verify,
 *   with spot checks of what they must contain;
 * - the native twins (fixtures/native/: upstream's reading of an artifact written back as plain
 *   stablehlo bytecode) build the same IR as the artifacts, op by op, attribute by attribute:
 *   the VHLO -> StableHLO mapping checked against upstream's own;
 * - hand-made damage (bad magic, newer container, every truncation of small files, byte flips,
 *   nesting beyond the limits) fails cleanly with a message: run under ASan to check for
 *   out-of-bounds reads and leaks.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/files.h"

#include "common/check.h"
#include "frontend/frontend.h"

static bool ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted names of the files in dir ending with suffix (malloc'ed; free each and the array). */
static char **list_dir(const char *dir, const char *suffix, int *n) {
  *n = 0;
  DIR *d = opendir(dir);
  if (!d) return NULL;
  char **names = NULL;
  int cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!ends_with(e->d_name, suffix)) continue;
    if (*n == cap) {
      cap = cap ? cap * 2 : 32;
      names = realloc(names, sizeof *names * (size_t)cap);
    }
    names[(*n)++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, (size_t)*n, sizeof *names, cmp_str);
  return names;
}

static CJ_MUST_USE cj_status decode_path(const char *path, cj_module **out) {
  size_t len;
  char *buf = tc_read_file(path, &len);
  if (!buf) return cj_status_make(CJ_NOT_FOUND, "cannot read %s", path);
  cj_status st = cj_read_mlir_bytecode(buf, len, path, out);
  free(buf);
  return st;
}

/* ---- walking ---- */

typedef struct stats {
  int ops, unknown, casts;
  int with_pos;
} stats;

static CJ_MUST_USE cj_status count_op(cj_op *op, void *ctx) {
  stats *s = ctx;
  s->ops++;
  if (op->kind == CJ_OP_UNKNOWN) s->unknown++;
  if (strcmp(op->name, "builtin.unrealized_conversion_cast") == 0) s->casts++;
  if (op->pos.line > 0) s->with_pos++;
  /* every operand is resolved and every result typed */
  for (uint32_t i = 0; i < op->nopnds; i++)
    if (!op->operands[i] || !op->operands[i]->type)
      return cj_op_error(op, CJ_INTERNAL, "operand %u unresolved", i);
  for (uint32_t i = 0; i < op->nresults; i++)
    if (!op->results[i].type) return cj_op_error(op, CJ_INTERNAL, "result %u untyped", i);
  return NULL;
}

static cj_op *find_op(cj_block *b, const char *name, int depth) {
  for (cj_op *op = b ? b->first : NULL; op && depth < 64; op = op->next) {
    if (strcmp(op->name, name) == 0) return op;
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next) {
        cj_op *f = find_op(nb, name, depth + 1);
        if (f) return f;
      }
  }
  return NULL;
}

static cj_op *find_op_with_type(cj_block *b, const char *name, cj_dtype dt, int64_t nelems) {
  for (cj_op *op = b ? b->first : NULL; op; op = op->next) {
    if (strcmp(op->name, name) == 0 && op->nresults == 1 && op->results[0].type->dtype == dt &&
        op->results[0].type->num_elements == nelems)
      return op;
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next) {
        cj_op *f = find_op_with_type(nb, name, dt, nelems);
        if (f) return f;
      }
  }
  return NULL;
}

/* ---- the tests ---- */

static void test_versions(void) {
  int64_t cur[3], min[3];
  cj_stablehlo_version_current(cur);
  cj_stablehlo_version_minimum(min);
  CHECK(cur[0] == 1 && cur[1] == 20 && cur[2] == 0);
  CHECK(min[0] == 0 && min[1] == 9 && min[2] == 0);
  CHECK(cj_is_mlir_bytecode("ML\xEFR\x06", 5));
  CHECK(!cj_is_mlir_bytecode("ML\xEF", 3));
  CHECK(!cj_is_mlir_bytecode("module {}", 9));
  CHECK(!cj_is_mlir_bytecode(NULL, 0));
}

static int test_corpus(const char *dir) {
  int n;
  char **names = list_dir(dir, ".mlir.bc", &n);
  CHECK_MSG(n >= 24, "found %d .mlir.bc files in %s", n, dir);
  int ok = 0;
  for (int i = 0; i < n; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    cj_module *m = NULL;
    cj_status st = decode_path(path, &m);
    if (strncmp(names[i], "invalid_vhlo_future", 19) == 0) {
      CHECK_MSG(st != NULL, "%s must be rejected", names[i]);
      if (st) {
        const char *msg = cj_status_message(st);
        CHECK_CONTAINS(msg, "2.0.0");
        CHECK_CONTAINS(msg, "1.20.0");
        CHECK_CONTAINS(msg, "newer");
      }
      cj_status_free(st);
      cj_module_free(m);
      free(names[i]);
      continue;
    }
    CHECK_MSG(st == NULL, "%s: %s", names[i], cj_status_message(st));
    if (!st) {
      stats s = {0};
      cj_status w = cj_walk_module(m, count_op, &s);
      CHECK_MSG(w == NULL, "%s: %s", names[i], cj_status_message(w));
      cj_status_free(w);
      CHECK_MSG(s.ops > 2, "%s: %d ops", names[i], s.ops);
      CHECK_MSG(s.casts == 0, "%s: %d casts left", names[i], s.casts);
      CHECK(m->producer && strncmp(m->producer, "StableHLO_v", 11) == 0);
      ok++;
    }
    cj_status_free(st);
    cj_module_free(m);
    free(names[i]);
  }
  free(names);
  printf("corpus: %d of %d artifacts decoded (+ the invalid future one rejected)\n", ok, n - 1);
  return ok;
}

/* Spot checks of the fixtures' contents. */
static void check_features(cj_module *m) {
  CHECK_EQ_STR(m->name, "features");
  int64_t np = 0;
  CHECK(cj_attr_get_i64(cj_module_attr(m, "mhlo.num_partitions"), &np) && np == 1);
  cj_op *main = cj_module_main(m);
  CHECK(main != NULL);
  if (!main) return;
  cj_block *body = cj_func_body(main);
  CHECK(body && body->nargs == 3);
  if (!body || body->nargs != 3) return;
  /* a bounded dynamic dimension: tensor<?x4xf32, #stablehlo.bounds<8, ?>> */
  const cj_type *t1 = body->args[1].type;
  CHECK(t1->kind == CJ_TYPE_TENSOR && t1->rank == 2 && t1->dims[0] == CJ_DYN && t1->dims[1] == 4);
  CHECK(t1->bounds && t1->bounds[0] == 8 && t1->bounds[1] == CJ_DYN);
  /* a block argument location: loc("arg0") */
  CHECK(body->args[0].loc && body->args[0].loc->loc.lk == CJ_LOC_NAME);
  /* i1 constants: packed [true, false, true, true], splat true x16, packed 10 elements */
  cj_op *c4 = find_op_with_type(body, "stablehlo.constant", CJ_PRED, 4);
  CHECK(c4 != NULL);
  if (c4) {
    const cj_attr *v = cj_op_attr(c4, "value");
    CHECK(v && v->kind == CJ_ATTR_DENSE && !v->dense.splat && v->dense.nbytes == 4);
    if (v && v->dense.nbytes == 4) CHECK(memcmp(v->dense.data, "\x01\x00\x01\x01", 4) == 0);
    /* loc(fused["a.py":1:2, "b.py":3:4]): the position is the first file location */
    CHECK(c4->loc && c4->loc->loc.lk == CJ_LOC_FUSED && c4->loc->loc.n == 2);
    CHECK_EQ_STR(c4->pos.file, "a.py");
    CHECK(c4->pos.line == 1 && c4->pos.col == 2);
  }
  cj_op *c16 = find_op_with_type(body, "stablehlo.constant", CJ_PRED, 16);
  CHECK(c16 != NULL);
  if (c16) {
    const cj_attr *v = cj_op_attr(c16, "value");
    CHECK(v && v->dense.splat && ((const uint8_t *)v->dense.data)[0] == 1);
    /* callsite("f"("f.py":10:3) at "g.py":20:5): the callee's position */
    CHECK(c16->loc && c16->loc->loc.lk == CJ_LOC_CALLSITE);
    CHECK(c16->pos.line == 10 && c16->pos.col == 3);
  }
  cj_op *c10 = find_op_with_type(body, "stablehlo.constant", CJ_PRED, 10);
  CHECK(c10 != NULL);
  if (c10) {
    const cj_attr *v = cj_op_attr(c10, "value");
    CHECK(v && !v->dense.splat && v->dense.nbytes == 10);
    if (v && v->dense.nbytes == 10)
      CHECK(memcmp(v->dense.data, "\x01\x00\x01\x01\x00\x00\x01\x00\x01\x01", 10) == 0);
  }
  /* loc("x.py":5:6 to 7:8): a range keeps its start */
  cj_op *c1 = find_op_with_type(body, "stablehlo.constant", CJ_PRED, 1);
  CHECK(c1 && c1->pos.line == 5 && c1->pos.col == 6);
  /* small formats: i4 [1, -2, 7], f8E4M3FN [1, 448], f4E2M1FN [-1, 6], ui64 max */
  cj_op *ci4 = find_op_with_type(body, "stablehlo.constant", CJ_S4, 3);
  CHECK(ci4 != NULL);
  if (ci4) {
    const cj_attr *v = cj_op_attr(ci4, "value");
    CHECK(cj_dense_get_i64(v, 0) == 1 && cj_dense_get_i64(v, 1) == -2 &&
          cj_dense_get_i64(v, 2) == 7);
  }
  cj_op *cf8 = find_op_with_type(body, "stablehlo.constant", CJ_F8E4M3FN, 2);
  CHECK(cf8 && cj_dense_get_f64(cj_op_attr(cf8, "value"), 1) == 448.0);
  cj_op *cf4 = find_op_with_type(body, "stablehlo.constant", CJ_F4E2M1FN, 2);
  CHECK(cf4 && cj_dense_get_f64(cj_op_attr(cf4, "value"), 0) == -1.0 &&
        cj_dense_get_f64(cj_op_attr(cf4, "value"), 1) == 6.0);
  cj_op *cu64 = find_op_with_type(body, "stablehlo.constant", CJ_U64, 1);
  CHECK(cu64 && (uint64_t)cj_dense_get_i64(cj_op_attr(cu64, "value"), 0) == UINT64_MAX);
  cj_op *cplx = find_op_with_type(body, "stablehlo.constant", CJ_C64, 4);
  CHECK(cplx != NULL);
  if (cplx) {
    const cj_attr *v = cj_op_attr(cplx, "value");
    float re_im[2] = {0, 0};
    CHECK(v->dense.splat && v->dense.nbytes == 8);
    memcpy(re_im, v->dense.data, 8);
    CHECK(re_im[0] == 1.0f && re_im[1] == 2.0f);
  }
  /* quantized results: per-tensor i8 scale 0.5 zero point -3; per-axis on dimension 0 */
  cj_op *q = find_op(body, "stablehlo.uniform_quantize", 0);
  CHECK(q != NULL);
  if (q) {
    const cj_type *qt = q->results[0].type->elem;
    CHECK(qt->kind == CJ_TYPE_QUANT && qt->quant->storage == CJ_S8 &&
          qt->quant->expressed == CJ_F32);
    CHECK(qt->quant->axis == -1 && qt->quant->scales[0] == 0.5 && qt->quant->zero_points[0] == -3);
    CHECK(qt->quant->storage_min == -128 && qt->quant->storage_max == 127);
    cj_op *q2 = q->next;
    while (q2 && strcmp(q2->name, "stablehlo.uniform_quantize")) q2 = q2->next;
    CHECK(q2 != NULL);
    if (q2) {
      const cj_quant *pq = q2->results[0].type->elem->quant;
      CHECK(pq && pq->axis == 0 && pq->nscales == 4 && pq->storage_min == -127);
      CHECK(pq && pq->scales[1] == 0.5 && pq->zero_points[1] == -20 && pq->zero_points[3] == 1);
    }
  }
  /* custom_call: api_version 4 : i32, a dictionary backend_config, index layouts */
  cj_op *cc = find_op(body, "stablehlo.custom_call", 0);
  CHECK(cc != NULL);
  if (cc) {
    const cj_attr *api = cj_op_attr(cc, "api_version");
    CHECK(api && api->kind == CJ_ATTR_INT && api->i.v == 4 && api->i.type &&
          api->i.type->dtype == CJ_S32);
    const cj_attr *bc = cj_op_attr(cc, "backend_config");
    CHECK(bc && bc->kind == CJ_ATTR_DICT && bc->dict.n == 1);
    const cj_attr *ol = cj_op_attr(cc, "operand_layouts");
    CHECK(ol && ol->kind == CJ_ATTR_ARRAY && ol->arr.n == 1 &&
          ol->arr.items[0]->dense.type->dtype == CJ_INDEX);
    bool se = false;
    CHECK(cj_op_get_bool(cc, "has_side_effect", &se) && se);
  }
}

static void check_sharded_export(cj_module *m) {
  cj_op *mesh = cj_module_lookup_symbol(m, "mesh");
  CHECK(mesh && mesh->kind == CJ_OP_SDY_MESH);
  if (mesh) {
    const cj_attr *a = cj_op_attr(mesh, "mesh");
    CHECK(a && a->kind == CJ_ATTR_OPAQUE);
    if (a && a->kind == CJ_ATTR_OPAQUE) CHECK_EQ_STR(a->opaque.text, "#sdy.mesh<[\"x\"=2]>");
  }
  cj_op *sc = find_op(cj_module_block(m), "sdy.sharding_constraint", 0);
  CHECK(sc && sc->kind == CJ_OP_SDY_SHARDING_CONSTRAINT);
  if (sc) {
    const cj_attr *a = cj_op_attr(sc, "sharding");
    CHECK(a && a->kind == CJ_ATTR_OPAQUE);
    if (a && a->kind == CJ_ATTR_OPAQUE)
      CHECK_EQ_STR(a->opaque.text, "#sdy.sharding<@mesh, [{\"x\"}, {}]>");
    /* the casts around it are gone: its operand is the multiply */
    CHECK(sc->operands[0]->def && sc->operands[0]->def->kind == CJ_OP_MULTIPLY);
  }
  cj_op *main = cj_module_main(m);
  const cj_attr *d = main ? cj_func_arg_attrs(main, 0) : NULL;
  CHECK(d != NULL);
  if (d) {
    const cj_attr *s = NULL;
    for (int i = 0; i < d->dict.n; i++)
      if (strcmp(d->dict.items[i].name, "sdy.sharding") == 0) s = d->dict.items[i].value;
    CHECK(s && s->kind == CJ_ATTR_OPAQUE);
  }
}

/* plain.mlirbc: native bytecode written from text, builtin attributes of every kind */
static void test_plain(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/plain.mlirbc", dir);
  cj_module *m = NULL;
  cj_status st = decode_path(path, &m);
  CHECK_MSG(st == NULL, "%s: %s", path, cj_status_message(st));
  cj_status_free(st);
  if (!m) return;
  CHECK_EQ_STR(m->name, "plain");
  const cj_attr *arr = cj_module_attr(m, "test.array");
  CHECK(arr && arr->kind == CJ_ATTR_ARRAY && arr->arr.n == 6);
  if (arr && arr->kind == CJ_ATTR_ARRAY && arr->arr.n == 6) {
    CHECK(arr->arr.items[0]->kind == CJ_ATTR_INT && arr->arr.items[0]->i.v == 1 &&
          arr->arr.items[0]->i.type->dtype == CJ_S32);
    CHECK(arr->arr.items[1]->kind == CJ_ATTR_STRING && strcmp(arr->arr.items[1]->str.s, "s") == 0);
    CHECK(arr->arr.items[2]->kind == CJ_ATTR_SYMREF &&
          strcmp(arr->arr.items[2]->sym.root, "sym") == 0);
    CHECK(arr->arr.items[3]->kind == CJ_ATTR_UNIT);
    CHECK(arr->arr.items[4]->kind == CJ_ATTR_TYPE && arr->arr.items[4]->type->dtype == CJ_F32);
    CHECK(arr->arr.items[5]->kind == CJ_ATTR_DICT && arr->arr.items[5]->dict.n == 1);
  }
  int64_t v[4] = {0}, n = 0;
  CHECK(cj_attr_get_i64s(cj_module_attr(m, "test.dense_array"), v, 4, &n) && n == 2 && v[0] == 1 &&
        v[1] == -2);
  const cj_attr *bools = cj_module_attr(m, "test.bools");
  CHECK(bools && bools->kind == CJ_ATTR_DENSE_ARRAY && bools->darr.dtype == CJ_PRED &&
        bools->darr.n == 2 && memcmp(bools->darr.data, "\x01\x00", 2) == 0);
  cj_op *main = cj_module_main(m);
  cj_block *body = main ? cj_func_body(main) : NULL;
  cj_op *k = find_op(body, "stablehlo.constant", 0);
  CHECK(k != NULL);
  if (k) { /* dense_resource<blob1>: -1, 2, 3 */
    const cj_attr *val = cj_op_attr(k, "value");
    CHECK(val && val->kind == CJ_ATTR_DENSE && !val->dense.splat &&
          cj_dense_get_f64(val, 0) == -1.0 && cj_dense_get_f64(val, 1) == 2.0 &&
          cj_dense_get_f64(val, 2) == 3.0);
  }
  cj_op *cmp = find_op(body, "chlo.broadcast_compare", 0);
  int32_t cdir = -1;
  CHECK(cmp && cmp->kind == CJ_OP_CHLO_BROADCAST_COMPARE &&
        cj_op_get_enum(cmp, "comparison_direction", CJ_EK_CHLO_COMPARISON_DIRECTION, &cdir) &&
        cdir == CJ_CHLO_COMPARISON_DIRECTION_GT);
  cj_op *dot = find_op(body, "stablehlo.dot_general", 0);
  const cj_attr *pc = dot ? cj_op_attr(dot, "precision_config") : NULL;
  CHECK(pc && pc->kind == CJ_ATTR_ARRAY && pc->arr.n == 2 &&
        pc->arr.items[1]->en.v == CJ_PRECISION_HIGHEST);
  const cj_attr *dd = dot ? cj_op_attr(dot, "dot_dimension_numbers") : NULL;
  CHECK(dd && dd->kind == CJ_ATTR_STRUCT && dd->st.sk == CJ_SK_DOT &&
        cj_attr_field(dd, CJ_SK_DOT, CJ_SF_DOT_lhs_batching_dimensions) == NULL);
  cj_op *tr = find_op(body, "stablehlo.transpose", 0);
  CHECK(tr && cj_op_get_i64s(tr, "permutation", v, 4, &n) && n == 2 && v[0] == 1 && v[1] == 0);
  cj_status vs = cj_verify_module(m);
  CHECK_MSG(vs == NULL, "plain.mlirbc does not verify: %s", cj_status_message(vs));
  cj_status_free(vs);
  cj_module_free(m);
}

/* forward_refs.mlirbc: values used before they are defined (graph regions) */
static void test_forward_refs(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/forward_refs.mlirbc", dir);
  cj_module *m = NULL;
  cj_status st = decode_path(path, &m);
  CHECK_MSG(st == NULL, "%s: %s", path, cj_status_message(st));
  cj_status_free(st);
  if (!m) return;
  cj_block *b = cj_module_block(m);
  CHECK(b->nops == 5);
  if (b->nops == 5) {
    cj_op *use = b->first, *def1 = use->next, *graph = def1->next, *def2 = graph->next;
    /* branches between the blocks of a region: ^bb0 -> ^bb2 -> (^bb1, ^bb2) */
    cj_op *cfg = def2->next;
    CHECK(cfg->nregions == 1 && cfg->regions[0].nblocks == 3);
    if (cfg->nregions == 1 && cfg->regions[0].nblocks == 3) {
      cj_block *b0 = cfg->regions[0].first, *b1 = b0->next, *b2 = b1->next;
      CHECK(b0->first->nsuccessors == 1 && b0->first->successors[0] == b2);
      CHECK(b2->first->nsuccessors == 2 && b2->first->successors[0] == b1 &&
            b2->first->successors[1] == b2);
      CHECK(b1->nargs == 1 && b1->first->operands[0] == &b1->args[0]);
    }
    CHECK_EQ_STR(use->name, "test.use");
    CHECK(use->nopnds == 2 && use->operands[0] == &def2->results[0] &&
          use->operands[1] == &def1->results[0]);
    CHECK(cj_op_attr(def2, "attr") != NULL);
    /* an attribute and a type stored as text, read by the text parser */
    const cj_attr *t = cj_op_attr(def2, "text");
    CHECK(t && t->kind == CJ_ATTR_OPAQUE);
    if (t && t->kind == CJ_ATTR_OPAQUE) CHECK_EQ_STR(t->opaque.text, "#foo.bar<\"x\", 2>");
    const cj_type *ty = def2->results[0].type;
    CHECK(ty->kind == CJ_TYPE_OPAQUE);
    if (ty->kind == CJ_TYPE_OPAQUE) CHECK_EQ_STR(ty->text, "!foo.baz<3>");
    cj_block *inner = graph->nregions == 1 ? graph->regions[0].first : NULL;
    CHECK(inner && inner->nops == 2);
    if (inner && inner->nops == 2) {
      cj_op *iu = inner->first, *id = iu->next;
      CHECK(iu->operands[0] == &id->results[0] && iu->operands[1] == &use->results[0]);
      CHECK(id->operands[0] == &iu->results[0]);
    }
  }
  cj_module_free(m);
}

static int test_fixtures(const char *dir) {
  int n;
  char **names = list_dir(dir, ".mlir.bc", &n);
  CHECK_MSG(n >= 16, "found %d fixtures in %s", n, dir);
  int ok = 0;
  for (int i = 0; i < n; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    cj_module *m = NULL;
    cj_status st = decode_path(path, &m);
    if (strstr(names[i], "_300")) { /* nesting beyond the reader's limits */
      CHECK_MSG(st != NULL, "%s must be rejected", names[i]);
      if (st) CHECK_CONTAINS(cj_status_message(st), "nested too deeply");
      cj_status_free(st);
      cj_module_free(m);
      free(names[i]);
      continue;
    }
    CHECK_MSG(st == NULL, "%s: %s", names[i], cj_status_message(st));
    if (!st) {
      stats s = {0};
      cj_status w = cj_walk_module(m, count_op, &s);
      CHECK_MSG(w == NULL, "%s: %s", names[i], cj_status_message(w));
      cj_status_free(w);
      CHECK_MSG(s.casts == 0, "%s: %d casts left", names[i], s.casts);
      cj_status v = cj_verify_module(m);
      CHECK_MSG(v == NULL, "%s does not verify: %s", names[i], cj_status_message(v));
      cj_status_free(v);
      CHECK_MSG(cj_module_main(m) != NULL, "%s has no main", names[i]);
      if (strstr(names[i], ".export.") || strstr(names[i], ".plugin.") ||
          strcmp(names[i], "features.mlir.bc") == 0)
        CHECK_MSG(s.with_pos > s.ops / 2, "%s: %d of %d ops have a position", names[i], s.with_pos,
                  s.ops);
      if (strcmp(names[i], "features.mlir.bc") == 0) check_features(m);
      if (strcmp(names[i], "sharded.export.mlir.bc") == 0) check_sharded_export(m);
      if (strncmp(names[i], "donated.", 8) == 0) {
        const cj_attr *d = cj_func_arg_attrs(cj_module_main(m), 0);
        int64_t alias = -1;
        CHECK(d && d->dict.n >= 1 && cj_attr_get_i64(d->dict.items[0].value, &alias) && alias == 0);
      }
      if (strncmp(names[i], "shape_poly.export", 17) == 0) {
        const cj_type *ft = cj_func_type(cj_module_main(m));
        CHECK(ft && ft->members[0]->dims[0] == CJ_DYN);
      }
      ok++;
    }
    cj_status_free(st);
    cj_module_free(m);
    free(names[i]);
  }
  free(names);
  printf("fixtures: %d decoded and verified, the over-nested ones rejected\n", ok);
  return ok;
}

/* ---- comparing two modules op by op (no printer needed) ---- */

static uint32_t number_block(cj_block *b, uint32_t next) {
  for (uint32_t i = 0; i < b->nargs; i++) b->args[i].id = next++;
  for (cj_op *op = b->first; op; op = op->next) {
    for (uint32_t i = 0; i < op->nresults; i++) op->results[i].id = next++;
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next) next = number_block(nb, next);
  }
  return next;
}

static bool same_type(const cj_type *a, const cj_type *b) {
  cj_attr ta = {.kind = CJ_ATTR_TYPE, .type = a}, tb = {.kind = CJ_ATTR_TYPE, .type = b};
  return cj_attr_equal(&ta, &tb);
}

/* Attributes the native twin keeps and the artifact path drops: jaxlib's StableHLO (1.17) kept
 * empty infeed/outfeed configs that HEAD's legalization removes as defaults. */
static bool ignorable(const cj_named_attr *a) {
  return (strcmp(a->name, "infeed_config") == 0 || strcmp(a->name, "outfeed_config") == 0) &&
         a->value->kind == CJ_ATTR_STRING && a->value->str.len == 0;
}

static int sorted_attrs(const cj_op *op, const cj_named_attr **out, int cap) {
  int n = 0;
  for (uint32_t i = 0; i < op->nattrs && n < cap; i++) {
    if (ignorable(&op->attrs[i])) continue;
    int k = n++;
    while (k > 0 && strcmp(out[k - 1]->name, op->attrs[i].name) > 0) {
      out[k] = out[k - 1];
      k--;
    }
    out[k] = &op->attrs[i];
  }
  return n;
}

static int diff_count;

#define DIFF(...)                     \
  do {                                \
    if (diff_count++ < 5) {           \
      fprintf(stderr, "%s: ", label); \
      fprintf(stderr, __VA_ARGS__);   \
      fprintf(stderr, "\n");          \
    }                                 \
    return false;                     \
  } while (0)

static bool same_block(const char *label, const cj_block *a, const cj_block *b);

static bool same_op(const char *label, const cj_op *a, const cj_op *b) {
  if (strcmp(a->name, b->name) || a->kind != b->kind) DIFF("op %s vs %s", a->name, b->name);
  if (a->nopnds != b->nopnds || a->nresults != b->nresults || a->nregions != b->nregions)
    DIFF("%s: operand/result/region counts differ", a->name);
  for (uint32_t i = 0; i < a->nopnds; i++)
    if (a->operands[i]->id != b->operands[i]->id) DIFF("%s: operand %u differs", a->name, i);
  for (uint32_t i = 0; i < a->nresults; i++)
    if (!same_type(a->results[i].type, b->results[i].type))
      DIFF("%s: result %u type differs", a->name, i);
  if (a->pos.line != b->pos.line || a->pos.col != b->pos.col)
    DIFF("%s: position %d:%d vs %d:%d", a->name, a->pos.line, a->pos.col, b->pos.line, b->pos.col);
  const cj_named_attr *sa[64], *sb[64];
  int na = sorted_attrs(a, sa, 64), nb = sorted_attrs(b, sb, 64);
  for (int i = 0, j = 0; i < na || j < nb;) {
    if (j >= nb || (i < na && strcmp(sa[i]->name, sb[j]->name) < 0))
      DIFF("%s: attribute %s only in the artifact", a->name, sa[i]->name);
    if (i >= na || strcmp(sa[i]->name, sb[j]->name) > 0)
      DIFF("%s: attribute %s only in the native twin", a->name, sb[j]->name);
    if (!cj_attr_equal(sa[i]->value, sb[j]->value))
      DIFF("%s: attribute %s differs", a->name, sa[i]->name);
    i++;
    j++;
  }
  for (uint32_t r = 0; r < a->nregions; r++) {
    if (a->regions[r].nblocks != b->regions[r].nblocks)
      DIFF("%s: region %u block count", a->name, r);
    const cj_block *x = a->regions[r].first, *y = b->regions[r].first;
    for (; x && y; x = x->next, y = y->next)
      if (!same_block(label, x, y)) return false;
  }
  return true;
}

static bool same_block(const char *label, const cj_block *a, const cj_block *b) {
  if (a->nargs != b->nargs || a->nops != b->nops)
    DIFF("block shapes differ (%u/%u args, %u/%u ops)", a->nargs, b->nargs, a->nops, b->nops);
  for (uint32_t i = 0; i < a->nargs; i++)
    if (!same_type(a->args[i].type, b->args[i].type)) DIFF("block argument %u type differs", i);
  const cj_op *x = a->first, *y = b->first;
  for (; x && y; x = x->next, y = y->next)
    if (!same_op(label, x, y)) return false;
  return true;
}

static bool same_module(const char *label, cj_module *a, cj_module *b) {
  if ((a->name == NULL) != (b->name == NULL) || (a->name && strcmp(a->name, b->name)))
    DIFF("module names differ");
  if (a->nattrs != b->nattrs)
    DIFF("module attribute counts differ (%u vs %u)", a->nattrs, b->nattrs);
  for (uint32_t i = 0; i < a->nattrs; i++)
    if (!cj_attr_equal(a->attrs[i].value, cj_module_attr(b, a->attrs[i].name)))
      DIFF("module attribute %s differs", a->attrs[i].name);
  number_block(cj_module_block(a), 0);
  number_block(cj_module_block(b), 0);
  return same_block(label, cj_module_block(a), cj_module_block(b));
}

#undef DIFF

static void test_native_twins(const char *corpus, const char *fixtures) {
  char ndir[4096];
  snprintf(ndir, sizeof ndir, "%s/native", fixtures);
  int n, same = 0;
  char **names = list_dir(ndir, ".mlirbc", &n);
  CHECK_MSG(n >= 20, "found %d native twins in %s", n, ndir);
  for (int i = 0; i < n; i++) {
    char native[8200], artifact[8200];
    size_t k = strlen(names[i]) - 7; /* without ".mlirbc" */
    snprintf(native, sizeof native, "%s/%s", ndir, names[i]);
    if (strncmp(names[i], "stablehlo_legalize_to_vhlo.", 27) == 0)
      snprintf(artifact, sizeof artifact, "%s/%.*s.mlir.bc", corpus, (int)k, names[i]);
    else
      snprintf(artifact, sizeof artifact, "%s/%.*s.mlir.bc", fixtures, (int)k, names[i]);
    cj_module *a = NULL, *b = NULL;
    cj_status st = decode_path(artifact, &a);
    CHECK_MSG(st == NULL, "%s: %s", artifact, cj_status_message(st));
    cj_status_free(st);
    st = decode_path(native, &b);
    CHECK_MSG(st == NULL, "%s: %s", native, cj_status_message(st));
    cj_status_free(st);
    if (a && b) {
      diff_count = 0;
      bool ok = same_module(names[i], a, b);
      CHECK_MSG(ok, "%s: the artifact and its native twin build different IR", names[i]);
      same += ok;
    }
    cj_module_free(a);
    cj_module_free(b);
    free(names[i]);
  }
  free(names);
  printf("native twins: %d of %d build the same IR as their portable artifact\n", same, n);
}

/* Every truncation of `data` must fail (or, for a prefix that happens to be complete, succeed)
 * without reading out of bounds; the full length must succeed. */
static int check_truncations(const char *name, const char *data, size_t len, size_t stride) {
  int failures_seen = 0;
  for (size_t k = 0; k < len; k += stride) {
    char *copy = malloc(k ? k : 1); /* exact-size copies so ASan sees any overread */
    memcpy(copy, data, k);
    cj_module *m = NULL;
    cj_status st = cj_read_mlir_bytecode(copy, k, name, &m);
    if (st) {
      failures_seen++;
      CHECK(m == NULL);
      CHECK(cj_status_message(st)[0] != 0);
    }
    cj_status_free(st);
    cj_module_free(m);
    free(copy);
  }
  return failures_seen;
}

/* Byte flips: each must either decode or fail with a message; never crash. */
static void check_flips(const char *name, const char *data, size_t len, size_t stride,
                        uint32_t seed) {
  char *copy = malloc(len);
  uint32_t x = seed;
  for (size_t k = 0; k < len; k += stride) {
    memcpy(copy, data, len);
    x = x * 1664525u + 1013904223u;
    copy[k] ^= (char)(1u << (x >> 29));                                     /* one bit */
    if (((x >> 8) & 3) == 0) copy[(k + (x >> 12)) % len] = (char)(x >> 20); /* and a byte */
    cj_module *m = NULL;
    cj_status st = cj_read_mlir_bytecode(copy, len, name, &m);
    if (st) CHECK(cj_status_message(st)[0] != 0 && m == NULL);
    cj_status_free(st);
    cj_module_free(m);
  }
  free(copy);
}

static void test_damage(const char *corpus, const char *fixtures) {
  char path[4096];
  size_t len;

  /* not bytecode at all */
  cj_module *m = NULL;
  cj_status st = cj_read_mlir_bytecode("module {}", 9, "x.mlir", &m);
  CHECK(st && m == NULL);
  if (st) CHECK_CONTAINS(cj_status_message(st), "magic");
  cj_status_free(st);
  st = cj_read_mlir_bytecode(NULL, 0, "empty", &m);
  CHECK(st && m == NULL);
  cj_status_free(st);

  snprintf(path, sizeof path, "%s/vhlo_emit_version_api.1_1_0.mlir.bc", corpus);
  char *small = tc_read_file(path, &len);
  CHECK(small != NULL);
  if (small) {
    /* a newer container version */
    char *v = malloc(len);
    memcpy(v, small, len);
    v[4] = 7 << 1 | 1; /* varint 7 */
    st = cj_read_mlir_bytecode(v, len, "v7.mlirbc", &m);
    CHECK(st != NULL);
    if (st) CHECK_CONTAINS(cj_status_message(st), "bytecode version 7");
    cj_status_free(st);
    free(v);
    int f = check_truncations("small", small, len, 1);
    CHECK_MSG(f == (int)len, "%d of %zu truncations failed", f, len);
    check_flips("small", small, len, 1, 1);
    /* the error names the file and an offset */
    st = cj_read_mlir_bytecode(small, len - 3, "cut.mlirbc", &m);
    CHECK(st != NULL);
    if (st) {
      CHECK_CONTAINS(cj_status_message(st), "cut.mlirbc");
      CHECK_CONTAINS(cj_status_message(st), "offset");
    }
    cj_status_free(st);
    free(small);
  }
  static const char *const files[] = {"features.mlir.bc",
                                      "donated.export.mlir.bc",
                                      "sharded.export.mlir.bc",
                                      "scan_rnn.plugin.mlir.bc",
                                      "plain.mlirbc",
                                      "forward_refs.mlirbc",
                                      "native/shard_map.export.mlirbc"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", fixtures, files[i]);
    char *d = tc_read_file(path, &len);
    CHECK_MSG(d != NULL, "cannot read %s", path);
    if (!d) continue;
    check_truncations(files[i], d, len, 1);
    check_flips(files[i], d, len, 1, (uint32_t)i + 7);
    free(d);
  }
  snprintf(path, sizeof path, "%s/stablehlo_legalize_to_vhlo.1_20_0.mlir.bc", corpus);
  char *big = tc_read_file(path, &len);
  CHECK(big != NULL);
  if (big) {
    check_truncations("1_20_0", big, len, 31);
    check_flips("1_20_0", big, len, 11, 3);
    free(big);
  }
  snprintf(path, sizeof path, "%s/stablehlo_legalize_to_vhlo.0_9_0.mlir.bc", corpus);
  char *old = tc_read_file(path, &len);
  CHECK(old != NULL);
  if (old) {
    check_truncations("0_9_0", old, len, 37);
    check_flips("0_9_0", old, len, 17, 5);
    free(old);
  }
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s <conformance vhlo dir> <fixtures dir>\n", argv[0]);
    return 2;
  }
  test_versions();
  test_corpus(argv[1]);
  test_fixtures(argv[2]);
  test_plain(argv[2]);
  test_forward_refs(argv[2]);
  test_native_twins(argv[1], argv[2]);
  test_damage(argv[1], argv[2]);
  return check_report("bytecode");
}
