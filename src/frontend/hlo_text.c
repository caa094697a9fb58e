/* cjrt: HLO text (`HloModule ...`, as XLA's HloModule::ToString and JAX's as_hlo_text() print
 * it) into the hlo_module record of hlo.h, which hlo_lower.c lowers like a proto.
 *
 *   HloModule NAME[, attributes]
 *   [ENTRY] COMPUTATION [(signature) -> shape] {
 *     [ROOT] NAME = SHAPE OPCODE(OPERANDS)[, ATTRIBUTE=VALUE]...
 *   }
 *
 * Instructions are one per line. Operands and called computations are read as names and turned
 * into ids once the whole module is read. Attributes the lowering does not use (metadata,
 * frontend_attributes, ...) are skipped; `sharding={...}` is kept as its text. Constants
 * printed elided (`{...}`) fail. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/dtype.h"
#include "frontend/hlo.h"

#define PUSH(h, arr, n, cap) cj_hlo_push((h), (void **)&(arr), &(n), &(cap), sizeof *(arr))

typedef struct tp {
  const char *p, *end, *start;
  const char *file;
  int line;
  hlo_module *h;
} tp;

static CJ_MUST_USE cj_status terr(const tp *t, const char *fmt, ...) CJ_PRINTF(2, 3);
static CJ_MUST_USE cj_status terr(const tp *t, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  int col = 1;
  for (const char *q = t->p; q > t->start && q[-1] != '\n'; q--) col++;
  return cj_invalid("%s:%d:%d: %s", t->file, t->line, col, msg);
}

/* skips blanks and C-style block comments (long tuple shapes are printed with index=5 comments) */
static void skip_ws(tp *t) {
  for (;;) {
    while (t->p < t->end && (*t->p == ' ' || *t->p == '\t' || *t->p == '\r')) t->p++;
    if (t->end - t->p >= 2 && t->p[0] == '/' && t->p[1] == '*') {
      const char *q = t->p + 2;
      while (q + 1 < t->end && !(q[0] == '*' && q[1] == '/') && *q != '\n') q++;
      if (q + 1 < t->end && q[0] == '*') {
        t->p = q + 2;
        continue;
      }
    }
    return;
  }
}

static bool eat(tp *t, char c) {
  skip_ws(t);
  if (t->p < t->end && *t->p == c) {
    t->p++;
    return true;
  }
  return false;
}

static bool peek(tp *t, char c) {
  skip_ws(t);
  return t->p < t->end && *t->p == c;
}

static bool name_char(char c) {
  return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-' || c == '%';
}

/* a name (without a leading '%'), copied into the arena */
static CJ_MUST_USE cj_status ident(tp *t, const char **out) {
  skip_ws(t);
  if (t->p < t->end && *t->p == '%') t->p++;
  const char *s = t->p;
  while (t->p < t->end && name_char(*t->p)) t->p++;
  if (t->p == s) return terr(t, "expected a name");
  *out = cj_arena_strndup(&t->h->arena, s, (size_t)(t->p - s));
  return *out ? NULL : cj_oom();
}

/* a decimal integer (the text is not NUL-terminated: no strtoll) */
static CJ_MUST_USE cj_status integer(tp *t, int64_t *out) {
  skip_ws(t);
  bool neg = false;
  if (t->p < t->end && (*t->p == '-' || *t->p == '+')) neg = *t->p++ == '-';
  if (t->p >= t->end || !isdigit((unsigned char)*t->p)) return terr(t, "expected an integer");
  uint64_t v = 0;
  while (t->p < t->end && isdigit((unsigned char)*t->p)) {
    if (v > (UINT64_MAX - 9) / 10) return terr(t, "an integer out of range");
    v = v * 10 + (uint64_t)(*t->p++ - '0');
  }
  if (v > (uint64_t)INT64_MAX + neg) return terr(t, "an integer out of range");
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  return NULL;
}

/* skips a balanced {...}, (...), [...] or "..." value, or a plain token up to ',' / ')' */
static CJ_MUST_USE cj_status skip_value(tp *t) {
  skip_ws(t);
  int depth = 0;
  while (t->p < t->end && *t->p != '\n') {
    char c = *t->p;
    if (c == '"') {
      t->p++;
      while (t->p < t->end && *t->p != '"' && *t->p != '\n') t->p += *t->p == '\\' ? 2 : 1;
      if (t->p >= t->end || *t->p != '"') return terr(t, "unterminated string");
      t->p++;
      continue;
    }
    if (c == '{' || c == '(' || c == '[') depth++;
    else if (c == '}' || c == ')' || c == ']') {
      if (!depth) break;
      depth--;
    } else if (c == ',' && !depth) break;
    t->p++;
  }
  return depth ? terr(t, "unbalanced brackets") : NULL;
}

/* ------------------------------------------------------------------ shapes */

static int32_t etype_of(const char *s, size_t n) {
  if (n == 5 && memcmp(s, "token", 5) == 0) return HLO_TOKEN;
  if (n == 6 && memcmp(s, "opaque", 6) == 0) return HLO_OPAQUE;
  for (int c = 1; c < CJ_DTYPE_LIMIT; c++) {
    const cj_dtype_info *di = cj_dtype_get((cj_dtype)c);
    if (!di->xla || strlen(di->id) != n) continue;
    size_t i = 0;
    while (i < n && tolower((unsigned char)di->id[i]) == s[i]) i++;
    if (i == n) return di->xla;
  }
  return -1;
}

