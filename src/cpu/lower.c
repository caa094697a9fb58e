/* cjrt: the lowering core and the buffer planner (see lower.h). */
#include "cpu/lower.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/program.h"

typedef struct lw_val {
  int32_t nleaves;
  int32_t *leaves; /* buffer ids (arena memory); NULL until bound */
  int32_t one;     /* storage for a single leaf */
  bool bound;
  /* virtual view (elementwise fusion) */
  bool virt;
  int32_t vsrc;
  cj_dtype vdt;
  int64_t *vstrides;
  int64_t voff; /* elements of vdt from the start of vsrc (slices) */
  int64_t *vlo, *vhi; /* bounded views (pads): elements in [vlo, vhi) per dim are read, the
                       * others are vpad; NULL: unbounded */
  int32_t vpad;       /* bounded views: the constant buffer of the padding value */
} lw_val;

typedef struct slot_list {
  cj_slot *s;
  uint32_t n;
} slot_list;

typedef struct hint {
  int32_t out, in, pos;
} hint;

typedef struct lw_group {
  int32_t parent;              /* enclosing group, -1 = none */
  uint32_t slot_begin, slot_end;
  int32_t copies;
  int32_t container;           /* the buffer holding the copies (-1 until planned / empty) */
  cj_lw_group *out;
} lw_group;

/* per value: some user is not an elementwise op (or a scatter input, takes_virtual) of the
 * defining block; some user is neither that nor a static slice of that block (slices of a pad
 * may stay views of views) */
enum { NONEW_EW = 1, NONEW_VIEW = 2 };

/* users of each value: counts and whether some user is not an elementwise op of the defining
 * block */
struct cj_lw {
  cj_module *m;
  cj_arena *arena;
  cj_lw_buf *bufs;
  int32_t nbufs, capbufs;
  lw_val *vals;
  uint32_t nvals;
  uint8_t *non_ew_user; /* per value: NONEW_EW, NONEW_VIEW bits */
  uint32_t *nuses;      /* per value: operand occurrences over the whole function */
  cj_step *steps;
  uint32_t nsteps, capsteps;
  int32_t pos;
  slot_list *slots;
  uint32_t nslots, capslots;
  hint *hints;
  uint32_t nhints, caphints;
  char *cpool;
  int64_t cpool_size, cpool_cap;
  bool oom;
  void *ew; /* lower_ew.c state */
  double flops, transcendentals, bytes_accessed;
  int64_t tls_bytes;
  lw_group *groups;
  int32_t ngroups, capgroups, cur_group;
  const cj_op **taken; /* ops lowered ahead of their position by another op's step */
  uint32_t ntaken, captaken;
};

/* lower_ew.c */

void cj_lw_set_tls_bytes(cj_lw *L, int64_t bytes) {
  if (bytes > L->tls_bytes) L->tls_bytes = bytes;
}
void cj_lw_add_cost(cj_lw *L, double flops, double transcendentals) {
  L->flops += flops;
  L->transcendentals += transcendentals;
}
void *cj_lw_ew_state(cj_lw *L) { return L->ew; }

cj_module *cj_lw_module(cj_lw *L) { return L->m; }
/* Compilation knows no pool (a program runs on whichever client's pool executes it): NULL.
 * Kernels split their work at run time, from ctx->pool. */
cj_threadpool *cj_lw_pool(cj_lw *L) {
  (void)L;
  return NULL;
}

/* ======================================================================== buffers */

int32_t cj_lw_pos(cj_lw *L) { return L->pos; }
int32_t cj_lw_advance(cj_lw *L) { return L->pos++; }

int32_t cj_lw_new_buf(cj_lw *L, int64_t size, uint8_t kind) {
  if (L->nbufs == L->capbufs) {
    int32_t ncap = L->capbufs ? L->capbufs * 2 : 256;
    cj_lw_buf *nb = realloc(L->bufs, sizeof(cj_lw_buf) * (size_t)ncap);
    if (!nb) {
      L->oom = true;
      return 0;
    }
    L->bufs = nb;
    L->capbufs = ncap;
  }
  cj_lw_buf *b = &L->bufs[L->nbufs];
  memset(b, 0, sizeof *b);
  b->size = size < 0 ? 0 : size;
  b->kind = size == 0 && kind == CJ_BK_ARENA ? CJ_BK_NONE : kind;
  b->def = -1;
  b->last = -1;
  b->hint = -1;
  b->merged = -1;
  b->group = L->cur_group;
  return L->nbufs++;
}

int32_t cj_lw_group_begin(cj_lw *L) {
  if (L->ngroups == L->capgroups) {
    int32_t ncap = L->capgroups ? L->capgroups * 2 : 16;
    lw_group *ng = realloc(L->groups, sizeof(lw_group) * (size_t)ncap);
    if (!ng) {
      L->oom = true;
      return -1;
    }
    L->groups = ng;
    L->capgroups = ncap;
  }
  lw_group *g = &L->groups[L->ngroups];
  memset(g, 0, sizeof *g);
  g->parent = L->cur_group;
  g->slot_begin = L->nslots;
  g->container = -1;
  L->cur_group = L->ngroups;
  return L->ngroups++;
}

cj_lw_group *cj_lw_group_end(cj_lw *L, int32_t group, int32_t copies) {
  cj_lw_group *d = cj_lw_alloc(L, sizeof *d);
  if (group < 0 || group >= L->ngroups) {
    if (d) *d = (cj_lw_group){0, 1, false};
    return d;
  }
  lw_group *g = &L->groups[group];
  g->slot_end = L->nslots;
  g->copies = copies < 1 ? 1 : copies;
  g->out = d;
  if (d) *d = (cj_lw_group){0, 1, false};
  L->cur_group = g->parent;
  return d;
}

cj_lw_buf *cj_lw_buf_at(cj_lw *L, int32_t id) { return &L->bufs[id]; }

void cj_lw_use(cj_lw *L, int32_t buf) {
  cj_lw_buf *b = &L->bufs[buf];
  if (b->last < L->pos) b->last = L->pos;
  if (b->def < 0) b->def = L->pos; /* read before any write: e.g. arguments */
}
void cj_lw_def(cj_lw *L, int32_t buf) {
  cj_lw_buf *b = &L->bufs[buf];
  if (b->def < 0 || b->def > L->pos) b->def = L->pos;
  if (b->last < L->pos) b->last = L->pos;
}
void cj_lw_def_at(cj_lw *L, int32_t buf, int32_t pos) {
  cj_lw_buf *b = &L->bufs[buf];
  if (b->def < 0 || b->def > pos) b->def = pos;
  if (b->last < pos) b->last = pos;
}

static int32_t resolve(const cj_lw *L, int32_t b) {
  for (int guard = 0; guard < 64 && L->bufs[b].merged >= 0; guard++) b = L->bufs[b].merged;
  return b;
}

bool cj_lw_has_hint(cj_lw *L, int32_t out, int32_t in, int32_t pos) {
  for (uint32_t h = 0; h < L->nhints; h++)
    if (L->hints[h].out == out && L->hints[h].in == in && L->hints[h].pos == pos) return true;
  return false;
}

void cj_lw_merge(cj_lw *L, int32_t from, int32_t into) {
  cj_lw_buf *f = &L->bufs[from], *t = &L->bufs[into];
  f->merged = into;
  if (f->def >= 0 && (t->def < 0 || f->def < t->def)) t->def = f->def;
  if (f->last > t->last) t->last = f->last;
}

void cj_lw_hint_inplace(cj_lw *L, int32_t out, int32_t in) {
  if (L->nhints == L->caphints) {
    uint32_t ncap = L->caphints ? L->caphints * 2 : 64;
    hint *nh = realloc(L->hints, sizeof(hint) * ncap);
    if (!nh) {
      L->oom = true;
      return;
    }
    L->hints = nh;
    L->caphints = ncap;
  }
  L->hints[L->nhints++] = (hint){out, in, L->pos};
}

void cj_lw_extend_region(cj_lw *L, int32_t start) {
  int32_t now = L->pos - 1 > start ? L->pos - 1 : start;
  for (int32_t i = 0; i < L->nbufs; i++) {
    cj_lw_buf *b = &L->bufs[i];
    if (b->def >= 0 && b->def < start && b->last > start && b->last < now) b->last = now;
  }
}

