/* el_common.c: error names, the counting allocator, logging. */
#include "el_common.h"

#include <ctype.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

/* {====== errors ======} */

const char *el_err_name(int err) {
  switch (err) {
#define EL__ERR_NAME(name, value, msg) \
  case value:                          \
    return #name;
    EL_ERRNO_MAP(EL__ERR_NAME)
#undef EL__ERR_NAME
  case 0:
    return "OK";
  case -ENOENT:
    return "ENOENT";
  case -EACCES:
    return "EACCES";
  case -ECONNREFUSED:
    return "ECONNREFUSED";
  case -EPIPE:
    return "EPIPE";
  case -EINVAL:
    return "EINVAL";
  default:
    return "UNKNOWN";
  }
}

const char *el_strerror(int err) {
  switch (err) {
#define EL__ERR_MSG(name, value, msg) \
  case value:                         \
    return msg;
    EL_ERRNO_MAP(EL__ERR_MSG)
#undef EL__ERR_MSG
  case 0:
    return "success";
  default:
    return err < 0 ? strerror(-err) : "unknown error";
  }
}

/* {====== allocator ======}
 * Each block carries a header with its size so el_free can keep the count
 * exact. The header is 16 bytes to preserve malloc's alignment. */

typedef union {
  size_t size;
  max_align_t align;
} alloc_hdr_t;

static atomic_size_t mem_in_use;
static atomic_size_t mem_peak;
static atomic_uint_fast64_t mem_allocs;
#ifdef EL_TESTING
static atomic_uint_fast64_t mem_fail_at;
#endif

static int should_fail(void) {
#ifdef EL_TESTING
  uint64_t n = atomic_load(&mem_fail_at);
  if (n == 0) return 0;
  if (n == 1) {
    atomic_store(&mem_fail_at, 0);
    return 1;
  }
  atomic_store(&mem_fail_at, n - 1);
#endif
  return 0;
}

static void account(ptrdiff_t delta) {
  size_t now = atomic_fetch_add(&mem_in_use, (size_t)delta) + (size_t)delta;
  size_t peak = atomic_load(&mem_peak);
  while (now > peak && !atomic_compare_exchange_weak(&mem_peak, &peak, now)) {
  }
}

void *el_malloc(size_t size) {
  if (should_fail()) return NULL;
  alloc_hdr_t *h = malloc(sizeof(alloc_hdr_t) + size);
  if (!h) return NULL;
  h->size = size;
  account((ptrdiff_t)size);
  atomic_fetch_add(&mem_allocs, 1);
  return h + 1;
}

/* Through calloc, not malloc + memset: a large block comes zeroed from
 * the kernel, and its pages are only faulted in when touched (a decoder's
 * 256 KiB type table, of which one page is used). */
void *el_calloc(size_t n, size_t size) {
  if (size && n > (SIZE_MAX - sizeof(alloc_hdr_t)) / size) return NULL;
  if (should_fail()) return NULL;
  alloc_hdr_t *h = calloc(1, sizeof(alloc_hdr_t) + n * size);
  if (!h) return NULL;
  h->size = n * size;
  account((ptrdiff_t)(n * size));
  atomic_fetch_add(&mem_allocs, 1);
  return h + 1;
}

void *el_realloc(void *ptr, size_t size) {
  if (!ptr) return el_malloc(size);
  if (should_fail()) return NULL;
  alloc_hdr_t *old = (alloc_hdr_t *)ptr - 1;
  size_t osize = old->size;
  alloc_hdr_t *h = realloc(old, sizeof(alloc_hdr_t) + size);
  if (!h) return NULL;
  h->size = size;
  account((ptrdiff_t)size - (ptrdiff_t)osize);
  atomic_fetch_add(&mem_allocs, 1);
  return h + 1;
}

void el_free(void *ptr) {
  if (!ptr) return;
  alloc_hdr_t *h = (alloc_hdr_t *)ptr - 1;
  account(-(ptrdiff_t)h->size);
  free(h);
}

#define HUGE_PAGE ((size_t)2 << 20) /* x86-64's and AArch64's THP size */

