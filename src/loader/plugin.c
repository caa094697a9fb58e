/* libcjrt: finding, loading and checking PJRT plugins. */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader/loader.h"

/* ---- slots ---- */

static const struct {
  const char *name;
  size_t offset;
} slot_table[] = {
#define SLOT(n) {#n, offsetof(PJRT_Api, n)},
#include "loader/slots.def"
#undef SLOT
};

bool cjrt__lib_has(const cjrt_lib *lib, size_t offset) {
  if (offset + sizeof(void (*)(void)) > lib->api->struct_size) return false;
  void (*fn)(void);
  memcpy(&fn, (const char *)lib->api + offset, sizeof fn);
  return fn != NULL;
}

cjrt_error *cjrt__missing(const cjrt_lib *lib, const char *slot) {
  return cjrt__error(CJRT_UNIMPLEMENTED,
                     "%s: the plugin %s (PJRT C API %d.%d) does not provide this function", slot,
                     lib->path, lib->major, lib->minor);
}

cjrt_error *cjrt__from_pjrt(const cjrt_lib *lib, PJRT_Error *e, const char *slot) {
  if (!e) return NULL;
  const PJRT_Api *api = lib->api;
  PJRT_Error_Message_Args m = {.struct_size = PJRT_Error_Message_Args_STRUCT_SIZE, .error = e};
  api->PJRT_Error_Message(&m);
  PJRT_Error_GetCode_Args g = {.struct_size = PJRT_Error_GetCode_Args_STRUCT_SIZE, .error = e};
  cjrt_code code = CJRT_UNKNOWN;
  PJRT_Error *ge = api->PJRT_Error_GetCode(&g);
  if (!ge) {
    code = (cjrt_code)g.code;
  } else {
    PJRT_Error_Destroy_Args d = {.struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE, .error = ge};
    api->PJRT_Error_Destroy(&d);
  }
  if ((int)code <= 0 || (int)code > 16) code = CJRT_UNKNOWN;
  int len = (int)(m.message ? m.message_size : 0);
  const char *msg = m.message ? m.message : "";
  /* "PJRT_Foo: <message>", unless the plugin's message already names the function */
  bool named = false;
  size_t sl = strlen(slot);
  for (int i = 0; i + (int)sl <= len && !named; i++) named = !memcmp(msg + i, slot, sl);
  cjrt_error *err = named ? cjrt__error(code, "%.*s", len, msg)
                          : cjrt__error(code, "%s: %.*s", slot, len, msg);
  PJRT_Error_Destroy_Args d = {.struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE, .error = e};
  api->PJRT_Error_Destroy(&d);
  return err;
}

void cjrt__destroy_event(const cjrt_lib *lib, PJRT_Event *ev) {
  if (!ev) return;
  PJRT_Event_Destroy_Args d = {.struct_size = PJRT_Event_Destroy_Args_STRUCT_SIZE, .event = ev};
  cjrt_error_free(CJRT_PJRT(lib, PJRT_Event_Destroy, &d));
}

cjrt_error *cjrt__await_event(const cjrt_lib *lib, PJRT_Event *ev, const char *what) {
  if (!ev) return NULL;
  PJRT_Event_Await_Args a = {.struct_size = PJRT_Event_Await_Args_STRUCT_SIZE, .event = ev};
  cjrt_error *err = CJRT_PJRT(lib, PJRT_Event_Await, &a);
  cjrt__destroy_event(lib, ev);
  return what ? cjrt__annotate(err, "%s", what) : err;
}

char *cjrt__strndup(const char *s, size_t n) {
  if (!s) n = 0;
  char *p = malloc(n + 1);
  if (!p) return NULL;
  if (n) memcpy(p, s, n);
  p[n] = 0;
  return p;
}