void *cj_lw_alloc(cj_lw *L, size_t bytes) {
  void *p = cj_arena_alloc_aligned(L->arena, bytes ? bytes : 1, 16);
  if (!p) L->oom = true;
  return p;
}

static bool add_slot_list(cj_lw *L, cj_slot *s, uint32_t n) {
  if (L->nslots == L->capslots) {
    uint32_t ncap = L->capslots ? L->capslots * 2 : 256;
    slot_list *ns = realloc(L->slots, sizeof(slot_list) * ncap);
    if (!ns) {
      L->oom = true;
      return false;
    }
    L->slots = ns;
    L->capslots = ncap;
  }
  L->slots[L->nslots++] = (slot_list){s, n};
  return true;
}

cj_slot *cj_lw_slots(cj_lw *L, uint32_t n, const int32_t *bufs, bool use) {
  cj_slot *s = cj_lw_alloc(L, sizeof(cj_slot) * (n ? n : 1));
  if (!s) return NULL;
  for (uint32_t i = 0; i < n; i++) {
    s[i].buf = (uint32_t)bufs[i];
    if (use)
      cj_lw_use(L, bufs[i]);
    else
      cj_lw_def(L, bufs[i]);
  }
  if (n && !add_slot_list(L, s, n)) return NULL;
  return s;
}

uint32_t cj_lw_slot_mark(const cj_lw *L) { return L->nslots; }

uint32_t cj_lw_nsteps(const cj_lw *L) { return L->nsteps; }
cj_step *cj_lw_step_at(cj_lw *L, uint32_t i) { return i < L->nsteps ? &L->steps[i] : NULL; }

bool cj_lw_step_set_inputs(cj_lw *L, cj_step *st, uint32_t n, const int32_t *bufs) {
  uint32_t k = L->nslots;
  while (k > 0 && L->slots[k - 1].s != st->in) k--;
  if (!k || !n) return false; /* (a step without inputs has no list to replace) */
  cj_slot *s = cj_lw_alloc(L, sizeof(cj_slot) * n);
  if (!s) {
    L->oom = true;
    return false;
  }
  for (uint32_t i = 0; i < n; i++) {
    s[i] = (cj_slot){0, (uint32_t)bufs[i], 0};
    cj_lw_use(L, bufs[i]);
  }
  L->slots[k - 1] = (slot_list){s, n}; /* in its place: slot marks and groups stay right */
  st->in = s;
  st->nin = n;
  return true;
}

/* whether slot list s (n > 0) is the in or out list of one of the plan's steps */
static bool plan_owns_slots(const cj_plan *p, const cj_slot *s) {
  for (uint32_t i = 0; i < p->nsteps; i++)
    if (p->steps[i].in == s || p->steps[i].out == s) return true;
  return false;
}

/* a copy of slot list s (n entries) with the buffers of a[] and b[] exchanged, registered for
 * patching */
static cj_slot *swapped_slots(cj_lw *L, const cj_slot *s, uint32_t n, int32_t m, const int32_t *a,
                              const int32_t *b) {
  if (!n) return NULL;
  cj_slot *d = cj_lw_alloc(L, sizeof(cj_slot) * n);
  if (!d) return NULL;
  for (uint32_t i = 0; i < n; i++) {
    d[i] = s[i];
    int32_t r = resolve(L, (int32_t)s[i].buf);
    for (int32_t k = 0; k < m; k++) {
      if (r == a[k]) d[i].buf = (uint32_t)b[k];
      if (r == b[k]) d[i].buf = (uint32_t)a[k];
    }
  }
  return add_slot_list(L, d, n) ? d : NULL;
}

bool cj_lw_plan_self_contained(const cj_lw *L, const cj_plan *p, uint32_t mark, uint32_t end) {
  cj_plan cur = {L->steps, L->nsteps};
  if (!p) p = &cur;
  uint32_t lists = 0;
  for (uint32_t i = 0; i < p->nsteps; i++) lists += (p->steps[i].nin > 0) + (p->steps[i].nout > 0);
  if (end < mark || end > L->nslots || end - mark != lists) return false;
  for (uint32_t k = mark; k < end; k++)
    if (!plan_owns_slots(p, L->slots[k].s)) return false;
  return true;
}

cj_status cj_lw_plan_swapped(cj_lw *L, const cj_plan *p, int32_t n, const int32_t *a, const int32_t *b,
                             cj_plan *out) {
  *out = (cj_plan){NULL, 0};
  if (!p->nsteps) return NULL;
  cj_step *st = cj_lw_alloc(L, sizeof(cj_step) * p->nsteps);
  if (!st) return cj_oom();
  for (uint32_t i = 0; i < p->nsteps; i++) {
    st[i] = p->steps[i];
    st[i].in = swapped_slots(L, p->steps[i].in, p->steps[i].nin, n, a, b);
    st[i].out = swapped_slots(L, p->steps[i].out, p->steps[i].nout, n, a, b);
    if ((st[i].nin && !st[i].in) || (st[i].nout && !st[i].out)) return cj_oom();
  }
  *out = (cj_plan){st, p->nsteps};
  return NULL;
}

const void *cj_lw_const_bytes(cj_lw *L, int32_t buf) {
  const cj_lw_buf *b = &L->bufs[resolve(L, buf)];
  return b->kind == CJ_BK_CONST && b->size > 0 ? L->cpool + b->off : NULL;
}

int32_t cj_lw_const(cj_lw *L, const void *data, int64_t bytes) {
  int64_t off = (L->cpool_size + 63) & ~(int64_t)63;
  int64_t need = off + (bytes > 0 ? bytes : 0);
  if (need > L->cpool_cap) {
    int64_t ncap = L->cpool_cap ? L->cpool_cap : 4096;
    while (ncap < need) ncap *= 2;
    char *np = realloc(L->cpool, (size_t)ncap);
    if (!np) {
      L->oom = true;
      return cj_lw_new_buf(L, 0, CJ_BK_NONE);
    }
    L->cpool = np;
    L->cpool_cap = ncap;
  }
  if (bytes > 0) memcpy(L->cpool + off, data, (size_t)bytes);
  L->cpool_size = need;
  int32_t id = cj_lw_new_buf(L, bytes, CJ_BK_CONST);
  if (bytes > 0) {
    L->bufs[id].kind = CJ_BK_CONST;
    L->bufs[id].off = off;
  }
  return id;
}

const char *cj_lw_what(cj_lw *L, const cj_op *op) {
  if (!op) return "step";
  char where[300], buf[512];
  cj_op_where(op, where, sizeof where);
  snprintf(buf, sizeof buf, "%s at %s", op->name ? op->name : "op", where);
  char *s = cj_arena_strdup(L->arena, buf);
  if (!s) L->oom = true;
  return s ? s : "op";
}

/* ======================================================================== steps */

cj_step *cj_lw_emit(cj_lw *L, const cj_op *op, cj_kernel_fn fn, const void *params,
                    uint32_t nin, const int32_t *in, uint32_t nout, const int32_t *out) {
  if (L->nsteps == L->capsteps) {
    uint32_t ncap = L->capsteps ? L->capsteps * 2 : 64;
    cj_step *ns = realloc(L->steps, sizeof(cj_step) * ncap);
    if (!ns) {
      L->oom = true;
      return NULL;
    }
    L->steps = ns;
    L->capsteps = ncap;
  }
  cj_step *st = &L->steps[L->nsteps++];
  memset(st, 0, sizeof *st);
  st->fn = fn;
  st->params = params;
  st->nin = nin;
  st->nout = nout;
  st->in = cj_lw_slots(L, nin, in, true);
  st->out = cj_lw_slots(L, nout, out, false);
  st->what = cj_lw_what(L, op);
  for (uint32_t i = 0; i < nin; i++) L->bytes_accessed += (double)L->bufs[in[i]].size;
  for (uint32_t i = 0; i < nout; i++) L->bytes_accessed += (double)L->bufs[out[i]].size;
  L->pos++;
  return st;
}

void cj_lw_plan_begin(cj_lw *L, cj_lw_saved *saved) {
  saved->steps = L->steps;
  saved->n = L->nsteps;
  saved->cap = L->capsteps;
  L->steps = NULL;
  L->nsteps = L->capsteps = 0;
}

