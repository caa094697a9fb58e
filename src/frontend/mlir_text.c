/* cjrt: the textual MLIR front end (pretty and generic forms) into the IR of src/ir/ir.h.
 *
 * A hand-written recursive-descent parser over a small lexer. It reads the whole MLIR syntax that
 * StableHLO programs use: modules, func.func, every op of ops.def in its pretty (custom) form and
 * in the generic form, types, attributes (dense literals are decoded straight into their typed
 * little-endian bytes), locations (inline, `#loc` aliases defined at the end of the file), and
 * `// -----` splits. Anything we do not know is carried: unknown ops by name (generic form, and a
 * few foreign pretty forms), unknown dialect attributes and types as their text.
 *
 * Errors: the first failure stops the parse and is reported as "file:line:col: what". Nothing
 * leaks on error: the module (arena) and the parser's scratch memory are released.
 *
 * Memory: scratch lists live in a chunked stack (`tmp`), released by mark; everything kept lives
 * in the module's arena.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/decimal.h"
#include "frontend/frontend.h"

/* ======================================================================== scratch memory */

typedef struct tchunk {
  struct tchunk *prev;
  size_t cap, used;
  _Alignas(16) unsigned char data[];
} tchunk;

typedef struct tmark {
  tchunk *chunk;
  size_t used;
} tmark;

/* ======================================================================== tokens */

typedef enum tok_kind {
  TK_EOF,
  TK_BARE,    /* identifier / keyword (letters, digits, _ $ .) */
  TK_PERCENT, /* %name or %name#N */
  TK_CARET,   /* ^bb0 */
  TK_AT,      /* @name or @"name" */
  TK_HASH,    /* #name */
  TK_BANG,    /* !name */
  TK_INT,     /* 123, 0x1F */
  TK_FLOAT,   /* 1.5, 1.0e-3 */
  TK_STRING,  /* "..." (token includes the quotes) */
  TK_LPAREN,
  TK_RPAREN,
  TK_LSQ,
  TK_RSQ,
  TK_LBRACE,
  TK_RBRACE,
  TK_LT,
  TK_GT,
  TK_COMMA,
  TK_EQ,
  TK_COLON,
  TK_QUESTION,
  TK_STAR,
  TK_PLUS,
  TK_MINUS,
  TK_ARROW,
  TK_ELLIPSIS,
  TK_META_BEGIN, /* {-# */
  TK_META_END,   /* #-} */
  TK_VBAR,
} tok_kind;

typedef struct token {
  tok_kind k;
  const char *s;  /* start in the source */
  size_t n;       /* length */
  int line;       /* 1-based line */
  const char *ls; /* start of that line */
} token;

/* ======================================================================== SSA names */

typedef struct binding {
  struct binding *next; /* next in the hash bucket */
  const char *name;     /* points into the source (not NUL-terminated) */
  uint32_t len, hash;
  uint32_t count; /* values in the group (a result pack) */
  int iso;        /* isolation depth it was defined in */
  cj_value *v;    /* first value of the group */
} binding;

typedef struct fwdref {
  const char *name;
  uint32_t len;
  int iso;
  uint32_t index; /* #N */
  cj_value *ph;   /* placeholder */
  cj_value ***slots;
  uint32_t nslots, cap;
  token at; /* first use */
} fwdref;

/* block labels of the region being parsed */
typedef struct blabel {
  const char *name;
  uint32_t len;
  cj_block *b;
  bool defined;
  token at;
} blabel;

typedef struct alias {
  const char *name; /* without '#'/'!' */
  uint32_t len;
  const cj_attr *attr;
  const cj_type *type;
} alias;

typedef struct locfix {
  cj_attr *ph;
  const char *name;
  uint32_t len;
  token at;
} locfix;

/* ======================================================================== the parser */

typedef struct P {
  const char *src, *end, *p; /* whole text, end, lexer position (after the current token) */
  const char *file;          /* interned file name */
  cj_module *m;
  token tok;
  int line;
  const char *ls;
  cj_status err;
  int depth; /* recursion guard */
  int in_alias_def;

  tchunk *tmp;

  /* SSA names */
  binding **buckets;
  uint32_t nbuckets, nbound;
  binding **defs; /* stack of live bindings in definition order */
  uint32_t ndefs, capdefs;
  int iso; /* current isolation depth */
  fwdref *fwd;
  uint32_t nfwd, capfwd;

  /* block labels (per region, stacked; those of the region being parsed start at lbase) */
  blabel *labels;
  uint32_t nlabels, caplabels, lbase;

  /* aliases */
  alias *aattr, *atype;
  uint32_t naattr, ntype, capaattr, captype;
  locfix *locfix;
  uint32_t nlocfix, caplocfix;

  /* the enclosing function-like op defaults: names without a dialect resolve to func.* */
  int in_func;

  /* tensor type spellings already parsed (text -> interned type): most programs repeat a few
   * types many times */
  struct tcache {
    const char *s;
    uint32_t n, h;
    const cj_type *t;
  } * tc;
} P;

#define TCACHE_SIZE 1024

#define MAX_DEPTH 100 /* bounds the recursion (~1.3 KB of stack per level) */

static bool perr_at(P *p, const token *t, const char *fmt, ...) CJ_PRINTF(3, 4);
static bool perr(P *p, const char *fmt, ...) CJ_PRINTF(2, 3);

static bool perr_va(P *p, int line, int col, const char *fmt, va_list ap) {
  if (p->err) return false;
  char msg[768];
  vsnprintf(msg, sizeof msg, fmt, ap);
  p->err = cj_status_make(CJ_INVALID_ARGUMENT, "%s:%d:%d: %s", p->file ? p->file : "<input>", line,
                          col, msg);
  return false;
}

static bool perr_at(P *p, const token *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  perr_va(p, t->line, (int)(t->s - t->ls) + 1, fmt, ap);
  va_end(ap);
  return false;
}

static bool perr(P *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  perr_va(p, p->tok.line, (int)(p->tok.s - p->tok.ls) + 1, fmt, ap);
  va_end(ap);
  return false;
}

static bool perr_pos(P *p, int line, const char *ls, const char *at, const char *fmt, ...)
    CJ_PRINTF(5, 6);
static bool perr_pos(P *p, int line, const char *ls, const char *at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  perr_va(p, line, (int)(at - ls) + 1, fmt, ap);
  va_end(ap);
  return false;
}

static bool oom(P *p) {
  if (!p->err) p->err = cj_oom();
  return false;
}

/* ---- scratch stack ---- */

static void *tmp_alloc(P *p, size_t n) {
  n = (n + 15) & ~(size_t)15;
  tchunk *c = p->tmp;
  if (!c || c->cap - c->used < n) {
    size_t cap = n > (1u << 16) ? n : (1u << 16);
    tchunk *nc = malloc(sizeof(tchunk) + cap);
    if (!nc) {
      oom(p);
      return NULL;
    }
    nc->prev = c;
    nc->cap = cap;
    nc->used = 0;
    p->tmp = nc;
    c = nc;
  }
  void *r = c->data + c->used;
  c->used += n;
  return r;
}

static tmark tmp_mark(P *p) {
  tmark mk = {p->tmp, p->tmp ? p->tmp->used : 0};
  return mk;
}

static void tmp_release(P *p, tmark mk) {
  while (p->tmp && p->tmp != mk.chunk) {
    tchunk *prev = p->tmp->prev;
    free(p->tmp);
    p->tmp = prev;
  }
  if (p->tmp) p->tmp->used = mk.used;
}

/* a growable array in scratch memory */
#define VEC(T)       \
  struct {           \
    T *v;            \
    uint32_t n, cap; \
  }

static bool vgrow(P *p, void **v, uint32_t *cap, uint32_t n, size_t elem) {
  if (n < *cap) return true;
  uint32_t ncap = *cap ? *cap * 2 : 8;
  if (ncap > (1u << 28)) return perr(p, "list too long");
  void *nv = tmp_alloc(p, (size_t)ncap * elem);
  if (!nv) return false;
  if (*v && n) memcpy(nv, *v, (size_t)n * elem);
  *v = nv;
  *cap = ncap;
  return true;
}
typedef struct vec_i64 {
  int64_t *v;
  uint32_t n, cap;
} vec_i64;
typedef struct vec_named {
  cj_named_attr *v;
  uint32_t n, cap;
} vec_named;

#define VPUSH(p, vec, x)                                                \
  (vgrow((p), (void **)&(vec).v, &(vec).cap, (vec).n, sizeof(*(vec).v)) \
       ? ((vec).v[(vec).n++] = (x), true)                               \
       : false)

/* growth with malloc (parser-lifetime tables) */
static bool mgrow(P *p, void **v, uint32_t *cap, uint32_t n, size_t elem) {
  if (n < *cap) return true;
  uint32_t ncap = *cap ? *cap * 2 : 16;
  void *nv = realloc(*v, (size_t)ncap * elem);
  if (!nv) return oom(p);
  *v = nv;
  *cap = ncap;
  return true;
}

/* ======================================================================== lexer */

