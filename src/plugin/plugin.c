/* plugin.c: finding and opening plugins (plugin.h). */
#include "plugin.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef EL_PLUGIN_RELDIR
#define EL_PLUGIN_RELDIR "../lib/eventlog-live"
#endif

#define MAX_PLUGINS 8

/* The plugins opened so far; never closed (their code may run until
 * exit, e.g. a sender thread). */
static struct {
  char name[32];
  const void *table;
} loaded[MAX_PLUGINS];
static size_t nloaded;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The candidate folders in search order into dirs[0..2]; returns their
 * count. */
static int search_dirs(char dirs[2][PATH_MAX]) {
  const char *env = getenv("EL_PLUGIN_DIR");
  if (env && *env) {
    snprintf(dirs[0], PATH_MAX, "%s", env);
    return 1;
  }
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return 0;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (!slash) return 0;
  *slash = '\0';
  int len = snprintf(dirs[0], PATH_MAX, "%s/%s", exe, EL_PLUGIN_RELDIR);
  if (len < 0 || len >= PATH_MAX) return 0;
  snprintf(dirs[1], PATH_MAX, "%s", exe);
  return 2;
}

/* el_plugin_<name> with '-' turned into '_'. */
static void symbol_name(const char *name, char *out, size_t size) {
  snprintf(out, size, "el_plugin_%s", name);
  for (char *p = out; *p; p++)
    if (*p == '-') *p = '_';
}

/* Open path and check its table; returns it, or NULL with err set. */
static const void *open_one(const char *path, const char *name,
                            const char *what, uint32_t abi, char *err,
                            size_t errsz) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    /* dlerror() names the plugin ("<path>: <reason>") unless the reason
     * is in a library the plugin needs: then name the plugin too. */
    const char *why = dlerror();
    if (!why) why = "unknown error";
    bool named = strncmp(why, path, strlen(path)) == 0;
    snprintf(err, errsz, "cannot load %s: %s%s%s", what, named ? "" : path,
             named ? "" : ": ", why);
    return NULL;
  }
  char sym[64];
  symbol_name(name, sym, sizeof sym);
  const el_plugin_head_t *t = dlsym(h, sym);
  if (!t) {
    snprintf(err, errsz, "cannot load %s: plugin %s has no symbol %s: %s", what,
             path, sym, dlerror());
  } else if (t->abi != abi) {
    snprintf(err, errsz,
             "cannot load %s: plugin %s has interface version %u, this "
             "eventlog-live needs %u (install matching versions)",
             what, path, (unsigned)t->abi, (unsigned)abi);
    t = NULL;
  }
  if (!t) dlclose(h);
  return t;
}

/* Search and open name; lock held. */
static const void *find_and_open(const char *name, const char *what,
                                 uint32_t abi, char *err, size_t errsz) {
  char dirs[2][PATH_MAX], path[PATH_MAX];
  int n = search_dirs(dirs);
  for (int i = 0; i < n; i++) {
    int len =
        snprintf(path, sizeof path, "%s/eventlog-live-%s.so", dirs[i], name);
    if (len > 0 && (size_t)len < sizeof path && access(path, F_OK) == 0)
      return open_one(path, name, what, abi, err, errsz);
  }
  if (n == 0) {
    snprintf(err, errsz,
             "cannot load %s: plugin eventlog-live-%s.so not found (the "
             "binary's folder is unknown: set EL_PLUGIN_DIR)",
             what, name);
  } else {
    snprintf(err, errsz,
             "cannot load %s: plugin eventlog-live-%s.so not found in %s%s%s"
             " (install it there, or set EL_PLUGIN_DIR to its folder)",
             what, name, dirs[0], n > 1 ? " nor " : "", n > 1 ? dirs[1] : "");
  }
  return NULL;
}

const void *el_plugin_load(const char *name, const char *what, uint32_t abi,
                           char *err, size_t errsz) {
  const void *t = NULL;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < nloaded && !t; i++)
    if (strcmp(loaded[i].name, name) == 0) t = loaded[i].table;
  if (!t && nloaded == MAX_PLUGINS) {
    snprintf(err, errsz, "cannot load %s: too many plugins", what);
  } else if (!t && strlen(name) >= sizeof loaded[0].name) {
    snprintf(err, errsz, "cannot load %s: plugin name too long", what);
  } else if (!t && (t = find_and_open(name, what, abi, err, errsz))) {
    snprintf(loaded[nloaded].name, sizeof loaded[0].name, "%s", name);
    loaded[nloaded++].table = t;
  }
  pthread_mutex_unlock(&lock);
  return t;
}