cj_status cj_lw_plan_end(cj_lw *L, cj_lw_saved *saved, cj_plan *out) {
  cj_status st = cj_lw_ew_flush(L);
  out->nsteps = L->nsteps;
  out->steps = NULL;
  if (!st && L->nsteps) {
    out->steps = cj_arena_memdup(L->arena, L->steps, sizeof(cj_step) * L->nsteps);
    if (!out->steps) L->oom = true;
  }
  free(L->steps);
  L->steps = saved->steps;
  L->nsteps = saved->n;
  L->capsteps = saved->cap;
  if (st) return st;
  return L->oom ? cj_oom() : NULL;
}

/* ---- copies ---- */

typedef struct copy_params {
  uint32_t n;
  int64_t *bytes;
} copy_params;

cj_status cj_k_copy(cj_exec_ctx *ctx, const cj_step *st) {
  const copy_params *p = st->params;
  for (uint32_t i = 0; i < p->n; i++) {
    char *d = CJ_PTR(ctx, st->out[i]);
    const char *s = CJ_PTR(ctx, st->in[i]);
    if (d != s && p->bytes[i]) memmove(d, s, (size_t)p->bytes[i]);
  }
  return NULL;
}

cj_status cj_lw_emit_copies(cj_lw *L, const cj_op *op, uint32_t n, const int32_t *src,
                            const int32_t *dst) {
  if (!n) return NULL;
  copy_params *p = cj_lw_alloc(L, sizeof *p);
  int64_t *bytes = cj_lw_alloc(L, sizeof(int64_t) * n);
  if (!p || !bytes) return cj_oom();
  p->n = n;
  p->bytes = bytes;
  for (uint32_t i = 0; i < n; i++) {
    int64_t a = L->bufs[src[i]].size, b = L->bufs[dst[i]].size;
    bytes[i] = a < b ? a : b;
  }
  if (!cj_lw_emit(L, op, cj_k_copy, p, n, src, n, dst)) return cj_oom();
  return NULL;
}

/* ======================================================================== values */

static lw_val *val(cj_lw *L, cj_value *v) { return v->id < L->nvals ? &L->vals[v->id] : NULL; }

int64_t cj_lw_type_bytes(const cj_type *t) {
  if (!t) return -1;
  if (t->kind == CJ_TYPE_TOKEN) return 0;
  if (!cj_type_is_static(t)) return -1;
  return t->num_elements * (int64_t)cj_dtype_bytes(t->dtype);
}

int32_t cj_lw_type_leaves(const cj_type *t) {
  if (!t) return 0;
  if (t->kind == CJ_TYPE_TUPLE) {
    int32_t n = 0;
    for (int32_t i = 0; i < t->rank; i++) n += cj_lw_type_leaves(t->members[i]);
    return n;
  }
  return 1;
}

static CJ_MUST_USE cj_status leaf_types_rec(const cj_type *t, const cj_type **out, int32_t cap, int32_t *n) {
  if (t->kind == CJ_TYPE_TUPLE) {
    for (int32_t i = 0; i < t->rank; i++) CJ_RETURN_IF_ERROR(leaf_types_rec(t->members[i], out, cap, n));
    return NULL;
  }
  if (*n >= cap) return cj_internal("too many tuple leaves");
  out[(*n)++] = t;
  return NULL;
}

cj_status cj_lw_leaf_types(const cj_type *t, const cj_type **out, int32_t cap, int32_t *n) {
  *n = 0;
  return leaf_types_rec(t, out, cap, n);
}

cj_status cj_lw_bind(cj_lw *L, cj_value *v, int32_t n, const int32_t *leaves) {
  lw_val *x = val(L, v);
  if (!x) return cj_internal("value without a number");
  x->nleaves = n;
  if (n == 1) {
    x->one = leaves[0];
    x->leaves = &x->one;
  } else {
    x->leaves = cj_lw_alloc(L, sizeof(int32_t) * (n ? n : 1));
    if (!x->leaves) return cj_oom();
    memcpy(x->leaves, leaves, sizeof(int32_t) * (size_t)n);
  }
  x->bound = true;
  x->virt = false;
  return NULL;
}

bool cj_lw_value_is_virtual(cj_lw *L, cj_value *v) {
  lw_val *x = val(L, v);
  return x && x->virt && !x->bound && x->voff == 0 && !x->vlo;
}

bool cj_lw_value_is_bound(cj_lw *L, cj_value *v) {
  lw_val *x = val(L, v);
  return x && x->bound;
}

bool cj_lw_take_op(cj_lw *L, const cj_op *op) {
  if (L->ntaken == L->captaken) {
    uint32_t cap = L->captaken ? 2 * L->captaken : 16;
    const cj_op **t = realloc(L->taken, sizeof(cj_op *) * cap);
    if (!t) return false;
    L->taken = t;
    L->captaken = cap;
  }
  L->taken[L->ntaken++] = op;
  return true;
}

bool cj_lw_was_taken(cj_lw *L, const cj_op *op) {
  for (uint32_t i = 0; i < L->ntaken; i++)
    if (L->taken[i] == op) {
      L->taken[i] = L->taken[--L->ntaken];
      return true;
    }
  return false;
}

bool cj_lw_value_is_view(cj_lw *L, cj_value *v) {
  lw_val *x = val(L, v);
  return x && x->virt && !x->bound;
}

int64_t cj_lw_view_offset(cj_lw *L, cj_value *v) {
  lw_val *x = val(L, v);
  return x && x->virt && !x->bound ? x->voff : 0;
}

void cj_lw_virtual_view(cj_lw *L, cj_value *v, int32_t *src, cj_dtype *dt,
                        const int64_t **strides) {
  lw_val *x = val(L, v);
  *src = x->vsrc;
  *dt = x->vdt;
  *strides = x->vstrides;
}

cj_status cj_lw_make_virtual(cj_lw *L, cj_value *v, int32_t src, cj_dtype dt,
                             const int64_t *strides) {
  lw_val *x = val(L, v);
  if (!x) return cj_internal("value without a number");
  int32_t rank = v->type->rank;
  x->vstrides = cj_lw_alloc(L, sizeof(int64_t) * (size_t)(rank ? rank : 1));
  if (!x->vstrides) return cj_oom();
  memcpy(x->vstrides, strides, sizeof(int64_t) * (size_t)rank);
  x->virt = true;
  x->bound = false;
  x->vsrc = src;
  x->vdt = dt;
  x->voff = 0;
  x->vlo = x->vhi = NULL;
  x->vpad = -1;
  return NULL;
}

cj_status cj_lw_make_view(cj_lw *L, cj_value *v, int32_t src, cj_dtype dt, int64_t off,
                          const int64_t *strides) {
  CJ_RETURN_IF_ERROR(cj_lw_make_virtual(L, v, src, dt, strides));
  val(L, v)->voff = off;
  return NULL;
}

cj_status cj_lw_make_bounded_view(cj_lw *L, cj_value *v, int32_t src, cj_dtype dt, int64_t off,
                                  const int64_t *strides, const int64_t *lo, const int64_t *hi,
                                  int32_t pad) {
  CJ_RETURN_IF_ERROR(cj_lw_make_view(L, v, src, dt, off, strides));
  lw_val *x = val(L, v);
  size_t bytes = sizeof(int64_t) * (size_t)(v->type->rank ? v->type->rank : 1);
  x->vlo = cj_lw_alloc(L, bytes);
  x->vhi = cj_lw_alloc(L, bytes);
  if (!x->vlo || !x->vhi) return cj_oom();
  memcpy(x->vlo, lo, sizeof(int64_t) * (size_t)v->type->rank);
  memcpy(x->vhi, hi, sizeof(int64_t) * (size_t)v->type->rank);
  x->vpad = pad;
  return NULL;
}

bool cj_lw_view_bounds(cj_lw *L, cj_value *v, const int64_t **lo, const int64_t **hi,
                       int32_t *pad) {
  lw_val *x = val(L, v);
  if (!x || !x->virt || x->bound || !x->vlo) return false;
  *lo = x->vlo;
  *hi = x->vhi;
  *pad = x->vpad;
  return true;
}

uint32_t cj_lw_num_uses(cj_lw *L, cj_value *v) { return v->id < L->nvals ? L->nuses[v->id] : 0; }