static inline bool is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static inline bool is_digit(int c) { return c >= '0' && c <= '9'; }
static inline bool is_hex(int c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static inline bool is_bare_start(int c) { return is_alpha(c) || c == '_'; }
static inline bool is_bare_char(int c) {
  return is_alpha(c) || is_digit(c) || c == '_' || c == '$' || c == '.';
}
static inline bool is_suffix_char(int c) {
  return is_alpha(c) || is_digit(c) || c == '_' || c == '$' || c == '.' || c == '-';
}

/* Skips blanks and comments, counting lines. */
static void skip_ws(P *p) {
  const char *s = p->p, *e = p->end;
  for (;;) {
    while (s < e && (*s == ' ' || *s == '\t' || *s == '\r')) s++;
    if (s >= e) break;
    if (*s == '\n') {
      s++;
      p->line++;
      p->ls = s;
      continue;
    }
    if (*s == '/' && s + 1 < e && s[1] == '/') {
      s += 2;
      const char *nl = memchr(s, '\n', (size_t)(e - s));
      s = nl ? nl : e;
      continue;
    }
    break;
  }
  p->p = s;
}

static const char *scan_string_end(const char *s, const char *e) {
  /* s points after the opening quote; returns the closing quote or NULL */
  while (s < e) {
    const char *q = memchr(s, '"', (size_t)(e - s));
    if (!q) return NULL;
    /* the quote is escaped if preceded by an odd number of backslashes */
    const char *b = q;
    size_t nb = 0;
    while (b > s && b[-1] == '\\') {
      b--;
      nb++;
    }
    const char *nl = memchr(s, '\n', (size_t)(q - s));
    if (nl) return NULL;
    if (nb % 2 == 0) return q;
    s = q + 1;
  }
  return NULL;
}

static void next(P *p) {
  skip_ws(p);
  token *t = &p->tok;
  t->line = p->line;
  t->ls = p->ls;
  const char *s = p->p, *e = p->end;
  t->s = s;
  if (s >= e) {
    t->k = TK_EOF;
    t->n = 0;
    return;
  }
  int c = (unsigned char)*s;
  const char *q = s + 1;
  switch (c) {
    case '(':
      t->k = TK_LPAREN;
      break;
    case ')':
      t->k = TK_RPAREN;
      break;
    case '[':
      t->k = TK_LSQ;
      break;
    case ']':
      t->k = TK_RSQ;
      break;
    case '{':
      if (q + 1 < e && q[0] == '-' && q[1] == '#') {
        t->k = TK_META_BEGIN;
        q += 2;
      } else {
        t->k = TK_LBRACE;
      }
      break;
    case '}':
      t->k = TK_RBRACE;
      break;
    case '<':
      t->k = TK_LT;
      break;
    case '>':
      t->k = TK_GT;
      break;
    case ',':
      t->k = TK_COMMA;
      break;
    case '=':
      t->k = TK_EQ;
      break;
    case ':':
      t->k = TK_COLON;
      break;
    case '?':
      t->k = TK_QUESTION;
      break;
    case '*':
      t->k = TK_STAR;
      break;
    case '+':
      t->k = TK_PLUS;
      break;
    case '|':
      t->k = TK_VBAR;
      break;
    case '-':
      if (q < e && *q == '>') {
        t->k = TK_ARROW;
        q++;
      } else {
        t->k = TK_MINUS;
      }
      break;
    case '.':
      if (q + 1 < e && q[0] == '.' && q[1] == '.') {
        t->k = TK_ELLIPSIS;
        q += 2;
      } else {
        t->k = TK_BARE; /* a stray dot: the parser reports it as unexpected */
      }
      break;
    case '"': {
      const char *end = scan_string_end(q, e);
      t->k = TK_STRING;
      q = end ? end + 1 : e;
      if (!end) {
        t->n = (size_t)(q - s);
        p->p = q;
        perr_at(p, t, "unterminated string literal");
        t->k = TK_EOF;
        return;
      }
      break;
    }
    case '%':
    case '^':
    case '!':
    case '#':
    case '@': {
      t->k = c == '%'   ? TK_PERCENT
             : c == '^' ? TK_CARET
             : c == '!' ? TK_BANG
             : c == '#' ? TK_HASH
                        : TK_AT;
      if (c == '#' && q < e && *q == '-' && q + 1 < e && q[1] == '}') {
        t->k = TK_META_END;
        q += 2;
        break;
      }
      if (c == '@' && q < e && *q == '"') {
        const char *end = scan_string_end(q + 1, e);
        if (!end) {
          t->n = 1;
          p->p = e;
          perr_at(p, t, "unterminated string literal");
          t->k = TK_EOF;
          return;
        }
        q = end + 1;
        break;
      }
      if (c == '%' || c == '^') {
        while (q < e && is_suffix_char((unsigned char)*q)) q++;
        if (c == '%' && q < e && *q == '#' && q + 1 < e && is_digit((unsigned char)q[1])) {
          q++;
          while (q < e && is_digit((unsigned char)*q)) q++;
        }
      } else {
        while (q < e && is_bare_char((unsigned char)*q)) q++;
      }
      break;
    }
    default:
      if (is_bare_start(c)) {
        while (q < e && is_bare_char((unsigned char)*q)) q++;
        t->k = TK_BARE;
      } else if (is_digit(c)) {
        if (c == '0' && q < e && *q == 'x' && q + 1 < e && is_hex((unsigned char)q[1])) {
          q++;
          while (q < e && is_hex((unsigned char)*q)) q++;
          t->k = TK_INT;
        } else {
          while (q < e && is_digit((unsigned char)*q)) q++;
          t->k = TK_INT;
          if (q < e && (*q == 'e' || *q == 'E')) { /* 1e-05 (no '.'; some generators write it) */
            const char *r = q + 1;
            if (r < e && (*r == '+' || *r == '-')) r++;
            if (r < e && is_digit((unsigned char)*r)) {
              while (r < e && is_digit((unsigned char)*r)) r++;
              if (r >= e || !is_bare_char((unsigned char)*r)) {
                q = r;
                t->k = TK_FLOAT;
              }
            }
          }
          if (t->k == TK_INT && q < e && *q == '.') {
            q++;
            while (q < e && is_digit((unsigned char)*q)) q++;
            t->k = TK_FLOAT;
            if (q < e && (*q == 'e' || *q == 'E')) {
              const char *r = q + 1;
              if (r < e && (*r == '+' || *r == '-')) r++;
              if (r < e && is_digit((unsigned char)*r)) {
                while (r < e && is_digit((unsigned char)*r)) r++;
                q = r;
              }
            }
          }
        }
      } else {
        t->n = 1;
        p->p = s + 1;
        t->k = TK_EOF;
        perr_at(p, t, "unexpected character '%s%c'", c < 32 || c > 126 ? "\\x" : "",
                c < 32 || c > 126 ? '?' : c);
        return;
      }
  }
  t->n = (size_t)(q - s);
  p->p = q;
}

static inline bool at(P *p, tok_kind k) { return p->tok.k == k; }
static inline bool accept(P *p, tok_kind k) {
  if (p->tok.k != k) return false;
  next(p);
  return true;
}
static inline bool tok_is_n(const token *t, const char *kw, size_t n) {
  return t->n == n && memcmp(t->s, kw, n) == 0;
}
/* keywords are string literals: their length is known at compile time */
#define tok_is(t, kw) tok_is_n((t), (kw), sizeof(kw) - 1)
#define at_kw(p, kw) ((p)->tok.k == TK_BARE && tok_is(&(p)->tok, kw))
#define accept_kw(p, kw) (at_kw((p), kw) ? (next(p), true) : false)

static const char *tok_name(tok_kind k) {
  switch (k) {
    case TK_EOF:
      return "end of input";
    case TK_LPAREN:
      return "'('";
    case TK_RPAREN:
      return "')'";
    case TK_LSQ:
      return "'['";
    case TK_RSQ:
      return "']'";
    case TK_LBRACE:
      return "'{'";
    case TK_RBRACE:
      return "'}'";
    case TK_LT:
      return "'<'";
    case TK_GT:
      return "'>'";
    case TK_COMMA:
      return "','";
    case TK_EQ:
      return "'='";
    case TK_COLON:
      return "':'";
    case TK_ARROW:
      return "'->'";
    case TK_QUESTION:
      return "'?'";
    case TK_STAR:
      return "'*'";
    case TK_MINUS:
      return "'-'";
    case TK_PLUS:
      return "'+'";
    case TK_STRING:
      return "string";
    case TK_INT:
      return "integer";
    case TK_FLOAT:
      return "float";
    case TK_PERCENT:
      return "SSA value";
    case TK_CARET:
      return "block label";
    case TK_AT:
      return "symbol";
    case TK_HASH:
      return "attribute";
    case TK_BANG:
      return "type";
    case TK_BARE:
      return "identifier";
    default:
      return "token";
  }
}

/* A printable excerpt of the current token for messages. */
static const char *tok_text(P *p, char *buf, size_t cap) {
  const token *t = &p->tok;
  if (t->k == TK_EOF) return "end of input";
  size_t n = t->n < cap - 3 ? t->n : cap - 6;
  buf[0] = '\'';
  size_t j = 1;
  for (size_t i = 0; i < n; i++) {
    char c = t->s[i];
    buf[j++] = (c >= 32 && c < 127) ? c : '?';
  }
  if (n < t->n) {
    buf[j++] = '.';
    buf[j++] = '.';
    buf[j++] = '.';
  }
  buf[j++] = '\'';
  buf[j] = 0;
  return buf;
}

static bool expect(P *p, tok_kind k, const char *what) {
  if (p->tok.k == k) {
    next(p);
    return true;
  }
  if (p->err) return false;
  char b[64];
  return perr(p, "expected %s, found %s", what ? what : tok_name(k), tok_text(p, b, sizeof b));
}

static bool expect_kw(P *p, const char *kw) {
  if (p->tok.k == TK_BARE && tok_is_n(&p->tok, kw, strlen(kw))) {
    next(p);
    return true;
  }
  if (p->err) return false;
  char b[64];
  return perr(p, "expected '%s', found %s", kw, tok_text(p, b, sizeof b));
}

/* The source position of the current token as a cj_srcpos. */
static cj_srcpos tok_pos(P *p, const token *t) {
  cj_srcpos sp = {p->file, t->line, (int32_t)(t->s - t->ls) + 1};
  return sp;
}

/* Decodes a string literal token (with quotes) into arena memory; *len gets its length. */
static char *decode_string(P *p, const char *s, size_t n, size_t *len) {
  /* s[0] == '"', s[n-1] == '"' */
  const char *a = s + 1, *e = s + n - 1;
  char *out = cj_arena_alloc_aligned(&p->m->arena, (size_t)(e - a) + 1, 1);
  if (!out) {
    oom(p);
    return NULL;
  }
  size_t j = 0;
  while (a < e) {
    const char *bs = memchr(a, '\\', (size_t)(e - a));
    if (!bs) {
      memcpy(out + j, a, (size_t)(e - a));
      j += (size_t)(e - a);
      break;
    }
    memcpy(out + j, a, (size_t)(bs - a));
    j += (size_t)(bs - a);
    a = bs + 1;
    if (a >= e) break;
    char c = *a;
    if (c == 'n') {
      out[j++] = '\n';
      a++;
    } else if (c == 't') {
      out[j++] = '\t';
      a++;
    } else if (c == '\\' || c == '"') {
      out[j++] = c;
      a++;
    } else if (a + 1 < e && is_hex((unsigned char)a[0]) && is_hex((unsigned char)a[1])) {
      int hi = is_digit(a[0]) ? a[0] - '0' : (a[0] | 32) - 'a' + 10;
      int lo = is_digit(a[1]) ? a[1] - '0' : (a[1] | 32) - 'a' + 10;
      out[j++] = (char)(hi * 16 + lo);
      a += 2;
    } else {
      perr(p, "unknown escape in string literal");
      return NULL;
    }
  }
  out[j] = 0;
  *len = j;
  return out;
}

/* A quoted string used as a name (op, attribute, symbol, location): no NUL bytes. */
static char *decode_name(P *p, const token *t, size_t skip, size_t *len) {
  char *s = decode_string(p, t->s + skip, t->n - skip, len);
  if (s && memchr(s, 0, *len)) {
    perr_at(p, t, "a name cannot contain a NUL byte");
    return NULL;
  }
  return s;
}

/* ======================================================================== SSA scopes */

static uint32_t hash_str(const char *s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

static bool rehash(P *p) {
  uint32_t nb = p->nbuckets ? p->nbuckets * 2 : 256;
  binding **b = calloc(nb, sizeof *b);
  if (!b) return oom(p);
  free(p->buckets);
  p->buckets = b;
  p->nbuckets = nb;
  /* re-insert in definition order so that newer bindings stay in front */
  for (uint32_t i = 0; i < p->ndefs; i++) {
    binding *x = p->defs[i];
    uint32_t j = x->hash & (nb - 1);
    x->next = b[j];
    b[j] = x;
  }
  return true;
}

static binding *lookup_binding(P *p, const char *name, uint32_t len, uint32_t h) {
  if (!p->nbuckets) return NULL;
  for (binding *x = p->buckets[h & (p->nbuckets - 1)]; x; x = x->next)
    if (x->hash == h && x->len == len && memcmp(x->name, name, len) == 0) return x;
  return NULL;
}

static bool resolve_forward(P *p, const char *name, uint32_t len, cj_value *first, uint32_t count);

/* Binds `name` to values first[0..count). */
static bool bind_name(P *p, const token *at_tok, const char *name, uint32_t len, cj_value *first,
                      uint32_t count) {
  uint32_t h = hash_str(name, len);
  binding *old = lookup_binding(p, name, len, h);
  if (old && old->iso == p->iso)
    return perr_at(p, at_tok, "redefinition of SSA value '%%%.*s'", (int)len, name);
  if (p->nbound + 1 > p->nbuckets * 2 && !rehash(p)) return false;
  binding *x = tmp_alloc(p, sizeof *x);
  if (!x) return false;
  x->name = name;
  x->len = len;
  x->hash = h;
  x->count = count;
  x->iso = p->iso;
  x->v = first;
  uint32_t j = h & (p->nbuckets - 1);
  x->next = p->buckets[j];
  p->buckets[j] = x;
  if (!mgrow(p, (void **)&p->defs, &p->capdefs, p->ndefs, sizeof *p->defs)) return false;
  p->defs[p->ndefs++] = x;
  p->nbound++;
  /* the SSA name, without '%' (a copy; value names need not be interned) */
  const char *iname = cj_arena_strndup(&p->m->arena, name, len);
  if (!iname) return oom(p);
  for (uint32_t i = 0; i < count; i++) first[i].name = iname;
  return resolve_forward(p, name, len, first, count);
}

/* Pops bindings made after `mark` (the definition stack height). */
static void pop_bindings(P *p, uint32_t mark) {
  while (p->ndefs > mark) {
    binding *x = p->defs[--p->ndefs];
    uint32_t j = x->hash & (p->nbuckets - 1);
    /* LIFO: x is the head of its bucket */
    if (p->buckets[j] == x) {
      p->buckets[j] = x->next;
    } else {
      for (binding *y = p->buckets[j]; y; y = y->next)
        if (y->next == x) {
          y->next = x->next;
          break;
        }
    }
    p->nbound--;
  }
}

/* Splits "%name#N" into name and index. */
static bool split_value_ref(P *p, const token *t, const char **name, uint32_t *len, uint32_t *index,
                            bool *has_index) {
  const char *s = t->s + 1, *e = t->s + t->n;
  const char *hash = memchr(s, '#', (size_t)(e - s));
  *has_index = false;
  *index = 0;
  if (hash) {
    uint64_t v = 0;
    for (const char *q = hash + 1; q < e; q++) {
      v = v * 10 + (uint64_t)(*q - '0');
      if (v > UINT32_MAX) return perr_at(p, t, "result number too large");
    }
    *index = (uint32_t)v;
    *has_index = true;
    e = hash;
  }
  *name = s;
  *len = (uint32_t)(e - s);
  if (*len == 0) return perr_at(p, t, "expected SSA value name after '%%'");
  return true;
}

static cj_value *make_placeholder(P *p) {
  cj_value *v = CJ_ARENA_NEW(&p->m->arena, cj_value);
  if (!v) oom(p);
  return v;
}

static inline bool is_placeholder(const cj_value *v) { return v && !v->def && !v->block; }

/* Looks a value use up; unknown names become forward references (placeholders). The current
 * token must be TK_PERCENT; it is consumed. */
static cj_value *parse_value_use(P *p) {
  if (!at(p, TK_PERCENT)) {
    char b[64];
    perr(p, "expected SSA value, found %s", tok_text(p, b, sizeof b));
    return NULL;
  }
  token t = p->tok;
  const char *name = NULL;
  uint32_t len = 0, index = 0;
  bool has_index = false;
  if (!split_value_ref(p, &t, &name, &len, &index, &has_index)) return NULL;
  next(p);
  binding *x = lookup_binding(p, name, len, hash_str(name, len));
  if (x && x->iso == p->iso) {
    if (index >= x->count) {
      perr_at(p, &t, "result number %u out of range: '%%%.*s' has %u result%s", index, (int)len,
              name, x->count, x->count == 1 ? "" : "s");
      return NULL;
    }
    return &x->v[index];
  }
  /* forward reference */
  for (uint32_t i = 0; i < p->nfwd; i++) {
    fwdref *f = &p->fwd[i];
    if (f->iso == p->iso && f->len == len && f->index == index && memcmp(f->name, name, len) == 0)
      return f->ph;
  }
  if (!mgrow(p, (void **)&p->fwd, &p->capfwd, p->nfwd, sizeof *p->fwd)) return NULL;
  fwdref *f = &p->fwd[p->nfwd];
  memset(f, 0, sizeof *f);
  f->name = name;
  f->len = len;
  f->iso = p->iso;
  f->index = index;
  f->at = t;
  f->ph = make_placeholder(p);
  if (!f->ph) return NULL;
  p->nfwd++;
  return f->ph;
}

/* Records that operand slot `slot` holds placeholder `ph`. */
static bool note_slot(P *p, cj_value *ph, cj_value **slot) {
  for (uint32_t i = 0; i < p->nfwd; i++) {
    fwdref *f = &p->fwd[i];
    if (f->ph != ph) continue;
    if (!mgrow(p, (void **)&f->slots, &f->cap, f->nslots, sizeof *f->slots)) return false;
    f->slots[f->nslots++] = slot;
    return true;
  }
  return true; /* not a pending forward reference (cannot happen) */
}

static bool print_type_short(const cj_type *t, char *buf, size_t cap) {
  char *s = NULL;
  size_t n = 0;
  cj_status st = cj_print_type(t, &s, &n);
  if (st) {
    cj_status_ignore(st); /* a type for a message: "?" will do */
    snprintf(buf, cap, "?");
    return false;
  }
  snprintf(buf, cap, "%s", s ? s : "?");
  free(s);
  return true;
}

static bool resolve_forward(P *p, const char *name, uint32_t len, cj_value *first, uint32_t count) {
  for (uint32_t i = 0; i < p->nfwd;) {
    fwdref *f = &p->fwd[i];
    if (f->iso != p->iso || f->len != len || memcmp(f->name, name, len) != 0) {
      i++;
      continue;
    }
    if (f->index >= count)
      return perr_at(p, &f->at, "result number %u out of range: '%%%.*s' has %u result%s", f->index,
                     (int)len, name, count, count == 1 ? "" : "s");
    cj_value *real = &first[f->index];
    if (f->ph->type && real->type && f->ph->type != real->type) {
      char a[128], b[128];
      print_type_short(f->ph->type, a, sizeof a);
      print_type_short(real->type, b, sizeof b);
      return perr_at(p, &f->at, "use of value '%%%.*s' expects type %s but it is defined as %s",
                     (int)len, name, a, b);
    }
    for (uint32_t k = 0; k < f->nslots; k++) *f->slots[k] = real;
    free(f->slots);
    p->fwd[i] = p->fwd[--p->nfwd];
  }
  return true;
}

/* Enters an isolated scope (a function body); returns the saved state. */
typedef struct scope_save {
  uint32_t defs;
  uint32_t nfwd;
  int iso;
} scope_save;

static scope_save scope_push(P *p, bool isolated) {
  scope_save s = {p->ndefs, p->nfwd, p->iso};
  if (isolated) p->iso++;
  return s;
}

static bool scope_pop(P *p, scope_save s) {
  pop_bindings(p, s.defs);
  if (p->iso != s.iso) {
    /* leaving an isolated scope: every forward reference made in it must be resolved */
    for (uint32_t i = 0; i < p->nfwd; i++) {
      fwdref *f = &p->fwd[i];
      if (f->iso == p->iso)
        return perr_at(p, &f->at, "use of undefined SSA value '%%%.*s'", (int)f->len, f->name);
    }
    p->iso = s.iso;
  }
  return true;
}

/* ======================================================================== numbers */

/* Moves the lexer position to `to`, counting the lines skipped (for char-level scanners). */
static void advance_to(P *p, const char *to) {
  for (const char *s = p->p; s < to; s++) {
    const char *nl = memchr(s, '\n', (size_t)(to - s));
    if (!nl) break;
    p->line++;
    p->ls = nl + 1;
    s = nl;
  }
  p->p = to;
}

/* The magnitude of an integer literal (decimal or 0x hex). */
static bool lit_uint(const char *s, size_t n, uint64_t *out) {
  uint64_t v = 0;
  if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    for (size_t i = 2; i < n; i++) {
      int c = (unsigned char)s[i];
      int d = is_digit(c) ? c - '0' : (c | 32) - 'a' + 10;
      if (v >> 60) return false;
      v = v * 16 + (uint64_t)d;
    }
  } else {
    for (size_t i = 0; i < n; i++) {
      uint64_t d = (uint64_t)(s[i] - '0');
      if (v > (UINT64_MAX - d) / 10) return false;
      v = v * 10 + d;
    }
  }
  *out = v;
  return true;
}

static inline bool lit_is_hex(const char *s, size_t n) {
  return n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
}

/* Float bits of the literal s[0..n) (decimal, integer or 0x bit pattern) in dtype dt. */
static bool float_lit_bits(P *p, cj_dtype dt, const char *s, size_t n, bool neg, uint64_t *out,
                           int line, const char *ls) {
  int bits = cj_dtype_bits(dt);
  if (lit_is_hex(s, n)) {
    uint64_t v;
    if (neg || !lit_uint(s, n, &v) || (bits < 64 && (v >> bits)))
      return perr_pos(p, line, ls, s, "hexadecimal float constant out of range for type %s",
                      cj_dtype_get(dt)->mlir ? cj_dtype_get(dt)->mlir : "?");
    *out = v;
    return true;
  }
  char buf[128];
  char *z = buf;
  if (n >= sizeof buf) {
    z = tmp_alloc(p, n + 1);
    if (!z) return false;
  }
  memcpy(z, s, n);
  z[n] = 0;
  uint64_t mag = cj_float_from_decimal(dt, z);
  if (neg) mag = cj_float_encode(dt, -cj_float_decode(dt, mag));
  *out = mag;
  return true;
}

/* ======================================================================== opaque text */

/* From `s` (at an opening '<'), returns the position after the matching '>', balancing
 * (), [], {} and <> and skipping strings and '->' arrows; NULL if unbalanced. */
static const char *scan_balanced(const char *s, const char *e) {
  char stack[256];
  int sp = 0;
  while (s < e) {
    char c = *s;
    if (c == '"') {
      const char *q = scan_string_end(s + 1, e);
      if (!q) return NULL;
      s = q + 1;
      continue;
    }
    if (c == '-' && s + 1 < e && s[1] == '>') {
      s += 2;
      continue;
    }
    if (c == '<' || c == '(' || c == '[' || c == '{') {
      if (sp == (int)sizeof stack) return NULL;
      stack[sp++] = c == '<' ? '>' : c == '(' ? ')' : c == '[' ? ']' : '}';
    } else if (c == '>' || c == ')' || c == ']' || c == '}') {
      if (sp == 0 || stack[sp - 1] != c) return NULL;
      sp--;
      if (sp == 0) return s + 1;
    }
    s++;
  }
  return NULL;
}

/* Copies text into the arena with whitespace runs collapsed to one space, and dropped after an
 * opening bracket and before a closing one ('>' included), so the text reader and the bytecode
 * reader spell the same dialect attribute alike (strings kept verbatim). */
static char *collapse_text(P *p, const char *s, size_t n, size_t *outn) {
  if (memchr(s, 0, n)) {
    perr(p, "a NUL byte in a dialect attribute or type");
    return NULL;
  }
  char *o = cj_arena_alloc_aligned(&p->m->arena, n + 1, 1);
  if (!o) {
    oom(p);
    return NULL;
  }
  size_t j = 0;
  const char *e = s + n;
  while (s < e) {
    char c = *s;
    if (c == '"') {
      const char *q = scan_string_end(s + 1, e);
      const char *stop = q ? q + 1 : e;
      memcpy(o + j, s, (size_t)(stop - s));
      j += (size_t)(stop - s);
      s = stop;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      while (s < e && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')) s++;
      char prev = j ? o[j - 1] : 0;
      char nx = s < e ? *s : 0;
      if (prev == '<' || prev == '[' || prev == '(' || prev == '{' || nx == ']' || nx == ')' ||
          nx == '}' || nx == '>' || prev == 0 || nx == 0)
        continue;
      o[j++] = ' ';
      continue;
    }
    o[j++] = c;
    s++;
  }
  o[j] = 0;
  *outn = j;
  return o;
}

/* The current token is '#name' or '!name'; if a '<' body follows directly, includes it. Returns
 * the text span of the whole thing and advances past it. */
static bool take_dialect_text(P *p, const char **ts, size_t *tn) {
  const char *s = p->tok.s;
  const char *e = p->tok.s + p->tok.n;
  if (e < p->end && *e == '<') {
    const char *end = scan_balanced(e, p->end);
    if (!end) return perr(p, "unbalanced '<' in dialect attribute or type");
    e = end;
  }
  if (memchr(s, 0, (size_t)(e - s))) return perr(p, "a NUL byte in a dialect attribute or type");
  advance_to(p, e);
  *ts = s;
  *tn = (size_t)(e - s);
  next(p);
  return true;
}

/* ======================================================================== types */

static const cj_type *parse_type(P *p);
static const cj_attr *parse_attr(P *p);

static bool enter(P *p) {
  if (++p->depth > MAX_DEPTH) {
    p->depth--;
    return perr(p, "nesting too deep");
  }
  return true;
}
static inline void leave(P *p) { p->depth--; }

static const cj_type *find_type_alias(P *p, const char *name, uint32_t len) {
  for (uint32_t i = 0; i < p->ntype; i++)
    if (p->atype[i].len == len && memcmp(p->atype[i].name, name, len) == 0) return p->atype[i].type;
  return NULL;
}

static const cj_attr *find_attr_alias(P *p, const char *name, uint32_t len) {
  for (uint32_t i = 0; i < p->naattr; i++)
    if (p->aattr[i].len == len && memcmp(p->aattr[i].name, name, len) == 0) return p->aattr[i].attr;
  return NULL;
}

/* Skips blanks (and newlines) in char-level scanning. */
static const char *skip_blank(P *p, const char *s) {
  const char *e = p->end;
  for (;;) {
    while (s < e && (*s == ' ' || *s == '\t' || *s == '\r')) s++;
    if (s < e && *s == '\n') {
      p->line++;
      p->ls = s + 1;
      s++;
      continue;
    }
    return s;
  }
}

/* bounds from a #stablehlo.bounds / #stablehlo.type_extensions encoding */
static bool encoding_bounds(const cj_attr *enc, int32_t rank, int64_t *out) {
  if (!enc || enc->kind != CJ_ATTR_STRUCT || enc->st.sk != CJ_SK_TYPE_EXTENSIONS) return false;
  const cj_attr *b = enc->st.fields[CJ_SF_TYPE_EXTENSIONS_bounds];
  if (!b || b->kind != CJ_ATTR_DENSE_ARRAY || b->darr.n != rank) return false;
  memcpy(out, b->darr.data, sizeof(int64_t) * (size_t)rank);
  return true;
}

#define MAX_RANK 64

/* tensor<...>: the current token is 'tensor' */
static const cj_type *parse_tensor_type(P *p) {
  token at_tok = p->tok;
  next(p);
  if (!at(p, TK_LT)) {
    expect(p, TK_LT, "'<' after 'tensor'");
    return NULL;
  }
  int64_t dims[MAX_RANK];
  int32_t rank = 0;
  bool unranked = false;
  const char *s = skip_blank(p, p->p);
  const char *e = p->end;
  for (;;) {
    const char *d0 = s;
    if (s < e && *s == '*') {
      s = skip_blank(p, s + 1);
      if (s >= e || *s != 'x') {
        perr_pos(p, p->line, p->ls, s, "expected 'x' after '*' in tensor type");
        return NULL;
      }
      unranked = true;
      s = skip_blank(p, s + 1);
      break;
    }
    int64_t dim;
    if (s < e && *s == '?') {
      dim = CJ_DYN;
      s++;
    } else if (s < e && is_digit((unsigned char)*s)) {
      uint64_t v = 0;
      while (s < e && is_digit((unsigned char)*s)) {
        if (v > (uint64_t)INT64_MAX / 10) {
          perr_pos(p, p->line, p->ls, d0, "dimension size too large");
          return NULL;
        }
        v = v * 10 + (uint64_t)(*s - '0');
        s++;
      }
      dim = (int64_t)v;
    } else {
      break;
    }
    s = skip_blank(p, s);
    if (s >= e || *s != 'x') {
      perr_pos(p, p->line, p->ls, s, "expected 'x' in dimension list");
      return NULL;
    }
    s = skip_blank(p, s + 1);
    if (rank == MAX_RANK) {
      perr_pos(p, p->line, p->ls, d0, "tensor rank exceeds %d", MAX_RANK);
      return NULL;
    }
    dims[rank++] = dim;
  }
  p->p = s;
  next(p);
  const cj_type *elem = parse_type(p);
  if (!elem) return NULL;
  if (elem->kind != CJ_TYPE_ELEM && elem->kind != CJ_TYPE_QUANT && elem->kind != CJ_TYPE_OPAQUE) {
    perr_at(p, &at_tok, "invalid tensor element type");
    return NULL;
  }
  if (unranked) {
    if (!expect(p, TK_GT, "'>'")) return NULL;
    const cj_type *t = cj_type_unranked(p->m, elem);
    if (!t) oom(p);
    return t;
  }
  const cj_attr *enc = NULL;
  int64_t bounds[MAX_RANK];
  bool has_bounds = false;
  if (accept(p, TK_COMMA)) {
    token et = p->tok;
    enc = parse_attr(p);
    if (!enc) return NULL;
    if (enc->kind == CJ_ATTR_STRUCT && enc->st.sk == CJ_SK_TYPE_EXTENSIONS) {
      if (!encoding_bounds(enc, rank, bounds)) {
        perr_at(p, &et, "bounds must have one entry per dimension (rank %d)", rank);
        return NULL;
      }
      has_bounds = true;
      enc = NULL;
    }
  }
  if (!expect(p, TK_GT, "'>' to end the tensor type")) return NULL;
  const cj_type *t = cj_type_tensor(p->m, elem, rank, dims, has_bounds ? bounds : NULL, enc);
  if (!t) oom(p);
  return t;
}

static cj_dtype storage_dtype(const char *s, size_t n) {
  /* quant storage: i8, u8, i16, ... (u = unsigned) */
  char buf[16];
  if (n < 2 || n > 6) return CJ_INVALID;
  if (s[0] == 'u') {
    buf[0] = 'u';
    buf[1] = 'i';
    memcpy(buf + 2, s + 1, n - 1);
    return cj_dtype_from_mlir(buf, n + 1);
  }
  return cj_dtype_from_mlir(s, n);
}

static bool parse_signed_int(P *p, int64_t *out);
static bool parse_number_f64(P *p, double *out);

/* !quant.uniform<...>: the current token is '!quant.uniform' and '<' follows */
static const cj_type *parse_quant_type(P *p) {
  token at_tok = p->tok;
  next(p);
  if (!expect(p, TK_LT, "'<'")) return NULL;
  cj_quant q;
  memset(&q, 0, sizeof q);
  if (!at(p, TK_BARE)) {
    perr(p, "expected a storage type (i8, u8, ...)");
    return NULL;
  }
  q.storage = storage_dtype(p->tok.s, p->tok.n);
  if (!cj_dtype_is_int(q.storage)) {
    perr(p, "invalid quantized storage type '%.*s'", (int)p->tok.n, p->tok.s);
    return NULL;
  }
  next(p);
  int bits = cj_dtype_bits(q.storage);
  bool is_signed = cj_dtype_kindof(q.storage) == CJ_DK_SINT;
  q.storage_min = is_signed ? -(int64_t)(1ull << (bits - 1)) : 0;
  q.storage_max = is_signed ? (int64_t)((1ull << (bits - 1)) - 1)
                            : (bits >= 64 ? INT64_MAX : (int64_t)((1ull << bits) - 1));
  if (accept(p, TK_LT)) {
    if (!parse_signed_int(p, &q.storage_min) || !expect(p, TK_COLON, "':'") ||
        !parse_signed_int(p, &q.storage_max) || !expect(p, TK_GT, "'>'"))
      return NULL;
  }
  if (!expect(p, TK_COLON, "':'")) return NULL;
  if (!at(p, TK_BARE) || !cj_dtype_is_float(q.expressed = cj_dtype_from_mlir(p->tok.s, p->tok.n))) {
    perr(p, "expected a float expressed type");
    return NULL;
  }
  next(p);
  q.axis = -1;
  if (accept(p, TK_COLON)) {
    int64_t ax;
    if (!parse_signed_int(p, &ax)) return NULL;
    if (ax < 0 || ax > INT32_MAX) {
      perr(p, "invalid quantized dimension");
      return NULL;
    }
    q.axis = (int32_t)ax;
  }
  if (!expect(p, TK_COMMA, "','")) return NULL;
  VEC(double) sc = {0};
  VEC(int64_t) zp = {0};
  bool braces = accept(p, TK_LBRACE);
  if (q.axis >= 0 && !braces) {
    perr(p, "expected '{' for per-axis scales");
    return NULL;
  }
  for (;;) {
    double s;
    int64_t z = 0;
    if (!parse_number_f64(p, &s)) return NULL;
    if (accept(p, TK_COLON) && !parse_signed_int(p, &z)) return NULL;
    if (!VPUSH(p, sc, s) || !VPUSH(p, zp, z)) return NULL;
    if (!braces || !accept(p, TK_COMMA)) break;
  }
  if (braces && !expect(p, TK_RBRACE, "'}'")) return NULL;
  if (!expect(p, TK_GT, "'>' to end the quantized type")) return NULL;
  q.nscales = (int32_t)sc.n;
  q.scales = sc.v;
  q.zero_points = zp.v;
  (void)at_tok;
  const cj_type *t = cj_type_quant(p->m, &q);
  if (!t) oom(p);
  return t;
}

/* Parses `T, T, ...` until (not including) `close`; *out gets a scratch array. */
static bool parse_type_list_until(P *p, tok_kind close, const cj_type ***out, uint32_t *n) {
  VEC(const cj_type *) v = {0};
  if (!at(p, close)) {
    for (;;) {
      const cj_type *t = parse_type(p);
      if (!t || !VPUSH(p, v, t)) return false;
      if (!accept(p, TK_COMMA)) break;
    }
  }
  *out = v.v;
  *n = v.n;
  return true;
}

/* function-result-type: `(T, ...)` or a single non-function type */
static bool parse_result_types(P *p, const cj_type ***out, uint32_t *n) {
  if (accept(p, TK_LPAREN)) {
    if (!parse_type_list_until(p, TK_RPAREN, out, n)) return false;
    return expect(p, TK_RPAREN, "')'");
  }
  const cj_type *t = parse_type(p);
  if (!t) return false;
  const cj_type **one = tmp_alloc(p, sizeof *one);
  if (!one) return false;
  one[0] = t;
  *out = one;
  *n = 1;
  return true;
}

/* (T, ...) -> R : the current token is '(' */
static const cj_type *parse_function_type(P *p) {
  if (!expect(p, TK_LPAREN, "'('")) return NULL;
  const cj_type **ins, **outs;
  uint32_t nin, nout;
  if (!parse_type_list_until(p, TK_RPAREN, &ins, &nin) || !expect(p, TK_RPAREN, "')'") ||
      !expect(p, TK_ARROW, "'->' in function type") || !parse_result_types(p, &outs, &nout))
    return NULL;
  const cj_type *t = cj_type_function(p->m, (int32_t)nin, ins, (int32_t)nout, outs);
  if (!t) oom(p);
  return t;
}

/* Types of the dialects we define are checked here; types of other dialects are carried as
 * opaque text. stablehlo has !stablehlo.token and !stablehlo.future<...> (kept opaque: no op we
 * run takes it); quant has uniform (parsed) and any/calibrated/quantile (kept opaque); chlo,
 * check and interpreter have no types. Returns what is wrong, or NULL. */
static const char *own_dialect_type_error(const char *name, size_t len, bool body) {
  static const struct {
    const char *dialect;
    const char *known[4]; /* known mnemonics; "token" takes no body, the others one */
  } own[] = {
      {"stablehlo", {"token", "future"}},
      {"quant", {"uniform", "any", "calibrated", "quantile"}},
      {"chlo", {0}},
      {"check", {0}},
      {"interpreter", {0}},
  };
  const char *dot = memchr(name, '.', len);
  if (!dot) return NULL;
  size_t dn = (size_t)(dot - name), mn = len - dn - 1;
  for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
    if (strlen(own[i].dialect) != dn || memcmp(own[i].dialect, name, dn) != 0) continue;
    for (int k = 0; k < 4 && own[i].known[k]; k++) {
      const char *kn = own[i].known[k];
      if (strlen(kn) != mn || memcmp(kn, dot + 1, mn) != 0) continue;
      bool wants_body = strcmp(kn, "token") != 0;
      if (body == wants_body) return NULL;
      return wants_body ? "expected '<' after the type" : "unexpected '<' after the type";
    }
    return "unknown type";
  }
  return NULL;
}

static const cj_type *parse_type_inner(P *p) {
  token t = p->tok;
  if (t.k == TK_LPAREN) return parse_function_type(p);
  if (t.k == TK_BANG) {
    const char *name = t.s + 1;
    uint32_t len = (uint32_t)t.n - 1;
    bool body = t.s + t.n < p->end && t.s[t.n] == '<';
    if (len == 15 && memcmp(name, "stablehlo.token", 15) == 0 && !body) {
      next(p);
      return cj_type_token(p->m);
    }
    if (len == 13 && memcmp(name, "quant.uniform", 13) == 0 && body) return parse_quant_type(p);
    const char *why = own_dialect_type_error(name, len, body);
    if (why) {
      perr(p, "%s '!%.*s'", why, (int)(len > 60 ? 60 : len), name);
      return NULL;
    }
    if (!memchr(name, '.', len) && !body) {
      const cj_type *a = find_type_alias(p, name, len);
      if (!a) {
        perr(p, "undefined type alias '!%.*s'", (int)len, name);
        return NULL;
      }
      next(p);
      return a;
    }
    const char *ts;
    size_t tn, cn;
    if (!take_dialect_text(p, &ts, &tn)) return NULL;
    char *txt = collapse_text(p, ts, tn, &cn);
    if (!txt) return NULL;
    const cj_type *r = cj_type_opaque(p->m, txt, cn);
    if (!r) oom(p);
    return r;
  }
  if (t.k != TK_BARE) {
    char b[64];
    perr(p, "expected a type, found %s", tok_text(p, b, sizeof b));
    return NULL;
  }
  if (tok_is(&t, "tensor")) {
    const char *b = t.s + t.n;
    const char *end = b < p->end && *b == '<' ? scan_balanced(b, p->end) : NULL;
    struct tcache *slot = NULL;
    uint32_t h = 0, n = end ? (uint32_t)(end - t.s) : 0;
    if (end && n < 4096) {
      if (!p->tc && !(p->tc = calloc(TCACHE_SIZE, sizeof *p->tc))) {
        oom(p);
        return NULL;
      }
      h = hash_str(t.s, n);
      slot = &p->tc[h & (TCACHE_SIZE - 1)];
      if (slot->t && slot->h == h && slot->n == n && memcmp(slot->s, t.s, n) == 0) {
        advance_to(p, end);
        next(p);
        return slot->t;
      }
    }
    const cj_type *r = parse_tensor_type(p);
    /* cache it if the parse ended exactly where the scan did (blanks only in between) */
    if (r && slot) {
      const char *q = end;
      while (q < p->tok.s && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) q++;
      if (q == p->tok.s) {
        slot->s = t.s;
        slot->n = n;
        slot->h = h;
        slot->t = r;
      }
    }
    return r;
  }
  if (tok_is(&t, "tuple")) {
    next(p);
    if (!expect(p, TK_LT, "'<'")) return NULL;
    const cj_type **mem;
    uint32_t n;
    if (!parse_type_list_until(p, TK_GT, &mem, &n) || !expect(p, TK_GT, "'>'")) return NULL;
    const cj_type *r = cj_type_tuple(p->m, (int32_t)n, mem);
    if (!r) oom(p);
    return r;
  }
  if (tok_is(&t, "complex")) {
    next(p);
    if (!expect(p, TK_LT, "'<'")) return NULL;
    token et = p->tok;
    const cj_type *c = parse_type(p);
    if (!c) return NULL;
    if (!expect(p, TK_GT, "'>'")) return NULL;
    cj_dtype dt = c->kind == CJ_TYPE_ELEM && c->dtype == CJ_F32   ? CJ_C64
                  : c->kind == CJ_TYPE_ELEM && c->dtype == CJ_F64 ? CJ_C128
                                                                  : CJ_INVALID;
    if (dt == CJ_INVALID) {
      perr_at(p, &et, "unsupported complex element type (only complex<f32> and complex<f64>)");
      return NULL;
    }
    return cj_type_elem(p->m, dt);
  }
  if (tok_is(&t, "none")) {
    next(p);
    return cj_type_none(p->m);
  }
  cj_dtype dt = cj_dtype_from_mlir(t.s, t.n);
  if (dt != CJ_INVALID) {
    next(p);
    return cj_type_elem(p->m, dt);
  }
  if (t.s + t.n < p->end && t.s[t.n] == '<' &&
      (tok_is(&t, "vector") || tok_is(&t, "memref") || tok_is(&t, "!") || tok_is(&t, "opaque"))) {
    const char *ts;
    size_t tn, cn;
    if (!take_dialect_text(p, &ts, &tn)) return NULL;
    char *txt = collapse_text(p, ts, tn, &cn);
    if (!txt) return NULL;
    const cj_type *r = cj_type_opaque(p->m, txt, cn);
    if (!r) oom(p);
    return r;
  }
  perr(p, "unknown type '%.*s'", (int)(t.n > 60 ? 60 : t.n), t.s);
  return NULL;
}

static const cj_type *parse_type(P *p) {
  if (!enter(p)) return NULL;
  const cj_type *t = parse_type_inner(p);
  leave(p);
  if (!t && !p->err) oom(p);
  return t;
}

/* ======================================================================== attributes */

static bool parse_signed_int(P *p, int64_t *out) {
  token t = p->tok;
  bool neg = accept(p, TK_MINUS);
  if (!at(p, TK_INT)) {
    char b[64];
    return perr(p, "expected integer, found %s", tok_text(p, b, sizeof b));
  }
  uint64_t v;
  if (!lit_uint(p->tok.s, p->tok.n, &v) || (neg ? v > (1ull << 63) : v > (uint64_t)INT64_MAX))
    return perr_at(p, &t, "integer out of range");
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  next(p);
  return true;
}

static bool parse_number_f64(P *p, double *out) {
  bool neg = accept(p, TK_MINUS);
  if (!at(p, TK_INT) && !at(p, TK_FLOAT)) {
    char b[64];
    return perr(p, "expected a number, found %s", tok_text(p, b, sizeof b));
  }
  uint64_t bits;
  if (!float_lit_bits(p, CJ_F64, p->tok.s, p->tok.n, neg, &bits, p->tok.line, p->tok.ls))
    return false;
  memcpy(out, &bits, 8);
  next(p);
  return true;
}

/* [1, 2, ?] -> array<i64: ...> (CJ_DYN for '?'); the current token is '[' */
static const cj_attr *parse_dims_list(P *p, bool allow_dyn) {
  if (!expect(p, TK_LSQ, "'['")) return NULL;
  VEC(int64_t) v = {0};
  if (!at(p, TK_RSQ)) {
    for (;;) {
      int64_t x;
      if (allow_dyn && accept(p, TK_QUESTION)) {
        x = CJ_DYN;
      } else if (!parse_signed_int(p, &x)) {
        return NULL;
      }
      if (!VPUSH(p, v, x)) return NULL;
      if (!accept(p, TK_COMMA)) break;
    }
  }
  if (!expect(p, TK_RSQ, "']'")) return NULL;
  const cj_attr *a = cj_attr_i64_array(p->m, v.n, v.v ? v.v : (int64_t[1]){0});
  if (!a) oom(p);
  return a;
}

/* ---- dense<...> ---- */

typedef struct dlex {
  P *p;
  const char *s, *e;
  int line;
  const char *ls;
} dlex;

static void d_ws(dlex *d) {
  const char *s = d->s, *e = d->e;
  for (;;) {
    while (s < e && (*s == ' ' || *s == '\t' || *s == '\r')) s++;
    if (s < e && *s == '\n') {
      s++;
      d->line++;
      d->ls = s;
      continue;
    }
    if (s + 1 < e && s[0] == '/' && s[1] == '/') {
      const char *nl = memchr(s, '\n', (size_t)(e - s));
      s = nl ? nl : e;
      continue;
    }
    break;
  }
  d->s = s;
}

static bool d_err(dlex *d, const char *fmt, ...) CJ_PRINTF(2, 3);
static bool d_err(dlex *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  perr_va(d->p, d->line, (int)(d->s - d->ls) + 1, fmt, ap);
  va_end(ap);
  return false;
}

/* Scans one number token: [-] then digits[.digits[e[+-]digits]] or 0xHEX or true/false. */
typedef struct numtok {
  const char *s;
  size_t n;
  bool neg, is_float, is_hex, is_bool;
  bool bval;
} numtok;

static bool d_number(dlex *d, numtok *t) {
  d_ws(d);
  const char *s = d->s, *e = d->e;
  memset(t, 0, sizeof *t);
  if (s < e && *s == '-') {
    t->neg = true;
    s++;
  }
  if (s + 4 <= e && memcmp(s, "true", 4) == 0 &&
      !(s + 4 < e && is_bare_char((unsigned char)s[4]))) {
    t->is_bool = true;
    t->bval = true;
    t->s = s;
    t->n = 4;
    d->s = s + 4;
    return !t->neg || d_err(d, "unexpected '-' before 'true'");
  }
  if (s + 5 <= e && memcmp(s, "false", 5) == 0 &&
      !(s + 5 < e && is_bare_char((unsigned char)s[5]))) {
    t->is_bool = true;
    t->s = s;
    t->n = 5;
    d->s = s + 5;
    return !t->neg || d_err(d, "unexpected '-' before 'false'");
  }
  const char *b = s;
  if (s + 2 < e && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && is_hex((unsigned char)s[2])) {
    s += 2;
    while (s < e && is_hex((unsigned char)*s)) s++;
    t->is_hex = true;
  } else if (s < e && is_digit((unsigned char)*s)) {
    while (s < e && is_digit((unsigned char)*s)) s++;
    if (s < e && (*s == 'e' || *s == 'E')) { /* 1e-05 */
      const char *r = s + 1;
      if (r < e && (*r == '+' || *r == '-')) r++;
      if (r < e && is_digit((unsigned char)*r)) {
        while (r < e && is_digit((unsigned char)*r)) r++;
        s = r;
        t->is_float = true;
      }
    } else if (s < e && *s == '.') {
      t->is_float = true;
      s++;
      while (s < e && is_digit((unsigned char)*s)) s++;
      if (s < e && (*s == 'e' || *s == 'E')) {
        const char *r = s + 1;
        if (r < e && (*r == '+' || *r == '-')) r++;
        if (r < e && is_digit((unsigned char)*r)) {
          while (r < e && is_digit((unsigned char)*r)) r++;
          s = r;
        }
      }
    }
  } else {
    d->s = s;
    return d_err(d, "expected a number or boolean in dense literal");
  }
  if (s < e && (is_bare_char((unsigned char)*s))) {
    d->s = s;
    return d_err(d, "unexpected character in number");
  }
  t->s = b;
  t->n = (size_t)(s - b);
  d->s = s;
  return true;
}

static void store_le(void *dst, uint64_t v, int bytes) { memcpy(dst, &v, (size_t)bytes); }

/* Writes one scalar element of dtype dt at dst. */
static bool d_scalar(dlex *d, cj_dtype dt, unsigned char *dst) {
  numtok t;
  const cj_dtype_info *in = cj_dtype_get(dt);
  if (in->kind == CJ_DK_COMPLEX) {
    d_ws(d);
    if (d->s >= d->e || *d->s != '(') return d_err(d, "expected '(' for a complex value");
    d->s++;
    cj_dtype c = cj_dtype_component(dt);
    int cb = cj_dtype_bytes(c);
    if (!d_scalar(d, c, dst)) return false;
    d_ws(d);
    if (d->s >= d->e || *d->s != ',') return d_err(d, "expected ',' in complex value");
    d->s++;
    if (!d_scalar(d, c, dst + cb)) return false;
    d_ws(d);
    if (d->s >= d->e || *d->s != ')') return d_err(d, "expected ')' to end complex value");
    d->s++;
    return true;
  }
  const char *at0;
  d_ws(d);
  at0 = d->s;
  if (!d_number(d, &t)) return false;
  switch (in->kind) {
    case CJ_DK_BOOL:
      if (t.is_bool) {
        *dst = t.bval;
        return true;
      }
      if (!t.is_float && !t.neg) {
        uint64_t v;
        if (lit_uint(t.s, t.n, &v) && v <= 1) {
          *dst = (unsigned char)v;
          return true;
        }
      }
      d->s = at0;
      return d_err(d, "expected 'true' or 'false' for an i1 element");
    case CJ_DK_SINT:
    case CJ_DK_UINT: {
      if (t.is_bool || t.is_float) {
        d->s = at0;
        return d_err(d, "expected an integer for element type %s", in->mlir ? in->mlir : "?");
      }
      uint64_t v;
      bool ok = lit_uint(t.s, t.n, &v);
      int bits = in->bits;
      if (ok) {
        if (in->kind == CJ_DK_UINT)
          ok = !t.neg || v == 0;
        else if (t.neg)
          ok = v <= (1ull << (bits - 1));
        if (ok && bits < 64 && !t.neg) ok = v < (1ull << bits);
      }
      if (!ok) {
        d->s = at0;
        return d_err(d, "integer constant out of range for element type %s",
                     in->mlir ? in->mlir : "?");
      }
      uint64_t u = t.neg ? 0 - v : v;
      if (bits < 64) u &= (1ull << bits) - 1;
      store_le(dst, u, in->bytes);
      return true;
    }
    case CJ_DK_FLOAT: {
      if (t.is_bool) {
        d->s = at0;
        return d_err(d, "expected a float for element type %s", in->mlir ? in->mlir : "?");
      }
      uint64_t bits;
      if (t.is_hex && t.neg) {
        d->s = at0;
        return d_err(d, "hexadecimal float literal should not have a leading minus");
      }
      if (!float_lit_bits(d->p, dt, t.s, t.n, t.neg, &bits, d->line, d->ls)) return false;
      store_le(dst, bits, in->bytes);
      return true;
    }
    default:
      return d_err(d, "unsupported element type in dense literal");
  }
}

/* hex digit values, -1 for anything else (dense hex blobs are most of a typical corpus) */
/* clang-format off */
static const int8_t hexlut[256] = {
#define H16(x) x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x
    H16(-1), H16(-1), H16(-1),
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1, -1, -1, -1, -1, -1,
    -1, 10, 11, 12, 13, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, H16(-1),
    -1, 10, 11, 12, 13, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, H16(-1),
    H16(-1), H16(-1), H16(-1), H16(-1), H16(-1), H16(-1), H16(-1), H16(-1),
#undef H16
};
/* clang-format on */

/* Decodes 2*n hex digits into n bytes; false on a bad digit (*bad = its offset). */
static bool hex_decode(const char *h, size_t n, unsigned char *out, size_t *bad) {
  const unsigned char *u = (const unsigned char *)h;
  int acc = 0;
  for (size_t i = 0; i < n; i++) {
    int hi = hexlut[u[2 * i]], lo = hexlut[u[2 * i + 1]];
    acc |= hi | lo;
    out[i] = (unsigned char)(((unsigned)hi & 15u) << 4 | ((unsigned)lo & 15u));
  }
  if (acc >= 0) return true;
  for (size_t i = 0; i < 2 * n; i++)
    if (hexlut[u[i]] < 0) {
      *bad = i;
      return false;
    }
  return true;
}

/* MLIR keeps a dense literal whose elements are all equal (one element included) as a splat;
 * so do we, as the bytecode reader does, so both readers build the same attribute. */
static bool dense_all_equal(const unsigned char *d, int64_t nel, int eb) {
  if (nel < 1) return false;
  for (int64_t i = 1; i < nel; i++)
    if (memcmp(d, d + (size_t)i * (size_t)eb, (size_t)eb) != 0) return false;
  return true;
}

/* dense<...> : T. The current token is 'dense'. */
/* dense<"0x..."> : T, the data as hex (all elements, or one for a splat); d is at the '"'. */
static const cj_attr *parse_dense_hex(P *p, dlex *d, const cj_type *type, const char *first_q,
                                      const char *first_qend) {
  int eb = cj_dtype_bytes(type->dtype);
  int64_t nel = type->num_elements;
  const char *q = d->s == first_q ? first_qend : scan_string_end(d->s + 1, d->e);
  if (!q) {
    d_err(d, "unterminated string in dense literal");
    return NULL;
  }
  const char *h = d->s + 1;
  size_t hn = (size_t)(q - h);
  if (hn < 2 || h[0] != '0' || (h[1] != 'x' && h[1] != 'X')) {
    d_err(d, "expected a hex string \"0x...\" in dense literal");
    return NULL;
  }
  h += 2;
  hn -= 2;
  if (hn % 2) {
    d_err(d, "odd number of hex digits in dense literal");
    return NULL;
  }
  size_t nb = hn / 2;
  bool splat;
  if (nel < 0) {
    d_err(d, "dense literal needs a static shape");
    return NULL;
  }
  if ((uint64_t)nel * (uint64_t)eb == nb) {
    splat = false;
  } else if (nb == (size_t)eb) {
    splat = true;
  } else {
    d_err(d,
          "elements hex data size is invalid for provided type: %zu bytes for %lld "
          "elements of %d bytes",
          nb, (long long)nel, eb);
    return NULL;
  }
  unsigned char *buf = cj_arena_alloc_aligned(&p->m->arena, nb ? nb : 1, 64);
  if (!buf) {
    oom(p);
    return NULL;
  }
  size_t bad = 0;
  if (!hex_decode(h, nb, buf, &bad)) {
    d->s = h + bad;
    d_err(d, "invalid hex digit in dense literal");
    return NULL;
  }
  d->s = q + 1;
  d_ws(d);
  if (d->s < d->e) {
    d_err(d, "unexpected text after hex string in dense literal");
    return NULL;
  }
  if (!splat && dense_all_equal(buf, nel, eb)) {
    splat = true;
    nb = (size_t)eb;
  }
  /* the data is already in the arena: build the attribute around it */
  cj_attr *a = CJ_ARENA_NEW(&p->m->arena, cj_attr);
  if (!a) {
    oom(p);
    return NULL;
  }
  a->kind = CJ_ATTR_DENSE;
  a->dense.type = type;
  a->dense.data = buf;
  a->dense.nbytes = nb;
  a->dense.splat = splat;
  return a;
}

/* dense<[[...], ...]> : T, nested lists of the type's shape; d is at the '['. */
static const cj_attr *parse_dense_list(P *p, dlex *d, const cj_type *type) {
  cj_dtype dt = type->dtype;
  int eb = cj_dtype_bytes(dt);
  int64_t nel = type->num_elements;
  if (nel < 0) {
    d_err(d, "dense literal needs a static shape");
    return NULL;
  }
  int32_t rank = type->rank;
  if (rank == 0) {
    d_err(d, "nested list for a rank-0 tensor");
    return NULL;
  }
  /* every element takes at least one character: a type larger than the text cannot match
   * (and must not make us allocate its size) */
  if ((uint64_t)nel > (uint64_t)(d->e - d->s)) {
    d_err(d, "dense literal is too short for the %lld elements of its type", (long long)nel);
    return NULL;
  }
  size_t nb = (size_t)nel * (size_t)eb;
  unsigned char *buf = cj_arena_alloc_aligned(&p->m->arena, nb ? nb : 1, 64);
  if (!buf) {
    oom(p);
    return NULL;
  }
  /* iterative walk over the nesting: cnt[k] elements seen at depth k */
  int64_t cnt[MAX_RANK];
  int depth = 0;
  size_t w = 0;
  d->s++; /* '[' */
  cnt[0] = 0;
  for (;;) {
    d_ws(d);
    if (d->s >= d->e) {
      d_err(d, "unterminated list in dense literal");
      return NULL;
    }
    if (*d->s == ']') {
      if (cnt[depth] != type->dims[depth]) {
        d_err(d, "dense literal has %lld elements in dimension %d, the type has %lld",
              (long long)cnt[depth], depth, (long long)type->dims[depth]);
        return NULL;
      }
      d->s++;
      if (depth == 0) break;
      depth--;
      cnt[depth]++;
    } else {
      if (cnt[depth] > 0) {
        if (*d->s != ',') {
          d_err(d, "expected ',' or ']' in dense literal");
          return NULL;
        }
        d->s++;
        d_ws(d);
      }
      if (cnt[depth] >= type->dims[depth]) {
        d_err(d, "dense literal has more than %lld elements in dimension %d",
              (long long)type->dims[depth], depth);
        return NULL;
      }
      if (depth + 1 < rank) {
        if (d->s >= d->e || *d->s != '[') {
          d_err(d, "expected '[' (the type has rank %d)", rank);
          return NULL;
        }
        d->s++;
        depth++;
        cnt[depth] = 0;
      } else {
        if (d->s < d->e && *d->s == '[') {
          d_err(d, "dense literal nested deeper than the type's rank %d", rank);
          return NULL;
        }
        if (w >= nb) {
          d_err(d, "too many elements in dense literal");
          return NULL;
        }
        if (!d_scalar(d, dt, buf + w)) return NULL;
        w += (size_t)eb;
        cnt[depth]++;
      }
    }
  }
  d_ws(d);
  if (d->s < d->e) {
    d_err(d, "unexpected text after dense list");
    return NULL;
  }
  cj_attr *a = CJ_ARENA_NEW(&p->m->arena, cj_attr);
  if (!a) {
    oom(p);
    return NULL;
  }
  bool splat = dense_all_equal(buf, nel, eb);
  a->kind = CJ_ATTR_DENSE;
  a->dense.type = type;
  a->dense.data = buf;
  a->dense.nbytes = splat ? (size_t)eb : nb;
  a->dense.splat = splat;
  return a;
}

static const cj_attr *parse_dense(P *p) {
  token at_tok = p->tok;
  next(p);
  if (!at(p, TK_LT)) {
    expect(p, TK_LT, "'<' after 'dense'");
    return NULL;
  }
  /* the literal ends at the first '>' outside a string */
  const char *b = p->p, *s = p->p, *e = p->end;
  int bline = p->line;
  const char *bls = p->ls;
  const char *first_q = NULL, *first_qend = NULL; /* the first string (a hex blob) */
  for (;;) {
    while (s < e && *s != '>' && *s != '"') s++;
    if (s >= e) {
      perr_at(p, &at_tok, "unterminated dense literal");
      return NULL;
    }
    if (*s == '>') break;
    const char *q = scan_string_end(s + 1, e);
    if (!q) {
      perr_at(p, &at_tok, "unterminated string in dense literal");
      return NULL;
    }
    if (!first_q) {
      first_q = s;
      first_qend = q;
    }
    s = q + 1;
  }
  const char *gt = s;
  advance_to(p, gt + 1);
  next(p);
  if (!at(p, TK_COLON)) {
    perr(p, "expected ':' and a type after dense literal");
    return NULL;
  }
  next(p);
  token tt = p->tok;
  const cj_type *type = parse_type(p);
  if (!type) return NULL;
  if (type->kind != CJ_TYPE_TENSOR || type->elem->kind != CJ_TYPE_ELEM) {
    perr_at(p, &tt, "dense literal needs a tensor type of integer, float or complex elements");
    return NULL;
  }
  cj_dtype dt = type->dtype;
  int eb = cj_dtype_bytes(dt);
  if (eb <= 0 || dt == CJ_TOKEN) {
    perr_at(p, &tt, "unsupported dense element type");
    return NULL;
  }
  int64_t nel = type->num_elements;
  dlex d = {p, b, gt, bline, bls};
  d_ws(&d);
  tmark mk = tmp_mark(p);
  const cj_attr *res = NULL;
  if (d.s >= d.e) { /* dense<> */
    if (nel != 0) {
      d_err(&d, "empty dense literal for a type with %lld elements", (long long)nel);
      return NULL;
    }
    res = cj_attr_dense(p->m, type, NULL, 0, false);
  } else if (*d.s == '"') {
    return parse_dense_hex(p, &d, type, first_q, first_qend);
  } else if (*d.s == '[') {
    return parse_dense_list(p, &d, type);
  } else {
    unsigned char one[16];
    memset(one, 0, sizeof one);
    if (!d_scalar(&d, dt, one)) return NULL;
    d_ws(&d);
    if (d.s < d.e) {
      d_err(&d, "unexpected text after dense value");
      return NULL;
    }
    res = cj_attr_dense(p->m, type, one, (size_t)eb, true);
  }
  tmp_release(p, mk);
  if (!res) oom(p);
  return res;
}

/* array<T: v, ...> : the current token is 'array' */
static const cj_attr *parse_dense_array(P *p) {
  next(p);
  if (!expect(p, TK_LT, "'<' after 'array'")) return NULL;
  token tt = p->tok;
  const cj_type *t = parse_type(p);
  if (!t) return NULL;
  if (t->kind != CJ_TYPE_ELEM ||
      (!cj_dtype_is_int(t->dtype) && !cj_dtype_is_float(t->dtype) && t->dtype != CJ_PRED)) {
    perr_at(p, &tt, "array<...> needs an integer or float element type");
    return NULL;
  }
  cj_dtype dt = t->dtype;
  int eb = cj_dtype_bytes(dt);
  VEC(unsigned char) buf = {0};
  int64_t n = 0;
  if (accept(p, TK_COLON)) {
    for (;;) {
      unsigned char e8[8] = {0};
      /* reuse the dense scalar reader on the token text */
      token st = p->tok;
      const char *from = st.s;
      const char *to = st.s;
      /* find the end of this element: up to ',' or '>' */
      while (to < p->end && *to != ',' && *to != '>') to++;
      dlex d = {p, from, to, st.line, st.ls};
      if (!d_scalar(&d, dt, e8)) return NULL;
      d_ws(&d);
      if (d.s != d.e) {
        d_err(&d, "unexpected text in array<...>");
        return NULL;
      }
      advance_to(p, to);
      next(p);
      for (int i = 0; i < eb; i++)
        if (!VPUSH(p, buf, e8[i])) return NULL;
      n++;
      if (!accept(p, TK_COMMA)) break;
    }
  }
  if (!expect(p, TK_GT, "'>' to end array<...>")) return NULL;
  const cj_attr *a = cj_attr_dense_array(p->m, dt, n, buf.v ? (void *)buf.v : (void *)"");
  if (!a) oom(p);
  return a;
}

/* ---- structured attributes ---- */

static const cj_attr *parse_enum_value(P *p, cj_enum_kind ek);

static const cj_attr *parse_struct_field(P *p, cj_struct_kind sk, int f) {
  const cj_attr *v = NULL;
  switch (cj_struct_field_kind(sk, f)) {
    case CJ_FK_I64: {
      int64_t x;
      if (!parse_signed_int(p, &x)) return NULL;
      v = cj_attr_int(p->m, x, cj_type_elem(p->m, CJ_S64));
      break;
    }
    case CJ_FK_I64ARR:
      return parse_dims_list(p, true);
    case CJ_FK_BOOL:
      if (accept_kw(p, "true"))
        v = cj_attr_bool(p->m, true);
      else if (accept_kw(p, "false"))
        v = cj_attr_bool(p->m, false);
      else {
        char b[64];
        perr(p, "expected 'true' or 'false', found %s", tok_text(p, b, sizeof b));
        return NULL;
      }
      break;
    case CJ_FK_F64: {
      double x;
      if (!parse_number_f64(p, &x)) return NULL;
      v = cj_attr_float(p->m, x, cj_type_elem(p->m, CJ_F64));
      break;
    }
    case CJ_FK_TYPE: {
      const cj_type *t = parse_type(p);
      if (!t) return NULL;
      v = cj_attr_type(p->m, t);
      break;
    }
    case CJ_FK_ENUM_RESULT_ACCURACY_MODE: {
      if (at(p, TK_BARE)) return parse_enum_value(p, CJ_EK_RESULT_ACCURACY_MODE);
      token t = p->tok;
      const cj_attr *a = parse_attr(p);
      if (!a) return NULL;
      if (a->kind != CJ_ATTR_ENUM || a->en.ek != CJ_EK_RESULT_ACCURACY_MODE) {
        perr_at(p, &t, "expected a #stablehlo.result_accuracy_mode attribute");
        return NULL;
      }
      return a;
    }
  }
  if (!v) oom(p);
  return v;
}

/* Struct attributes are kept canonical: a field equal to its default (0, [], false, 0.0, the
 * first enum case) is stored as NULL, as structs.def says; so equal attributes compare equal
 * however they were spelled. */
static const cj_attr *mk_struct(P *p, cj_struct_kind sk, const cj_attr **fields) {
  int nf = cj_struct_num_fields(sk);
  if (sk != CJ_SK_TYPE_EXTENSIONS) {
    for (int i = 0; i < nf; i++) {
      const cj_attr *f = fields[i];
      if (!f) continue;
      int64_t v, tmp[1], n;
      double d;
      bool b;
      switch (cj_struct_field_kind(sk, i)) {
        case CJ_FK_I64:
          if (cj_attr_get_i64(f, &v) && v == 0) fields[i] = NULL;
          break;
        case CJ_FK_I64ARR:
          if (cj_attr_get_i64s(f, tmp, 1, &n) && n == 0) fields[i] = NULL;
          break;
        case CJ_FK_BOOL:
          if (cj_attr_get_bool(f, &b) && !b) fields[i] = NULL;
          break;
        case CJ_FK_F64:
          if (cj_attr_get_f64(f, &d) && d == 0 && !signbit(d)) fields[i] = NULL;
          break;
        case CJ_FK_ENUM_RESULT_ACCURACY_MODE:
          if (f->kind == CJ_ATTR_ENUM && f->en.v == 0) fields[i] = NULL;
          break;
        case CJ_FK_TYPE:
          break;
      }
    }
  }
  const cj_attr *a = cj_attr_struct(p->m, sk, fields);
  if (!a) oom(p);
  return a;
}

/* `<field = value, ...>` for struct kind sk; the current token is '<' */
static const cj_attr *parse_struct_body(P *p, cj_struct_kind sk) {
  const cj_attr *fields[16] = {0};
  int nf = cj_struct_num_fields(sk);
  if (!expect(p, TK_LT, "'<'")) return NULL;
  if (!at(p, TK_GT)) {
    for (;;) {
      if (!at(p, TK_BARE)) {
        char b[64];
        perr(p, "expected a field name of #%s.%s, found %s", cj_struct_dialect(sk),
             cj_struct_mnemonic(sk), tok_text(p, b, sizeof b));
        return NULL;
      }
      int f = cj_struct_field_index(sk, p->tok.s, p->tok.n);
      if (f < 0) {
        char names[512];
        size_t k = 0;
        for (int i = 0; i < nf && k < sizeof names - 64; i++)
          k += (size_t)snprintf(names + k, sizeof names - k, "%s`%s`", i ? ", " : "",
                                cj_struct_field_name(sk, i));
        perr(p, "unknown field '%.*s' of #%s.%s; expected one of: %s", (int)p->tok.n, p->tok.s,
             cj_struct_dialect(sk), cj_struct_mnemonic(sk), names);
        return NULL;
      }
      if (fields[f]) {
        perr(p, "duplicated `%s` entry", cj_struct_field_name(sk, f));
        return NULL;
      }
      next(p);
      if (!expect(p, TK_EQ, "'='")) return NULL;
      fields[f] = parse_struct_field(p, sk, f);
      if (!fields[f]) return NULL;
      if (!accept(p, TK_COMMA)) break;
    }
  }
  if (!expect(p, TK_GT, "'>'")) return NULL;
  return mk_struct(p, sk, fields);
}

/* The compact convolution dimension form [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]. */
static bool parse_conv_dims_group(P *p, const char *letters, int64_t out_nonspatial[2],
                                  vec_i64 *spatial) {
  if (!expect(p, TK_LSQ, "'['")) return false;
  int64_t idx = 0, maxsp = -1;
  int64_t pos[MAX_RANK];
  bool seen[MAX_RANK] = {0};
  bool got[2] = {false, false};
  for (;;) {
    if (idx >= MAX_RANK) return perr(p, "too many convolution dimensions");
    if (at(p, TK_INT)) {
      token t = p->tok;
      int64_t v;
      if (!parse_signed_int(p, &v)) return false;
      if (v < 0 || v >= MAX_RANK) return perr_at(p, &t, "Unexpected dimension %lld", (long long)v);
      if (seen[v])
        return perr_at(p, &t, "Duplicate entries for spatial dimension %lld", (long long)v);
      seen[v] = true;
      pos[v] = idx;
      if (v > maxsp) maxsp = v;
    } else if (at(p, TK_BARE) && p->tok.n == 1 &&
               (p->tok.s[0] == letters[0] || p->tok.s[0] == letters[1])) {
      int k = p->tok.s[0] == letters[0] ? 0 : 1;
      if (got[k]) return perr(p, "Unexpected dimension %c", letters[k]);
      got[k] = true;
      out_nonspatial[k] = idx;
      next(p);
    } else {
      char b[64];
      return perr(p, "Unexpected dimension %s, expecting %c, %c or a spatial dimension",
                  tok_text(p, b, sizeof b), letters[0], letters[1]);
    }
    idx++;
    if (!accept(p, TK_COMMA)) break;
  }
  if (!got[0] || !got[1])
    return perr(p, "Expected dimensions %c and %c not specified", letters[0], letters[1]);
  if (!expect(p, TK_RSQ, "']'")) return false;
  for (int64_t s = 0; s <= maxsp; s++) {
    if (!seen[s]) return perr(p, "Expected spatial dimensions %lld not specified", (long long)s);
    if (!VPUSH(p, (*spatial), pos[s])) return false;
  }
  return true;
}

static const cj_attr *parse_conv_dims(P *p) {
  int64_t in[2], ker[2], out[2];
  vec_i64 si = {0}, sk = {0}, so = {0};
  if (!parse_conv_dims_group(p, "bf", in, &si)) return NULL;
  if (!expect_kw(p, "x")) return NULL;
  if (!parse_conv_dims_group(p, "io", ker, &sk)) return NULL;
  if (!expect(p, TK_ARROW, "'->'")) return NULL;
  if (!parse_conv_dims_group(p, "bf", out, &so)) return NULL;
  cj_module *m = p->m;
  const cj_type *i64 = cj_type_elem(m, CJ_S64);
  int64_t z = 0;
  const cj_attr *f[CJ_SF_CONV__COUNT] = {cj_attr_int(m, in[0], i64),
                                         cj_attr_int(m, in[1], i64),
                                         cj_attr_i64_array(m, si.n, si.v ? si.v : &z),
                                         cj_attr_int(m, ker[0], i64),
                                         cj_attr_int(m, ker[1], i64),
                                         cj_attr_i64_array(m, sk.n, sk.v ? sk.v : &z),
                                         cj_attr_int(m, out[0], i64),
                                         cj_attr_int(m, out[1], i64),
                                         cj_attr_i64_array(m, so.n, so.v ? so.v : &z)};
  for (int i = 0; i < CJ_SF_CONV__COUNT; i++)
    if (!f[i]) {
      oom(p);
      return NULL;
    }
  return mk_struct(p, CJ_SK_CONV, f);
}

/* #dialect.mnemonic<...> for a known struct; the current token is the '#...' one. */
static const cj_attr *parse_struct_attr(P *p, cj_struct_kind sk) {
  next(p); /* now at '<' */
  if (sk == CJ_SK_CONV) {
    if (!expect(p, TK_LT, "'<'")) return NULL;
    if (accept_kw(p, "raw")) {
      /* raw struct form: fields, then '>' (the '<' was consumed) */
      const cj_attr *fields[CJ_SF_CONV__COUNT] = {0};
      for (;;) {
        if (!at(p, TK_BARE)) {
          perr(p, "expected a field name");
          return NULL;
        }
        int f = cj_struct_field_index(sk, p->tok.s, p->tok.n);
        if (f < 0) {
          perr(p, "unknown field '%.*s' of #stablehlo.conv", (int)p->tok.n, p->tok.s);
          return NULL;
        }
        next(p);
        if (!expect(p, TK_EQ, "'='")) return NULL;
        if (!(fields[f] = parse_struct_field(p, sk, f))) return NULL;
        if (!accept(p, TK_COMMA)) break;
      }
      if (!expect(p, TK_GT, "'>'")) return NULL;
      return mk_struct(p, sk, fields);
    }
    const cj_attr *a = parse_conv_dims(p);
    if (!a || !expect(p, TK_GT, "'>'")) return NULL;
    return a;
  }
  return parse_struct_body(p, sk);
}

/* ---- enums ---- */

static bool find_enum(const char *dialect, size_t dn, const char *kw, size_t kn, cj_enum_kind *ek) {
  for (int k = 0; k < CJ_EK_COUNT; k++) {
    const char *d = cj_enum_dialect((cj_enum_kind)k), *w = cj_enum_keyword((cj_enum_kind)k);
    if (d && w && strlen(d) == dn && memcmp(d, dialect, dn) == 0 && strlen(w) == kn &&
        memcmp(w, kw, kn) == 0) {
      *ek = (cj_enum_kind)k;
      return true;
    }
  }
  return false;
}

/* A bare enum case name (GT); the current token is the name. */
static const cj_attr *parse_enum_value(P *p, cj_enum_kind ek) {
  int32_t v;
  if (!at(p, TK_BARE) || !cj_enum_from_name(ek, p->tok.s, p->tok.n, &v)) {
    char b[64];
    perr(p, "expected a %s value, found %s", cj_enum_keyword(ek), tok_text(p, b, sizeof b));
    return NULL;
  }
  next(p);
  const cj_attr *a = cj_attr_enum(p->m, ek, v);
  if (!a) oom(p);
  return a;
}

/* ---- locations ---- */

static const cj_attr *parse_loc_inst(P *p);

static const cj_attr *loc_alias_ref(P *p) {
  token t = p->tok;
  const char *name = t.s + 1;
  uint32_t len = (uint32_t)t.n - 1;
  const cj_attr *a = find_attr_alias(p, name, len);
  next(p);
  if (a) {
    if (a->kind != CJ_ATTR_LOC) {
      perr_at(p, &t, "'#%.*s' is not a location", (int)len, name);
      return NULL;
    }
    return a;
  }
  if (p->in_alias_def) {
    perr_at(p, &t, "undefined location alias '#%.*s'", (int)len, name);
    return NULL;
  }
  /* defined later in the file: a placeholder filled in at the end */
  cj_attr *ph = CJ_ARENA_NEW(&p->m->arena, cj_attr);
  if (!ph) {
    oom(p);
    return NULL;
  }
  ph->kind = CJ_ATTR_LOC;
  ph->loc.lk = CJ_LOC_UNKNOWN;
  if (!mgrow(p, (void **)&p->locfix, &p->caplocfix, p->nlocfix, sizeof *p->locfix)) return NULL;
  locfix *f = &p->locfix[p->nlocfix++];
  f->ph = ph;
  f->name = name;
  f->len = len;
  f->at = t;
  return ph;
}

static const cj_attr *parse_loc_inst_inner(P *p) {
  cj_module *m = p->m;
  if (at(p, TK_HASH)) return loc_alias_ref(p);
  if (accept_kw(p, "unknown")) return cj_attr_loc(m, CJ_LOC_UNKNOWN, NULL, 0, 0, 0, NULL, NULL);
  if (accept_kw(p, "callsite")) {
    if (!expect(p, TK_LPAREN, "'('")) return NULL;
    const cj_attr *ch[2];
    if (!(ch[0] = parse_loc_inst(p)) || !expect_kw(p, "at") || !(ch[1] = parse_loc_inst(p)) ||
        !expect(p, TK_RPAREN, "')'"))
      return NULL;
    return cj_attr_loc(m, CJ_LOC_CALLSITE, NULL, 0, 0, 2, ch, NULL);
  }
  if (accept_kw(p, "fused")) {
    const cj_attr *meta = NULL;
    if (accept(p, TK_LT)) {
      if (!(meta = parse_attr(p)) || !expect(p, TK_GT, "'>'")) return NULL;
    }
    if (!expect(p, TK_LSQ, "'['")) return NULL;
    VEC(const cj_attr *) ch = {0};
    if (!at(p, TK_RSQ)) {
      for (;;) {
        const cj_attr *c = parse_loc_inst(p);
        if (!c || !VPUSH(p, ch, c)) return NULL;
        if (!accept(p, TK_COMMA)) break;
      }
    }
    if (!expect(p, TK_RSQ, "']'")) return NULL;
    return cj_attr_loc(m, CJ_LOC_FUSED, NULL, 0, 0, (int32_t)ch.n, ch.v, meta);
  }
  if (at(p, TK_STRING)) {
    size_t len;
    char *s = decode_name(p, &p->tok, 0, &len);
    if (!s) return NULL;
    next(p);
    if (accept(p, TK_COLON)) { /* "file":line:col */
      int64_t line, col = 0;
      if (!parse_signed_int(p, &line)) return NULL;
      if (accept(p, TK_COLON) && !parse_signed_int(p, &col)) return NULL;
      if (accept_kw(p, "to")) { /* a range: keep the start */
        int64_t x;
        if (at(p, TK_INT) && !parse_signed_int(p, &x)) return NULL;
        if (accept(p, TK_COLON) && !parse_signed_int(p, &x)) return NULL;
      }
      if (line < 0 || line > INT32_MAX || col < 0 || col > INT32_MAX) {
        perr(p, "location line or column out of range");
        return NULL;
      }
      return cj_attr_loc(m, CJ_LOC_FILE, s, (int32_t)line, (int32_t)col, 0, NULL, NULL);
    }
    if (accept(p, TK_LPAREN)) { /* "name"(child) */
      const cj_attr *c = parse_loc_inst(p);
      if (!c || !expect(p, TK_RPAREN, "')'")) return NULL;
      return cj_attr_loc(m, CJ_LOC_NAME, s, 0, 0, 1, &c, NULL);
    }
    return cj_attr_loc(m, CJ_LOC_NAME, s, 0, 0, 0, NULL, NULL);
  }
  char b[64];
  perr(p, "expected a location, found %s", tok_text(p, b, sizeof b));
  return NULL;
}

static const cj_attr *parse_loc_inst(P *p) {
  if (!enter(p)) return NULL;
  const cj_attr *a = parse_loc_inst_inner(p);
  leave(p);
  if (!a && !p->err) oom(p);
  return a;
}

/* loc(...): the current token is 'loc' */
static const cj_attr *parse_loc(P *p) {
  next(p);
  if (!expect(p, TK_LPAREN, "'(' after 'loc'")) return NULL;
  const cj_attr *a = parse_loc_inst(p);
  if (!a || !expect(p, TK_RPAREN, "')' to end the location")) return NULL;
  return a;
}

/* an optional trailing loc(...) */
static bool parse_opt_loc(P *p, const cj_attr **out) {
  *out = NULL;
  if (!at_kw(p, "loc")) return true;
  /* `loc` must be followed by '(' to be a location */
  const char *q = p->tok.s + p->tok.n;
  while (q < p->end && (*q == ' ' || *q == '\t')) q++;
  if (q >= p->end || *q != '(') return true;
  *out = parse_loc(p);
  return *out != NULL;
}

/* ---- the general attribute ---- */

static const cj_attr *parse_dict_body(P *p, tok_kind close);

static const cj_attr *opaque_attr_here(P *p) {
  const char *ts;
  size_t tn, cn;
  if (!take_dialect_text(p, &ts, &tn)) return NULL;
  char *txt = collapse_text(p, ts, tn, &cn);
  if (!txt) return NULL;
  cj_attr *a = CJ_ARENA_NEW(&p->m->arena, cj_attr);
  if (!a) {
    oom(p);
    return NULL;
  }
  a->kind = CJ_ATTR_OPAQUE;
  a->opaque.text = txt;
  a->opaque.len = cn;
  return a;
}

static const cj_attr *parse_hash_attr(P *p) {
  token t = p->tok;
  const char *name = t.s + 1;
  size_t len = t.n - 1;
  bool body = t.s + t.n < p->end && t.s[t.n] == '<';
  const char *dot = memchr(name, '.', len);
  if (!body) {
    const cj_attr *a = find_attr_alias(p, name, (uint32_t)len);
    if (a) {
      next(p);
      return a;
    }
    if (!dot) {
      perr(p, "undefined attribute alias '#%.*s'", (int)len, name);
      return NULL;
    }
    return opaque_attr_here(p);
  }
  /* #dialect<keyword CASE> */
  if (!dot) {
    const char *q = t.s + t.n + 1;
    while (q < p->end && (*q == ' ' || *q == '\t')) q++;
    const char *kw = q;
    while (q < p->end && is_bare_char((unsigned char)*q)) q++;
    cj_enum_kind ek;
    if (find_enum(name, len, kw, (size_t)(q - kw), &ek)) {
      next(p); /* '<' */
      if (!expect(p, TK_LT, "'<'")) return NULL;
      next(p); /* the keyword */
      const cj_attr *a = parse_enum_value(p, ek);
      if (!a || !expect(p, TK_GT, "'>'")) return NULL;
      return a;
    }
    return opaque_attr_here(p);
  }
  /* #dialect.mnemonic<...> */
  size_t dn = (size_t)(dot - name);
  const char *mn = dot + 1;
  size_t mnl = len - dn - 1;
  for (int k = 0; k < CJ_SK_COUNT; k++) {
    const char *d = cj_struct_dialect((cj_struct_kind)k),
               *mm = cj_struct_mnemonic((cj_struct_kind)k);
    if (strlen(d) == dn && memcmp(d, name, dn) == 0 && strlen(mm) == mnl &&
        memcmp(mm, mn, mnl) == 0)
      return parse_struct_attr(p, (cj_struct_kind)k);
  }
  if (dn == 9 && memcmp(name, "stablehlo", 9) == 0 && mnl == 6 && memcmp(mn, "bounds", 6) == 0) {
    next(p);
    if (!expect(p, TK_LT, "'<'")) return NULL;
    VEC(int64_t) v = {0};
    if (!at(p, TK_GT)) {
      for (;;) {
        int64_t x;
        if (accept(p, TK_QUESTION))
          x = CJ_DYN;
        else if (!parse_signed_int(p, &x))
          return NULL;
        if (!VPUSH(p, v, x)) return NULL;
        if (!accept(p, TK_COMMA)) break;
      }
    }
    if (!expect(p, TK_GT, "'>'")) return NULL;
    int64_t z = 0;
    const cj_attr *f[1] = {cj_attr_i64_array(p->m, v.n, v.v ? v.v : &z)};
    if (!f[0]) {
      oom(p);
      return NULL;
    }
    const cj_attr *a = cj_attr_struct(p->m, CJ_SK_TYPE_EXTENSIONS, f);
    if (!a) oom(p);
    return a;
  }
  /* #stablehlo.comparison_direction<GT> style enums */
  cj_enum_kind ek;
  if (find_enum(name, dn, mn, mnl, &ek)) {
    next(p);
    if (!expect(p, TK_LT, "'<'")) return NULL;
    const cj_attr *a = parse_enum_value(p, ek);
    if (!a || !expect(p, TK_GT, "'>'")) return NULL;
    return a;
  }
  return opaque_attr_here(p);
}

static const cj_attr *parse_symref(P *p) {
  VEC(const char *) parts = {0};
  do {
    if (!at(p, TK_AT)) {
      perr(p, "expected a symbol reference");
      return NULL;
    }
    const char *s;
    if (p->tok.n < 2) {
      perr(p, "expected a symbol name after '@'");
      return NULL;
    }
    if (p->tok.s[1] == '"') {
      size_t n;
      if (!(s = decode_name(p, &p->tok, 1, &n))) return NULL;
    } else {
      s = cj_arena_strndup(&p->m->arena, p->tok.s + 1, p->tok.n - 1);
      if (!s) {
        oom(p);
        return NULL;
      }
    }
    if (!VPUSH(p, parts, s)) return NULL;
    next(p);
    /* nested reference: '::' directly followed by '@' */
  } while (at(p, TK_COLON) && p->p < p->end && *p->p == ':' && (next(p), next(p), true));
  const cj_attr *a = cj_attr_symref(p->m, parts.v[0], (int32_t)parts.n - 1, parts.v + 1);
  if (!a) oom(p);
  return a;
}

static const cj_attr *typed_number(P *p, bool neg, token num) {
  /* an integer or float literal, with an optional `: type` */
  const cj_type *t = NULL;
  if (accept(p, TK_COLON)) {
    if (!(t = parse_type(p))) return NULL;
    if (t->kind != CJ_TYPE_ELEM || (!cj_dtype_is_int(t->dtype) && !cj_dtype_is_float(t->dtype) &&
                                    t->dtype != CJ_PRED && t->dtype != CJ_INDEX)) {
      perr_at(p, &num, "a number attribute needs an integer or float type");
      return NULL;
    }
  }
  cj_module *m = p->m;
  if (num.k == TK_FLOAT || (t && cj_dtype_is_float(t->dtype))) {
    cj_dtype dt = t ? t->dtype : CJ_F64;
    if (!cj_dtype_is_float(dt)) {
      perr_at(p, &num, "float literal needs a float type");
      return NULL;
    }
    uint64_t bits;
    if (!float_lit_bits(p, dt, num.s, num.n, neg, &bits, num.line, num.ls)) return NULL;
    double v = cj_float_decode(dt, bits);
    const cj_attr *a = cj_attr_float(m, v, t ? t : cj_type_elem(m, CJ_F64));
    if (!a) oom(p);
    return a;
  }
  uint64_t v;
  if (!lit_uint(num.s, num.n, &v)) {
    perr_at(p, &num, "integer constant out of range");
    return NULL;
  }
  cj_dtype dt = t ? t->dtype : CJ_S64;
  const cj_dtype_info *in = cj_dtype_get(dt);
  bool ok = true;
  if (dt == CJ_PRED) {
    ok = !neg && v <= 1;
  } else if (in->kind == CJ_DK_UINT) {
    ok = !neg || v == 0;
    if (in->bits < 64) ok = ok && v < (1ull << in->bits);
  } else {
    int bits = in->bits;
    if (neg)
      ok = v <= (1ull << (bits - 1));
    else
      ok = bits >= 64 || v < (1ull << bits);
  }
  if (!ok) {
    perr_at(p, &num, "integer constant out of range for type %s", in->mlir ? in->mlir : "?");
    return NULL;
  }
  uint64_t u = neg ? 0 - v : v;
  int64_t sv;
  if (in->kind == CJ_DK_SINT && in->bits < 64) { /* sign-extend from the width */
    uint64_t mask = (1ull << in->bits) - 1;
    u &= mask;
    if (u >> (in->bits - 1)) u |= ~mask;
  } else if (in->kind == CJ_DK_UINT && in->bits < 64) {
    u &= (1ull << in->bits) - 1;
  }
  memcpy(&sv, &u, 8);
  const cj_attr *a = cj_attr_int(m, sv, t ? t : cj_type_elem(m, CJ_S64));
  if (!a) oom(p);
  return a;
}

static const cj_attr *parse_attr_inner(P *p) {
  cj_module *m = p->m;
  token t = p->tok;
  switch (t.k) {
    case TK_MINUS: {
      next(p);
      if (!at(p, TK_INT) && !at(p, TK_FLOAT)) {
        perr(p, "expected a number after '-'");
        return NULL;
      }
      token num = p->tok;
      next(p);
      return typed_number(p, true, num);
    }
    case TK_INT:
    case TK_FLOAT:
      next(p);
      return typed_number(p, false, t);
    case TK_STRING: {
      size_t len;
      char *s = decode_string(p, t.s, t.n, &len);
      if (!s) return NULL;
      next(p);
      cj_attr *a = CJ_ARENA_NEW(&m->arena, cj_attr);
      if (!a) {
        oom(p);
        return NULL;
      }
      a->kind = CJ_ATTR_STRING;
      a->str.s = s;
      a->str.len = len;
      /* a typed string ("foo" : tensor<3xf32>) is accepted; the type is not kept */
      if (at(p, TK_COLON)) {
        next(p);
        if (!parse_type(p)) return NULL;
      }
      return a;
    }
    case TK_LSQ: {
      next(p);
      VEC(const cj_attr *) items = {0};
      if (!at(p, TK_RSQ)) {
        for (;;) {
          const cj_attr *x = parse_attr(p);
          if (!x || !VPUSH(p, items, x)) return NULL;
          if (!accept(p, TK_COMMA)) break;
        }
      }
      if (!expect(p, TK_RSQ, "',' or ']' in array attribute")) return NULL;
      const cj_attr *a = cj_attr_array(m, (int32_t)items.n, items.v);
      if (!a) oom(p);
      return a;
    }
    case TK_LBRACE:
      next(p);
      return parse_dict_body(p, TK_RBRACE);
    case TK_AT:
      return parse_symref(p);
    case TK_HASH:
      return parse_hash_attr(p);
    case TK_BANG:
    case TK_LPAREN: {
      const cj_type *ty = parse_type(p);
      if (!ty) return NULL;
      const cj_attr *a = cj_attr_type(m, ty);
      if (!a) oom(p);
      return a;
    }
    case TK_BARE: {
      if (tok_is(&t, "true") || tok_is(&t, "false")) {
        next(p);
        return cj_attr_bool(m, t.s[0] == 't');
      }
      if (tok_is(&t, "dense")) return parse_dense(p);
      if (tok_is(&t, "array")) return parse_dense_array(p);
      if (tok_is(&t, "unit")) {
        next(p);
        return cj_attr_unit(m);
      }
      if (tok_is(&t, "loc") && p->p < p->end && *p->p == '(') return parse_loc(p);
      if ((tok_is(&t, "affine_map") || tok_is(&t, "affine_set") || tok_is(&t, "sparse") ||
           tok_is(&t, "dense_resource") || tok_is(&t, "strided") || tok_is(&t, "distinct") ||
           tok_is(&t, "opaque")) &&
          p->p < p->end && (*p->p == '<' || *p->p == '[')) {
        if (*p->p == '[') { /* distinct[0]<...> */
          const char *q = memchr(p->p, ']', (size_t)(p->end - p->p));
          if (!q || q + 1 >= p->end || q[1] != '<') {
            perr(p, "malformed distinct attribute");
            return NULL;
          }
          const char *end = scan_balanced(q + 1, p->end);
          if (!end) {
            perr(p, "unbalanced '<'");
            return NULL;
          }
          size_t cn;
          char *txt = collapse_text(p, t.s, (size_t)(end - t.s), &cn);
          if (!txt) return NULL;
          advance_to(p, end);
          next(p);
          return cj_attr_opaque(m, txt, cn);
        }
        return opaque_attr_here(p);
      }
      /* otherwise a type used as an attribute */
      const cj_type *ty = parse_type(p);
      if (!ty) return NULL;
      const cj_attr *a = cj_attr_type(m, ty);
      if (!a) oom(p);
      return a;
    }
    default: {
      char b[64];
      perr(p, "expected an attribute, found %s", tok_text(p, b, sizeof b));
      return NULL;
    }
  }
}

static const cj_attr *parse_attr(P *p) {
  if (!enter(p)) return NULL;
  const cj_attr *a = parse_attr_inner(p);
  leave(p);
  if (!a && !p->err) oom(p);
  return a;
}

/* `name = value` entries until `close` (consumed); into a list. */
static bool parse_named_list(P *p, tok_kind close, vec_named *out) {
  if (!at(p, close)) {
    for (;;) {
      const char *name;
      if (at(p, TK_BARE)) {
        name = cj_intern(p->m, p->tok.s, p->tok.n);
      } else if (at(p, TK_STRING)) {
        size_t n;
        char *s = decode_name(p, &p->tok, 0, &n);
        if (!s) return false;
        name = cj_intern(p->m, s, n);
      } else {
        char b[64];
        return perr(p, "expected an attribute name, found %s", tok_text(p, b, sizeof b));
      }
      if (!name) return oom(p);
      next(p);
      const cj_attr *v;
      if (accept(p, TK_EQ)) {
        v = parse_attr(p);
        if (!v) return false;
      } else {
        v = cj_attr_unit(p->m);
        if (!v) return oom(p);
      }
      cj_named_attr na = {name, v};
      if (!VPUSH(p, (*out), na)) return false;
      if (!accept(p, TK_COMMA)) break;
    }
  }
  return expect(
      p, close,
      close == TK_RBRACE ? "',' or '}' in attribute dictionary" : "',' or '}>' in properties");
}

static const cj_attr *parse_dict_body(P *p, tok_kind close) {
  vec_named items = {0};
  if (!parse_named_list(p, close, &items)) return NULL;
  const cj_attr *a = cj_attr_dict(p->m, (int32_t)items.n, items.v);
  if (!a) oom(p);
  return a;
}

/* ======================================================================== ops */

typedef struct opst {
  cj_op_kind kind;
  const char *name;
  VEC(cj_value *) opnds;
  VEC(token) otoks; /* where each operand was written */
  VEC(const cj_type *) rtypes;
  vec_named attrs;
  VEC(cj_region) regs;
  VEC(cj_block *) succs;
  const cj_attr *loc;
  cj_srcpos pos;
  token at; /* the op name */
  bool rtypes_set;
} opst;

typedef struct rarg {
  token tok; /* %name (k == TK_PERCENT) or none */
  const cj_type *type;
  const cj_attr *loc;
} rarg;

static bool parse_operation(P *p, cj_block *b);
static bool parse_region(P *p, cj_region *r, const rarg *args, uint32_t nargs, bool isolated);
static const rarg no_args[1];

static bool add_attr(P *p, opst *st, const char *name, const cj_attr *v) {
  if (!v) return p->err ? false : oom(p);
  const char *in = cj_intern(p->m, name, strlen(name));
  if (!in) return oom(p);
  cj_named_attr na = {in, v};
  return VPUSH(p, st->attrs, na);
}

static bool push_operand(P *p, opst *st) {
  token t = p->tok;
  cj_value *v = parse_value_use(p);
  if (!v) return false;
  return VPUSH(p, st->opnds, v) && VPUSH(p, st->otoks, t);
}

/* %a, %b, ... (possibly none) */
static bool parse_operand_list(P *p, opst *st) {
  if (!at(p, TK_PERCENT)) return true;
  for (;;) {
    if (!push_operand(p, st)) return false;
    if (!at(p, TK_COMMA)) return true;
    /* only continue if a value follows the comma */
    const char *q = p->p;
    while (q < p->end && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) q++;
    if (q >= p->end || *q != '%') return true;
    next(p);
  }
}

static bool parse_opt_attr_dict(P *p, opst *st) {
  if (!accept(p, TK_LBRACE)) return true;
  return parse_named_list(p, TK_RBRACE, &st->attrs);
}

static bool type_str(const cj_type *t, char *buf, size_t cap) {
  return print_type_short(t, buf, cap);
}

/* Gives operand i the type t (checking values already typed). */
static bool type_operand(P *p, opst *st, uint32_t i, const cj_type *t) {
  cj_value *v = st->opnds.v[i];
  if (is_placeholder(v)) {
    if (!v->type) {
      v->type = t;
      return true;
    }
  }
  if (v->type == t) return true;
  char a[160], b[160];
  type_str(t, a, sizeof a);
  type_str(v->type, b, sizeof b);
  return perr_at(p, &st->otoks.v[i], "use of value '%.*s' as %s, but it has type %s",
                 (int)st->otoks.v[i].n, st->otoks.v[i].s, a, b);
}

static bool type_operands(P *p, opst *st, const cj_type *const *types, uint32_t n,
                          const token *at_tok) {
  if (n != st->opnds.n)
    return perr_at(p, at_tok, "%u operand type%s given for %u operand%s", n, n == 1 ? "" : "s",
                   st->opnds.n, st->opnds.n == 1 ? "" : "s");
  for (uint32_t i = 0; i < n; i++)
    if (!type_operand(p, st, i, types[i])) return false;
  return true;
}

static bool set_results(P *p, opst *st, const cj_type *const *types, uint32_t n) {
  st->rtypes.n = 0;
  for (uint32_t i = 0; i < n; i++)
    if (!VPUSH(p, st->rtypes, types[i])) return false;
  st->rtypes_set = true;
  return true;
}

static bool set_result1(P *p, opst *st, const cj_type *t) { return set_results(p, st, &t, 1); }

/* `: (T, ...) -> R` */
static bool parse_colon_functional(P *p, opst *st) {
  if (!expect(p, TK_COLON, "':'")) return false;
  token tt = p->tok;
  if (!at(p, TK_LPAREN)) {
    char b[64];
    return perr(p, "expected a function type '(...) -> ...', found %s", tok_text(p, b, sizeof b));
  }
  const cj_type *f = parse_function_type(p);
  if (!f) return false;
  return type_operands(p, st, f->members, (uint32_t)f->rank, &tt) &&
         set_results(p, st, f->members + f->rank, (uint32_t)f->nresults);
}

/* custom<SameOperandsAndResultType>: `: T` or `: (T, ...) -> T` */
static bool parse_colon_same(P *p, opst *st) {
  if (!expect(p, TK_COLON, "':'")) return false;
  token tt = p->tok;
  const cj_type *t = parse_type(p);
  if (!t) return false;
  if (t->kind == CJ_TYPE_FUNCTION) {
    if (t->nresults != 1) return perr_at(p, &tt, "expected single output");
    return type_operands(p, st, t->members, (uint32_t)t->rank, &tt) &&
           set_results(p, st, t->members + t->rank, 1);
  }
  for (uint32_t i = 0; i < st->opnds.n; i++)
    if (!type_operand(p, st, i, t)) return false;
  return set_result1(p, st, t);
}

/* Creates the op from its state and appends it to block b. */
static cj_op *finish_op(P *p, opst *st, cj_block *b) {
  cj_module *m = p->m;
  cj_op *op = cj_op_create(m, st->kind, st->name, st->opnds.n, st->rtypes.n, st->regs.n);
  if (!op) {
    oom(p);
    return NULL;
  }
  for (uint32_t i = 0; i < st->opnds.n; i++) {
    cj_value *v = st->opnds.v[i];
    op->operands[i] = v;
    if (is_placeholder(v) && !note_slot(p, v, &op->operands[i])) return NULL;
  }
  for (uint32_t i = 0; i < st->rtypes.n; i++) op->results[i].type = st->rtypes.v[i];
  for (uint32_t i = 0; i < st->regs.n; i++) {
    op->regions[i] = st->regs.v[i];
    op->regions[i].op = op;
    for (cj_block *blk = op->regions[i].first; blk; blk = blk->next) blk->region = &op->regions[i];
  }
  if (st->attrs.n) {
    /* a duplicate name keeps the last value (as cj_attr_dict does) */
    cj_named_attr *na = CJ_ARENA_ARRAY(&m->arena, cj_named_attr, st->attrs.n);
    if (!na) {
      oom(p);
      return NULL;
    }
    uint32_t w = 0;
    for (uint32_t i = 0; i < st->attrs.n; i++) {
      uint32_t j = 0;
      for (; j < w; j++)
        if (na[j].name == st->attrs.v[i].name) break;
      if (j < w)
        na[j].value = st->attrs.v[i].value;
      else
        na[w++] = st->attrs.v[i];
    }
    op->attrs = na;
    op->nattrs = w;
  }
  if (st->succs.n) {
    op->successors = cj_arena_memdup(&m->arena, st->succs.v, sizeof(cj_block *) * st->succs.n);
    if (!op->successors) {
      oom(p);
      return NULL;
    }
    op->nsuccessors = st->succs.n;
  }
  op->loc = st->loc;
  op->pos = st->pos;
  cj_block_append(b, op);
  return op;
}

/* ---- blocks and regions ---- */

static blabel *find_label(P *p, uint32_t base, const char *name, uint32_t len) {
  for (uint32_t i = base; i < p->nlabels; i++)
    if (p->labels[i].len == len && memcmp(p->labels[i].name, name, len) == 0) return &p->labels[i];
  return NULL;
}

static cj_block *new_block(P *p) {
  cj_block *b = CJ_ARENA_NEW(&p->m->arena, cj_block);
  if (!b) oom(p);
  return b;
}

static bool block_set_args(P *p, cj_block *b, const rarg *args, uint32_t n) {
  b->nargs = n;
  if (n) {
    b->args = CJ_ARENA_ARRAY(&p->m->arena, cj_value, n);
    if (!b->args) return oom(p);
  }
  for (uint32_t i = 0; i < n; i++) {
    b->args[i].type = args[i].type;
    b->args[i].block = b;
    b->args[i].index = i;
    b->args[i].loc = args[i].loc;
    if (args[i].tok.k == TK_PERCENT) {
      const token *t = &args[i].tok;
      if (memchr(t->s, '#', t->n)) return perr_at(p, t, "block argument names cannot have '#'");
      if (!bind_name(p, t, t->s + 1, (uint32_t)t->n - 1, &b->args[i], 1)) return false;
    }
  }
  return true;
}

typedef struct vec_rarg {
  rarg *v;
  uint32_t n, cap;
} vec_rarg;

/* (%a: T loc(...), ...) */
static bool parse_block_arg_list(P *p, vec_rarg *out) {
  if (!expect(p, TK_LPAREN, "'('")) return false;
  if (!at(p, TK_RPAREN)) {
    for (;;) {
      rarg a;
      memset(&a, 0, sizeof a);
      if (!at(p, TK_PERCENT)) return expect(p, TK_PERCENT, "block argument");
      a.tok = p->tok;
      next(p);
      if (!expect(p, TK_COLON, "':'")) return false;
      if (!(a.type = parse_type(p))) return false;
      if (!parse_opt_loc(p, &a.loc)) return false;
      if (!VPUSH(p, (*out), a)) return false;
      if (!accept(p, TK_COMMA)) break;
    }
  }
  return expect(p, TK_RPAREN, "')'");
}

static bool parse_block_ops(P *p, cj_block *b) {
  while (!at(p, TK_RBRACE) && !at(p, TK_CARET)) {
    if (at(p, TK_EOF)) return p->err ? false : perr(p, "expected '}' to end the region");
    if (!parse_operation(p, b)) return false;
  }
  return true;
}

/* { blocks }: the current token is '{'. `args` are the entry block's arguments when the syntax
 * gives them outside the region (func, while, reduce); then the region has no entry label. */
static bool parse_region(P *p, cj_region *r, const rarg *args, uint32_t nargs, bool isolated) {
  memset(r, 0, sizeof *r);
  if (!enter(p)) return false;
  if (!expect(p, TK_LBRACE, "'{' to begin a region")) return false;
  scope_save sc = scope_push(p, isolated);
  uint32_t lbase = p->nlabels, outer_lbase = p->lbase;
  p->lbase = lbase;
  bool ok = true;
  tmark mk = tmp_mark(p);
  if (args) {
    cj_block *b = new_block(p);
    if (!b || !block_set_args(p, b, args, nargs)) goto fail;
    cj_region_append_block(r, b);
    if (!parse_block_ops(p, b)) goto fail;
  } else if (!at(p, TK_RBRACE) && !at(p, TK_CARET)) {
    cj_block *b = new_block(p);
    if (!b) goto fail;
    cj_region_append_block(r, b);
    if (!parse_block_ops(p, b)) goto fail;
  }
  while (at(p, TK_CARET)) {
    token lt = p->tok;
    next(p);
    blabel *l = find_label(p, lbase, lt.s + 1, (uint32_t)lt.n - 1);
    if (l && l->defined) {
      perr_at(p, &lt, "redefinition of block '%.*s'", (int)lt.n, lt.s);
      goto fail;
    }
    if (!l) {
      if (!mgrow(p, (void **)&p->labels, &p->caplabels, p->nlabels, sizeof *p->labels)) goto fail;
      l = &p->labels[p->nlabels++];
      memset(l, 0, sizeof *l);
      l->name = lt.s + 1;
      l->len = (uint32_t)lt.n - 1;
      if (!(l->b = new_block(p))) goto fail;
    }
    l->defined = true;
    l->at = lt;
    cj_block *b = l->b;
    b->label = cj_intern(p->m, lt.s + 1, lt.n - 1);
    if (!b->label) {
      oom(p);
      goto fail;
    }
    vec_rarg ba = {0};
    if (at(p, TK_LPAREN) && !parse_block_arg_list(p, &ba)) goto fail;
    if (!expect(p, TK_COLON, "':' after block label")) goto fail;
    if (!block_set_args(p, b, ba.v, ba.n)) goto fail;
    cj_region_append_block(r, b);
    if (!parse_block_ops(p, b)) goto fail;
  }
  if (!expect(p, TK_RBRACE, "'}' to end the region")) goto fail;
  for (uint32_t i = lbase; i < p->nlabels; i++)
    if (!p->labels[i].defined) {
      perr_at(p, &p->labels[i].at, "reference to an undefined block");
      goto fail;
    }
  p->nlabels = lbase;
  p->lbase = outer_lbase;
  if (!scope_pop(p, sc)) ok = false;
  tmp_release(p, mk);
  leave(p);
  return ok;
fail:
  leave(p);
  return false;
}

/* ^bb1 as a successor */
static cj_block *block_ref(P *p) {
  token lt = p->tok;
  if (!expect(p, TK_CARET, "block label")) return NULL;
  blabel *l = find_label(p, p->lbase, lt.s + 1, (uint32_t)lt.n - 1);
  if (!l) {
    if (!mgrow(p, (void **)&p->labels, &p->caplabels, p->nlabels, sizeof *p->labels)) return NULL;
    l = &p->labels[p->nlabels++];
    memset(l, 0, sizeof *l);
    l->name = lt.s + 1;
    l->len = (uint32_t)lt.n - 1;
    l->at = lt;
    if (!(l->b = new_block(p))) return NULL;
  }
  return l->b;
}

/* ---- the generic form ---- */

static bool op_isolated(cj_op_kind k) { return (cj_op_info_get(k)->flags & CJ_OPF_ISOLATED) != 0; }

/* ( {region}, {region} ) */
static bool parse_region_list(P *p, opst *st) {
  if (!expect(p, TK_LPAREN, "'('")) return false;
  for (;;) {
    cj_region r;
    if (!parse_region(p, &r, NULL, 0, op_isolated(st->kind))) return false;
    if (!VPUSH(p, st->regs, r)) return false;
    if (!accept(p, TK_COMMA)) break;
  }
  return expect(p, TK_RPAREN, "')' to end the region list");
}

static bool parse_generic_rest(P *p, opst *st) {
  if (!expect(p, TK_LPAREN, "'(' to begin the operand list")) return false;
  if (!at(p, TK_RPAREN)) {
    for (;;) {
      if (!push_operand(p, st)) return false;
      if (!accept(p, TK_COMMA)) break;
    }
  }
  if (!expect(p, TK_RPAREN, "')' to end the operand list")) return false;
  if (accept(p, TK_LSQ)) {
    for (;;) {
      cj_block *b = block_ref(p);
      if (!b || !VPUSH(p, st->succs, b)) return false;
      if (at(p, TK_LPAREN)) return perr(p, "successor operands are not supported");
      if (!accept(p, TK_COMMA)) break;
    }
    if (!expect(p, TK_RSQ, "']'")) return false;
  }
  if (at(p, TK_LT)) {
    next(p);
    if (!expect(p, TK_LBRACE, "'{' after '<' (properties)")) return false;
    if (!parse_named_list(p, TK_RBRACE, &st->attrs)) return false;
    if (!expect(p, TK_GT, "'>' to end the properties")) return false;
  }
  if (at(p, TK_LPAREN) && !parse_region_list(p, st)) return false;
  if (!parse_opt_attr_dict(p, st)) return false;
  return parse_colon_functional(p, st);
}

/* ---- pretty forms ---- */

static const cj_type *i64t(P *p) { return cj_type_elem(p->m, CJ_S64); }
static const cj_type *i32t(P *p) { return cj_type_elem(p->m, CJ_S32); }

/* `name = <int>` keyword-introduced integer, stored as an INT attr of type t */
static bool kw_int_attr(P *p, opst *st, const char *kw, const char *attr, const cj_type *t) {
  if (!expect_kw(p, kw) || !expect(p, TK_EQ, "'='")) return false;
  int64_t v;
  if (!parse_signed_int(p, &v)) return false;
  return add_attr(p, st, attr, cj_attr_int(p->m, v, t));
}

/* `name = <unsigned int>` for a ui64 attribute, kept as its bits in an i64 INT */
static bool kw_uint_attr(P *p, opst *st, const char *kw, const char *attr) {
  if (!expect_kw(p, kw) || !expect(p, TK_EQ, "'='")) return false;
  uint64_t v;
  if (!at(p, TK_INT)) return expect(p, TK_INT, "a non-negative integer");
  if (!lit_uint(p->tok.s, p->tok.n, &v)) return perr(p, "integer out of range for ui64");
  next(p);
  return add_attr(p, st, attr, cj_attr_int(p->m, (int64_t)v, i64t(p)));
}

/* `kw = [..]` as array<i64> */
static bool kw_dims_attr(P *p, opst *st, const char *kw, const char *attr) {
  if (!expect_kw(p, kw) || !expect(p, TK_EQ, "'='")) return false;
  const cj_attr *a = parse_dims_list(p, false);
  return a && add_attr(p, st, attr, a);
}

static bool kw_enum_attr(P *p, opst *st, const char *kw, const char *attr, cj_enum_kind ek) {
  if (!expect_kw(p, kw) || !expect(p, TK_EQ, "'='")) return false;
  const cj_attr *a = at(p, TK_HASH) ? parse_attr(p) : parse_enum_value(p, ek);
  return a && add_attr(p, st, attr, a);
}

static bool kw_string_attr(P *p, opst *st, const char *kw, const char *attr) {
  if (!expect_kw(p, kw) || !expect(p, TK_EQ, "'='")) return false;
  if (!at(p, TK_STRING)) return expect(p, TK_STRING, "a string");
  size_t n;
  char *s = decode_string(p, p->tok.s, p->tok.n, &n);
  if (!s) return false;
  next(p);
  cj_attr *a = CJ_ARENA_NEW(&p->m->arena, cj_attr);
  if (!a) return oom(p);
  a->kind = CJ_ATTR_STRING;
  a->str.s = s;
  a->str.len = n;
  return add_attr(p, st, attr, a);
}

static bool comma(P *p) { return expect(p, TK_COMMA, "','"); }

/* operands, then `,` and the rest: for forms like `$operand, dims = [...]` */
static bool operands_then_comma(P *p, opst *st, int n) {
  for (int i = 0; i < n; i++) {
    if (!push_operand(p, st) || !comma(p)) return false;
  }
  return true;
}

/* [DEFAULT, HIGH] as an array of precision enums */
static const cj_attr *parse_precision_list(P *p, cj_enum_kind ek) {
  if (!expect(p, TK_LSQ, "'['")) return NULL;
  VEC(const cj_attr *) v = {0};
  if (!at(p, TK_RSQ)) {
    for (;;) {
      const cj_attr *a = at(p, TK_HASH) ? parse_attr(p) : parse_enum_value(p, ek);
      if (!a || !VPUSH(p, v, a)) return NULL;
      if (!accept(p, TK_COMMA)) break;
    }
  }
  if (!expect(p, TK_RSQ, "']'")) return NULL;
  const cj_attr *a = cj_attr_array(p->m, (int32_t)v.n, v.v);
  if (!a) oom(p);
  return a;
}

/* the region of a pretty op whose entry arguments are written as (%a: T, ...) before it */
static bool pretty_region_with_args(P *p, opst *st, bool isolated) {
  vec_rarg args = {0};
  if (!parse_block_arg_list(p, &args)) return false;
  cj_region r;
  if (!parse_region(p, &r, args.v ? args.v : no_args, args.n, isolated)) return false;
  return VPUSH(p, st->regs, r);
}

static bool parse_func(P *p, opst *st) {
  cj_module *m = p->m;
  /* visibility */
  if (at_kw(p, "public") || at_kw(p, "private") || at_kw(p, "nested")) {
    const char *v = cj_arena_strndup(&m->arena, p->tok.s, p->tok.n);
    if (!v || !add_attr(p, st, "sym_visibility", cj_attr_string(m, v, p->tok.n))) return false;
    next(p);
  }
  if (!at(p, TK_AT)) return expect(p, TK_AT, "function name '@name'");
  const cj_attr *sym = parse_symref(p);
  if (!sym) return false;
  if (!add_attr(p, st, "sym_name", cj_attr_string(m, sym->sym.root, strlen(sym->sym.root))))
    return false;
  /* arguments */
  if (!expect(p, TK_LPAREN, "'('")) return false;
  VEC(rarg) args = {0};
  VEC(const cj_attr *) aattrs = {0};
  bool named = at(p, TK_PERCENT), any_aattr = false;
  if (!at(p, TK_RPAREN)) {
    for (;;) {
      rarg a;
      memset(&a, 0, sizeof a);
      if (named) {
        if (!at(p, TK_PERCENT)) return expect(p, TK_PERCENT, "argument name");
        a.tok = p->tok;
        next(p);
        if (!expect(p, TK_COLON, "':'")) return false;
      }
      if (!(a.type = parse_type(p))) return false;
      const cj_attr *d = NULL;
      if (accept(p, TK_LBRACE)) {
        if (!(d = parse_dict_body(p, TK_RBRACE))) return false;
        if (d->dict.n) any_aattr = true;
      }
      if (!d && !(d = cj_attr_dict(m, 0, NULL))) return oom(p);
      if (!parse_opt_loc(p, &a.loc)) return false;
      if (!VPUSH(p, args, a) || !VPUSH(p, aattrs, d)) return false;
      if (!accept(p, TK_COMMA)) break;
    }
  }
  if (!expect(p, TK_RPAREN, "')' to end the argument list")) return false;
  /* results */
  VEC(const cj_type *) res = {0};
  VEC(const cj_attr *) rattrs = {0};
  bool any_rattr = false;
  if (accept(p, TK_ARROW)) {
    if (accept(p, TK_LPAREN)) {
      if (!at(p, TK_RPAREN)) {
        for (;;) {
          const cj_type *t = parse_type(p);
          if (!t) return false;
          const cj_attr *d = NULL;
          if (accept(p, TK_LBRACE)) {
            if (!(d = parse_dict_body(p, TK_RBRACE))) return false;
            if (d->dict.n) any_rattr = true;
          }
          if (!d && !(d = cj_attr_dict(m, 0, NULL))) return oom(p);
          if (!VPUSH(p, res, t) || !VPUSH(p, rattrs, d)) return false;
          if (!accept(p, TK_COMMA)) break;
        }
      }
      if (!expect(p, TK_RPAREN, "')' to end the result list")) return false;
    } else {
      const cj_type *t = parse_type(p);
      const cj_attr *d = cj_attr_dict(m, 0, NULL);
      if (!t || !d || !VPUSH(p, res, t) || !VPUSH(p, rattrs, d)) return false;
    }
  }
  const cj_type **ins = tmp_alloc(p, sizeof(cj_type *) * (args.n + 1));
  if (!ins) return false;
  for (uint32_t i = 0; i < args.n; i++) ins[i] = args.v[i].type;
  const cj_type *ft = cj_type_function(m, (int32_t)args.n, ins, (int32_t)res.n, res.v);
  if (!ft) return oom(p);
  if (!add_attr(p, st, "function_type", cj_attr_type(m, ft))) return false;
  if (any_aattr && !add_attr(p, st, "arg_attrs", cj_attr_array(m, (int32_t)aattrs.n, aattrs.v)))
    return false;
  if (any_rattr && !add_attr(p, st, "res_attrs", cj_attr_array(m, (int32_t)rattrs.n, rattrs.v)))
    return false;
  if (accept_kw(p, "attributes")) {
    if (!expect(p, TK_LBRACE, "'{'")) return false;
    if (!parse_named_list(p, TK_RBRACE, &st->attrs)) return false;
  }
  cj_region r;
  memset(&r, 0, sizeof r);
  if (at(p, TK_LBRACE)) {
    if (!named && args.n) return perr(p, "a function with a body needs named arguments");
    p->in_func++;
    bool ok = parse_region(p, &r, args.v ? args.v : no_args, args.n, true);
    p->in_func--;
    if (!ok) return false;
  }
  if (!VPUSH(p, st->regs, r)) return false;
  return set_results(p, st, NULL, 0);
}

/* stablehlo.reduce in both its forms */
static bool parse_reduce(P *p, opst *st) {
  VEC(cj_value *) ins = {0}, inits = {0};
  VEC(token) tins = {0}, tinits = {0};
  for (;;) {
    if (!expect(p, TK_LPAREN, "'('")) return false;
    token t1 = p->tok;
    cj_value *a = parse_value_use(p);
    if (!a || !expect_kw(p, "init") || !expect(p, TK_COLON, "':'")) return false;
    token t2 = p->tok;
    cj_value *b = parse_value_use(p);
    if (!b || !expect(p, TK_RPAREN, "')'")) return false;
    if (!VPUSH(p, ins, a) || !VPUSH(p, inits, b) || !VPUSH(p, tins, t1) || !VPUSH(p, tinits, t2))
      return false;
    if (!accept(p, TK_COMMA)) break;
  }
  for (uint32_t i = 0; i < ins.n; i++)
    if (!VPUSH(p, st->opnds, ins.v[i]) || !VPUSH(p, st->otoks, tins.v[i])) return false;
  for (uint32_t i = 0; i < inits.n; i++)
    if (!VPUSH(p, st->opnds, inits.v[i]) || !VPUSH(p, st->otoks, tinits.v[i])) return false;
  token inner = {0};
  bool compact = false;
  if (accept_kw(p, "applies")) {
    if (!at(p, TK_BARE)) return perr(p, "expected the name of the reducer op");
    inner = p->tok;
    compact = true;
    next(p);
  }
  if (!expect_kw(p, "across") || !expect_kw(p, "dimensions") || !expect(p, TK_EQ, "'='"))
    return false;
  const cj_attr *dims = parse_dims_list(p, false);
  if (!dims || !add_attr(p, st, "dimensions", dims)) return false;
  if (!parse_opt_attr_dict(p, st)) return false;
  if (!parse_colon_functional(p, st)) return false;
  if (compact) {
    const cj_attr *loc = NULL;
    if (!parse_opt_loc(p, &loc)) return false;
    cj_op_kind ik = cj_op_kind_from_name(inner.s, inner.n);
    const cj_op_info *ii = cj_op_info_get(ik);
    if (ik == CJ_OP_UNKNOWN || ii->nopnds != 2 || ii->nresults != 1 || ii->nregions != 0 ||
        strncmp(ii->name, "stablehlo.", 10) != 0)
      return perr_at(p, &inner,
                     "expected the inner-op to be a binary-op from the stablehlo dialect, "
                     "with zero region, producing single result");
    if (!st->opnds.n || !st->opnds.v[0]->type ||
        (!cj_type_is_tensor(st->opnds.v[0]->type) &&
         st->opnds.v[0]->type->kind != CJ_TYPE_UNRANKED))
      return perr_at(p, &st->at, "reduce needs tensor inputs");
    const cj_type *et = cj_type_tensor(p->m, st->opnds.v[0]->type->elem, 0, NULL, NULL, NULL);
    if (!et) return oom(p);
    /* build the region: ^bb0(%lhs, %rhs): %r = inner %lhs, %rhs; stablehlo.return %r */
    cj_region r;
    memset(&r, 0, sizeof r);
    cj_block *b = new_block(p);
    if (!b) return false;
    rarg ra[2];
    memset(ra, 0, sizeof ra);
    ra[0].type = ra[1].type = et;
    ra[0].loc = ra[1].loc = loc;
    if (!block_set_args(p, b, ra, 2)) return false;
    cj_region_append_block(&r, b);
    cj_op *iop = cj_op_create(p->m, ik, NULL, 2, 1, 0);
    cj_op *ret = cj_op_create(p->m, CJ_OP_RETURN, NULL, 1, 0, 0);
    if (!iop || !ret) return oom(p);
    iop->operands[0] = &b->args[0];
    iop->operands[1] = &b->args[1];
    iop->results[0].type = et;
    iop->pos = tok_pos(p, &inner);
    iop->loc = loc;
    ret->operands[0] = &iop->results[0];
    ret->pos = iop->pos;
    ret->loc = loc;
    cj_block_append(b, iop);
    cj_block_append(b, ret);
    if (loc) st->loc = loc;
    return VPUSH(p, st->regs, r);
  }
  if (!expect_kw(p, "reducer")) return false;
  VEC(rarg) a1 = {0}, a2 = {0};
  while (accept(p, TK_LPAREN)) {
    rarg x, y;
    memset(&x, 0, sizeof x);
    memset(&y, 0, sizeof y);
    if (!at(p, TK_PERCENT)) return expect(p, TK_PERCENT, "block argument");
    x.tok = p->tok;
    next(p);
    if (!expect(p, TK_COLON, "':'") || !(x.type = parse_type(p)) || !parse_opt_loc(p, &x.loc) ||
        !comma(p))
      return false;
    if (!at(p, TK_PERCENT)) return expect(p, TK_PERCENT, "block argument");
    y.tok = p->tok;
    next(p);
    if (!expect(p, TK_COLON, "':'") || !(y.type = parse_type(p)) || !parse_opt_loc(p, &y.loc) ||
        !expect(p, TK_RPAREN, "')'"))
      return false;
    if (!VPUSH(p, a1, x) || !VPUSH(p, a2, y)) return false;
  }
  for (uint32_t i = 0; i < a2.n; i++)
    if (!VPUSH(p, a1, a2.v[i])) return false;
  cj_region r;
  if (!parse_region(p, &r, a1.v ? a1.v : no_args, a1.n, false)) return false;
  return VPUSH(p, st->regs, r);
}

static bool parse_while(P *p, opst *st) {
  if (!expect(p, TK_LPAREN, "'('")) return false;
  VEC(rarg) args = {0};
  if (!at(p, TK_RPAREN)) {
    for (;;) {
      rarg a;
      memset(&a, 0, sizeof a);
      if (!at(p, TK_PERCENT)) return expect(p, TK_PERCENT, "iteration argument");
      a.tok = p->tok;
      next(p);
      if (!expect(p, TK_EQ, "'='") || !push_operand(p, st)) return false;
      if (!VPUSH(p, args, a)) return false;
      if (!accept(p, TK_COMMA)) break;
    }
  }
  if (!expect(p, TK_RPAREN, "')'")) return false;
  if (args.n) {
    if (!expect(p, TK_COLON, "':'")) return false;
    token tt = p->tok;
    const cj_type **ts;
    uint32_t n;
    if (!parse_type_list_until(p, TK_EOF, &ts, &n)) return false;
    if (!type_operands(p, st, ts, n, &tt) || !set_results(p, st, ts, n)) return false;
    for (uint32_t i = 0; i < n; i++) args.v[i].type = ts[i];
  } else if (!set_results(p, st, NULL, 0)) {
    return false;
  }
  if (accept_kw(p, "attributes")) {
    if (!expect(p, TK_LBRACE, "'{'") || !parse_named_list(p, TK_RBRACE, &st->attrs)) return false;
  }
  cj_region c, b;
  if (!expect_kw(p, "cond") || !parse_region(p, &c, args.v ? args.v : no_args, args.n, false))
    return false;
  if (!VPUSH(p, st->regs, c)) return false;
  if (!expect_kw(p, "do") || !parse_region(p, &b, args.v ? args.v : no_args, args.n, false))
    return false;
  return VPUSH(p, st->regs, b);
}

/* dot_general's `batching_dims = [..] x [..], contracting_dims = [..] x [..]` */
static bool parse_dot_dims(P *p, opst *st, cj_struct_kind sk) {
  const cj_attr *lb = NULL, *rb = NULL, *lc, *rc;
  if (accept_kw(p, "batching_dims")) {
    if (!expect(p, TK_EQ, "'='") || !(lb = parse_dims_list(p, false)) || !expect_kw(p, "x") ||
        !(rb = parse_dims_list(p, false)) || !comma(p))
      return false;
  }
  if (!expect_kw(p, "contracting_dims") || !expect(p, TK_EQ, "'='") ||
      !(lc = parse_dims_list(p, false)) || !expect_kw(p, "x") || !(rc = parse_dims_list(p, false)))
    return false;
  const cj_attr *f[6] = {lb, rb, lc, rc, NULL, NULL};
  const cj_attr *a = mk_struct(p, sk, f);
  return a && add_attr(p, st, "dot_dimension_numbers", a);
}

static bool parse_precision_and_algorithm(P *p, opst *st, bool allow_algorithm) {
  while (accept(p, TK_COMMA)) {
    if (accept_kw(p, "precision")) {
      if (!expect(p, TK_EQ, "'='")) return false;
      const cj_attr *a = parse_precision_list(p, CJ_EK_PRECISION);
      if (!a || !add_attr(p, st, "precision_config", a)) return false;
    } else if (allow_algorithm && accept_kw(p, "algorithm")) {
      if (!expect(p, TK_EQ, "'='")) return false;
      const cj_attr *a = parse_struct_body(p, CJ_SK_DOT_ALGORITHM);
      if (!a || !add_attr(p, st, "algorithm", a)) return false;
    } else {
      char b[64];
      return perr(p, "expected 'precision'%s, found %s", allow_algorithm ? " or 'algorithm'" : "",
                  tok_text(p, b, sizeof b));
    }
  }
  return true;
}

static bool parse_window(P *p, opst *st) {
  if (!expect_kw(p, "window") || !expect(p, TK_EQ, "'='") || !expect(p, TK_LBRACE, "'{'"))
    return false;
  bool seen[5] = {0};
  static const char *const names[5] = {"stride", "pad", "lhs_dilate", "rhs_dilate", "reverse"};
  while (at(p, TK_BARE)) {
    int k = -1;
    for (int i = 0; i < 5; i++)
      if (tok_is_n(&p->tok, names[i], strlen(names[i]))) k = i;
    if (k < 0 || seen[k]) return perr(p, "Unexpected keyword %.*s", (int)p->tok.n, p->tok.s);
    seen[k] = true;
    next(p);
    if (!expect(p, TK_EQ, "'='")) return false;
    if (k == 1) { /* pad = [[lo, hi], ...] */
      if (!expect(p, TK_LSQ, "'['")) return false;
      VEC(int64_t) v = {0};
      if (!at(p, TK_RSQ)) {
        for (;;) {
          int64_t lo, hi;
          if (!expect(p, TK_LSQ, "'['") || !parse_signed_int(p, &lo) || !comma(p) ||
              !parse_signed_int(p, &hi) || !expect(p, TK_RSQ, "']' (pad pairs have 2 elements)"))
            return false;
          if (!VPUSH(p, v, lo) || !VPUSH(p, v, hi)) return false;
          if (!accept(p, TK_COMMA)) break;
        }
      }
      if (!expect(p, TK_RSQ, "']'")) return false;
      int64_t dims[2] = {(int64_t)v.n / 2, 2};
      const cj_type *t = cj_type_tensor_of(p->m, CJ_S64, 2, dims);
      if (!t) return oom(p);
      if (!add_attr(p, st, "padding", cj_attr_dense(p->m, t, v.v, v.n * sizeof(int64_t), false)))
        return false;
    } else if (k == 4) {
      if (!expect(p, TK_LSQ, "'['")) return false;
      VEC(unsigned char) v = {0};
      if (!at(p, TK_RSQ)) {
        for (;;) {
          unsigned char b;
          if (accept_kw(p, "true"))
            b = 1;
          else if (accept_kw(p, "false"))
            b = 0;
          else {
            int64_t x;
            if (!parse_signed_int(p, &x)) return false;
            b = x != 0;
          }
          if (!VPUSH(p, v, b)) return false;
          if (!accept(p, TK_COMMA)) break;
        }
      }
      if (!expect(p, TK_RSQ, "']'")) return false;
      if (!add_attr(p, st, "window_reversal",
                    cj_attr_dense_array(p->m, CJ_PRED, v.n, v.v ? (void *)v.v : (void *)"")))
        return false;
    } else {
      const cj_attr *a = parse_dims_list(p, false);
      static const char *const attr[4] = {"window_strides", "", "lhs_dilation", "rhs_dilation"};
      if (!a || !add_attr(p, st, attr[k], a)) return false;
    }
    if (!accept(p, TK_COMMA)) break;
  }
  return expect(p, TK_RBRACE, "'}' to end the window");
}

static bool parse_slice_ranges(P *p, opst *st) {
  if (!expect(p, TK_LSQ, "'['")) return false;
  VEC(int64_t) a = {0}, b = {0}, c = {0};
  if (!at(p, TK_RSQ)) {
    for (;;) {
      int64_t s, l, k = 1;
      if (!parse_signed_int(p, &s) || !expect(p, TK_COLON, "':'") || !parse_signed_int(p, &l))
        return false;
      if (accept(p, TK_COLON) && !parse_signed_int(p, &k)) return false;
      if (!VPUSH(p, a, s) || !VPUSH(p, b, l) || !VPUSH(p, c, k)) return false;
      if (!accept(p, TK_COMMA)) break;
    }
  }
  if (!expect(p, TK_RSQ, "']'")) return false;
  int64_t z = 0;
  return add_attr(p, st, "start_indices", cj_attr_i64_array(p->m, a.n, a.v ? a.v : &z)) &&
         add_attr(p, st, "limit_indices", cj_attr_i64_array(p->m, b.n, b.v ? b.v : &z)) &&
         add_attr(p, st, "strides", cj_attr_i64_array(p->m, c.n, c.v ? c.v : &z));
}

/* the value of a stablehlo.constant / chlo.constant / check.*_const */
static const cj_attr *parse_elements_value(P *p) {
  token t = p->tok;
  const cj_attr *v = parse_attr(p);
  if (!v) return NULL;
  if (v->kind != CJ_ATTR_DENSE) {
    perr_at(p, &t, "expected a dense elements attribute");
    return NULL;
  }
  return v;
}

/* The real (component) tensor type of a complex tensor type. */
static const cj_type *real_of(P *p, const cj_type *t) {
  if (!t || (t->kind != CJ_TYPE_TENSOR && t->kind != CJ_TYPE_UNRANKED) ||
      !cj_dtype_is_complex(t->dtype))
    return NULL;
  return cj_type_with_elem(p->m, t, cj_type_elem(p->m, cj_dtype_component(t->dtype)));
}

/* sdy: `<...>` as #sdy.<mnemonic><...>; the current token is '<' */
static const cj_attr *sdy_stripped(P *p, const char *prefix) {
  if (!at(p, TK_LT)) {
    expect(p, TK_LT, "'<'");
    return NULL;
  }
  const char *s = p->tok.s;
  const char *end = scan_balanced(s, p->end);
  if (!end) {
    perr(p, "unbalanced '<'");
    return NULL;
  }
  size_t pl = strlen(prefix), cn;
  char *txt = collapse_text(p, s, (size_t)(end - s), &cn);
  if (!txt) return NULL;
  char *full = cj_arena_alloc_aligned(&p->m->arena, pl + cn + 1, 1);
  if (!full) {
    oom(p);
    return NULL;
  }
  memcpy(full, prefix, pl);
  memcpy(full + pl, txt, cn + 1);
  advance_to(p, end);
  next(p);
  const cj_attr *a = cj_attr_opaque(p->m, full, pl + cn);
  if (!a) oom(p);
  return a;
}

/* sdy: a bracketed/braced stripped list `[<...>, ...]` or `{"a", ...}` as opaque text */
static const cj_attr *sdy_wrapped(P *p, const char *prefix, const char *suffix, tok_kind open) {
  if (!at(p, open)) {
    expect(p, open, open == TK_LSQ ? "'['" : "'{'");
    return NULL;
  }
  const char *s = p->tok.s;
  const char *end = scan_balanced(s, p->end);
  if (!end) {
    perr(p, "unbalanced brackets");
    return NULL;
  }
  size_t pl = strlen(prefix), sl = strlen(suffix), cn;
  char *txt = collapse_text(p, s, (size_t)(end - s), &cn);
  if (!txt) return NULL;
  char *full = cj_arena_alloc_aligned(&p->m->arena, pl + cn + sl + 1, 1);
  if (!full) {
    oom(p);
    return NULL;
  }
  memcpy(full, prefix, pl);
  memcpy(full + pl, txt, cn);
  memcpy(full + pl + cn, suffix, sl + 1);
  advance_to(p, end);
  next(p);
  const cj_attr *a = cj_attr_opaque(p->m, full, pl + cn + sl);
  if (!a) oom(p);
  return a;
}

/* ---- the pretty form of each syntax form (syntax.def), dispatched by parse_custom ---- */

typedef bool (*parse_form_fn)(P *p, opst *st, cj_syntax syn);

/* EW */
static bool pf_ew(P *p, opst *st, cj_syntax syn) {
  if (!parse_operand_list(p, st) || !parse_opt_attr_dict(p, st)) return false;
  return parse_colon_same(p, st);
}

/* COMPLEX */
static bool pf_complex(P *p, opst *st, cj_syntax syn) {
  if (!parse_operand_list(p, st) || !parse_opt_attr_dict(p, st)) return false;
  if (!expect(p, TK_COLON, "':'")) return false;
  token tt = p->tok;
  const cj_type *t = parse_type(p);
  if (!t) return false;
  if (t->kind == CJ_TYPE_FUNCTION) {
    if (t->nresults != 1) return perr_at(p, &tt, "expected single output");
    return type_operands(p, st, t->members, (uint32_t)t->rank, &tt) &&
           set_results(p, st, t->members + t->rank, 1);
  }
  const cj_type *r = real_of(p, t);
  if (!r) return perr_at(p, &tt, "expected tensor with complex element type");
  for (uint32_t i = 0; i < st->opnds.n; i++)
    if (!type_operand(p, st, i, r)) return false;
  return set_result1(p, st, t);
}

/* SELECT */
static bool pf_select(P *p, opst *st, cj_syntax syn) {
  if (!parse_operand_list(p, st) || !parse_opt_attr_dict(p, st)) return false;
  if (!expect(p, TK_COLON, "':'")) return false;
  token tt = p->tok;
  const cj_type **ts;
  uint32_t n;
  if (!parse_type_list_until(p, TK_EOF, &ts, &n)) return false;
  if (n == 1 && ts[0]->kind == CJ_TYPE_FUNCTION) {
    const cj_type *f = ts[0];
    if (f->nresults != 1) return perr_at(p, &tt, "expected single output");
    return type_operands(p, st, f->members, (uint32_t)f->rank, &tt) &&
           set_results(p, st, f->members + f->rank, 1);
  }
  if (n != 2) return perr_at(p, &tt, "expected functional type or list of two types");
  const cj_type *three[3] = {ts[0], ts[1], ts[1]};
  return type_operands(p, st, three, 3, &tt) && set_result1(p, st, ts[1]);
}

/* FUNCTIONAL */
static bool pf_functional(P *p, opst *st, cj_syntax syn) {
  if (!parse_operand_list(p, st) || !parse_opt_attr_dict(p, st)) return false;
  return parse_colon_functional(p, st);
}

/* CONSTANT, CHLO_CONSTANT */
static bool pf_constant(P *p, opst *st, cj_syntax syn) {
  if (syn == CJ_SYN_CONSTANT && at(p, TK_LPAREN)) { /* stablehlo.constant() <{...}> ... */
    return parse_generic_rest(p, st);
  }
  if (!parse_opt_attr_dict(p, st)) return false;
  const cj_attr *v = parse_elements_value(p);
  if (!v || !add_attr(p, st, "value", v)) return false;
  return set_result1(p, st, v->dense.type);
}

/* IOTA */
static bool pf_iota(P *p, opst *st, cj_syntax syn) {
  if (!kw_int_attr(p, st, "dim", "iota_dimension", i64t(p)) || !parse_opt_attr_dict(p, st) ||
      !expect(p, TK_COLON, "':'"))
    return false;
  const cj_type *t = parse_type(p);
  return t && set_result1(p, st, t);
}

/* DYNAMIC_IOTA */
static bool pf_dynamic_iota(P *p, opst *st, cj_syntax syn) {
  return operands_then_comma(p, st, 1) &&
         kw_int_attr(p, st, "dim", "iota_dimension", i64t(p)) && parse_opt_attr_dict(p, st) &&
         parse_colon_functional(p, st);
}

/* NULLARY */
static bool pf_nullary(P *p, opst *st, cj_syntax syn) {
  if (!parse_opt_attr_dict(p, st) || !expect(p, TK_COLON, "':'")) return false;
  const cj_type **ts;
  uint32_t n;
  return parse_type_list_until(p, TK_EOF, &ts, &n) && set_results(p, st, ts, n);
}

/* VARIADIC_SAME */
static bool pf_variadic_same(P *p, opst *st, cj_syntax syn) {
  if (!parse_operand_list(p, st) || !parse_opt_attr_dict(p, st)) return false;
  return parse_colon_same(p, st);
}

/* WHILE */
static bool pf_while(P *p, opst *st, cj_syntax syn) {
  return parse_while(p, st);
}

/* REDUCE */
static bool pf_reduce(P *p, opst *st, cj_syntax syn) {
  return parse_reduce(p, st);
}

/* GET_TUPLE_ELEMENT */
static bool pf_get_tuple_element(P *p, opst *st, cj_syntax syn) {
  cj_module *m = p->m;
  if (!push_operand(p, st) || !expect(p, TK_LSQ, "'['")) return false;
  int64_t i;
  if (!parse_signed_int(p, &i) || !expect(p, TK_RSQ, "']'")) return false;
  if (!add_attr(p, st, "index", cj_attr_int(m, i, i32t(p)))) return false;
  return parse_opt_attr_dict(p, st) && parse_colon_functional(p, st);
}

/* TUPLE */
static bool pf_tuple(P *p, opst *st, cj_syntax syn) {
  if (!parse_operand_list(p, st) || !parse_opt_attr_dict(p, st) || !expect(p, TK_COLON, "':'"))
    return false;
  token tt = p->tok;
  const cj_type *t = parse_type(p);
  if (!t) return false;
  if (t->kind != CJ_TYPE_TUPLE) return perr_at(p, &tt, "expected tuple type");
  return type_operands(p, st, t->members, (uint32_t)t->rank, &tt) && set_result1(p, st, t);
}

/* COMPARE */
static bool pf_compare(P *p, opst *st, cj_syntax syn) {
  bool chlo = st->kind == CJ_OP_CHLO_BROADCAST_COMPARE;
  cj_enum_kind dk = chlo ? CJ_EK_CHLO_COMPARISON_DIRECTION : CJ_EK_COMPARISON_DIRECTION;
  cj_enum_kind tk = chlo ? CJ_EK_CHLO_COMPARISON_TYPE : CJ_EK_COMPARISON_TYPE;
  const cj_attr *d = at(p, TK_HASH) ? parse_attr(p) : parse_enum_value(p, dk);
  if (!d || !add_attr(p, st, "comparison_direction", d) || !comma(p)) return false;
  if (!push_operand(p, st) || !comma(p) || !push_operand(p, st)) return false;
  if (accept(p, TK_COMMA)) {
    const cj_attr *c = at(p, TK_HASH) ? parse_attr(p) : parse_enum_value(p, tk);
    if (!c || !add_attr(p, st, "compare_type", c)) return false;
  }
  return parse_opt_attr_dict(p, st) && parse_colon_functional(p, st);
}

/* DYNAMIC_SLICE, BROADCAST, BROADCAST_IN_DIM, DYNAMIC_BROADCAST_IN_DIM, TRANSPOSE, REVERSE */
static bool pf_dims_form(P *p, opst *st, cj_syntax syn) {
  const cj_dims_form *f = cj_syntax_dims_form(syn);
  if (!operands_then_comma(p, st, f->nlead ? (int)f->nlead : 1)) return false;
  while (!f->nlead && at(p, TK_PERCENT)) { /* dynamic_slice: the start indices */
    if (!push_operand(p, st) || !comma(p)) return false;
  }
  return kw_dims_attr(p, st, f->kw, f->attr) && parse_opt_attr_dict(p, st) &&
         (f->same_type ? parse_colon_same(p, st) : parse_colon_functional(p, st));
}

/* SLICE */
static bool pf_slice(P *p, opst *st, cj_syntax syn) {
  return push_operand(p, st) && parse_slice_ranges(p, st) && parse_opt_attr_dict(p, st) &&
         parse_colon_functional(p, st);
}

/* CHOLESKY */
static bool pf_cholesky(P *p, opst *st, cj_syntax syn) {
  cj_module *m = p->m;
  if (!push_operand(p, st)) return false;
  if (accept(p, TK_COMMA)) {
    if (!expect_kw(p, "lower") || !expect(p, TK_EQ, "'='")) return false;
    bool v;
    if (accept_kw(p, "true"))
      v = true;
    else if (accept_kw(p, "false"))
      v = false;
    else
      return perr(p, "expected 'true' or 'false'");
    if (!add_attr(p, st, "lower", cj_attr_bool(m, v))) return false;
  }
  return parse_opt_attr_dict(p, st) && parse_colon_same(p, st);
}

/* CONCATENATE */
static bool pf_concatenate(P *p, opst *st, cj_syntax syn) {
  while (at(p, TK_PERCENT)) {
    if (!push_operand(p, st) || !comma(p)) return false;
  }
  return kw_int_attr(p, st, "dim", "dimension", i64t(p)) && parse_opt_attr_dict(p, st) &&
         parse_colon_functional(p, st);
}

/* COMPOSITE */
static bool pf_composite(P *p, opst *st, cj_syntax syn) {
  cj_module *m = p->m;
  if (!at(p, TK_STRING)) return expect(p, TK_STRING, "the composite name (a string)");
  size_t n;
  char *s = decode_string(p, p->tok.s, p->tok.n, &n);
  if (!s) return false;
  next(p);
  if (!add_attr(p, st, "name", cj_attr_string(m, s, n))) return false;
  if (!parse_operand_list(p, st)) return false;
  if (at(p, TK_LPAREN)) {
    if (!parse_region_list(p, st)) return false;
  }
  return parse_opt_attr_dict(p, st) && parse_colon_functional(p, st);
}

/* CONVOLUTION */
static bool pf_convolution(P *p, opst *st, cj_syntax syn) {
  if (!expect(p, TK_LPAREN, "'('") || !parse_operand_list(p, st) ||
      !expect(p, TK_RPAREN, "')'"))
    return false;
  if (!expect_kw(p, "dim_numbers") || !expect(p, TK_EQ, "'='")) return false;
  const cj_attr *dn = parse_conv_dims(p);
  if (!dn || !add_attr(p, st, "dimension_numbers", dn) || !comma(p)) return false;
  return parse_window(p, st) && parse_opt_attr_dict(p, st) && parse_colon_functional(p, st);
}

/* CUSTOM_CALL */
static bool pf_custom_call(P *p, opst *st, cj_syntax syn) {
  cj_module *m = p->m;
  if (!at(p, TK_AT)) return expect(p, TK_AT, "the call target '@name'");
  token t = p->tok;
  const char *s;
  size_t n;
  if (t.n < 2) return perr(p, "expected a symbol name after '@'");
  if (t.s[1] == '"') {
    if (!(s = decode_string(p, t.s + 1, t.n - 1, &n))) return false;
  } else {
    s = t.s + 1;
    n = t.n - 1;
  }
  next(p);
  if (!add_attr(p, st, "call_target_name", cj_attr_string(m, s, n))) return false;
  if (!expect(p, TK_LPAREN, "'('") || !parse_operand_list(p, st) ||
      !expect(p, TK_RPAREN, "')'"))
    return false;
  return parse_opt_attr_dict(p, st) && parse_colon_functional(p, st);
}

/* DOT */
static bool pf_dot(P *p, opst *st, cj_syntax syn) {
  if (!push_operand(p, st) || !comma(p) || !push_operand(p, st)) return false;
  return parse_precision_and_algorithm(p, st, false) && parse_opt_attr_dict(p, st) &&
         parse_colon_functional(p, st);
}

/* DOT_GENERAL */
static bool pf_dot_general(P *p, opst *st, cj_syntax syn) {
  if (!operands_then_comma(p, st, 2) || !parse_dot_dims(p, st, CJ_SK_DOT)) return false;
  return parse_precision_and_algorithm(p, st, true) && parse_opt_attr_dict(p, st) &&
         parse_colon_functional(p, st);
}

/* EINSUM, UNARY_EINSUM */
static bool pf_einsum(P *p, opst *st, cj_syntax syn) {
  return operands_then_comma(p, st, syn == CJ_SYN_EINSUM ? 2 : 1) &&
         kw_string_attr(p, st, "config", "einsum_config") && parse_opt_attr_dict(p, st) &&
         parse_colon_functional(p, st);
}

/* FFT */
static bool pf_fft(P *p, opst *st, cj_syntax syn) {
  return operands_then_comma(p, st, 1) &&
         kw_enum_attr(p, st, "type", "fft_type", CJ_EK_FFT_TYPE) && comma(p) &&
         kw_dims_attr(p, st, "length", "fft_length") && parse_opt_attr_dict(p, st) &&
         parse_colon_functional(p, st);
}

/* GET_DIMENSION_SIZE, SET_DIMENSION_SIZE */
static bool pf_dimension_size(P *p, opst *st, cj_syntax syn) {
  return operands_then_comma(p, st, syn == CJ_SYN_SET_DIMENSION_SIZE ? 2 : 1) &&
         kw_int_attr(p, st, "dim", "dimension", i64t(p)) && parse_opt_attr_dict(p, st) &&
         parse_colon_functional(p, st);
}

/* PAD */
static bool pf_pad(P *p, opst *st, cj_syntax syn) {
  return operands_then_comma(p, st, 2) && kw_dims_attr(p, st, "low", "edge_padding_low") &&
         comma(p) && kw_dims_attr(p, st, "high", "edge_padding_high") && comma(p) &&
         kw_dims_attr(p, st, "interior", "interior_padding") && parse_opt_attr_dict(p, st) &&
         parse_colon_functional(p, st);
}

/* RETURN */
static bool pf_return(P *p, opst *st, cj_syntax syn) {
  if (!parse_operand_list(p, st) || !parse_opt_attr_dict(p, st)) return false;
  if (st->opnds.n) {
    if (!expect(p, TK_COLON, "':' and the result types")) return false;
    token tt = p->tok;
    const cj_type **ts;
    uint32_t n;
    if (!parse_type_list_until(p, TK_EOF, &ts, &n) || !type_operands(p, st, ts, n, &tt))
      return false;
  }
  return set_results(p, st, NULL, 0);
}

/* OPTIMIZATION_BARRIER */
static bool pf_optimization_barrier(P *p, opst *st, cj_syntax syn) {
  if (!parse_opt_attr_dict(p, st)) return false;
  if (accept(p, TK_LPAREN)) {
    if (!expect(p, TK_RPAREN, "')'")) return false;
    return set_results(p, st, NULL, 0);
  }
  if (!parse_operand_list(p, st) || !expect(p, TK_COLON, "':'")) return false;
  token tt = p->tok;
  const cj_type **ts;
  uint32_t n;
  return parse_type_list_until(p, TK_EOF, &ts, &n) && type_operands(p, st, ts, n, &tt) &&
         set_results(p, st, ts, n);
}

/* RNG */
static bool pf_rng(P *p, opst *st, cj_syntax syn) {
  return operands_then_comma(p, st, 3) &&
         kw_enum_attr(p, st, "distribution", "rng_distribution", CJ_EK_RNG_DISTRIBUTION) &&
         parse_opt_attr_dict(p, st) && parse_colon_functional(p, st);
}

/* RNG_BIT_GENERATOR */
static bool pf_rng_bit_generator(P *p, opst *st, cj_syntax syn) {
  return operands_then_comma(p, st, 1) &&
         kw_enum_attr(p, st, "algorithm", "rng_algorithm", CJ_EK_RNG_ALGORITHM) &&
         parse_opt_attr_dict(p, st) && parse_colon_functional(p, st);
}

/* REDUCE_PRECISION */
static bool pf_reduce_precision(P *p, opst *st, cj_syntax syn) {
  cj_module *m = p->m;
  if (!operands_then_comma(p, st, 1) || !expect_kw(p, "format") || !expect(p, TK_EQ, "'='"))
    return false;
  token t = p->tok;
  unsigned e = 0, mnt = 0;
  int used = 0;
  char buf[32];
  if (t.k != TK_BARE || t.n >= sizeof buf)
    return perr(p, "expected exponent mantissa in format e#m#");
  memcpy(buf, t.s, t.n);
  buf[t.n] = 0;
  if (sscanf(buf, "e%um%u%n", &e, &mnt, &used) != 2 || (size_t)used != t.n || buf[1] == '+' ||
      e > INT32_MAX || mnt > INT32_MAX)
    return perr(p, "expected exponent mantissa in format e#m#, saw %s", buf);
  next(p);
  return add_attr(p, st, "exponent_bits", cj_attr_int(m, e, i32t(p))) &&
         add_attr(p, st, "mantissa_bits", cj_attr_int(m, mnt, i32t(p))) &&
         parse_opt_attr_dict(p, st) && parse_colon_same(p, st);
}

/* FUNC */
static bool pf_func(P *p, opst *st, cj_syntax syn) {
  return parse_func(p, st);
}

/* CALL */
static bool pf_call(P *p, opst *st, cj_syntax syn) {
  if (!at(p, TK_AT)) return expect(p, TK_AT, "callee '@name'");
  const cj_attr *c = parse_symref(p);
  if (!c || !add_attr(p, st, "callee", c)) return false;
  if (!expect(p, TK_LPAREN, "'('") || !parse_operand_list(p, st) ||
      !expect(p, TK_RPAREN, "')'"))
    return false;
  return parse_opt_attr_dict(p, st) && parse_colon_functional(p, st);
}

/* CHLO_UNARY */
static bool pf_chlo_unary(P *p, opst *st, cj_syntax syn) {
  if (!push_operand(p, st) || !parse_opt_attr_dict(p, st) || !expect(p, TK_COLON, "':'"))
    return false;
  token tt = p->tok;
  const cj_type *a = parse_type(p);
  if (!a || !type_operands(p, st, &a, 1, &tt) || !expect(p, TK_ARROW, "'->'")) return false;
  const cj_type *r = parse_type(p);
  return r && set_result1(p, st, r);
}

/* CHLO_BINARY, CHLO_BROADCAST_SELECT */
static bool pf_chlo_binary(P *p, opst *st, cj_syntax syn) {
  if (!parse_operand_list(p, st) || !parse_opt_attr_dict(p, st)) return false;
  return parse_colon_functional(p, st);
}

/* CHLO_BINARY_ARROW */
static bool pf_chlo_binary_arrow(P *p, opst *st, cj_syntax syn) {
  if (!push_operand(p, st) || !comma(p) || !push_operand(p, st) ||
      !parse_opt_attr_dict(p, st) || !expect(p, TK_COLON, "':'"))
    return false;
  token tt = p->tok;
  const cj_type *ts[2];
  if (!(ts[0] = parse_type(p)) || !comma(p) || !(ts[1] = parse_type(p)) ||
      !type_operands(p, st, ts, 2, &tt) || !expect(p, TK_ARROW, "'->'"))
    return false;
  const cj_type *r = parse_type(p);
  return r && set_result1(p, st, r);
}

/* CHLO_TOP_K */
static bool pf_chlo_top_k(P *p, opst *st, cj_syntax syn) {
  cj_module *m = p->m;
  if (!expect(p, TK_LPAREN, "'('") || !push_operand(p, st) || !comma(p) ||
      !kw_int_attr(p, st, "k", "k", i64t(p)))
    return false;
  if (accept(p, TK_COMMA)) {
    if (!expect_kw(p, "is_stable") || !expect(p, TK_EQ, "'='")) return false;
    bool v;
    if (accept_kw(p, "true"))
      v = true;
    else if (accept_kw(p, "false"))
      v = false;
    else
      return perr(p, "expected 'true' or 'false'");
    if (!add_attr(p, st, "is_stable", cj_attr_bool(m, v))) return false;
  }
  if (!expect(p, TK_RPAREN, "')'") || !parse_opt_attr_dict(p, st) ||
      !expect(p, TK_COLON, "':'"))
    return false;
  token tt = p->tok;
  const cj_type *a = parse_type(p);
  if (!a || !type_operands(p, st, &a, 1, &tt) || !expect(p, TK_ARROW, "'->'") ||
      !expect(p, TK_LPAREN, "'('"))
    return false;
  const cj_type *r[2];
  if (!(r[0] = parse_type(p)) || !comma(p) || !(r[1] = parse_type(p)) ||
      !expect(p, TK_RPAREN, "')'"))
    return false;
  return set_results(p, st, r, 2);
}

/* CHLO_SCAN */
static bool pf_chlo_scan(P *p, opst *st, cj_syntax syn) {
  cj_module *m = p->m;
  if (!expect(p, TK_LPAREN, "'('") || !parse_operand_list(p, st) ||
      !expect(p, TK_RPAREN, "')'"))
    return false;
  uint32_t ninputs = st->opnds.n;
  if (!expect_kw(p, "inits") || !expect(p, TK_LPAREN, "'('") || !parse_operand_list(p, st) ||
      !expect(p, TK_RPAREN, "')'"))
    return false;
  uint32_t ninits = st->opnds.n - ninputs;
  if (!kw_int_attr(p, st, "dimension", "dimension", i64t(p))) return false;
  if (accept_kw(p, "attributes")) {
    if (!expect(p, TK_LBRACE, "'{'") || !parse_named_list(p, TK_RBRACE, &st->attrs))
      return false;
  }
  cj_region r;
  if (!parse_region(p, &r, NULL, 0, true) || !VPUSH(p, st->regs, r)) return false;
  if (!parse_colon_functional(p, st)) return false;
  if (st->rtypes.n < ninits)
    return perr_at(p, &st->at, "not enough result types to cover the required carries");
  int32_t seg[2] = {(int32_t)ninputs, (int32_t)ninits};
  int32_t rseg[2] = {(int32_t)(st->rtypes.n - ninits), (int32_t)ninits};
  return add_attr(p, st, "operandSegmentSizes", cj_attr_dense_array(m, CJ_S32, 2, seg)) &&
         add_attr(p, st, "resultSegmentSizes", cj_attr_dense_array(m, CJ_S32, 2, rseg));
}

/* CHECK_EXPECT_CONST */
static bool pf_check_expect_const(P *p, opst *st, cj_syntax syn) {
  cj_module *m = p->m;
  if (!operands_then_comma(p, st, 1)) return false;
  const cj_attr *v = parse_elements_value(p);
  if (!v || !add_attr(p, st, "value", v)) return false;
  if (!type_operand(p, st, 0, v->dense.type)) return false;
  if (accept(p, TK_COMMA)) {
    if (!expect_kw(p, "tolerance") || !expect(p, TK_EQ, "'='")) return false;
    double x;
    if (!parse_number_f64(p, &x) ||
        !add_attr(p, st, "tolerance", cj_attr_float(m, x, cj_type_elem(m, CJ_F64))))
      return false;
  }
  return parse_opt_attr_dict(p, st) && set_results(p, st, NULL, 0);
}

/* CHECK_EXPECT */
static bool pf_check_expect(P *p, opst *st, cj_syntax syn) {
  cj_module *m = p->m;
  if (!push_operand(p, st) || !comma(p) || !push_operand(p, st)) return false;
  if (accept(p, TK_COMMA)) {
    if (!expect_kw(p, "tolerance") || !expect(p, TK_EQ, "'='")) return false;
    double x;
    if (!parse_number_f64(p, &x) ||
        !add_attr(p, st, "tolerance", cj_attr_float(m, x, cj_type_elem(m, CJ_F64))))
      return false;
  }
  if (!parse_opt_attr_dict(p, st) || !expect(p, TK_COLON, "':'")) return false;
  token tt = p->tok;
  const cj_type *t = parse_type(p);
  const cj_type *two[2] = {t, t};
  return t && type_operands(p, st, two, 2, &tt) && set_results(p, st, NULL, 0);
}

/* CHECK_EXPECT_CLOSE */
static bool pf_check_expect_close(P *p, opst *st, cj_syntax syn) {
  if (!operands_then_comma(p, st, 2)) return false;
  if (!kw_uint_attr(p, st, "max_ulp_difference", "max_ulp_difference")) return false;
  if (accept(p, TK_COMMA) && !kw_uint_attr(p, st, "min_ulp_difference", "min_ulp_difference"))
    return false;
  if (!expect(p, TK_COLON, "':'") || !parse_opt_attr_dict(p, st)) return false;
  token tt = p->tok;
  const cj_type *ts[2];
  if (!(ts[0] = parse_type(p)) || !comma(p) || !(ts[1] = parse_type(p))) return false;
  return type_operands(p, st, ts, 2, &tt) && set_results(p, st, NULL, 0);
}

/* CHECK_EXPECT_SERIALIZED */
static bool pf_check_expect_serialized(P *p, opst *st, cj_syntax syn) {
  if (!operands_then_comma(p, st, 1) || !kw_string_attr(p, st, "probe_id", "probe_id"))
    return false;
  if (accept(p, TK_COMMA) && !kw_int_attr(p, st, "iter", "iteration", i32t(p))) return false;
  if (!parse_opt_attr_dict(p, st) || !expect(p, TK_COLON, "':'")) return false;
  token tt = p->tok;
  const cj_type *t = parse_type(p);
  return t && type_operands(p, st, &t, 1, &tt) && set_results(p, st, NULL, 0);
}

/* INTERP_PRINT */
static bool pf_interp_print(P *p, opst *st, cj_syntax syn) {
  if (!push_operand(p, st) || !parse_opt_attr_dict(p, st) || !expect(p, TK_COLON, "':'"))
    return false;
  token tt = p->tok;
  const cj_type *t = parse_type(p);
  return t && type_operands(p, st, &t, 1, &tt) && set_results(p, st, NULL, 0);
}

/* INTERP_PROBE */
static bool pf_interp_probe(P *p, opst *st, cj_syntax syn) {
  if (!operands_then_comma(p, st, 1) || !kw_string_attr(p, st, "probe_id", "probe_id") ||
      !parse_opt_attr_dict(p, st) || !expect(p, TK_COLON, "':'"))
    return false;
  token tt = p->tok;
  const cj_type *t = parse_type(p);
  return t && type_operands(p, st, &t, 1, &tt) && set_result1(p, st, t);
}

/* SDY_MESH */
static bool pf_sdy_mesh(P *p, opst *st, cj_syntax syn) {
  cj_module *m = p->m;
  if (!at(p, TK_AT)) return expect(p, TK_AT, "mesh name '@name'");
  const cj_attr *sym = parse_symref(p);
  if (!sym ||
      !add_attr(p, st, "sym_name", cj_attr_string(m, sym->sym.root, strlen(sym->sym.root))))
    return false;
  if (!expect(p, TK_EQ, "'='")) return false;
  const cj_attr *mesh = at(p, TK_HASH) ? parse_attr(p) : sdy_stripped(p, "#sdy.mesh");
  return mesh && add_attr(p, st, "mesh", mesh) && parse_opt_attr_dict(p, st) &&
         set_results(p, st, NULL, 0);
}

/* SDY_SHARDING_CONSTRAINT */
static bool pf_sdy_sharding_constraint(P *p, opst *st, cj_syntax syn) {
  if (!push_operand(p, st)) return false;
  const cj_attr *sh = at(p, TK_HASH) ? parse_attr(p) : sdy_stripped(p, "#sdy.sharding");
  if (!sh || !add_attr(p, st, "sharding", sh) || !parse_opt_attr_dict(p, st) ||
      !expect(p, TK_COLON, "':'"))
    return false;
  token tt = p->tok;
  const cj_type *t = parse_type(p);
  return t && type_operands(p, st, &t, 1, &tt) && set_result1(p, st, t);
}

/* SDY_MANUAL_COMPUTATION */
static bool pf_sdy_manual_computation(P *p, opst *st, cj_syntax syn) {
  if (!expect(p, TK_LPAREN, "'('") || !parse_operand_list(p, st) ||
      !expect(p, TK_RPAREN, "')'"))
    return false;
  const cj_attr *in, *out, *axes;
  if (!expect_kw(p, "in_shardings") || !expect(p, TK_EQ, "'='") ||
      !(in = sdy_wrapped(p, "#sdy.sharding_per_value<", ">", TK_LSQ)) ||
      !add_attr(p, st, "in_shardings", in))
    return false;
  if (!expect_kw(p, "out_shardings") || !expect(p, TK_EQ, "'='") ||
      !(out = sdy_wrapped(p, "#sdy.sharding_per_value<", ">", TK_LSQ)) ||
      !add_attr(p, st, "out_shardings", out))
    return false;
  if (!expect_kw(p, "manual_axes") || !expect(p, TK_EQ, "'='") ||
      !(axes = sdy_wrapped(p, "#sdy<manual_axes", ">", TK_LBRACE)) ||
      !add_attr(p, st, "manual_axes", axes))
    return false;
  if (!pretty_region_with_args(p, st, true)) return false;
  return parse_opt_attr_dict(p, st) && parse_colon_functional(p, st);
}

static const parse_form_fn parse_forms[CJ_SYN_COUNT] = {
    [CJ_SYN_EW] = pf_ew,
    [CJ_SYN_COMPLEX] = pf_complex,
    [CJ_SYN_SELECT] = pf_select,
    [CJ_SYN_FUNCTIONAL] = pf_functional,
    [CJ_SYN_CONSTANT] = pf_constant,
    [CJ_SYN_CHLO_CONSTANT] = pf_constant,
    [CJ_SYN_IOTA] = pf_iota,
    [CJ_SYN_DYNAMIC_IOTA] = pf_dynamic_iota,
    [CJ_SYN_NULLARY] = pf_nullary,
    [CJ_SYN_VARIADIC_SAME] = pf_variadic_same,
    [CJ_SYN_WHILE] = pf_while,
    [CJ_SYN_REDUCE] = pf_reduce,
    [CJ_SYN_GET_TUPLE_ELEMENT] = pf_get_tuple_element,
    [CJ_SYN_TUPLE] = pf_tuple,
    [CJ_SYN_COMPARE] = pf_compare,
    [CJ_SYN_SLICE] = pf_slice,
    [CJ_SYN_DYNAMIC_SLICE] = pf_dims_form,
    [CJ_SYN_BROADCAST] = pf_dims_form,
    [CJ_SYN_BROADCAST_IN_DIM] = pf_dims_form,
    [CJ_SYN_DYNAMIC_BROADCAST_IN_DIM] = pf_dims_form,
    [CJ_SYN_CHOLESKY] = pf_cholesky,
    [CJ_SYN_CONCATENATE] = pf_concatenate,
    [CJ_SYN_COMPOSITE] = pf_composite,
    [CJ_SYN_CONVOLUTION] = pf_convolution,
    [CJ_SYN_CUSTOM_CALL] = pf_custom_call,
    [CJ_SYN_DOT] = pf_dot,
    [CJ_SYN_DOT_GENERAL] = pf_dot_general,
    [CJ_SYN_EINSUM] = pf_einsum,
    [CJ_SYN_UNARY_EINSUM] = pf_einsum,
    [CJ_SYN_FFT] = pf_fft,
    [CJ_SYN_GET_DIMENSION_SIZE] = pf_dimension_size,
    [CJ_SYN_SET_DIMENSION_SIZE] = pf_dimension_size,
    [CJ_SYN_REVERSE] = pf_dims_form,
    [CJ_SYN_PAD] = pf_pad,
    [CJ_SYN_TRANSPOSE] = pf_dims_form,
    [CJ_SYN_RETURN] = pf_return,
    [CJ_SYN_OPTIMIZATION_BARRIER] = pf_optimization_barrier,
    [CJ_SYN_RNG] = pf_rng,
    [CJ_SYN_RNG_BIT_GENERATOR] = pf_rng_bit_generator,
    [CJ_SYN_REDUCE_PRECISION] = pf_reduce_precision,
    [CJ_SYN_FUNC] = pf_func,
    [CJ_SYN_CALL] = pf_call,
    [CJ_SYN_CHLO_UNARY] = pf_chlo_unary,
    [CJ_SYN_CHLO_BINARY] = pf_chlo_binary,
    [CJ_SYN_CHLO_BROADCAST_SELECT] = pf_chlo_binary,
    [CJ_SYN_CHLO_BINARY_ARROW] = pf_chlo_binary_arrow,
    [CJ_SYN_CHLO_TOP_K] = pf_chlo_top_k,
    [CJ_SYN_CHLO_SCAN] = pf_chlo_scan,
    [CJ_SYN_CHECK_EXPECT_CONST] = pf_check_expect_const,
    [CJ_SYN_CHECK_EXPECT] = pf_check_expect,
    [CJ_SYN_CHECK_EXPECT_CLOSE] = pf_check_expect_close,
    [CJ_SYN_CHECK_EXPECT_SERIALIZED] = pf_check_expect_serialized,
    [CJ_SYN_INTERP_PRINT] = pf_interp_print,
    [CJ_SYN_INTERP_PROBE] = pf_interp_probe,
    [CJ_SYN_SDY_MESH] = pf_sdy_mesh,
    [CJ_SYN_SDY_SHARDING_CONSTRAINT] = pf_sdy_sharding_constraint,
    [CJ_SYN_SDY_MANUAL_COMPUTATION] = pf_sdy_manual_computation,
};

static bool parse_custom(P *p, opst *st, cj_syntax syn) {
  parse_form_fn f = syn < CJ_SYN_COUNT ? parse_forms[syn] : NULL;
  if (f) return f(p, st, syn);
  return perr_at(p, &st->at, "'%s' has no pretty form; write it in the generic form", st->name);
}

/* ---- ops of other dialects in their pretty form (only a few are known; the rest must be
 * written generically, or fit `operands attr-dict : T | functional-type`) ---- */

static bool parse_foreign(P *p, opst *st, uint32_t lhs_count) {
  const char *n = st->name;
  cj_module *m = p->m;
  if (strcmp(n, "arith.constant") == 0) {
    if (!parse_opt_attr_dict(p, st)) return false;
    token t = p->tok;
    const cj_attr *v = parse_attr(p);
    if (!v || !add_attr(p, st, "value", v)) return false;
    const cj_type *ty = v->kind == CJ_ATTR_DENSE   ? v->dense.type
                        : v->kind == CJ_ATTR_INT   ? v->i.type
                        : v->kind == CJ_ATTR_FLOAT ? v->f.type
                                                   : NULL;
    if (v->kind == CJ_ATTR_BOOL) ty = cj_type_elem(m, CJ_PRED);
    if (!ty) return perr_at(p, &t, "expected a typed constant value");
    return set_result1(p, st, ty);
  }
  if (strcmp(n, "scf.yield") == 0) return parse_custom(p, st, CJ_SYN_RETURN);
  if (strcmp(n, "tensor.insert") == 0) {
    if (!push_operand(p, st) || !expect_kw(p, "into") || !push_operand(p, st) ||
        !expect(p, TK_LSQ, "'['"))
      return false;
    uint32_t nidx = 0;
    if (!at(p, TK_RSQ)) {
      for (;;) {
        if (!push_operand(p, st)) return false;
        nidx++;
        if (!accept(p, TK_COMMA)) break;
      }
    }
    if (!expect(p, TK_RSQ, "']'") || !parse_opt_attr_dict(p, st) || !expect(p, TK_COLON, "':'"))
      return false;
    token tt = p->tok;
    const cj_type *t = parse_type(p);
    if (!t) return false;
    if (t->kind != CJ_TYPE_TENSOR) return perr_at(p, &tt, "expected a tensor type");
    const cj_type *idx = cj_type_elem(m, CJ_INDEX);
    if (!type_operand(p, st, 0, t->elem) || !type_operand(p, st, 1, t)) return false;
    for (uint32_t i = 0; i < nidx; i++)
      if (!type_operand(p, st, 2 + i, idx)) return false;
    return set_result1(p, st, t);
  }
  if (strcmp(n, "scf.for") == 0) {
    rarg iv;
    memset(&iv, 0, sizeof iv);
    if (!at(p, TK_PERCENT)) return expect(p, TK_PERCENT, "induction variable");
    iv.tok = p->tok;
    next(p);
    if (!expect(p, TK_EQ, "'='") || !push_operand(p, st) || !expect_kw(p, "to") ||
        !push_operand(p, st) || !expect_kw(p, "step") || !push_operand(p, st))
      return false;
    VEC(rarg) args = {0};
    if (!VPUSH(p, args, iv)) return false;
    if (accept_kw(p, "iter_args")) {
      if (!expect(p, TK_LPAREN, "'('")) return false;
      for (;;) {
        rarg a;
        memset(&a, 0, sizeof a);
        if (!at(p, TK_PERCENT)) return expect(p, TK_PERCENT, "iteration argument");
        a.tok = p->tok;
        next(p);
        if (!expect(p, TK_EQ, "'='") || !push_operand(p, st) || !VPUSH(p, args, a)) return false;
        if (!accept(p, TK_COMMA)) break;
      }
      if (!expect(p, TK_RPAREN, "')'")) return false;
    }
    const cj_type *ivt = cj_type_elem(m, CJ_INDEX);
    if (accept(p, TK_COLON) && !(ivt = parse_type(p))) return false;
    const cj_type **rts = NULL;
    uint32_t nr = 0;
    if (accept(p, TK_ARROW) && !parse_result_types(p, &rts, &nr)) return false;
    if (nr != args.n - 1)
      return perr_at(p, &st->at, "scf.for: %u iter_args but %u result types", args.n - 1, nr);
    for (uint32_t i = 0; i < 3; i++)
      if (!type_operand(p, st, i, ivt)) return false;
    args.v[0].type = ivt;
    for (uint32_t i = 0; i < nr; i++) {
      if (!type_operand(p, st, 3 + i, rts[i])) return false;
      args.v[1 + i].type = rts[i];
    }
    if (!set_results(p, st, rts, nr)) return false;
    cj_region r;
    if (!parse_region(p, &r, args.v, args.n, false) || !VPUSH(p, st->regs, r)) return false;
    return parse_opt_attr_dict(p, st);
  }
  /* the common shape: `operands attr-dict : T` (same types) or `: (T...) -> (T...)` */
  if (!parse_operand_list(p, st) || !parse_opt_attr_dict(p, st)) return false;
  if (!at(p, TK_COLON)) {
    if (st->opnds.n == 0 && lhs_count == 0) return set_results(p, st, NULL, 0);
    return perr_at(p, &st->at, "unknown operation '%s' (write it in the generic form)", n);
  }
  next(p);
  token tt = p->tok;
  const cj_type *t = parse_type(p);
  if (!t) return false;
  if (t->kind == CJ_TYPE_FUNCTION)
    return type_operands(p, st, t->members, (uint32_t)t->rank, &tt) &&
           set_results(p, st, t->members + t->rank, (uint32_t)t->nresults);
  for (uint32_t i = 0; i < st->opnds.n; i++)
    if (!type_operand(p, st, i, t)) return false;
  st->rtypes.n = 0;
  for (uint32_t i = 0; i < lhs_count; i++)
    if (!VPUSH(p, st->rtypes, t)) return false;
  st->rtypes_set = true;
  return true;
}

/* ---- normalization of inherent attributes to the kinds ops.def declares ---- */

static const cj_attr *norm_to_i64arr(P *p, const cj_attr *a) {
  if (a->kind == CJ_ATTR_DENSE_ARRAY && a->darr.dtype == CJ_S64) return a;
  int64_t n = 0;
  int64_t small[16];
  if (!cj_attr_get_i64s(a, small, 16, &n)) return a;
  if (a->kind == CJ_ATTR_DENSE && a->dense.type->rank > 1) return a;
  int64_t *buf = small;
  if (n > 16) {
    buf = tmp_alloc(p, sizeof(int64_t) * (size_t)n);
    if (!buf) return NULL;
    cj_attr_get_i64s(a, buf, n, &n);
  }
  const cj_attr *r = cj_attr_i64_array(p->m, n, buf);
  if (!r) oom(p);
  return r;
}

static const cj_attr *norm_to_boolarr(P *p, const cj_attr *a) {
  if (a->kind == CJ_ATTR_DENSE_ARRAY && a->darr.dtype == CJ_PRED) return a;
  if (a->kind == CJ_ATTR_DENSE && a->dense.type->dtype == CJ_PRED && a->dense.type->rank == 1) {
    int64_t n = cj_dense_num_elements(a);
    unsigned char *b = tmp_alloc(p, (size_t)n + 1);
    if (!b) return NULL;
    for (int64_t i = 0; i < n; i++) b[i] = cj_dense_get_i64(a, i) != 0;
    const cj_attr *r = cj_attr_dense_array(p->m, CJ_PRED, n, b);
    if (!r) oom(p);
    return r;
  }
  if (a->kind == CJ_ATTR_ARRAY) {
    unsigned char *b = tmp_alloc(p, (size_t)a->arr.n + 1);
    if (!b) return NULL;
    for (int i = 0; i < a->arr.n; i++) {
      bool v;
      if (!cj_attr_get_bool(a->arr.items[i], &v)) return a;
      b[i] = v;
    }
    const cj_attr *r = cj_attr_dense_array(p->m, CJ_PRED, a->arr.n, b);
    if (!r) oom(p);
    return r;
  }
  return a;
}

static const cj_attr *norm_int(P *p, const cj_attr *a, cj_dtype dt) {
  int64_t v;
  if (a->kind == CJ_ATTR_INT && a->i.type && a->i.type->kind == CJ_TYPE_ELEM &&
      a->i.type->dtype == dt)
    return a;
  if (a->kind == CJ_ATTR_DENSE && cj_dense_num_elements(a) != 1) return a;
  if (!cj_attr_get_i64(a, &v)) return a;
  if (dt == CJ_S32 && (v < INT32_MIN || v > INT32_MAX)) return a;
  const cj_attr *r = cj_attr_int(p->m, v, cj_type_elem(p->m, dt));
  if (!r) oom(p);
  return r;
}

static const cj_attr *norm_i64dense(P *p, const cj_attr *a) {
  if (a->kind != CJ_ATTR_DENSE || !a->dense.type || a->dense.type->dtype == CJ_S64 ||
      !cj_dtype_is_int(a->dense.type->dtype))
    return a;
  int64_t n = cj_dense_num_elements(a);
  if (n < 0) return a;
  const cj_type *t = cj_type_with_elem(p->m, a->dense.type, cj_type_elem(p->m, CJ_S64));
  int64_t cnt = a->dense.splat ? 1 : n;
  int64_t *b = tmp_alloc(p, sizeof(int64_t) * (size_t)(cnt ? cnt : 1));
  if (!t || !b) return NULL;
  for (int64_t i = 0; i < cnt; i++) b[i] = cj_dense_get_i64(a, i);
  const cj_attr *r = cj_attr_dense(p->m, t, b, sizeof(int64_t) * (size_t)cnt, a->dense.splat);
  if (!r) oom(p);
  return r;
}

static bool normalize_attrs(P *p, cj_op *op) {
  if (op->kind == CJ_OP_UNKNOWN) return true;
  for (uint32_t i = 0; i < op->nattrs; i++) {
    const cj_attr_spec *s = cj_op_attr_spec(op->kind, op->attrs[i].name);
    if (!s) continue;
    const cj_attr *a = op->attrs[i].value, *r = a;
    switch (s->kind) {
      case CJ_AK_I64:
        r = norm_int(p, a, CJ_S64);
        break;
      case CJ_AK_I32:
        r = norm_int(p, a, CJ_S32);
        break;
      case CJ_AK_I64ARR:
        r = norm_to_i64arr(p, a);
        break;
      case CJ_AK_BOOLARR:
        r = norm_to_boolarr(p, a);
        break;
      case CJ_AK_I64DENSE:
        r = norm_i64dense(p, a);
        break;
      case CJ_AK_F32:
        if (a->kind == CJ_ATTR_FLOAT && (!a->f.type || a->f.type->dtype != CJ_F32))
          r = cj_attr_float(p->m, (double)(float)a->f.v, cj_type_elem(p->m, CJ_F32));
        break;
      case CJ_AK_BOOL:
        if (a->kind == CJ_ATTR_INT && a->i.type && a->i.type->dtype == CJ_PRED)
          r = cj_attr_bool(p->m, a->i.v != 0);
        break;
      default:
        break;
    }
    if (!r) return false;
    op->attrs[i].value = r;
  }
  return true;
}

/* ---- one operation ---- */

typedef struct resgroup {
  token t;
  uint32_t n;
} resgroup;

static bool parse_operation_inner(P *p, cj_block *b) {
  token start = p->tok;
  VEC(resgroup) res = {0};
  uint32_t nlhs = 0;
  tmark mk = tmp_mark(p);
  if (at(p, TK_PERCENT)) {
    for (;;) {
      resgroup g = {p->tok, 1};
      if (memchr(g.t.s, '#', g.t.n)) return perr(p, "expected a result name without '#'");
      next(p);
      if (accept(p, TK_COLON)) {
        int64_t k;
        token kt = p->tok;
        if (!parse_signed_int(p, &k)) return false;
        if (k < 1 || k > (1 << 20)) return perr_at(p, &kt, "expected a positive result count");
        g.n = (uint32_t)k;
      }
      if (!VPUSH(p, res, g)) return false;
      nlhs += g.n;
      if (!accept(p, TK_COMMA)) break;
      if (!at(p, TK_PERCENT)) return expect(p, TK_PERCENT, "result name");
    }
    if (!expect(p, TK_EQ, "'=' after the result names")) return false;
  }
  opst st;
  memset(&st, 0, sizeof st);
  st.pos = tok_pos(p, &start);
  st.at = p->tok;
  if (at(p, TK_STRING)) {
    size_t n;
    char *name = decode_name(p, &p->tok, 0, &n);
    if (!name) return false;
    if (n == 0) return perr(p, "empty operation name");
    st.kind = cj_op_kind_from_name(name, n);
    st.name = cj_intern(p->m, name, n);
    if (!st.name) return oom(p);
    next(p);
    if (st.kind == CJ_OP_FUNC) p->in_func++;
    bool ok = parse_generic_rest(p, &st);
    if (st.kind == CJ_OP_FUNC) p->in_func--;
    if (!ok) return false;
  } else if (at(p, TK_BARE)) {
    token nt = p->tok;
    if (tok_is(&nt, "module") || tok_is(&nt, "builtin.module"))
      return perr(p, "nested modules are not supported");
    st.kind = cj_op_kind_from_name(nt.s, nt.n);
    if (st.kind == CJ_OP_UNKNOWN && !memchr(nt.s, '.', nt.n)) {
      /* the default dialect inside func.func */
      char buf[80];
      if (nt.n + 5 < sizeof buf) {
        memcpy(buf, "func.", 5);
        memcpy(buf + 5, nt.s, nt.n);
        st.kind = cj_op_kind_from_name(buf, nt.n + 5);
      }
      if (st.kind == CJ_OP_UNKNOWN) return perr(p, "unknown operation '%.*s'", (int)nt.n, nt.s);
    }
    st.name =
        st.kind == CJ_OP_UNKNOWN ? cj_intern(p->m, nt.s, nt.n) : cj_op_info_get(st.kind)->name;
    if (!st.name) return oom(p);
    next(p);
    bool ok;
    if (st.kind == CJ_OP_UNKNOWN) {
      static const char *const ours[] = {"stablehlo.", "chlo.", "func.", "check.", "interpreter."};
      for (size_t i = 0; i < sizeof ours / sizeof ours[0]; i++)
        if (nt.n > strlen(ours[i]) && !memcmp(nt.s, ours[i], strlen(ours[i])))
          return perr_at(p, &nt, "unknown operation '%.*s'", (int)nt.n, nt.s);
      ok = parse_foreign(p, &st, nlhs);
    } else {
      cj_syntax syn = cj_op_info_get(st.kind)->syntax;
      if (syn == CJ_SYN_GENERIC)
        return perr_at(p, &nt, "'%s' has no pretty form; write it in the generic form \"%s\"(...)",
                       st.name, st.name);
      ok = parse_custom(p, &st, syn);
    }
    if (!ok) return false;
  } else {
    char bb[64];
    return perr(p, "expected an operation, found %s", tok_text(p, bb, sizeof bb));
  }
  if (!parse_opt_loc(p, &st.loc)) return false;
  if (nlhs != st.rtypes.n)
    return perr_at(p, &start, "operation defines %u result%s but %u %s given names", st.rtypes.n,
                   st.rtypes.n == 1 ? "" : "s", nlhs, nlhs == 1 ? "was" : "were");
  cj_op *op = finish_op(p, &st, b);
  if (!op || !normalize_attrs(p, op)) return false;
  resgroup local[8], *groups = local;
  uint32_t ng = res.n;
  if (ng > 8) {
    groups = malloc(sizeof(resgroup) * ng);
    if (!groups) return oom(p);
  }
  if (ng) memcpy(groups, res.v, sizeof(resgroup) * ng);
  tmp_release(p, mk);
  uint32_t k = 0;
  bool ok = true;
  for (uint32_t i = 0; i < ng && ok; i++) {
    ok = bind_name(p, &groups[i].t, groups[i].t.s + 1, (uint32_t)groups[i].t.n - 1, &op->results[k],
                   groups[i].n);
    k += groups[i].n;
  }
  if (groups != local) free(groups);
  return ok;
}

static bool parse_operation(P *p, cj_block *b) {
  if (!enter(p)) return false;
  bool ok = parse_operation_inner(p, b);
  leave(p);
  if (!ok && !p->err) oom(p);
  return ok;
}

/* ======================================================================== modules */

/* Is the current token followed by '=' (an alias definition)? */
static bool followed_by_eq(P *p) {
  const char *q = p->p;
  while (q < p->end && (*q == ' ' || *q == '\t')) q++;
  return q < p->end && *q == '=';
}

static bool parse_alias_def(P *p) {
  token t = p->tok;
  bool is_type = t.k == TK_BANG;
  next(p);
  if (!expect(p, TK_EQ, "'='")) return false;
  const char *name = t.s + 1;
  uint32_t len = (uint32_t)t.n - 1;
  if (is_type ? find_type_alias(p, name, len) != NULL : find_attr_alias(p, name, len) != NULL)
    return perr_at(p, &t, "redefinition of alias '%.*s'", (int)t.n, t.s);
  alias a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.len = len;
  if (is_type) {
    if (!(a.type = parse_type(p))) return false;
    if (!mgrow(p, (void **)&p->atype, &p->captype, p->ntype, sizeof *p->atype)) return false;
    p->atype[p->ntype++] = a;
  } else {
    p->in_alias_def++;
    a.attr = parse_attr(p);
    p->in_alias_def--;
    if (!a.attr) return false;
    if (!mgrow(p, (void **)&p->aattr, &p->capaattr, p->naattr, sizeof *p->aattr)) return false;
    p->aattr[p->naattr++] = a;
  }
  return true;
}

static bool skip_file_metadata(P *p) {
  /* {-# ... #-}: dialect resources; skipped */
  const char *s = p->p;
  for (;;) {
    const char *h = memchr(s, '#', (size_t)(p->end - s));
    if (!h) return perr(p, "unterminated file metadata '{-#'");
    if (h + 2 < p->end + 0 && h[1] == '-' && h[2] == '}') {
      advance_to(p, h + 3);
      next(p);
      return true;
    }
    if (h + 2 >= p->end) return perr(p, "unterminated file metadata '{-#'");
    s = h + 1;
  }
}

static bool parse_module_header(P *p) {
  cj_module *m = p->m;
  m->pos = tok_pos(p, &p->tok);
  next(p); /* module */
  if (at(p, TK_AT)) {
    const cj_attr *s = parse_symref(p);
    if (!s) return false;
    m->name = cj_intern(m, s->sym.root, strlen(s->sym.root));
    if (!m->name) return oom(p);
  }
  if (accept_kw(p, "attributes")) {
    if (!expect(p, TK_LBRACE, "'{'")) return false;
    vec_named v = {0};
    if (!parse_named_list(p, TK_RBRACE, &v)) return false;
    for (uint32_t i = 0; i < v.n; i++) {
      cj_status st = cj_module_set_attr(m, v.v[i].name, v.v[i].value);
      if (st) {
        cj_status_ignore(st); /* only fails for memory, reported as such by oom() */
        return oom(p);
      }
    }
  }
  if (!expect(p, TK_LBRACE, "'{' to begin the module body")) return false;
  cj_block *b = cj_module_block(m);
  if (!b) return oom(p);
  if (!parse_block_ops(p, b)) return false;
  if (at(p, TK_CARET)) return perr(p, "a module body has a single block");
  if (!expect(p, TK_RBRACE, "'}' to end the module")) return false;
  return parse_opt_loc(p, &m->loc);
}

static bool resolve_locs(P *p) {
  for (uint32_t i = 0; i < p->nlocfix; i++) {
    locfix *f = &p->locfix[i];
    const cj_attr *a = find_attr_alias(p, f->name, f->len);
    if (!a) return perr_at(p, &f->at, "undefined location alias '#%.*s'", (int)f->len, f->name);
    if (a->kind != CJ_ATTR_LOC)
      return perr_at(p, &f->at, "'#%.*s' is not a location", (int)f->len, f->name);
    *f->ph = *a;
  }
  return true;
}

static bool parse_toplevel(P *p) {
  cj_module *m = p->m;
  cj_block *body = cj_module_block(m);
  if (!body) return oom(p);
  bool explicit_module = false;
  uint32_t nops = 0;
  scope_save sc = scope_push(p, true);
  next(p);
  while (!at(p, TK_EOF)) {
    if ((at(p, TK_HASH) || at(p, TK_BANG)) && followed_by_eq(p)) {
      if (!parse_alias_def(p)) return false;
      continue;
    }
    if (at(p, TK_META_BEGIN)) {
      if (!skip_file_metadata(p)) return false;
      continue;
    }
    if (at_kw(p, "module") || at_kw(p, "builtin.module")) {
      if (explicit_module || nops) return perr(p, "nested modules are not supported");
      explicit_module = true;
      if (!parse_module_header(p)) return false;
      continue;
    }
    if (explicit_module) return perr(p, "unexpected operation after the module");
    if (!parse_operation(p, body)) return false;
    nops++;
  }
  if (p->err) return false;
  if (!scope_pop(p, sc)) return false;
  return resolve_locs(p);
}

/* ======================================================================== entry points */

static void p_init(P *p, cj_module *m, const char *text, size_t len, const char *begin,
                   const char *end, int line, const char *ls) {
  memset(p, 0, sizeof *p);
  p->src = text;
  p->end = end;
  p->p = begin;
  p->m = m;
  p->file = m->filename;
  p->line = line;
  p->ls = ls;
  (void)len;
}

static void p_free(P *p) {
  tmp_release(p, (tmark){NULL, 0});
  free(p->tc);
  free(p->buckets);
  free(p->defs);
  for (uint32_t i = 0; i < p->nfwd; i++) free(p->fwd[i].slots);
  free(p->fwd);
  free(p->labels);
  free(p->aattr);
  free(p->atype);
  free(p->locfix);
}

static CJ_MUST_USE cj_status parse_range(const char *text, size_t len, const char *begin, const char *end,
                             int line, const char *ls, const char *filename, cj_module **out) {
  *out = NULL;
  cj_module *m = cj_module_create(filename ? filename : "<input>");
  if (!m) return cj_oom();
  P p;
  p_init(&p, m, text, len, begin, end, line, ls);
  bool ok = parse_toplevel(&p);
  cj_status st = p.err;
  if (!ok && !st) st = cj_internal("parse failed without a message");
  p_free(&p);
  if (st) {
    cj_module_free(m);
    return st;
  }
  *out = m;
  return NULL;
}

/* Finds the next line that is exactly `// -----` (trailing blanks allowed) at or after s;
 * returns its start or NULL. */
static const char *find_split(const char *s, const char *e) {
  const char *begin = s; /* at the start of a line */
  while (s < e) {
    const char *h = memchr(s, '/', (size_t)(e - s));
    if (!h) return NULL;
    if ((size_t)(e - h) < 8 || memcmp(h, "// -----", 8) != 0) {
      s = h + 1;
      continue;
    }
    /* the line may be indented */
    const char *b = h;
    while (b > begin && (b[-1] == ' ' || b[-1] == '\t')) b--;
    bool line_start = b == begin || b[-1] == '\n';
    const char *q = h + 8;
    while (q < e && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
    if (line_start && (q >= e || *q == '\n')) return b;
    s = h + 8;
  }
  return NULL;
}

cj_status cj_parse_mlir_text(const char *text, size_t len, const char *filename, cj_module **out) {
  if (!out) return cj_invalid("cj_parse_mlir_text: out is NULL");
  *out = NULL;
  if (!text && len) return cj_invalid("cj_parse_mlir_text: text is NULL");
  if (!text) text = "";
  const char *sp = find_split(text, text + len);
  if (sp) {
    int line = 1;
    for (const char *q = text; q < sp; q++) line += *q == '\n';
    return cj_invalid(
        "%s:%d:1: the text holds '// -----' separators; parse it with "
        "cj_parse_mlir_text_split",
        filename ? filename : "<input>", line);
  }
  return parse_range(text, len, text, text + len, 1, text, filename, out);
}

cj_status cj_parse_mlir_text_split(const char *text, size_t len, const char *filename,
                                   cj_module ***out, size_t *n) {
  if (!out || !n) return cj_invalid("cj_parse_mlir_text_split: out or n is NULL");
  *out = NULL;
  *n = 0;
  if (!text && len) return cj_invalid("cj_parse_mlir_text_split: text is NULL");
  if (!text) text = "";
  const char *e = text + len;
  size_t cap = 4, cnt = 0;
  cj_module **mods = malloc(sizeof *mods * cap);
  if (!mods) return cj_oom();
  const char *s = text;
  int line = 1;
  for (;;) {
    const char *sp = find_split(s, e);
    const char *pe = sp ? sp : e;
    if (cnt == cap) {
      cap *= 2;
      cj_module **nm = realloc(mods, sizeof *mods * cap);
      if (!nm) {
        for (size_t i = 0; i < cnt; i++) cj_module_free(mods[i]);
        free(mods);
        return cj_oom();
      }
      mods = nm;
    }
    cj_status st = parse_range(text, len, s, pe, line, s, filename, &mods[cnt]);
    if (st) {
      for (size_t i = 0; i < cnt; i++) cj_module_free(mods[i]);
      free(mods);
      if (!sp && !cnt) return st;
      cj_status st2 =
          cj_status_make(cj_status_code(st), "%s (in split %zu)", cj_status_message(st), cnt + 1);
      cj_status_free(st);
      return st2;
    }
    cnt++;
    if (!sp) break;
    for (const char *q = s; q < sp; q++) line += *q == '\n';
    const char *nl = memchr(sp, '\n', (size_t)(e - sp));
    if (!nl) break; /* separator on the last line: nothing follows */
    line++;
    s = nl + 1;
  }
  *out = mods;
  *n = cnt;
  return NULL;
}

/* All of text as one type (is_type) or one attribute: cj_parse_type_text, cj_parse_attr_text. */
static CJ_MUST_USE cj_status parse_one_text(cj_module *m, const char *text, size_t len, bool is_type,
                                const void **out) {
  const char *what = is_type ? "type" : "attribute";
  if (!text) text = "";
  P p;
  p_init(&p, m, text, len, text, text + len, 1, text);
  p.in_alias_def = 1; /* no deferred location aliases */
  next(&p);
  const void *r = p.err ? NULL : is_type ? (const void *)parse_type(&p) : (const void *)parse_attr(&p);
  if (r && !at(&p, TK_EOF)) {
    char b[64];
    perr(&p, "unexpected %s after the %s", tok_text(&p, b, sizeof b), what);
  }
  cj_status st = p.err;
  p_free(&p);
  if (st) return st;
  if (!r) return cj_internal("%s parse failed", what);
  *out = r;
  return NULL;
}

cj_status cj_parse_attr_text(cj_module *m, const char *text, size_t len, const cj_attr **out) {
  if (!m || !out || (!text && len)) return cj_invalid("cj_parse_attr_text: bad arguments");
  *out = NULL;
  const void *r = NULL;
  cj_status st = parse_one_text(m, text, len, false, &r);
  *out = r;
  return st;
}

cj_status cj_parse_type_text(cj_module *m, const char *text, size_t len, const cj_type **out) {
  if (!m || !out || (!text && len)) return cj_invalid("cj_parse_type_text: bad arguments");
  *out = NULL;
  const void *r = NULL;
  cj_status st = parse_one_text(m, text, len, true, &r);
  *out = r;
  return st;
}

cj_status cj_read_program(const void *data, size_t len, const char *filename, cj_module **out) {
  if (!out) return cj_invalid("cj_read_program: out is NULL");
  *out = NULL;
  if (!data && len) return cj_invalid("cj_read_program: data is NULL");
  if (cj_is_mlir_bytecode(data, len)) return cj_read_mlir_bytecode(data, len, filename, out);
  return cj_parse_mlir_text((const char *)data, len, filename, out);
}