cjrt_error *cjrt__copy_named_values(const PJRT_NamedValue *nv, size_t n, cjrt_value **out,
                                    void **storage) {
  *out = NULL;
  *storage = NULL;
  if (!n || !nv) return NULL;
  size_t bytes = n * sizeof(cjrt_value);
  for (size_t i = 0; i < n; i++) {
    bytes += (nv[i].name ? nv[i].name_size : 0) + 1;
    if (nv[i].type == PJRT_NamedValue_kString) bytes += (nv[i].string_value ? nv[i].value_size : 0) + 1;
    if (nv[i].type == PJRT_NamedValue_kInt64List)
      bytes += 8 + (nv[i].int64_array_value ? nv[i].value_size : 0) * sizeof(int64_t);
  }
  char *block = calloc(1, bytes);
  if (!block) return cjrt__oom();
  cjrt_value *vals = (cjrt_value *)block;
  char *p = block + n * sizeof(cjrt_value);
  for (size_t i = 0; i < n; i++) {
    cjrt_value *v = &vals[i];
    size_t nl = nv[i].name ? nv[i].name_size : 0;
    if (nl) memcpy(p, nv[i].name, nl);
    p[nl] = 0;
    v->name = p;
    p += nl + 1;
    v->kind = (cjrt_value_kind)nv[i].type;
    switch (nv[i].type) {
      case PJRT_NamedValue_kString: {
        size_t sl = nv[i].string_value ? nv[i].value_size : 0;
        if (sl) memcpy(p, nv[i].string_value, sl);
        p[sl] = 0;
        v->string_value = p;
        v->size = sl;
        p += sl + 1;
        break;
      }
      case PJRT_NamedValue_kInt64: v->int64_value = nv[i].int64_value; v->size = 1; break;
      case PJRT_NamedValue_kInt64List: {
        size_t cnt = nv[i].int64_array_value ? nv[i].value_size : 0;
        p = (char *)(((uintptr_t)p + 7) & ~(uintptr_t)7);
        if (cnt) memcpy(p, nv[i].int64_array_value, cnt * sizeof(int64_t));
        v->int64_list = (const int64_t *)p;
        v->size = cnt;
        p += cnt * sizeof(int64_t);
        break;
      }
      case PJRT_NamedValue_kFloat: v->float_value = nv[i].float_value; v->size = 1; break;
      case PJRT_NamedValue_kBool: v->bool_value = nv[i].bool_value; v->size = 1; break;
      default: v->size = 0; break;
    }
  }
  *out = vals;
  *storage = block;
  return NULL;
}

/* ---- the library registry ---- */

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static cjrt_lib *registry = NULL;

CJRT_API int cjrt_api_major(void) { return PJRT_API_MAJOR; }
CJRT_API int cjrt_api_minor(void) { return PJRT_API_MINOR; }

/* The oldest table we drive: 0.57 fixed the order of the core slots (the changelog's
 * "Rearranged fields in the PJRT_Api"), so older tables cannot be read by offset. */
enum { MIN_MINOR = 57 };

static cjrt_error *check_api(const char *path, const PJRT_Api *api, int *major, int *minor) {
  if (!api)
    return cjrt__error(CJRT_FAILED_PRECONDITION, "%s: GetPjrtApi() returned NULL", path);
  size_t need = offsetof(PJRT_Api, PJRT_Plugin_Attributes) + sizeof(void *);
  if (api->struct_size < offsetof(PJRT_Api, PJRT_Error_Destroy))
    return cjrt__error(CJRT_FAILED_PRECONDITION,
                       "%s: GetPjrtApi() returned a table of %zu bytes, too small to be a PJRT_Api",
                       path, api->struct_size);
  *major = api->pjrt_api_version.major_version;
  *minor = api->pjrt_api_version.minor_version;
  if (*major != PJRT_API_MAJOR)
    return cjrt__error(CJRT_FAILED_PRECONDITION,
                       "%s implements PJRT C API %d.%d; libcjrt speaks %d.%d, and major versions "
                       "must be equal",
                       path, *major, *minor, PJRT_API_MAJOR, PJRT_API_MINOR);
  if (*minor < MIN_MINOR)
    return cjrt__error(CJRT_FAILED_PRECONDITION,
                       "%s implements PJRT C API %d.%d; libcjrt drives plugins from %d.%d on (the "
                       "PJRT_Api table was reordered in 0.57)",
                       path, *major, *minor, PJRT_API_MAJOR, MIN_MINOR);
  if (api->struct_size < need)
    return cjrt__error(CJRT_FAILED_PRECONDITION,
                       "%s: its PJRT_Api table (%zu bytes) lacks the error and plugin functions",
                       path, api->struct_size);
  if (!api->PJRT_Error_Destroy || !api->PJRT_Error_Message || !api->PJRT_Error_GetCode)
    return cjrt__error(CJRT_FAILED_PRECONDITION,
                       "%s: its PJRT_Api table leaves the PJRT_Error functions NULL", path);
  return NULL;
}