bool cj_lw_only_ew_users(cj_lw *L, cj_value *v) {
  return v->id < L->nvals && !(L->non_ew_user[v->id] & NONEW_EW);
}

bool cj_lw_only_view_users(cj_lw *L, cj_value *v) {
  return v->id < L->nvals && !(L->non_ew_user[v->id] & NONEW_VIEW);
}

/* Materializes a virtual broadcast into a real buffer (a strided gather). */
static CJ_MUST_USE cj_status k_gather(cj_exec_ctx *ctx, const cj_step *st) {
  cj_strided_run_par(ctx, st->params, CJ_PTR(ctx, st->out[0]), CJ_PTR(ctx, st->in[0]));
  return NULL;
}

static CJ_MUST_USE cj_status materialize(cj_lw *L, const cj_op *op, cj_value *v) {
  lw_val *x = val(L, v);
  const cj_type *t = v->type;
  if (x->vlo) {
    int32_t out = cj_lw_new_buf(L, cj_lw_type_bytes(t), CJ_BK_ARENA);
    CJ_RETURN_IF_ERROR(cj_lw_emit_bounded(L, op, t, x->vsrc, x->voff, x->vstrides, x->vlo,
                                          x->vhi, x->vpad, out));
    return cj_lw_bind(L, v, 1, &out);
  }
  int esize = cj_dtype_bytes(x->vdt);
  cj_strided *s = cj_strided_new(L, t->rank, t->dims, x->vstrides, esize);
  if (!s) return cj_oom();
  s->soff = x->voff * esize;
  cj_strided_simplify(s);
  int32_t out = cj_lw_new_buf(L, cj_lw_type_bytes(t), CJ_BK_ARENA);
  int32_t in = x->vsrc;
  if (!cj_lw_emit(L, op, k_gather, s, 1, &in, 1, &out)) return cj_oom();
  return cj_lw_bind(L, v, 1, &out);
}

cj_status cj_lw_leaves(cj_lw *L, const cj_op *op, cj_value *v, int32_t *n, const int32_t **leaves) {
  lw_val *x = val(L, v);
  if (!x) return cj_op_error(op, CJ_INTERNAL, "operand without a number");
  if (x->virt && !x->bound) CJ_RETURN_IF_ERROR(materialize(L, op, v));
  if (!x->bound)
    return cj_op_error(op, CJ_INTERNAL, "operand %s has no buffer (used before defined?)",
                       v->name ? v->name : "");
  *n = x->nleaves;
  *leaves = x->leaves;
  return NULL;
}

static CJ_MUST_USE cj_status tensor_of(cj_lw *L, const cj_op *op, cj_value *v, bool storage,
                           cj_lw_tensor *out) {
  const cj_type *t = v->type;
  if (!t || (t->kind != CJ_TYPE_TENSOR && t->kind != CJ_TYPE_TOKEN))
    return cj_op_error(op, CJ_UNIMPLEMENTED, "expected a tensor value");
  if (t->kind == CJ_TYPE_TENSOR && !cj_type_is_static(t))
    return cj_op_error(op, CJ_UNIMPLEMENTED,
                       "dynamic shapes are not supported here (refine shapes first)");
  if (t->kind == CJ_TYPE_TENSOR && cj_type_is_quant(t) && !storage)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "quantized element types are not supported yet");
  int32_t n;
  const int32_t *leaves;
  CJ_RETURN_IF_ERROR(cj_lw_leaves(L, op, v, &n, &leaves));
  if (n != 1) return cj_op_error(op, CJ_INTERNAL, "expected one buffer");
  out->buf = leaves[0];
  out->type = t;
  if (t->kind == CJ_TYPE_TOKEN) {
    out->dtype = CJ_TOKEN;
    out->rank = 0;
    out->dims = NULL;
    out->nelems = 0;
    out->nbytes = 0;
    return NULL;
  }
  out->dtype = t->dtype;
  out->rank = t->rank;
  out->dims = t->dims;
  out->nelems = t->num_elements;
  out->nbytes = cj_lw_type_bytes(t);
  return NULL;
}

cj_status cj_lw_tensor_of(cj_lw *L, const cj_op *op, cj_value *v, cj_lw_tensor *out) {
  return tensor_of(L, op, v, false, out);
}

cj_status cj_lw_storage_tensor_of(cj_lw *L, const cj_op *op, cj_value *v, cj_lw_tensor *out) {
  return tensor_of(L, op, v, true, out);
}

cj_status cj_lw_operand(cj_lw *L, cj_op *op, uint32_t i, cj_lw_tensor *out) {
  if (i >= op->nopnds) return cj_op_error(op, CJ_INTERNAL, "operand %u missing", i);
  return cj_lw_tensor_of(L, op, op->operands[i], out);
}

cj_status cj_lw_result(cj_lw *L, cj_op *op, uint32_t i, cj_lw_tensor *out) {
  cj_value *v = &op->results[i];
  const cj_type *t = v->type;
  int64_t bytes = cj_lw_type_bytes(t);
  if (bytes < 0)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "result %u has a dynamic or unsupported type", i);
  if (t->kind == CJ_TYPE_TENSOR && cj_type_is_quant(t))
    return cj_op_error(op, CJ_UNIMPLEMENTED, "quantized element types are not supported yet");
  int32_t b = cj_lw_new_buf(L, bytes, CJ_BK_ARENA);
  CJ_RETURN_IF_ERROR(cj_lw_bind(L, v, 1, &b));
  return cj_lw_tensor_of(L, op, v, out);
}

cj_status cj_lw_alias(cj_lw *L, cj_op *op, uint32_t i, cj_value *src) {
  int32_t n;
  const int32_t *leaves;
  CJ_RETURN_IF_ERROR(cj_lw_leaves(L, op, src, &n, &leaves));
  return cj_lw_bind(L, &op->results[i], n, leaves);
}

/* ======================================================================== ops of lower.c */

cj_status cj_lower_tuple(cj_lw *L, cj_op *op) {
  int32_t total = 0;
  for (uint32_t i = 0; i < op->nopnds; i++) {
    int32_t n;
    const int32_t *lv;
    CJ_RETURN_IF_ERROR(cj_lw_leaves(L, op, op->operands[i], &n, &lv));
    total += n;
  }
  int32_t *all = cj_lw_alloc(L, sizeof(int32_t) * (size_t)(total ? total : 1));
  if (!all) return cj_oom();
  int32_t k = 0;
  for (uint32_t i = 0; i < op->nopnds; i++) {
    int32_t n;
    const int32_t *lv;
    CJ_RETURN_IF_ERROR(cj_lw_leaves(L, op, op->operands[i], &n, &lv));
    memcpy(all + k, lv, sizeof(int32_t) * (size_t)n);
    k += n;
  }
  return cj_lw_bind(L, &op->results[0], total, all);
}

cj_status cj_lower_get_tuple_element(cj_lw *L, cj_op *op) {
  int64_t index;
  if (!cj_op_get_i64(op, "index", &index)) return cj_op_error(op, CJ_INVALID_ARGUMENT, "no index");
  const cj_type *t = op->operands[0]->type;
  if (!t || t->kind != CJ_TYPE_TUPLE || index < 0 || index >= t->rank)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "index %lld out of range", (long long)index);
  int32_t n;
  const int32_t *lv;
  CJ_RETURN_IF_ERROR(cj_lw_leaves(L, op, op->operands[0], &n, &lv));
  int32_t first = 0;
  for (int64_t i = 0; i < index; i++) first += cj_lw_type_leaves(t->members[i]);
  int32_t cnt = cj_lw_type_leaves(t->members[index]);
  if (first + cnt > n) return cj_op_error(op, CJ_INTERNAL, "tuple leaves mismatch");
  return cj_lw_bind(L, &op->results[0], cnt, lv + first);
}

cj_status cj_lower_optimization_barrier(cj_lw *L, cj_op *op) {
  if (op->nresults != op->nopnds)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "operand and result counts differ");
  for (uint32_t i = 0; i < op->nopnds; i++)
    CJ_RETURN_IF_ERROR(cj_lw_alias(L, op, i, op->operands[i]));
  return NULL;
}