size_t el_huge_len(size_t size) {
  if (size > SIZE_MAX - 2 * HUGE_PAGE) return 0;
  return (size + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
}

void *el_huge_alloc(size_t size) {
  size_t len = el_huge_len(size);
  if (!len || should_fail()) return NULL;
  /* one huge page more than needed, to cut an aligned block from */
  char *m = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return NULL;
  uintptr_t a = ((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
  size_t lead = (size_t)(a - (uintptr_t)m);
  if (lead) munmap(m, lead);
  if (HUGE_PAGE - lead) munmap((char *)a + len, HUGE_PAGE - lead);
#ifdef MADV_HUGEPAGE
  /* advice only: a kernel without THP leaves it an ordinary mapping */
  (void)madvise((void *)a, len, MADV_HUGEPAGE);
#endif
  account((ptrdiff_t)len);
  atomic_fetch_add(&mem_allocs, 1);
  return (void *)a;
}

void el_huge_free(void *p, size_t size) {
  if (!p) return;
  size_t len = el_huge_len(size);
  munmap(p, len);
  account(-(ptrdiff_t)len);
}

char *el_strndup(const char *s, size_t len) {
  char *d = el_malloc(len + 1);
  if (!d) return NULL;
  if (len) memcpy(d, s, len);
  d[len] = '\0';
  return d;
}

char *el_strdup(const char *s) { return el_strndup(s, strlen(s)); }

size_t el_mem_in_use(void) { return atomic_load(&mem_in_use); }
size_t el_mem_peak(void) { return atomic_load(&mem_peak); }
uint64_t el_mem_alloc_count(void) { return atomic_load(&mem_allocs); }

#ifdef EL_TESTING
void el_mem_fail_after(uint64_t n) { atomic_store(&mem_fail_at, n); }
#endif

/* {====== logging ======} */

el_log_level_t el_log_threshold = EL_LOG_WARN;
static el_log_hook_fn log_hook;
static void *log_hook_ud;

void el_log_set_hook(el_log_hook_fn fn, void *ud) {
  log_hook = fn;
  log_hook_ud = ud;
}

static const char *level_name(el_log_level_t level) {
  static const char *const names[] = {"debug", "info", "warning", "error",
                                      "quiet"};
  return (unsigned)level < EL_ARRAY_LEN(names) ? names[level] : "?";
}

void el_logv(el_log_level_t level, const char *fmt, va_list ap) {
  if (!el_log_enabled(level)) return;
  char buf[1024];
  vsnprintf(buf, sizeof buf, fmt, ap);
  fprintf(stderr, "%s: %s: %s\n", el_prog_name(), level_name(level), buf);
  if (log_hook) log_hook(log_hook_ud, level, buf);
}

void el_log(el_log_level_t level, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  el_logv(level, fmt, ap);
  va_end(ap);
}

int el_log_parse_level(const char *s, el_log_level_t *out) {
  static const struct {
    const char *name;
    el_log_level_t level;
  } table[] = {{"trace", EL_LOG_DEBUG},  {"debug", EL_LOG_DEBUG},
               {"info", EL_LOG_INFO},    {"warn", EL_LOG_WARN},
               {"warning", EL_LOG_WARN}, {"error", EL_LOG_ERROR},
               {"fatal", EL_LOG_ERROR},  {"quiet", EL_LOG_QUIET}};
  for (size_t i = 0; i < EL_ARRAY_LEN(table); i++) {
    if (strcmp(s, table[i].name) == 0) {
      *out = table[i].level;
      return 0;
    }
  }
  return EL_EINVAL;
}

/* {====== command-line helpers ======} */

static const char *prog_name = "eventlog-live";

const char *el_prog_name(void) { return prog_name; }

void el_set_prog_name(const char *argv0) {
  const char *base = argv0 ? strrchr(argv0, '/') : NULL;
  base = base ? base + 1 : argv0;
  prog_name = base && !strcmp(base, "eventlog-live-otelcol")
                  ? "eventlog-live-otelcol"
                  : "eventlog-live";
}

void el_eprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: ", prog_name);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
}

/* s lower-cased into buf (size 65); 0 if s is longer than 64 bytes. */
static int lower64(const char *s, char *buf) {
  size_t n = strlen(s);
  if (n > 64) return 0;
  for (size_t k = 0; k <= n; k++) buf[k] = (char)tolower((unsigned char)s[k]);
  return 1;
}

const char *el_nearest(const char *word, const char *const *cands, size_t n) {
  char w[65], c[65];
  if (!word || !lower64(word, w)) return NULL;
  size_t wl = strlen(w), best = SIZE_MAX;
  const char *found = NULL;
  for (size_t i = 0; i < n; i++) {
    if (!cands[i] || !lower64(cands[i], c)) continue;
    size_t d = wl >= 3 && !strncmp(c, w, wl) ? 0 : el_edit_distance(w, c);
    if (d < best && d <= 1 + wl / 5) {
      best = d;
      found = cands[i];
    }
  }
  return found;
}

int el_opt_value(int argc, char **argv, int *i, const char *name,
                 const char **val) {
  size_t n = strlen(name);
  const char *a = argv[*i];
  if (strncmp(a, name, n) != 0) return 0;
  if (a[n] == '=') {
    *val = a + n + 1;
    (*i)++;
    return 1;
  }
  if (a[n] != '\0') return 0;
  *val = *i + 1 < argc ? argv[*i + 1] : NULL;
  *i += *val ? 2 : 1;
  return 1;
}

size_t el_edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 64 || lb > 64) return la > lb ? la : lb;
  size_t prev2[65], prev[65], row[65]; /* rows i-2, i-1, i */
  for (size_t j = 0; j <= lb; j++) prev[j] = j;
  for (size_t i = 1; i <= la; i++) {
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t best = prev[j - 1] + (a[i - 1] != b[j - 1]);
      if (prev[j] + 1 < best) best = prev[j] + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
          prev2[j - 2] + 1 < best)
        best = prev2[j - 2] + 1; /* two neighbours swapped */
      row[j] = best;
    }
    memcpy(prev2, prev, sizeof prev);
    memcpy(prev, row, sizeof row);
  }
  return prev[lb];
}