static cjrt_error *read_attributes(cjrt_lib *lib) {
  if (!CJRT_HAS(lib, PJRT_Plugin_Attributes)) return NULL;
  PJRT_Plugin_Attributes_Args a = {.struct_size = PJRT_Plugin_Attributes_Args_STRUCT_SIZE};
  cjrt_error *err = CJRT_PJRT(lib, PJRT_Plugin_Attributes, &a);
  if (err) {
    /* attributes are informational: a plugin without them is still usable */
    cjrt_error_free(err);
    return NULL;
  }
  CJRT_TRY(cjrt__copy_named_values(a.attributes, a.num_attributes, &lib->attrs, &lib->attr_storage));
  lib->num_attrs = lib->attrs ? a.num_attributes : 0;
  return NULL;
}

/* Loads (or finds already loaded) the library at `path`. Called with the registry lock held. */
static cjrt_error *load_locked(const char *path, cjrt_lib **out) {
  *out = NULL;
  dlerror();
  void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
  if (!h) {
    const char *why = dlerror();
    return cjrt__error(CJRT_NOT_FOUND, "cannot load plugin '%s': %s", path, why ? why : "dlopen failed");
  }
  for (cjrt_lib *l = registry; l; l = l->next) {
    if (l->handle == h) {
      dlclose(h); /* drop the extra reference this dlopen took */
      if (l->init_error)
        return cjrt__error(cjrt_error_code(l->init_error), "%s", cjrt_error_message(l->init_error));
      *out = l;
      return NULL;
    }
  }
  dlerror();
  void *sym = dlsym(h, "GetPjrtApi");
  if (!sym) {
    dlclose(h);
    return cjrt__error(CJRT_INVALID_ARGUMENT,
                       "'%s' is not a PJRT plugin: it has no GetPjrtApi symbol", path);
  }
  const PJRT_Api *(*get_api)(void);
  memcpy(&get_api, &sym, sizeof get_api);
  const PJRT_Api *api = get_api();
  int major = 0, minor = 0;
  cjrt_error *err = check_api(path, api, &major, &minor);
  if (err) {
    dlclose(h);
    return err;
  }
  cjrt_lib *lib = calloc(1, sizeof *lib);
  char *rp = realpath(path, NULL);
  if (!rp) rp = cjrt__strndup(path, strlen(path));
  if (!lib || !rp) {
    free(lib);
    free(rp);
    dlclose(h);
    return cjrt__oom();
  }
  *lib = (cjrt_lib){.handle = h, .api = api, .path = rp, .major = major, .minor = minor};
  /* PJRT_Plugin_Initialize, once per library for the life of the process */
  if (CJRT_HAS(lib, PJRT_Plugin_Initialize)) {
    PJRT_Plugin_Initialize_Args ia = {.struct_size = PJRT_Plugin_Initialize_Args_STRUCT_SIZE};
    lib->init_error = cjrt__annotate(CJRT_PJRT(lib, PJRT_Plugin_Initialize, &ia),
                                     "initializing plugin %s", lib->path);
  }
  if (!lib->init_error) {
    err = read_attributes(lib);
    if (err) lib->init_error = err;
  }
  /* registered even when initialization failed, so that Initialize is never run twice */
  lib->next = registry;
  registry = lib;
  if (lib->init_error)
    return cjrt__error(cjrt_error_code(lib->init_error), "%s", cjrt_error_message(lib->init_error));
  *out = lib;
  return NULL;
}