cj_status cj_lower_token(cj_lw *L, cj_op *op) {
  int32_t b = cj_lw_new_buf(L, 0, CJ_BK_NONE);
  return cj_lw_bind(L, &op->results[0], 1, &b);
}

typedef struct id_params {
  int which; /* 0 replica, 1 partition */
  int bytes;
} id_params;

static CJ_MUST_USE cj_status k_process_id(cj_exec_ctx *ctx, const cj_step *st) {
  const id_params *p = st->params;
  uint32_t v = (uint32_t)(p->which ? ctx->args->partition : ctx->args->replica);
  memcpy(CJ_PTR(ctx, st->out[0]), &v, 4);
  return NULL;
}

static CJ_MUST_USE cj_status lower_process_id(cj_lw *L, cj_op *op, int which) {
  cj_lw_tensor r;
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &r));
  if (r.nbytes != 4) return cj_op_error(op, CJ_INVALID_ARGUMENT, "expected a tensor<ui32> result");
  id_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  p->which = which;
  if (!cj_lw_emit(L, op, k_process_id, p, 0, NULL, 1, &r.buf)) return cj_oom();
  return NULL;
}
cj_status cj_lower_replica_id(cj_lw *L, cj_op *op) { return lower_process_id(L, op, 0); }
cj_status cj_lower_partition_id(cj_lw *L, cj_op *op) { return lower_process_id(L, op, 1); }

/* ======================================================================== blocks */

typedef struct lower_row {
  cj_op_kind kind;
  cj_status (*fn)(cj_lw *L, cj_op *op);
} lower_row;

static const lower_row lower_table[] = {
#define LOWER(id, fn) {CJ_OP_##id, fn},
#include "cpu/lower.def"
#undef LOWER
};

static cj_status (*lower_fn_for(cj_op_kind k))(cj_lw *, cj_op *) {
  for (size_t i = 0; i < sizeof lower_table / sizeof *lower_table; i++)
    if (lower_table[i].kind == k) return lower_table[i].fn;
  return NULL;
}

bool cj_cpu_can_lower(const cj_op *op, const char **why) {
  if (lower_fn_for(op->kind) || cj_lw_ew_is_fusible(op)) return true;
  if (why) *why = "the CPU backend has no kernel for this op yet";
  return false;
}

/* Ops that may stay virtual (no step) do not need the pending fusion group flushed, unless they
 * read a value of that group. */

static bool may_skip_flush(cj_lw *L, cj_op *op) {
  if (op->kind == CJ_OP_REDUCE) return true; /* cj_lower_reduce flushes, or takes the group */
  if (op->kind == CJ_OP_CONSTANT) /* a scalar (a reduce's init) is a constant buffer, no step */
    return op->nresults == 1 && (cj_lw_only_ew_users(L, &op->results[0]) ||
                                 (cj_type_is_static(op->results[0].type) &&
                                  op->results[0].type->num_elements <= 1));
  if (op->kind == CJ_OP_BROADCAST_IN_DIM || op->kind == CJ_OP_SLICE)
    return cj_lw_only_ew_users(L, &op->results[0]) && !cj_lw_ew_pending_value(L, op->operands[0]);
  if (op->kind == CJ_OP_PAD)
    return cj_lw_only_view_users(L, &op->results[0]) && !cj_lw_ew_pending_value(L, op->operands[0]) &&
           !cj_lw_ew_pending_value(L, op->operands[1]);
  return false;
}

/* A static slice whose users are all elementwise ops of its block stays virtual: a view (offset
 * and strides) of its operand's buffer, read by the fused loops instead of copied. Sets *done
 * when it did; otherwise the slice is lowered as a copy (cj_lower_slice). */
static CJ_MUST_USE cj_status slice_view(cj_lw *L, cj_op *op, bool *done) {
  *done = false;
  cj_value *v = &op->results[0], *x = op->operands[0];
  const cj_type *t = v->type, *xt = x->type;
  if (op->nresults != 1 || !cj_type_is_static(t) || !cj_type_is_static(xt) ||
      cj_type_is_quant(t) || cj_type_is_quant(xt) || t->num_elements <= 0 ||
      t->rank != xt->rank || t->rank > CJ_MAX_RANK || !cj_lw_only_ew_users(L, v))
    return NULL;
  int64_t start[CJ_MAX_RANK], stride[CJ_MAX_RANK], n1 = 0, n2 = 0;
  if (!cj_op_get_i64s(op, "start_indices", start, CJ_MAX_RANK, &n1) ||
      !cj_op_get_i64s(op, "strides", stride, CJ_MAX_RANK, &n2) || n1 != t->rank || n2 != t->rank)
    return NULL; /* cj_lower_slice reports it */
  for (int32_t d = 0; d < t->rank; d++)
    if (start[d] < 0 || stride[d] < 1 || start[d] + (t->dims[d] - 1) * stride[d] >= xt->dims[d])
      return NULL;
  int32_t src;
  cj_dtype dt = xt->dtype;
  int64_t xs[CJ_MAX_RANK], off = 0;
  if (cj_lw_value_is_view(L, x)) { /* a slice of a view: compose */
    const int64_t *vs;
    cj_lw_virtual_view(L, x, &src, &dt, &vs);
    memcpy(xs, vs, sizeof(int64_t) * (size_t)t->rank);
    off = cj_lw_view_offset(L, x);
  } else {
    int32_t n;
    const int32_t *leaves;
    CJ_RETURN_IF_ERROR(cj_lw_leaves(L, op, x, &n, &leaves));
    if (n != 1) return NULL;
    src = leaves[0];
    cj_row_strides(t->rank, xt->dims, xs);
  }
  int64_t strides[CJ_MAX_RANK];
  for (int32_t d = 0; d < t->rank; d++) {
    off += start[d] * xs[d];
    strides[d] = xs[d] * stride[d];
  }
  *done = true;
  const int64_t *blo, *bhi;
  int32_t pad;
  if (!cj_lw_view_bounds(L, x, &blo, &bhi, &pad)) return cj_lw_make_view(L, v, src, dt, off, strides);
  /* slice index i reads x's index start + i*stride: in x's bounds for lo <= i < hi */
  int64_t lo[CJ_MAX_RANK], hi[CJ_MAX_RANK];
  for (int32_t d = 0; d < t->rank; d++) {
    lo[d] = blo[d] <= start[d] ? 0 : (blo[d] - start[d] + stride[d] - 1) / stride[d];
    hi[d] = bhi[d] <= start[d] ? 0 : (bhi[d] - start[d] + stride[d] - 1) / stride[d];
    if (lo[d] > t->dims[d]) lo[d] = t->dims[d];
    if (hi[d] > t->dims[d]) hi[d] = t->dims[d];
  }
  bool inside = true; /* the slice reads no padding: a plain view */
  for (int32_t d = 0; d < t->rank; d++)
    if (lo[d] != 0 || hi[d] != t->dims[d]) inside = false;
  if (inside) return cj_lw_make_view(L, v, src, dt, off, strides);
  return cj_lw_make_bounded_view(L, v, src, dt, off, strides, lo, hi, pad);
}

cj_status cj_lw_block(cj_lw *L, cj_block *b, cj_op **out_terminator) {
  *out_terminator = NULL;
  for (cj_op *op = b->first; op; op = op->next) {
    if (L->oom) return cj_oom();
    if (L->ntaken && cj_lw_was_taken(L, op)) continue; /* lowered ahead (cj_lw_take_op) */
    const cj_op_info *info = cj_op_info_get(op->kind);
    if ((info->flags & CJ_OPF_TERMINATOR) && !op->next) {
      CJ_RETURN_IF_ERROR(cj_lw_ew_flush(L));
      *out_terminator = op;
      return NULL;
    }
    if (op->kind == CJ_OP_SELECT) { /* a gather may have been deferred to it */
      bool done;
      CJ_RETURN_IF_ERROR(cj_lw_gather_select(L, op, &done));
      if (done) continue;
    }
    if (cj_lw_ew_is_fusible(op)) {
      CJ_RETURN_IF_ERROR(cj_lw_ew_add(L, op));
      continue;
    }
    if (!may_skip_flush(L, op)) CJ_RETURN_IF_ERROR(cj_lw_ew_flush(L));
    if (op->kind == CJ_OP_SLICE || op->kind == CJ_OP_PAD) {
      bool done;
      CJ_RETURN_IF_ERROR(op->kind == CJ_OP_SLICE ? slice_view(L, op, &done)
                                                 : cj_lw_pad_view(L, op, &done));
      if (done) continue;
    }
    cj_status (*fn)(cj_lw *, cj_op *) = lower_fn_for(op->kind);
    if (!fn) {
      if (op->kind == CJ_OP_FUNC_CALL)
        return cj_op_error(op, CJ_INTERNAL, "calls should have been inlined");
      return cj_op_error(op, CJ_UNIMPLEMENTED, "the CPU backend has no kernel for this op yet");
    }
    CJ_RETURN_IF_ERROR(fn(L, op));
  }
  CJ_RETURN_IF_ERROR(cj_lw_ew_flush(L));
  return NULL;
}