void el_opt_suggest(const char *arg, void (*help)(FILE *f), char *out,
                    size_t size) {
  char *text = NULL, word[64];
  size_t len = 0, best = SIZE_MAX;
  if (size) out[0] = 0;
  size_t n = strcspn(arg, "=");
  if (!size || n < 3 || n >= sizeof word || strncmp(arg, "--", 2)) return;
  memcpy(word, arg, n);
  word[n] = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return;
  help(f);
  fclose(f);
  if (!text) return;
  for (char *p = strstr(text, "--"); p; p = strstr(p + 2, "--")) {
    size_t k = 2;
    while (islower((unsigned char)p[k]) || isdigit((unsigned char)p[k]) ||
           (p[k] == '-' && p[k + 1] != '-'))
      k++;
    /* An option word: "--x..." after a space, comma, '(' or '[' */
    if (k < 4 || k >= sizeof word || (p > text && !strchr(" ,([|\n", p[-1])))
      continue;
    char cand[64];
    memcpy(cand, p, k);
    cand[k] = 0;
    size_t dist = !strncmp(cand, word, n) ? 0 : el_edit_distance(word, cand);
    if (dist < best && dist <= 1 + n / 5) {
      best = dist;
      snprintf(out, size, "%s", cand);
    }
  }
  free(text);
}

int el_opt_unknown(const char *cmd, const char *arg, void (*help)(FILE *f)) {
  char near[64] = "";
  if (help) el_opt_suggest(arg, help, near, sizeof near);
  el_eprintf("%s%sunknown option '%s'%s%s%s (see --help)\n", cmd ? cmd : "",
             cmd ? ": " : "", arg, near[0] ? "; did you mean " : "", near,
             near[0] ? "?" : "");
  return EL_EUSAGE;
}

int el_opt_log_level(const char *cmd, const char *opt, const char *v,
                     el_log_level_t *out) {
  static const char *const names[] = {"trace",   "debug", "info",  "warn",
                                      "warning", "error", "fatal", "quiet"};
  if (v && el_log_parse_level(v, out) == 0) return 0;
  const char *near = v ? el_nearest(v, names, EL_ARRAY_LEN(names)) : NULL;
  if (!v)
    el_eprintf(
        "%s%s%s needs a value (trace, debug, info, warn, error, fatal or "
        "quiet)\n",
        cmd ? cmd : "", cmd ? ": " : "", opt);
  else
    el_eprintf(
        "%s%s%s: unknown log level '%s'%s%s%s (use trace, debug, info, "
        "warn, error, fatal or quiet)\n",
        cmd ? cmd : "", cmd ? ": " : "", opt, v, near ? "; did you mean " : "",
        near ? near : "", near ? "?" : "");
  return EL_EINVAL;
}

char *el_fmt_size_unit(uint64_t n, char *buf, size_t size) {
  static const char units[] = "GMK";
  for (int k = 0; k < 3; k++) {
    unsigned shift = 30u - 10u * (unsigned)k;
    if (n && n % ((uint64_t)1 << shift) == 0) {
      snprintf(buf, size, "%llu%c", (unsigned long long)(n >> shift), units[k]);
      return buf;
    }
  }
  snprintf(buf, size, "%llu", (unsigned long long)n);
  return buf;
}

/* The unit after a size's digits: K, M or G (either case), alone or with
 * "iB" (either case). Sets *shift (0 for no unit); 0, or -1 if not one. */
static int size_unit(const char *u, unsigned *shift) {
  const char *k = strchr("kmg", tolower((unsigned char)*u));
  if (!*u) {
    *shift = 0;
    return 0;
  }
  if (!k) return -1;
  *shift = 10u * (unsigned)(1 + (k - "kmg"));
  u++;
  if (!*u) return 0;
  return tolower((unsigned char)u[0]) == 'i' &&
                 tolower((unsigned char)u[1]) == 'b' && !u[2]
             ? 0
             : -1;
}

int el_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out,
                  char *err, size_t size) {
  char lo[32], hi[32], *end;
  unsigned shift;
  errno = 0;
  unsigned long long n = isdigit((unsigned char)*s) ? strtoull(s, &end, 10) : 0;
  if (!isdigit((unsigned char)*s) || size_unit(end, &shift) < 0) {
    snprintf(err, size,
             "'%s' is not a size (bytes, or a number with K, M or G, "
             "powers of 1024: 64M, 64m, 64MiB)",
             s);
    return EL_EINVAL;
  }
  if (errno == ERANGE || n > (max >> shift)) {
    snprintf(err, size, "'%s' is too large: at most %s", s,
             el_fmt_size_unit(max, hi, sizeof hi));
    return EL_EINVAL;
  }
  if ((n << shift) < min) {
    snprintf(err, size, "'%s' is less than %s", s,
             el_fmt_size_unit(min, lo, sizeof lo));
    return EL_EINVAL;
  }
  *out = (uint64_t)n << shift;
  return 0;
}

int el_same_file(const char *a, const char *b) {
  struct stat x, y;
  return a && b && stat(a, &x) == 0 && stat(b, &y) == 0 &&
         x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}