/* ---- the name search ---- */

static bool is_file(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static const char *const patterns[] = {
    "pjrt_c_api_%s_plugin.so", "pjrt_plugin_%s.so", "libpjrt_%s.so", "xla_%s_plugin.so",
    "lib%s.so",                "%s.so",
};

/* The directory holding libcjrt itself (owned), or NULL. */
static char *self_dir(void) {
  Dl_info info;
  if (!dladdr((void *)&cjrt_plugin_find, &info) || !info.dli_fname) return NULL;
  char *rp = realpath(info.dli_fname, NULL);
  if (!rp) return NULL;
  char *slash = strrchr(rp, '/');
  if (slash) *slash = 0;
  return rp;
}

typedef struct {
  cjrt_sb tried;
  int ntried;
  char *found;
} search;

static bool try_dir(search *s, const char *dir, const char *name) {
  char path[PATH_MAX];
  for (size_t k = 0; k < sizeof patterns / sizeof patterns[0]; k++) {
    char file[256];
    snprintf(file, sizeof file, patterns[k], name);
    snprintf(path, sizeof path, "%s/%s", *dir ? dir : ".", file);
    if (is_file(path)) {
      s->found = cjrt__strndup(path, strlen(path));
      return true;
    }
  }
  if (s->ntried++ < 12) cjrt_sb_printf(&s->tried, "%s%s", s->ntried > 1 ? ", " : "", dir);
  return false;
}

static bool try_path_list(search *s, const char *list, const char *name, bool files_match_any) {
  if (!list || !*list) return false;
  char *copy = cjrt__strndup(list, strlen(list));
  if (!copy) return false;
  bool hit = false;
  for (char *save = NULL, *tok = strtok_r(copy, ":", &save); tok && !hit;
       tok = strtok_r(NULL, ":", &save)) {
    if (files_match_any && is_file(tok)) {
      s->found = cjrt__strndup(tok, strlen(tok));
      hit = true;
    } else {
      hit = try_dir(s, tok, name);
    }
  }
  free(copy);
  return hit;
}

CJRT_API cjrt_error *cjrt_plugin_find(const char *name, char **out_path) {
  *out_path = NULL;
  if (!name || !*name) return cjrt__error(CJRT_INVALID_ARGUMENT, "plugin name is empty");
  if (strchr(name, '/') || strlen(name) > 128)
    return cjrt__error(CJRT_INVALID_ARGUMENT, "'%s' is not a plugin name", name);
  search s = {0};
  /* 1. JAX's PJRT_NAMES_AND_LIBRARY_PATHS: "name:path,name2:path2" */
  const char *jax = getenv("PJRT_NAMES_AND_LIBRARY_PATHS");
  if (jax && *jax) {
    char *copy = cjrt__strndup(jax, strlen(jax));
    for (char *save = NULL, *tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !s.found;
         tok = strtok_r(NULL, ",", &save)) {
      char *colon = strchr(tok, ':');
      if (colon && (size_t)(colon - tok) == strlen(name) && !strncasecmp(tok, name, strlen(name)) &&
          colon[1])
        s.found = cjrt__strndup(colon + 1, strlen(colon + 1));
    }
    free(copy);
    if (!s.found) {
      s.ntried++;
      cjrt_sb_puts(&s.tried, "$PJRT_NAMES_AND_LIBRARY_PATHS");
    }
  }
  /* 2. search directories */
  if (!s.found) try_path_list(&s, getenv("CJRT_PLUGIN_PATH"), name, false);
  if (!s.found) try_path_list(&s, getenv("PJRT_PLUGIN_LIBRARY_PATH"), name, true);
  if (!s.found) {
    char *dir = self_dir();
    if (dir) {
      if (!try_dir(&s, dir, name)) {
        char up[PATH_MAX];
        snprintf(up, sizeof up, "%s/../lib", dir);
        try_dir(&s, up, name);
      }
      free(dir);
    }
  }
  /* 3. the dynamic linker's own search */
  if (!s.found) {
    for (size_t k = 0; k < sizeof patterns / sizeof patterns[0] && !s.found; k++) {
      char file[256];
      snprintf(file, sizeof file, patterns[k], name);
      void *h = dlopen(file, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
      if (!h) h = dlopen(file, RTLD_LAZY | RTLD_LOCAL);
      if (h) {
        if (dlsym(h, "GetPjrtApi")) s.found = cjrt__strndup(file, strlen(file));
        dlclose(h);
      }
    }
    if (!s.found) cjrt_sb_puts(&s.tried, s.ntried ? ", the system library path" : "the system library path");
  }
  if (s.found) {
    cjrt_sb_free(&s.tried);
    *out_path = s.found;
    return NULL;
  }
  cjrt_error *err = cjrt__error(
      CJRT_NOT_FOUND,
      "no PJRT plugin named '%s' (looked for pjrt_c_api_%s_plugin.so, lib%s.so and similar in %s%s; "
      "give a path with --plugin, or set CJRT_PLUGIN_PATH or PJRT_NAMES_AND_LIBRARY_PATHS)",
      name, name, name, s.tried.p ? s.tried.p : "", s.ntried > 12 ? ", ..." : "");
  cjrt_sb_free(&s.tried);
  return err;
}

static bool looks_like_path(const char *s) {
  size_t n = strlen(s);
  return strchr(s, '/') || (n > 3 && !strcmp(s + n - 3, ".so")) || strstr(s, ".so.");
}

CJRT_API cjrt_error *cjrt_plugin_open(const char *path_or_name, cjrt_plugin **out) {
  *out = NULL;
  const char *arg = path_or_name;
  if (!arg || !*arg) {
    arg = getenv("CJRT_PLUGIN");
    if (!arg || !*arg) arg = "cjrt";
  }
  char *path = NULL;
  if (looks_like_path(arg)) {
    if (!strchr(arg, '/')) {
      /* "foo.so": the file in the current directory if there is one (dlopen would otherwise
       * search only the system paths) */
      if (is_file(arg)) {
        size_t n = strlen(arg);
        path = malloc(n + 3);
        if (path) snprintf(path, n + 3, "./%s", arg);
      } else {
        path = cjrt__strndup(arg, strlen(arg));
      }
    } else {
      struct stat st;
      if (stat(arg, &st) != 0)
        return cjrt__error(CJRT_NOT_FOUND, "plugin '%s' does not exist", arg);
      if (S_ISDIR(st.st_mode))
        return cjrt__error(CJRT_INVALID_ARGUMENT, "plugin '%s' is a directory, not a shared library",
                           arg);
      path = cjrt__strndup(arg, strlen(arg));
    }
    if (!path) return cjrt__oom();
  } else {
    CJRT_TRY(cjrt_plugin_find(arg, &path));
  }
  cjrt_plugin *p = calloc(1, sizeof *p);
  if (!p) {
    free(path);
    return cjrt__oom();
  }
  pthread_mutex_lock(&registry_lock);
  cjrt_lib *lib = NULL;
  cjrt_error *err = load_locked(path, &lib);
  pthread_mutex_unlock(&registry_lock);
  free(path);
  if (err) {
    free(p);
    return err;
  }
  atomic_init(&p->refs, 1);
  p->lib = lib;
  *out = p;
  return NULL;
}

cjrt_plugin *cjrt__plugin_retain(cjrt_plugin *p) {
  atomic_fetch_add(&p->refs, 1);
  return p;
}

CJRT_API void cjrt_plugin_close(cjrt_plugin *p) {
  if (!p) return;
  if (atomic_fetch_sub(&p->refs, 1) == 1) free(p); /* the library itself stays loaded */
}

CJRT_API const char *cjrt_plugin_path(const cjrt_plugin *p) { return p->lib->path; }
CJRT_API int cjrt_plugin_api_major(const cjrt_plugin *p) { return p->lib->major; }
CJRT_API int cjrt_plugin_api_minor(const cjrt_plugin *p) { return p->lib->minor; }
CJRT_API size_t cjrt_plugin_num_attributes(const cjrt_plugin *p) { return p->lib->num_attrs; }
CJRT_API const cjrt_value *cjrt_plugin_attribute(const cjrt_plugin *p, size_t i) {
  return i < p->lib->num_attrs ? &p->lib->attrs[i] : NULL;
}
CJRT_API const struct PJRT_Api *cjrt_plugin_api(const cjrt_plugin *p) { return p->lib->api; }

CJRT_API bool cjrt_plugin_has(const cjrt_plugin *p, const char *slot_name) {
  if (!p || !slot_name) return false;
  for (size_t i = 0; i < sizeof slot_table / sizeof slot_table[0]; i++)
    if (!strcmp(slot_table[i].name, slot_name)) return cjrt__lib_has(p->lib, slot_table[i].offset);
  return false;
}

/* ---- named values ---- */

CJRT_API cjrt_value cjrt_value_int64(const char *name, int64_t v) {
  return (cjrt_value){.name = name, .kind = CJRT_VALUE_INT64, .int64_value = v, .size = 1};
}
CJRT_API cjrt_value cjrt_value_string(const char *name, const char *v) {
  return (cjrt_value){.name = name, .kind = CJRT_VALUE_STRING, .string_value = v,
                      .size = v ? strlen(v) : 0};
}
CJRT_API cjrt_value cjrt_value_bool(const char *name, bool v) {
  return (cjrt_value){.name = name, .kind = CJRT_VALUE_BOOL, .bool_value = v, .size = 1};
}
CJRT_API cjrt_value cjrt_value_float(const char *name, float v) {
  return (cjrt_value){.name = name, .kind = CJRT_VALUE_FLOAT, .float_value = v, .size = 1};
}
CJRT_API cjrt_value cjrt_value_int64_list(const char *name, const int64_t *v, size_t n) {
  return (cjrt_value){.name = name, .kind = CJRT_VALUE_INT64_LIST, .int64_list = v, .size = n};
}

CJRT_API cjrt_error *cjrt_value_parse(char *text, int64_t *storage, size_t storage_len,
                                      cjrt_value *out) {
  memset(out, 0, sizeof *out);
  char *eq = text ? strchr(text, '=') : NULL;
  if (!eq || eq == text)
    return cjrt__error(CJRT_INVALID_ARGUMENT, "option '%s' is not NAME=VALUE", text ? text : "");
  *eq = 0;
  char *v = eq + 1;
  out->name = text;
  char *end;
  if (!strcasecmp(v, "true") || !strcasecmp(v, "false")) {
    *out = cjrt_value_bool(text, !strcasecmp(v, "true"));
    return NULL;
  }
  if (v[0] == '[') {
    size_t n = 0;
    char *q = v + 1;
    for (;;) {
      while (isspace((unsigned char)*q) || *q == ',') q++;
      if (*q == ']') break;
      errno = 0;
      long long x = strtoll(q, &end, 0);
      if (end == q || errno)
        return cjrt__error(CJRT_INVALID_ARGUMENT, "option %s: '%s' is not a list of integers", text, v);
      if (n >= storage_len)
        return cjrt__error(CJRT_INVALID_ARGUMENT, "option %s: list longer than %zu", text, storage_len);
      storage[n++] = x;
      q = end;
    }
    *out = cjrt_value_int64_list(text, storage, n);
    return NULL;
  }
  errno = 0;
  long long x = strtoll(v, &end, 0);
  if (*v && *end == 0 && errno == 0) {
    *out = cjrt_value_int64(text, x);
    return NULL;
  }
  double d = strtod(v, &end);
  if (*v && *end == 0) {
    *out = cjrt_value_float(text, (float)d);
    return NULL;
  }
  *out = cjrt_value_string(text, v);
  return NULL;
}
