/* el_shrink_on_map.c: an LD_PRELOAD library for tests that truncates a
 * file right after the process maps it, or right before it first reads it
 * with pread(2), as another process could at any time; the shipped
 * executable carries no hook for it (tests/build/test_no_test_hooks.sh).
 *
 * EL_SHRINK_PATH=FILE EL_SHRINK_TO=N: the first mmap of FILE (an fd with
 * its device and inode) returns the mapping and then truncates FILE to N
 * bytes, so every page of the mapping past N raises SIGBUS when read; or
 * the first pread of FILE, if it comes first, truncates FILE to N bytes
 * and then reads, so reads past N come short. Used by
 * tests/e2e/test_file_shrinks.sh (the daemon's scan ahead reads with
 * pread, el_ev_scan_fd; `report`'s maps the file). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);

static int done;

/* Truncate FILE to N once, if fd is FILE. */
static void shrink_once(int fd) {
  const char *path = getenv("EL_SHRINK_PATH"), *to = getenv("EL_SHRINK_TO");
  struct stat a, b;
  if (fd >= 0 && !done && path && to && fstat(fd, &a) == 0 &&
      stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
    done = 1;
    if (truncate(path, (off_t)strtoll(to, NULL, 10)) != 0) abort();
  }
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  static mmap_fn real;
  if (!real) real = (mmap_fn)dlsym(RTLD_NEXT, "mmap");
  void *m = real(addr, len, prot, flags, fd, off);
  if (m != MAP_FAILED) shrink_once(fd);
  return m;
}

ssize_t pread(int fd, void *buf, size_t n, off_t off) {
  static pread_fn real;
  if (!real) real = (pread_fn)dlsym(RTLD_NEXT, "pread");
  shrink_once(fd);
  return real(fd, buf, n, off);
}

ssize_t pread64(int fd, void *buf, size_t n, off_t off) {
  static pread_fn real;
  if (!real) real = (pread_fn)dlsym(RTLD_NEXT, "pread64");
  shrink_once(fd);
  return real(fd, buf, n, off);
}