/* ======================================================================== numbering and users */

typedef struct number_ctx {
  uint32_t n;
} number_ctx;

static void number_block(cj_block *b, uint32_t *n) {
  for (uint32_t i = 0; i < b->nargs; i++) b->args[i].id = (*n)++;
  for (cj_op *op = b->first; op; op = op->next) {
    for (uint32_t i = 0; i < op->nresults; i++) op->results[i].id = (*n)++;
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next) number_block(nb, n);
  }
}

static cj_block *value_block(cj_value *v) { return v->def ? v->def->block : v->block; }

/* Operand i of op may stay a virtual broadcast: elementwise ops, the inputs of a scatter
 * (whose initial copy reads the view) and the updates of a one-input scatter (read through the
 * view's strides; k_gather_scatter.c). */
static bool takes_virtual(const cj_op *op, bool ew, uint32_t i) {
  return ew || (op->kind == CJ_OP_SCATTER && op->nopnds % 2 == 1 &&
                (i < op->nopnds / 2 || (op->nopnds == 3 && i == 2)));
}

static uint8_t user_bits(const cj_op *op, bool ew, uint32_t i, bool same_block) {
  if (!same_block) return NONEW_EW | NONEW_VIEW;
  if (takes_virtual(op, ew, i)) return 0;
  return op->kind == CJ_OP_SLICE ? NONEW_EW : NONEW_EW | NONEW_VIEW;
}

static void users_block(cj_lw *L, cj_block *b) {
  for (cj_op *op = b->first; op; op = op->next) {
    bool ew = cj_lw_ew_is_fusible(op);
    for (uint32_t i = 0; i < op->nopnds; i++) {
      cj_value *v = op->operands[i];
      if (!v || v->id >= L->nvals) continue;
      L->nuses[v->id]++;
      L->non_ew_user[v->id] |= user_bits(op, ew, i, value_block(v) == b);
    }
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next) users_block(L, nb);
  }
}

cj_status cj_lw_adopt_block(cj_lw *L, cj_block *b) {
  uint32_t n = L->nvals;
  number_block(b, &n);
  if (n > L->nvals) {
    /* single-leaf values point into themselves (leaves = &one): re-point them after the move */
    uint8_t *self = calloc(L->nvals ? L->nvals : 1, 1);
    if (!self) return cj_oom();
    for (uint32_t i = 0; i < L->nvals; i++) self[i] = L->vals[i].leaves == &L->vals[i].one;
    lw_val *nv = realloc(L->vals, sizeof(lw_val) * n);
    if (nv) {
      L->vals = nv;
      for (uint32_t i = 0; i < L->nvals; i++)
        if (self[i]) L->vals[i].leaves = &L->vals[i].one;
    }
    free(self);
    uint8_t *ne = realloc(L->non_ew_user, n);
    if (ne) L->non_ew_user = ne;
    uint32_t *nu = realloc(L->nuses, sizeof(uint32_t) * n);
    if (nu) L->nuses = nu;
    if (!nv || !ne || !nu) return cj_oom();
    memset(L->vals + L->nvals, 0, sizeof(lw_val) * (n - L->nvals));
    memset(L->non_ew_user + L->nvals, 0, n - L->nvals);
    memset(L->nuses + L->nvals, 0, sizeof(uint32_t) * (n - L->nvals));
    uint32_t first = L->nvals;
    L->nvals = n;
    /* users of the new values only (older ones are counted already) */
    for (cj_op *op = b->first; op; op = op->next) {
      bool ew = cj_lw_ew_is_fusible(op);
      for (uint32_t i = 0; i < op->nopnds; i++) {
        cj_value *v = op->operands[i];
        if (!v || v->id < first || v->id >= L->nvals) continue;
        L->nuses[v->id]++;
        L->non_ew_user[v->id] |= user_bits(op, ew, i, value_block(v) == b);
      }
    }
  }
  return NULL;
}

/* ======================================================================== planning */

typedef struct fblock {
  int64_t off, size;
} fblock;

typedef struct freelist {
  fblock *b;
  uint32_t n, cap;
  int64_t top; /* arena high-water mark */
} freelist;

static bool fl_free(freelist *f, int64_t off, int64_t size) {
  if (size <= 0) return true;
  if (off + size == f->top) { /* give back to the top, then merge trailing free blocks */
    f->top = off;
    for (;;) {
      bool merged = false;
      for (uint32_t i = 0; i < f->n; i++)
        if (f->b[i].off + f->b[i].size == f->top) {
          f->top = f->b[i].off;
          f->b[i] = f->b[--f->n];
          merged = true;
          break;
        }
      if (!merged) break;
    }
    return true;
  }
  /* merge with neighbours */
  for (uint32_t i = 0; i < f->n; i++) {
    if (f->b[i].off + f->b[i].size == off) {
      off = f->b[i].off;
      size += f->b[i].size;
      f->b[i] = f->b[--f->n];
      i = (uint32_t)-1;
      continue;
    }
    if (off + size == f->b[i].off) {
      size += f->b[i].size;
      f->b[i] = f->b[--f->n];
      i = (uint32_t)-1;
      continue;
    }
  }
  if (f->n == f->cap) {
    uint32_t ncap = f->cap ? f->cap * 2 : 64;
    fblock *nb = realloc(f->b, sizeof(fblock) * ncap);
    if (!nb) return false;
    f->b = nb;
    f->cap = ncap;
  }
  f->b[f->n++] = (fblock){off, size};
  return true;
}

static int64_t fl_alloc(freelist *f, int64_t size, int64_t *peak) {
  int best = -1;
  for (uint32_t i = 0; i < f->n; i++)
    if (f->b[i].size >= size && (best < 0 || f->b[i].size < f->b[best].size)) best = (int)i;
  if (best >= 0) {
    int64_t off = f->b[best].off;
    if (f->b[best].size == size) {
      f->b[best] = f->b[--f->n];
    } else {
      f->b[best].off += size;
      f->b[best].size -= size;
    }
    return off;
  }
  int64_t off = f->top;
  f->top += size;
  if (f->top > *peak) *peak = f->top;
  return off;
}

static int cmp_def(const void *a, const void *b, void *ctx) {
  const cj_lw_buf *bufs = ctx;
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  if (bufs[x].def != bufs[y].def) return bufs[x].def < bufs[y].def ? -1 : 1;
  return x < y ? -1 : x > y;
}


/* Plans the arena buffers of group `group` (-1: the top level) at offsets relative to the
 * group's start; *out_bytes is the space they need. */