static CJ_MUST_USE cj_status shape(tp *t, hlo_shape *s, int depth) {
  if (depth > 32) return terr(t, "shapes nested too deeply");
  skip_ws(t);
  if (eat(t, '(')) {
    s->etype = HLO_TUPLE;
    if (eat(t, ')')) return NULL;
    do {
      hlo_shape *m = PUSH(t->h, s->tuple, s->ntuple, s->cap);
      if (!m) return cj_oom();
      CJ_RETURN_IF_ERROR(shape(t, m, depth + 1));
    } while (eat(t, ','));
    return eat(t, ')') ? NULL : terr(t, "expected ')' after a tuple shape");
  }
  const char *b = t->p;
  while (t->p < t->end && isalnum((unsigned char)*t->p)) t->p++;
  int32_t et = etype_of(b, (size_t)(t->p - b));
  if (et < 0) return terr(t, "unknown element type '%.*s'", (int)(t->p - b), b);
  s->etype = et;
  if (!eat(t, '[')) return terr(t, "expected '[' in a shape");
  if (!eat(t, ']')) {
    do {
      int64_t d = 0, dyn = 0;
      skip_ws(t);
      if (t->p < t->end && *t->p == '?') {
        t->p++;
        dyn = 1;
      } else {
        if (t->end - t->p >= 2 && t->p[0] == '<' && t->p[1] == '=') {
          t->p += 2;
          dyn = 1;
        }
        CJ_RETURN_IF_ERROR(integer(t, &d));
      }
      if (!cj_hlo_push_i64(t->h, &s->dims, d) || !cj_hlo_push_i64(t->h, &s->dynamic, dyn))
        return cj_oom();
    } while (eat(t, ','));
    if (!eat(t, ']')) return terr(t, "expected ']' in a shape");
  }
  if (peek(t, '{')) { /* layout: minor_to_major, then tiling etc. we skip */
    t->p++;
    skip_ws(t);
    while (t->p < t->end && isdigit((unsigned char)*t->p)) {
      int64_t v;
      CJ_RETURN_IF_ERROR(integer(t, &v));
      if (!cj_hlo_push_i64(t->h, &s->minor_to_major, v)) return cj_oom();
      if (!eat(t, ',')) break;
      skip_ws(t);
    }
    int depth2 = 1;
    while (t->p < t->end && *t->p != '\n' && depth2) {
      if (*t->p == '{') depth2++;
      if (*t->p == '}') depth2--;
      t->p++;
    }
    if (depth2) return terr(t, "unterminated layout");
  }
  return NULL;
}

/* ------------------------------------------------------------------ attribute values */

/* one or more comma-separated integers, appended to a */
static CJ_MUST_USE cj_status int_seq(tp *t, hlo_i64s *a) {
  do {
    int64_t v;
    CJ_RETURN_IF_ERROR(integer(t, &v));
    if (!cj_hlo_push_i64(t->h, a, v)) return cj_oom();
  } while (eat(t, ','));
  return NULL;
}

static CJ_MUST_USE cj_status int_list(tp *t, hlo_i64s *a) {
  if (!eat(t, '{')) return terr(t, "expected '{'");
  if (eat(t, '}')) return NULL;
  CJ_RETURN_IF_ERROR(int_seq(t, a));
  return eat(t, '}') ? NULL : terr(t, "expected '}'");
}

static CJ_MUST_USE cj_status word(tp *t, const char **s, size_t *n) {
  skip_ws(t);
  *s = t->p;
  while (t->p < t->end && (isalnum((unsigned char)*t->p) || *t->p == '_' || *t->p == '.' ||
                           *t->p == '-' || *t->p == '+'))
    t->p++;
  *n = (size_t)(t->p - *s);
  return *n ? NULL : terr(t, "expected a value");
}

static bool word_is(const char *s, size_t n, const char *w) {
  return strlen(w) == n && strncmp(s, w, n) == 0;
}

static CJ_MUST_USE cj_status boolean(tp *t, bool *out) {
  const char *s;
  size_t n;
  CJ_RETURN_IF_ERROR(word(t, &s, &n));
  if (word_is(s, n, "true")) *out = true;
  else if (word_is(s, n, "false")) *out = false;
  else return terr(t, "expected true or false");
  return NULL;
}

/* "a_bxc_d[_i]x..." numbers separated by '_' within a dimension and 'x' between dimensions */
static CJ_MUST_USE cj_status dims_x(tp *t, hlo_i64s *parts, int per, int *ndims) {
  *ndims = 0;
  for (;;) {
    for (int k = 0; k < per; k++) {
      int64_t v;
      CJ_RETURN_IF_ERROR(integer(t, &v));
      if (!cj_hlo_push_i64(t->h, &parts[k], v)) return cj_oom();
      if (k + 1 < per) {
        if (t->p < t->end && *t->p == '_') t->p++;
        else if (per == 3 && k == 1) { /* interior padding omitted */
          if (!cj_hlo_push_i64(t->h, &parts[2], 0)) return cj_oom();
          break;
        } else return terr(t, "expected '_'");
      }
    }
    (*ndims)++;
    if (t->p < t->end && *t->p == 'x') t->p++;
    else return NULL;
  }
}