static CJ_MUST_USE cj_status plan_set(cj_lw *L, int32_t group, int64_t *out_bytes) {
  int32_t *order = malloc(sizeof(int32_t) * (size_t)(L->nbufs ? L->nbufs : 1));
  int32_t *active = malloc(sizeof(int32_t) * (size_t)(L->nbufs ? L->nbufs : 1));
  int64_t *blk = malloc(sizeof(int64_t) * (size_t)(L->nbufs ? L->nbufs : 1)); /* block size */
  if (!order || !active || !blk) {
    free(order);
    free(active);
    free(blk);
    return cj_oom();
  }
  int32_t n = 0, nact = 0;
  for (int32_t i = 0; i < L->nbufs; i++) {
    cj_lw_buf *b = &L->bufs[i];
    if (b->kind != CJ_BK_ARENA || b->merged >= 0 || b->group != group) continue;
    if (b->def < 0) b->def = b->last >= 0 ? b->last : 0;
    if (b->last < b->def) b->last = b->def;
    order[n++] = i;
  }
  /* by definition, ties by id */
  qsort_r(order, (size_t)n, sizeof(int32_t), cmp_def, L->bufs);
  freelist fl = {0};
  int64_t peak = 0;
  bool ok = true;
  for (int32_t k = 0; k < n && ok; k++) {
    int32_t id = order[k];
    cj_lw_buf *b = &L->bufs[id];
    /* expire */
    for (int32_t j = 0; j < nact;) {
      cj_lw_buf *a = &L->bufs[active[j]];
      if (a->last < b->def) {
        if (!a->taken) ok = ok && fl_free(&fl, a->off, blk[active[j]]);
        active[j] = active[--nact];
      } else {
        j++;
      }
    }
    int64_t need = (b->size + 63) & ~(int64_t)63;
    /* in place: a hinted input whose last use is this buffer's definition */
    int32_t take = -1;
    for (uint32_t h = 0; h < L->nhints && take < 0; h++) {
      if (resolve(L, L->hints[h].out) != id || L->hints[h].pos != b->def) continue;
      int32_t in = resolve(L, L->hints[h].in);
      cj_lw_buf *a = &L->bufs[in];
      if (a->kind != CJ_BK_ARENA || a->taken || a->last != b->def || blk[in] < need) continue;
      for (int32_t j = 0; j < nact; j++)
        if (active[j] == in) {
          take = in;
          break;
        }
    }
    if (take >= 0) {
      L->bufs[take].taken = true;
      b->off = L->bufs[take].off;
      blk[id] = blk[take];
    } else {
      b->off = fl_alloc(&fl, need, &peak);
      blk[id] = need;
    }
    active[nact++] = id;
  }
  free(fl.b);
  free(order);
  free(active);
  free(blk);
  if (!ok) return cj_oom();
  *out_bytes = peak;
  return NULL;
}

static bool group_within(const cj_lw *L, int32_t g, int32_t outer) {
  for (int guard = 0; g >= 0 && guard < 1000; guard++) {
    if (g == outer) return true;
    g = L->groups[g].parent;
  }
  return false;
}

/* Groups innermost first (a group is created after its parent): each packed on its own, its
 * copies held by a container buffer of the parent; then the top level; then offsets made
 * absolute outermost first. */
static CJ_MUST_USE cj_status plan_arena(cj_lw *L, int64_t *out_bytes) {
  for (int32_t g = L->ngroups - 1; g >= 0; g--) {
    lw_group *G = &L->groups[g];
    int64_t size = 0;
    CJ_RETURN_IF_ERROR(plan_set(L, g, &size));
    size = (size + 63) & ~(int64_t)63;
    /* copies: at most 1 MiB of them */
    if (G->copies > 1 && size * G->copies > (1 << 20)) G->copies = size ? (int32_t)((1 << 20) / size) : 1;
    if (G->copies < 1) G->copies = 1;
    int32_t first = -1, last = -1;
    for (int32_t i = 0; i < L->nbufs; i++) {
      cj_lw_buf *b = &L->bufs[i];
      if (b->kind != CJ_BK_ARENA || b->merged >= 0 || b->group != g) continue;
      if (first < 0 || b->def < first) first = b->def;
      if (b->last > last) last = b->last;
    }
    /* isolation: every arena buffer the group's slots name lies in the group */
    bool iso = true;
    for (uint32_t k = G->slot_begin; k < G->slot_end && iso; k++) {
      slot_list *sl = &L->slots[k];
      for (uint32_t j = 0; j < sl->n && iso; j++) {
        int32_t r = resolve(L, (int32_t)sl->s[j].buf);
        cj_lw_buf *b = &L->bufs[r];
        if (b->kind == CJ_BK_ARENA && !group_within(L, b->group, g)) iso = false;
      }
    }
    if (G->out) *G->out = (cj_lw_group){size, G->copies, iso};
    if (size == 0 || first < 0) continue;
    int32_t saved = L->cur_group;
    L->cur_group = G->parent;
    int32_t c = cj_lw_new_buf(L, size * G->copies, CJ_BK_ARENA);
    L->cur_group = saved;
    if (L->oom) return cj_oom();
    L->bufs[c].def = first;
    L->bufs[c].last = last;
    L->groups[g].container = c;
  }
  CJ_RETURN_IF_ERROR(plan_set(L, -1, out_bytes));
  for (int32_t g = 0; g < L->ngroups; g++) {
    int32_t c = L->groups[g].container;
    if (c < 0) continue;
    int64_t base = L->bufs[c].off;
    for (int32_t i = 0; i < L->nbufs; i++) {
      cj_lw_buf *b = &L->bufs[i];
      if (b->kind == CJ_BK_ARENA && b->merged < 0 && b->group == g) b->off += base;
    }
  }
  return NULL;
}

static void patch_slots(cj_lw *L, int32_t nargs) {
  for (uint32_t i = 0; i < L->nslots; i++) {
    slot_list *sl = &L->slots[i];
    for (uint32_t k = 0; k < sl->n; k++) {
      cj_slot *s = &sl->s[k];
      s->buf = (uint32_t)resolve(L, (int32_t)s->buf);
      cj_lw_buf *b = &L->bufs[s->buf];
      switch (b->kind) {
        case CJ_BK_ARENA: s->base = CJ_BASE_SCRATCH; s->off = b->off; break;
        case CJ_BK_CONST: s->base = CJ_BASE_CONST; s->off = b->off; break;
        case CJ_BK_ARG: s->base = (uint32_t)(CJ_BASE_ARG0 + b->index); s->off = 0; break;
        case CJ_BK_RESULT: s->base = (uint32_t)(CJ_BASE_ARG0 + nargs + b->index); s->off = 0; break;
        default: s->base = CJ_BASE_SCRATCH; s->off = 0; break;
      }
    }
  }
}

/* ======================================================================== entry */

static bool has_aliasing_output(cj_op *func, int32_t i) {
  const cj_attr *d = cj_func_arg_attrs(func, (uint32_t)i);
  if (!d) return false;
  for (int32_t k = 0; k < d->dict.n; k++)
    if (strcmp(d->dict.items[k].name, "tf.aliasing_output") == 0) return true;
  return false;
}

static CJ_MUST_USE cj_status shape_of(cj_lw *L, const cj_type *t, cj_shape *out, const char *what, int32_t i) {
  if (!t || (t->kind != CJ_TYPE_TENSOR && t->kind != CJ_TYPE_TOKEN))
    return cj_unimplemented("%s %d of the entry function must be a tensor", what, i);
  if (t->kind == CJ_TYPE_TOKEN) {
    out->dtype = CJ_TOKEN;
    out->rank = 0;
    out->dims = NULL;
    out->nbytes = 0;
    return NULL;
  }
  if (!cj_type_is_static(t))
    return cj_unimplemented("%s %d of the entry function has a dynamic shape", what, i);
  if (cj_type_is_quant(t))
    return cj_unimplemented("%s %d of the entry function has a quantized type", what, i);
  out->dtype = t->dtype;
  out->rank = t->rank;
  int64_t *d = cj_lw_alloc(L, sizeof(int64_t) * (size_t)(t->rank ? t->rank : 1));
  if (!d) return cj_oom();
  memcpy(d, t->dims, sizeof(int64_t) * (size_t)t->rank);
  out->dims = d;
  out->nbytes = (size_t)cj_lw_type_bytes(t);
  return NULL;
}

static void lw_free(cj_lw *L) {
  free(L->bufs);
  free(L->vals);
  free(L->non_ew_user);
  free(L->nuses);
  free(L->steps);
  free(L->slots);
  free(L->hints);
  free(L->cpool);
  free(L->groups);
  free(L->taken);
  cj_lw_ew_state_free(L->ew);
}

/* Results copied at the end from an argument or a constant (they are no computed value), in
 * result order: such a copy into a donated argument's storage would write over that argument
 * while a later copy still reads it (f(a, b) = (b, a) with both donated, or by size: (reshape(b),
 * reshape(a))). A result whose donor argument a later copied result reads gets fresh storage. */
static void drop_copy_hazards(cj_lw *L, cj_lower_result *out, const int32_t *res_leaf,
                              const int32_t *arg_buf) {
  for (int32_t j = 0; j < out->nresults; j++) {
    int32_t d = out->result_donor[j], b = res_leaf[j];
    if (d < 0 || L->bufs[b].kind == CJ_BK_ARENA || b == arg_buf[d]) continue;
    for (int32_t k = j + 1; k < out->nresults; k++)
      if (res_leaf[k] == arg_buf[d] && out->results[k].nbytes) out->result_donor[j] = -1;
  }
}

cj_status cj_cpu_lower(cj_module *m, cj_op *func, cj_arena *arena, cj_lower_result *out) {
  memset(out, 0, sizeof *out);
  cj_lw Ls;
  cj_lw *L = &Ls;
  memset(L, 0, sizeof *L);
  L->m = m;
  L->arena = arena;
  L->cur_group = -1;
  cj_block *body = cj_func_body(func);
  const cj_type *ft = cj_func_type(func);
  if (!body || !ft) return cj_op_error(func, CJ_INVALID_ARGUMENT, "the entry function has no body");
  uint32_t nv = 0;
  number_block(body, &nv);
  L->nvals = nv;
  L->vals = calloc(nv ? nv : 1, sizeof(lw_val));
  L->non_ew_user = calloc(nv ? nv : 1, 1);
  L->nuses = calloc(nv ? nv : 1, sizeof(uint32_t));
  L->ew = cj_lw_ew_state_new();
  if (!L->vals || !L->non_ew_user || !L->nuses || !L->ew) {
    lw_free(L);
    return cj_oom();
  }
  users_block(L, body);

  cj_status st = NULL;
  int32_t nargs = (int32_t)body->nargs, nres = ft->nresults;
  out->nargs = nargs;
  out->nresults = nres;
  out->args = cj_lw_alloc(L, sizeof(cj_shape) * (size_t)(nargs ? nargs : 1));
  out->results = cj_lw_alloc(L, sizeof(cj_shape) * (size_t)(nres ? nres : 1));
  out->result_donor = cj_lw_alloc(L, sizeof(int32_t) * (size_t)(nres ? nres : 1));
  int32_t *arg_buf = calloc((size_t)(nargs ? nargs : 1), sizeof(int32_t));
  if (!out->args || !out->results || !out->result_donor || !arg_buf) st = cj_oom();

  /* arguments */
  for (int32_t i = 0; !st && i < nargs; i++) {
    const cj_type *t = body->args[i].type;
    st = shape_of(L, t, &out->args[i], "argument", i);
    if (st) break;
    arg_buf[i] = cj_lw_new_buf(L, (int64_t)out->args[i].nbytes, CJ_BK_ARG);
    L->bufs[arg_buf[i]].kind = out->args[i].nbytes ? CJ_BK_ARG : CJ_BK_NONE;
    L->bufs[arg_buf[i]].index = i;
    L->bufs[arg_buf[i]].def = 0;
    st = cj_lw_bind(L, &body->args[i], 1, &arg_buf[i]);
  }
  for (int32_t j = 0; !st && j < nres; j++)
    st = shape_of(L, cj_type_fn_result(ft, j), &out->results[j], "result", j);
  if (!st) L->pos = 1;

  cj_op *term = NULL;
  if (!st) st = cj_lw_block(L, body, &term);
  if (!st && (!term || (int32_t)term->nopnds != nres))
    st = cj_op_error(func, CJ_INVALID_ARGUMENT, "the entry function's return does not match its type");

  /* results: write in place into the result buffers where possible, else copy */
  int32_t *res_leaf = NULL;
  if (!st) {
    res_leaf = calloc((size_t)(nres ? nres : 1), sizeof(int32_t));
    if (!res_leaf) st = cj_oom();
  }
  for (int32_t j = 0; !st && j < nres; j++) {
    int32_t n;
    const int32_t *lv;
    st = cj_lw_leaves(L, term, term->operands[j], &n, &lv);
    if (!st && n != 1) st = cj_op_error(term, CJ_UNIMPLEMENTED, "tuple results are not supported");
    if (!st) res_leaf[j] = lv[0];
  }
  if (!st) st = cj_func_result_donors(func, nargs, nres, out->result_donor);
  if (!st) drop_copy_hazards(L, out, res_leaf, arg_buf);
  (void)has_aliasing_output;
  /* first pass: results needing a copy from arguments/constants (these read arguments, so
   * they go before anything writes over a donated argument); second pass: a computed value
   * becomes its first result's buffer, and later results of the same value get copies */
  uint8_t *direct = NULL;
  if (!st) {
    direct = calloc((size_t)(nres ? nres : 1), 1);
    if (!direct) st = cj_oom();
  }
  for (int pass = 0; pass < 2 && !st; pass++) {
    for (int32_t j = 0; !st && j < nres; j++) {
      int32_t b = res_leaf[j];
      cj_lw_buf *bb = &L->bufs[b];
      if (out->results[j].nbytes == 0) {
        direct[j] = 1;
        continue;
      }
      bool dup = false;
      for (int32_t k = 0; k < j; k++)
        if (res_leaf[k] == b && direct[k] == 2) dup = true;
      bool arena_ok = bb->kind == CJ_BK_ARENA && !dup;
      if (pass == 0) {
        if (arena_ok) continue;
        int32_t rb = cj_lw_new_buf(L, bb->size, CJ_BK_RESULT);
        L->bufs[rb].kind = CJ_BK_RESULT;
        L->bufs[rb].index = j;
        st = cj_lw_emit_copies(L, term, 1, &b, &rb);
        direct[j] = 1;
      } else {
        if (direct[j]) continue;
        if (dup) {
          /* the value is returned more than once and an earlier result already took its
           * buffer: this result gets a copy (the buffer must keep that earlier index) */
          int32_t rb = cj_lw_new_buf(L, bb->size, CJ_BK_RESULT);
          L->bufs[rb].kind = CJ_BK_RESULT;
          L->bufs[rb].index = j;
          st = cj_lw_emit_copies(L, term, 1, &b, &rb);
          direct[j] = 1;
          continue;
        }
        int32_t d = out->result_donor[j];
        bool safe = true;
        if (d >= 0) {
          cj_lw_buf *ab = &L->bufs[arg_buf[d]];
          if (ab->last >= bb->def) {
            safe = false;
            if (ab->last == bb->def)
              for (uint32_t h = 0; h < L->nhints; h++)
                if (L->hints[h].out == b && L->hints[h].in == arg_buf[d] &&
                    L->hints[h].pos == bb->def)
                  safe = true;
          }
        }
        /* a buffer shared by aliasing with a region-carried value is still fine: it is ours */
        if (safe) {
          bb->kind = CJ_BK_RESULT;
          bb->index = j;
          direct[j] = 2;
        } else {
          int32_t rb = cj_lw_new_buf(L, bb->size, CJ_BK_RESULT);
          L->bufs[rb].kind = CJ_BK_RESULT;
          L->bufs[rb].index = j;
          st = cj_lw_emit_copies(L, term, 1, &b, &rb);
          direct[j] = 1;
        }
      }
    }
  }
  free(direct);
  free(res_leaf);
  free(arg_buf);

  if (!st) {
    cj_lw_saved dummy = {L->steps, L->nsteps, L->capsteps};
    (void)dummy;
    st = cj_lw_ew_flush(L);
  }
  if (!st && L->nsteps) {
    out->plan.steps = cj_arena_memdup(arena, L->steps, sizeof(cj_step) * L->nsteps);
    if (!out->plan.steps) st = cj_oom();
    out->plan.nsteps = L->nsteps;
  }
  if (!st && L->oom) st = cj_oom();
  int64_t arena_bytes = 0;
  if (!st) st = plan_arena(L, &arena_bytes);
  if (!st) {
    patch_slots(L, nargs);
    out->scratch_bytes = arena_bytes;
    out->tls_bytes = L->tls_bytes;
    out->flops = L->flops;
    out->transcendentals = L->transcendentals;
    out->bytes_accessed = L->bytes_accessed;
    out->const_bytes = L->cpool_size;
    if (L->cpool_size) {
      out->consts = aligned_alloc(64, (size_t)((L->cpool_size + 63) & ~(int64_t)63));
      if (!out->consts)
        st = cj_oom();
      else
        memcpy(out->consts, L->cpool, (size_t)L->cpool_size);
    }
  }
  lw_free(L);
  return st;
}