static CJ_MUST_USE cj_status window(tp *t, hlo_instr *in) {
  if (!eat(t, '{')) return terr(t, "expected '{' after window=");
  in->has_window = true;
  while (!eat(t, '}')) {
    const char *k;
    size_t kn;
    CJ_RETURN_IF_ERROR(word(t, &k, &kn));
    if (!eat(t, '=')) return terr(t, "expected '=' in a window");
    hlo_i64s parts[2] = {{0}, {0}};
    int nd, per = word_is(k, kn, "pad") ? 2 : 1;
    CJ_RETURN_IF_ERROR(dims_x(t, parts, per, &nd));
    if (!in->nwindow)
      for (int i = 0; i < nd; i++) {
        hlo_window_dim *w = PUSH(t->h, in->window, in->nwindow, in->wcap);
        if (!w) return cj_oom();
        w->stride = w->win_dil = w->base_dil = 1;
      }
    if (nd != in->nwindow) return terr(t, "window fields of different ranks");
    for (int i = 0; i < nd; i++) {
      hlo_window_dim *w = &in->window[i];
      int64_t v = parts[0].v[i];
      if (word_is(k, kn, "size")) w->size = v;
      else if (word_is(k, kn, "stride")) w->stride = v;
      else if (word_is(k, kn, "pad")) w->pad_lo = v, w->pad_hi = parts[1].v[i];
      else if (word_is(k, kn, "lhs_dilate")) w->base_dil = v;
      else if (word_is(k, kn, "rhs_dilate")) w->win_dil = v;
      else if (word_is(k, kn, "rhs_reversal")) w->reversal = v != 0;
      else return terr(t, "unknown window field '%.*s'", (int)kn, k);
    }
  }
  return NULL;
}

/* dim_labels=b01f_01io->b01f */
static CJ_MUST_USE cj_status dim_labels(tp *t, hlo_instr *in) {
  const char *s;
  size_t n;
  skip_ws(t);
  s = t->p;
  while (t->p < t->end && (isalnum((unsigned char)*t->p) || *t->p == '_' || *t->p == '-' ||
                           *t->p == '>' || *t->p == '?'))
    t->p++;
  n = (size_t)(t->p - s);
  const char *us = memchr(s, '_', n), *ar = NULL;
  for (size_t i = 0; i + 1 < n; i++)
    if (s[i] == '-' && s[i + 1] == '>') ar = s + i;
  if (!us || !ar || ar < us) return terr(t, "malformed dim_labels");
  const char *part[3] = {s, us + 1, ar + 2};
  size_t len[3] = {(size_t)(us - s), (size_t)(ar - us - 1), (size_t)(s + n - ar - 2)};
  hlo_i64s *sp[3] = {&in->in_spatial, &in->k_spatial, &in->out_spatial};
  for (int k = 0; k < 3; k++) {
    int64_t idx[16] = {0};
    int nsp = 0;
    if (len[k] > 16) return terr(t, "dim_labels of too high a rank");
    for (size_t i = 0; i < len[k]; i++) {
      char c = part[k][i];
      int64_t d = (int64_t)i;
      if (isdigit((unsigned char)c)) {
        int v = c - '0';
        if (v >= 16) return terr(t, "malformed dim_labels");
        idx[v] = d;
        if (v + 1 > nsp) nsp = v + 1;
      } else if (k == 1 && c == 'i') in->k_in_feature = d;
      else if (k == 1 && c == 'o') in->k_out_feature = d;
      else if (k != 1 && c == 'b') *(k ? &in->out_batch : &in->in_batch) = d;
      else if (k != 1 && c == 'f') *(k ? &in->out_feature : &in->in_feature) = d;
      else return terr(t, "unknown dim label '%c'", c);
    }
    for (int v = 0; v < nsp; v++)
      if (!cj_hlo_push_i64(t->h, sp[k], idx[v])) return cj_oom();
  }
  in->has_conv_dnums = true;
  return NULL;
}

/* {{0,1},{2,3}} or [G,S]<=[dims]T(perm) */
static CJ_MUST_USE cj_status groups(tp *t, hlo_instr *in) {
  in->has_groups = true;
  if (peek(t, '{')) {
    t->p++;
    if (eat(t, '}')) return NULL;
    do {
      hlo_i64s *g = PUSH(t->h, in->groups, in->ngroups, in->gcap);
      if (!g) return cj_oom();
      CJ_RETURN_IF_ERROR(int_list(t, g));
    } while (eat(t, ','));
    return eat(t, '}') ? NULL : terr(t, "expected '}' after replica groups");
  }
  hlo_i64s gs = {0}, dims = {0}, perm = {0};
  if (!eat(t, '[')) return terr(t, "expected replica groups");
  CJ_RETURN_IF_ERROR(int_seq(t, &gs));
  if (!eat(t, ']') || !eat(t, '<') || !eat(t, '=') || !eat(t, '['))
    return terr(t, "malformed iota replica groups");
  CJ_RETURN_IF_ERROR(int_seq(t, &dims));
  if (!eat(t, ']')) return terr(t, "malformed iota replica groups");
  if (peek(t, 'T')) {
    t->p++;
    if (!eat(t, '(')) return terr(t, "malformed iota replica groups");
    CJ_RETURN_IF_ERROR(int_seq(t, &perm));
    if (!eat(t, ')')) return terr(t, "malformed iota replica groups");
  }
  if (gs.n != 2 || dims.n < 1 || dims.n > 16 || (perm.n && perm.n != dims.n))
    return terr(t, "malformed iota replica groups");
  int64_t ng = gs.v[0], per = gs.v[1], prod = 1;
  for (int32_t i = 0; i < dims.n; i++) {
    if (dims.v[i] < 1 || prod > (1 << 20) / dims.v[i]) return terr(t, "bad iota replica groups");
    prod *= dims.v[i];
  }
  if (ng < 0 || per < 0 || ng * per != prod) return terr(t, "iota replica group sizes differ");
  if (!cj_hlo_iota_perm_ok(&perm)) return terr(t, "iota transpose is not a permutation");
  return cj_hlo_iota_groups(t->h, in, ng, per, &dims, &perm);
}

/* a string value "..." with C escapes, or a raw {...} value (backend_config of typed FFI) */
static CJ_MUST_USE cj_status str_value(tp *t, const char **out, size_t *len) {
  skip_ws(t);
  if (t->p < t->end && *t->p == '"') {
    t->p++;
    size_t cap = 16, n = 0;
    char *b = malloc(cap);
    if (!b) return cj_oom();
    while (t->p < t->end && *t->p != '"' && *t->p != '\n') {
      char c = *t->p++;
      if (c == '\\' && t->p < t->end) {
        char e = *t->p++;
        c = e == 'n' ? '\n' : e == 't' ? '\t' : e;
      }
      if (n + 1 >= cap) {
        char *nb = realloc(b, cap *= 2);
        if (!nb) {
          free(b);
          return cj_oom();
        }
        b = nb;
      }
      b[n++] = c;
    }
    if (t->p >= t->end || *t->p != '"') {
      free(b);
      return terr(t, "unterminated string");
    }
    t->p++;
    *out = cj_arena_strndup(&t->h->arena, b, n);
    free(b);
    *len = n;
    return *out ? NULL : cj_oom();
  }
  const char *s = t->p;
  CJ_RETURN_IF_ERROR(skip_value(t));
  *len = (size_t)(t->p - s);
  *out = cj_arena_strndup(&t->h->arena, s, *len);
  return *out ? NULL : cj_oom();
}

static CJ_MUST_USE cj_status push_name(tp *t, const char ***arr, int32_t *n, int32_t *cap, const char *s) {
  void *items = *arr;
  const char **slot = cj_hlo_push(t->h, &items, n, cap, sizeof(const char *));
  if (!slot) return cj_oom();
  *arr = items;
  *slot = s;
  return NULL;
}

static CJ_MUST_USE cj_status called(tp *t, hlo_instr *in) {
  const char *nm;
  if (peek(t, '{')) {
    t->p++;
    if (eat(t, '}')) return NULL;
    do {
      CJ_RETURN_IF_ERROR(ident(t, &nm));
      CJ_RETURN_IF_ERROR(push_name(t, &in->cnames, &in->ncnames, &in->cncap, nm));
    } while (eat(t, ','));
    return eat(t, '}') ? NULL : terr(t, "expected '}'");
  }
  CJ_RETURN_IF_ERROR(ident(t, &nm));
  return push_name(t, &in->cnames, &in->ncnames, &in->cncap, nm);
}

static int64_t enum_of(const char *s, size_t n, const char *const *names, int count, int64_t dflt) {
  for (int i = 0; i < count; i++)
    if (names[i] && strlen(names[i]) == n && strncasecmp(s, names[i], n) == 0) return i;
  return dflt;
}

/* The attributes that set one field of the instruction as written: an integer list, a bool or an
 * integer. */
typedef enum { PA_LIST, PA_BOOL, PA_INT } plain_kind;
static const struct plain_row {
  const char *name;
  plain_kind kind;
  size_t offset;
} kPlainAttrs[] = {
    {"dimensions", PA_LIST, offsetof(hlo_instr, dimensions)},
    {"index", PA_INT, offsetof(hlo_instr, tuple_index)},
    {"offset_dims", PA_LIST, offsetof(hlo_instr, offset_dims)},
    {"collapsed_slice_dims", PA_LIST, offsetof(hlo_instr, collapsed_slice_dims)},
    {"start_index_map", PA_LIST, offsetof(hlo_instr, start_index_map)},
    {"operand_batching_dims", PA_LIST, offsetof(hlo_instr, operand_batching_dims)},
    {"start_indices_batching_dims", PA_LIST, offsetof(hlo_instr, start_indices_batching_dims)},
    {"slice_sizes", PA_LIST, offsetof(hlo_instr, gather_slice_sizes)},
    {"update_window_dims", PA_LIST, offsetof(hlo_instr, update_window_dims)},
    {"inserted_window_dims", PA_LIST, offsetof(hlo_instr, inserted_window_dims)},
    {"scatter_dims_to_operand_dims", PA_LIST, offsetof(hlo_instr, scatter_dims_to_operand_dims)},
    {"input_batching_dims", PA_LIST, offsetof(hlo_instr, input_batching_dims)},
    {"scatter_indices_batching_dims", PA_LIST, offsetof(hlo_instr, scatter_indices_batching_dims)},
    {"dynamic_slice_sizes", PA_LIST, offsetof(hlo_instr, dynamic_slice_sizes)},
    {"fft_length", PA_LIST, offsetof(hlo_instr, fft_length)},
    {"indices_are_sorted", PA_BOOL, offsetof(hlo_instr, indices_are_sorted)},
    {"unique_indices", PA_BOOL, offsetof(hlo_instr, unique_indices)},
    {"is_stable", PA_BOOL, offsetof(hlo_instr, is_stable)},
    {"left_side", PA_BOOL, offsetof(hlo_instr, left_side)},
    {"lower", PA_BOOL, offsetof(hlo_instr, lower)},
    {"unit_diagonal", PA_BOOL, offsetof(hlo_instr, unit_diagonal)},
    {"largest", PA_BOOL, offsetof(hlo_instr, largest)},
    {"use_global_device_ids", PA_BOOL, offsetof(hlo_instr, use_global_device_ids)},
    {"custom_call_has_side_effect", PA_BOOL, offsetof(hlo_instr, custom_call_has_side_effect)},
    {"feature_group_count", PA_INT, offsetof(hlo_instr, feature_group_count)},
    {"batch_group_count", PA_INT, offsetof(hlo_instr, batch_group_count)},
    {"exponent_bits", PA_INT, offsetof(hlo_instr, exponent_bits)},
    {"mantissa_bits", PA_INT, offsetof(hlo_instr, mantissa_bits)},
    {"feature_index", PA_INT, offsetof(hlo_instr, feature_index)},
    {"channel_id", PA_INT, offsetof(hlo_instr, channel_id)},
    {"k", PA_INT, offsetof(hlo_instr, k)},
};

static CJ_MUST_USE cj_status plain_attr(tp *t, hlo_instr *in, const struct plain_row *row) {
  char *field = (char *)in + row->offset;
  switch (row->kind) {
    case PA_LIST: return int_list(t, (hlo_i64s *)field);
    case PA_BOOL: return boolean(t, (bool *)field);
    case PA_INT: return integer(t, (int64_t *)field);
  }
  return NULL;
}

static CJ_MUST_USE cj_status attribute(tp *t, hlo_instr *in, const char **cond, const char **body,
                           const char **tcomp, const char **fcomp, const char **sel,
                           const char **scat) {
  const char *k;
  size_t kn;
  CJ_RETURN_IF_ERROR(word(t, &k, &kn));
  if (!eat(t, '=')) return terr(t, "expected '=' after attribute %.*s", (int)kn, k);
  const char *s;
  size_t n;
#define IS(w) word_is(k, kn, w)
  for (size_t i = 0; i < sizeof kPlainAttrs / sizeof *kPlainAttrs; i++)
    if (IS(kPlainAttrs[i].name)) return plain_attr(t, in, &kPlainAttrs[i]);
  if (IS("iota_dimension")) {
    int64_t v;
    CJ_RETURN_IF_ERROR(integer(t, &v));
    return cj_hlo_push_i64(t->h, &in->dimensions, v) ? NULL : cj_oom();
  }
  if (IS("direction")) {
    CJ_RETURN_IF_ERROR(word(t, &s, &n));
    in->comparison_direction = cj_arena_strndup(&t->h->arena, s, n);
    return in->comparison_direction ? NULL : cj_oom();
  }
  if (IS("type") || IS("order")) {
    CJ_RETURN_IF_ERROR(word(t, &s, &n));
    if (word_is(s, n, "TOTAL")) s = "TOTALORDER", n = 10;
    else if (word_is(s, n, "PARTIAL")) return NULL;
    in->comparison_type = cj_arena_strndup(&t->h->arena, s, n);
    return in->comparison_type ? NULL : cj_oom();
  }
  if (IS("to_apply") || IS("calls") || IS("branch_computations")) return called(t, in);
  if (IS("condition")) return ident(t, cond);
  if (IS("body")) return ident(t, body);
  if (IS("true_computation")) return ident(t, tcomp);
  if (IS("false_computation")) return ident(t, fcomp);
  if (IS("select")) return ident(t, sel);
  if (IS("scatter")) return ident(t, scat);
  if (IS("slice")) {
    if (!eat(t, '{')) return terr(t, "expected '{' after slice=");
    if (eat(t, '}')) return NULL;
    do {
      int64_t a, b, c = 1;
      if (!eat(t, '[')) return terr(t, "expected '['");
      CJ_RETURN_IF_ERROR(integer(t, &a));
      if (!eat(t, ':')) return terr(t, "expected ':'");
      CJ_RETURN_IF_ERROR(integer(t, &b));
      if (eat(t, ':')) CJ_RETURN_IF_ERROR(integer(t, &c));
      if (!eat(t, ']')) return terr(t, "expected ']'");
      if (!cj_hlo_push_i64(t->h, &in->slice_start, a) || !cj_hlo_push_i64(t->h, &in->slice_limit, b) ||
          !cj_hlo_push_i64(t->h, &in->slice_stride, c))
        return cj_oom();
    } while (eat(t, ','));
    return eat(t, '}') ? NULL : terr(t, "expected '}'");
  }
  if (IS("window")) return window(t, in);
  if (IS("dim_labels")) return dim_labels(t, in);
  if (IS("padding")) {
    hlo_i64s parts[3] = {{0}, {0}, {0}};
    int nd;
    CJ_RETURN_IF_ERROR(dims_x(t, parts, 3, &nd));
    in->pad_lo = parts[0];
    in->pad_hi = parts[1];
    in->pad_interior = parts[2];
    in->has_padding = true;
    return NULL;
  }
  if (IS("lhs_contracting_dims")) return in->has_dot_dnums = true, int_list(t, &in->lhs_contracting);
  if (IS("rhs_contracting_dims")) return in->has_dot_dnums = true, int_list(t, &in->rhs_contracting);
  if (IS("lhs_batch_dims")) return in->has_dot_dnums = true, int_list(t, &in->lhs_batch);
  if (IS("rhs_batch_dims")) return in->has_dot_dnums = true, int_list(t, &in->rhs_batch);
  if (IS("index_vector_dim")) {
    CJ_RETURN_IF_ERROR(integer(t, &in->index_vector_dim));
    in->scatter_index_vector_dim = in->index_vector_dim;
    return NULL;
  }
  if (IS("epsilon")) {
    CJ_RETURN_IF_ERROR(word(t, &s, &n));
    char buf[64];
    if (n >= sizeof buf) return terr(t, "an epsilon too long");
    memcpy(buf, s, n);
    buf[n] = 0;
    in->epsilon = strtof(buf, NULL);
    return NULL;
  }
  if (IS("replica_groups")) return groups(t, in);
  if (IS("source_target_pairs")) {
    hlo_instr tmp = {0};
    CJ_RETURN_IF_ERROR(groups(t, &tmp));
    for (int32_t i = 0; i < tmp.ngroups; i++) {
      if (tmp.groups[i].n != 2) return terr(t, "a source-target pair of %d ids", tmp.groups[i].n);
      if (!cj_hlo_push_i64(t->h, &in->source_target, tmp.groups[i].v[0]) ||
          !cj_hlo_push_i64(t->h, &in->source_target, tmp.groups[i].v[1]))
        return cj_oom();
    }
    return NULL;
  }
  if (IS("operand_layout_constraints")) { /* {f32[3,3]{0,1}, ...} */
    if (!eat(t, '{')) return terr(t, "expected '{' after operand_layout_constraints=");
    if (eat(t, '}')) return NULL;
    do {
      hlo_shape *o = PUSH(t->h, in->operand_layouts, in->noperand_layouts, in->olcap);
      if (!o) return cj_oom();
      CJ_RETURN_IF_ERROR(shape(t, o, 0));
    } while (eat(t, ','));
    return eat(t, '}') ? NULL : terr(t, "expected '}' after operand_layout_constraints");
  }
  if (IS("sharding")) return str_value(t, &in->sharding, &n);
  if (IS("custom_call_target")) return str_value(t, &in->custom_call_target, &n);
  if (IS("backend_config")) return str_value(t, &in->backend_config, &in->backend_config_len);
  if (IS("api_version")) {
    static const char *const v[] = {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
                                    "API_VERSION_STATUS_RETURNING",
                                    "API_VERSION_STATUS_RETURNING_UNIFIED",
                                    "API_VERSION_TYPED_FFI"};
    CJ_RETURN_IF_ERROR(word(t, &s, &n));
    in->api_version = enum_of(s, n, v, 5, 0);
    return NULL;
  }
  if (IS("fft_type")) {
    static const char *const v[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
    CJ_RETURN_IF_ERROR(word(t, &s, &n));
    in->fft_type = enum_of(s, n, v, 4, -1);
    return NULL;
  }
  if (IS("transpose_a")) {
    static const char *const v[] = {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
    CJ_RETURN_IF_ERROR(word(t, &s, &n));
    in->transpose_a = enum_of(s, n, v, 4, 0);
    return NULL;
  }
  if (IS("algorithm")) {
    static const char *const v[] = {"rng_default", "rng_three_fry", "rng_philox"};
    CJ_RETURN_IF_ERROR(word(t, &s, &n));
    in->rng_algorithm = enum_of(s, n, v, 3, -1);
    return NULL;
  }
  if (IS("distribution")) {
    static const char *const v[] = {"rng_invalid", "rng_uniform", "rng_normal"};
    CJ_RETURN_IF_ERROR(word(t, &s, &n));
    in->distribution = enum_of(s, n, v, 3, 0);
    return NULL;
  }
  if (IS("operand_precision")) {
    static const char *const v[] = {"default", "high", "highest"};
    if (!eat(t, '{')) return terr(t, "expected '{'");
    if (eat(t, '}')) return NULL;
    do {
      CJ_RETURN_IF_ERROR(word(t, &s, &n));
      if (!cj_hlo_push_i64(t->h, &in->precision, enum_of(s, n, v, 3, 0))) return cj_oom();
    } while (eat(t, ','));
    return eat(t, '}') ? NULL : terr(t, "expected '}'");
  }
#undef IS
  return skip_value(t); /* metadata, frontend_attributes, kind, ... */
}

/* ------------------------------------------------------------------ constants */

static CJ_MUST_USE cj_status literal(tp *t, hlo_instr *in) {
  hlo_literal *l = CJ_ARENA_NEW(&t->h->arena, hlo_literal);
  if (!l) return cj_oom();
  l->shape = in->shape;
  in->literal = l;
  cj_dtype dt = cj_dtype_from_xla(in->shape.etype);
  if (dt == CJ_INVALID || in->shape.etype == HLO_TUPLE)
    return terr(t, "constants of this shape are not supported");
  int64_t n = 1;
  for (int32_t i = 0; i < in->shape.dims.n; i++) {
    int64_t d = in->shape.dims.v[i];
    if (d < 0 || (d && n > (INT64_MAX / 16) / d)) return terr(t, "a constant too large");
    n *= d;
  }
  int parts = cj_dtype_is_complex(dt) ? 2 : 1;
  size_t es = (size_t)cj_dtype_bytes(dt), cs = es / (size_t)parts;
  cj_dtype comp = cj_dtype_component(dt);
  if ((uint64_t)n > (uint64_t)(t->end - t->p) + 1) return terr(t, "a constant with too few values");
  uint8_t *data = cj_arena_alloc(&t->h->arena, (size_t)n * es + 1);
  if (!data) return cj_oom();
  int64_t got = 0;
  int depth = 0;
  for (;;) {
    skip_ws(t);
    if (t->p >= t->end || *t->p == '\n') return terr(t, "unterminated constant");
    char c = *t->p;
    if (c == '(' || c == '{') {
      if (t->end - t->p >= 5 && memcmp(t->p, "{...}", 5) == 0)
        return terr(t, "the constant's value was elided when the text was printed");
      depth++;
      t->p++;
      continue;
    }
    if (c == ')' || c == '}') {
      if (!depth) break;
      depth--;
      t->p++;
      continue;
    }
    if (c == ',') {
      t->p++;
      continue;
    }
    const char *s;
    size_t wn;
    CJ_RETURN_IF_ERROR(word(t, &s, &wn));
    if (got >= n * parts) return terr(t, "a constant with more values than its shape holds");
    uint8_t *dst = data + (size_t)got * cs;
    char buf[64];
    if (wn >= sizeof buf) return terr(t, "a constant value too long");
    memcpy(buf, s, wn);
    buf[wn] = 0;
    cj_dtype_kind k = cj_dtype_kindof(comp);
    uint64_t bits;
    if (k == CJ_DK_BOOL) {
      bits = strcmp(buf, "true") == 0 || strcmp(buf, "1") == 0;
    } else if (k == CJ_DK_FLOAT) {
      double v = strtod(buf, NULL);
      if (strcmp(buf, "nan") == 0 || strcmp(buf, "-nan") == 0) v = NAN;
      bits = cj_float_encode(comp, v);
    } else if (k == CJ_DK_UINT) {
      bits = strtoull(buf, NULL, 10);
    } else {
      bits = (uint64_t)strtoll(buf, NULL, 10);
    }
    if (comp == CJ_F32) {
      float f = (float)strtod(buf, NULL);
      if (strcmp(buf, "nan") == 0 || strcmp(buf, "-nan") == 0) f = NAN;
      memcpy(dst, &f, 4);
    } else if (comp == CJ_F64) {
      double d = strtod(buf, NULL);
      if (strcmp(buf, "nan") == 0 || strcmp(buf, "-nan") == 0) d = NAN;
      memcpy(dst, &d, 8);
    } else {
      if (cj_dtype_bits(comp) < 8) bits &= (1u << cj_dtype_bits(comp)) - 1;
      if (cj_dtype_bits(comp) < 8 && k == CJ_DK_SINT && (bits >> (cj_dtype_bits(comp) - 1) & 1))
        bits |= 0xffu << cj_dtype_bits(comp);
      memcpy(dst, &bits, cs); /* little-endian host */
    }
    got++;
  }
  if (got != n * parts)
    return terr(t, "a constant of %lld values for %lld elements", (long long)got / parts,
                (long long)n);
  l->data = data;
  l->nbytes = (size_t)n * es;
  return NULL;
}

/* ------------------------------------------------------------------ instructions */

static CJ_MUST_USE cj_status instruction(tp *t, hlo_comp *c, int64_t *next_id, const char **root) {
  hlo_instr *in = PUSH(t->h, c->instrs, c->n, c->cap);
  if (!in) return cj_oom();
  in->feature_group_count = in->batch_group_count = 1;
  in->id = (*next_id)++;
  skip_ws(t);
  bool is_root = false;
  if (t->end - t->p > 5 && memcmp(t->p, "ROOT ", 5) == 0) {
    t->p += 5;
    is_root = true;
  }
  CJ_RETURN_IF_ERROR(ident(t, &in->name));
  if (is_root) *root = in->name;
  if (!eat(t, '=')) return terr(t, "expected '=' after %s", in->name);
  CJ_RETURN_IF_ERROR(shape(t, &in->shape, 0));
  skip_ws(t);
  const char *op = t->p;
  while (t->p < t->end && (isalnum((unsigned char)*t->p) || *t->p == '-' || *t->p == '_')) t->p++;
  if (t->p == op) return terr(t, "expected an opcode");
  in->opcode = cj_arena_strndup(&t->h->arena, op, (size_t)(t->p - op));
  if (!in->opcode) return cj_oom();
  if (!eat(t, '(')) return terr(t, "expected '(' after the opcode");
  if (strcmp(in->opcode, "constant") == 0) {
    CJ_RETURN_IF_ERROR(literal(t, in));
  } else if (strcmp(in->opcode, "parameter") == 0) {
    CJ_RETURN_IF_ERROR(integer(t, &in->parameter_number));
  } else if (!peek(t, ')')) {
    do {
      skip_ws(t);
      /* operands may be written with their shapes: `f32[2] %x` */
      const char *save = t->p;
      hlo_shape dummy = {0};
      cj_status st = shape(t, &dummy, 0);
      if (st || !(t->p < t->end && (*t->p == ' ' || *t->p == '%'))) {
        cj_status_ignore(st); /* not a shape here: backtrack */
        t->p = save;
      }
      const char *nm;
      CJ_RETURN_IF_ERROR(ident(t, &nm));
      CJ_RETURN_IF_ERROR(push_name(t, &in->onames, &in->nonames, &in->oncap, nm));
    } while (eat(t, ','));
  }
  if (!eat(t, ')')) return terr(t, "expected ')' after the operands");
  const char *cond = NULL, *body = NULL, *tc = NULL, *fc = NULL, *sel = NULL, *scat = NULL;
  while (eat(t, ',')) CJ_RETURN_IF_ERROR(attribute(t, in, &cond, &body, &tc, &fc, &sel, &scat));
  /* called computations in the proto's order */
  if (body) CJ_RETURN_IF_ERROR(push_name(t, &in->cnames, &in->ncnames, &in->cncap, body));
  if (cond) CJ_RETURN_IF_ERROR(push_name(t, &in->cnames, &in->ncnames, &in->cncap, cond));
  if (tc) CJ_RETURN_IF_ERROR(push_name(t, &in->cnames, &in->ncnames, &in->cncap, tc));
  if (fc) CJ_RETURN_IF_ERROR(push_name(t, &in->cnames, &in->ncnames, &in->cncap, fc));
  if (sel) CJ_RETURN_IF_ERROR(push_name(t, &in->cnames, &in->ncnames, &in->cncap, sel));
  if (scat) CJ_RETURN_IF_ERROR(push_name(t, &in->cnames, &in->ncnames, &in->cncap, scat));
  skip_ws(t);
  if (t->p < t->end && *t->p != '\n') return terr(t, "unexpected text after the instruction");
  return NULL;
}

static void next_line(tp *t) {
  while (t->p < t->end && *t->p != '\n') t->p++;
  if (t->p < t->end) {
    t->p++;
    t->line++;
  }
}

static bool blank_or_comment(tp *t) {
  skip_ws(t);
  return t->p >= t->end || *t->p == '\n' || (t->end - t->p >= 2 && t->p[0] == '/' && t->p[1] == '/');
}

static int find_name(const hlo_comp *c, const char *name) {
  for (int32_t i = 0; i < c->n; i++)
    if (strcmp(c->instrs[i].name, name) == 0) return i;
  return -1;
}

static CJ_MUST_USE cj_status resolve(hlo_module *h, const char *file) {
  for (int32_t ci = 0; ci < h->n; ci++) {
    hlo_comp *c = &h->comps[ci];
    for (int32_t i = 0; i < c->n; i++) {
      hlo_instr *in = &c->instrs[i];
      for (int32_t k = 0; k < in->nonames; k++) {
        int j = find_name(c, in->onames[k]);
        if (j < 0)
          return cj_invalid("%s: instruction %s in computation %s uses %s, which it does not define",
                            file, in->name, c->name, in->onames[k]);
        if (!cj_hlo_push_i64(h, &in->operand_ids, c->instrs[j].id)) return cj_oom();
      }
      for (int32_t k = 0; k < in->ncnames; k++) {
        int32_t j = 0;
        while (j < h->n && strcmp(h->comps[j].name, in->cnames[k]) != 0) j++;
        if (j == h->n)
          return cj_invalid("%s: instruction %s calls %s, which is not a computation of the module",
                            file, in->name, in->cnames[k]);
        if (!cj_hlo_push_i64(h, &in->called_ids, h->comps[j].id)) return cj_oom();
      }
    }
  }
  return NULL;
}

static CJ_MUST_USE cj_status module_text(tp *t, hlo_module *h) {
  while (t->p < t->end && blank_or_comment(t)) next_line(t);
  skip_ws(t);
  if (t->end - t->p < 9 || memcmp(t->p, "HloModule", 9) != 0)
    return terr(t, "expected `HloModule NAME`");
  t->p += 9;
  CJ_RETURN_IF_ERROR(ident(t, &h->name));
  next_line(t);
  int64_t next_id = 1;
  while (t->p < t->end) {
    if (blank_or_comment(t)) {
      next_line(t);
      continue;
    }
    bool entry = false;
    if (t->end - t->p > 6 && memcmp(t->p, "ENTRY ", 6) == 0) {
      t->p += 6;
      entry = true;
    }
    hlo_comp *c = PUSH(h, h->comps, h->n, h->cap);
    if (!c) return cj_oom();
    c->id = next_id++;
    CJ_RETURN_IF_ERROR(ident(t, &c->name));
    if (entry) {
      h->entry_id = c->id;
      h->has_entry_id = true;
    }
    /* an optional signature (whose layouts hold braces), then '{' ending the line */
    const char *eol = t->p;
    while (eol < t->end && *eol != '\n') eol++;
    const char *last = eol;
    while (last > t->p && (last[-1] == ' ' || last[-1] == '\t' || last[-1] == '\r')) last--;
    if (last == t->p || last[-1] != '{') return terr(t, "expected '{' after computation %s", c->name);
    t->p = last;
    next_line(t);
    const char *root = NULL;
    for (;;) {
      if (t->p >= t->end) return terr(t, "computation %s is not closed with '}'", c->name);
      if (blank_or_comment(t)) {
        next_line(t);
        continue;
      }
      if (eat(t, '}')) {
        next_line(t);
        break;
      }
      CJ_RETURN_IF_ERROR(instruction(t, c, &next_id, &root));
      next_line(t);
    }
    if (!c->n) return terr(t, "computation %s has no instructions", c->name);
    const hlo_instr *r = &c->instrs[c->n - 1];
    if (root) {
      int j = find_name(c, root);
      r = &c->instrs[j];
    }
    c->root_id = r->id;
    c->has_root = true;
  }
  if (!h->n) return terr(t, "the module has no computations");
  return resolve(h, t->file);
}

cj_status cj_hlo_read_text(const char *text, size_t len, const char *filename, hlo_module **out) {
  *out = NULL;
  if (!text && len) return cj_invalid("hlo text: text is NULL");
  hlo_module *h = cj_hlo_module_new();
  if (!h) return cj_oom();
  tp t = {text, text + len, text, filename ? filename : "hlo", 1, h};
  cj_status st = module_text(&t, h);
  if (st) {
    cj_hlo_module_free(h);
    return st;
  }
  *out = h;
  return NULL;
}
