/* web_thids.c: the ids of the threads that left the web view's threads
 * table, 2 bits per id (WEB_TH_OUT, _ENDED or _FINISHED) for any id of
 * 0..2^32-1, so that the table and its "other" row count each thread once
 * (web_events.c). Ids are kept in pages of WEB_THREAD_ID_PAGE: a page
 * with no marks holds nothing, nor does a page whose ids all left
 * finished (GHC numbers threads from 1 up, so in a long run the older
 * pages become so); the others take one of WEB_THREAD_ID_PAGES pages of
 * bits. Bounded: at most that pool and a directory of 2 bytes per page
 * number up to the highest id seen (128 KiB for 2^32 ids). Thread: under
 * el_web_t.mu. */
#include <string.h>

#include "../common/el_grow.h"
#include "web_internal.h"

#define ID_MAX 0xFFFFFFFFll

static unsigned page_mark(const web_idpage_t *pg, size_t i) {
  return (pg->bits[i / 4] >> (i % 4 * 2)) & 3u;
}

/* A page of the pool with every id's marks m (0 or WEB_TH_OUT_FINISHED): its directory
 * value, or 0 when the pool is full or out of memory. */
static uint16_t page_new(web_thids_t *s, unsigned m) {
  for (size_t k = 0; k < WEB_THREAD_ID_PAGES; k++) {
    if (s->pool[k]) continue;
    web_idpage_t *pg = el_malloc(sizeof *pg);
    if (!pg) return 0;
    memset(pg->bits, m ? 0xFF : 0, sizeof pg->bits);
    pg->marked = pg->finished = m ? WEB_THREAD_ID_PAGE : 0;
    s->pool[k] = pg;
    return (uint16_t)(k + 1);
  }
  return 0;
}

/* The directory value of page p (0 beyond the directory). */
static uint16_t dir_get(const web_thids_t *s, size_t p) {
  return p < s->capdir ? s->dir[p] : 0;
}

unsigned web_thids_get(const web_thids_t *s, int64_t id) {
  if (id < 0 || id > ID_MAX) return 0;
  uint16_t d = dir_get(s, (size_t)id / WEB_THREAD_ID_PAGE);
  if (d == WEB_IDPAGE_FULL) return WEB_TH_OUT_FINISHED;
  return d ? page_mark(s->pool[d - 1], (size_t)id % WEB_THREAD_ID_PAGE) : 0;
}

/* Make the directory hold page p. */
static bool dir_reach(web_thids_t *s, size_t p) {
  size_t had = s->capdir;
  if (p < had) return true;
  if (el_grow(&s->dir, &s->capdir, p + 1, sizeof *s->dir) < 0) return false;
  memset(s->dir + had, 0, (s->capdir - had) * sizeof *s->dir);
  return true;
}

bool web_thids_set(web_thids_t *s, int64_t id, unsigned m) {
  if (id < 0 || id > ID_MAX) return false;
  size_t p = (size_t)id / WEB_THREAD_ID_PAGE;
  size_t i = (size_t)id % WEB_THREAD_ID_PAGE;
  unsigned old = web_thids_get(s, id);
  if (old == m) return true;
  uint16_t d = dir_get(s, p);
  if (d == 0 || d == WEB_IDPAGE_FULL) {
    /* no bits yet: a page of every id's marks as they are (old) */
    if (!dir_reach(s, p) || !(d = page_new(s, old))) return false;
    s->dir[p] = d;
  }
  web_idpage_t *pg = s->pool[d - 1];
  unsigned shift = (unsigned)(i % 4 * 2);
  pg->bits[i / 4] = (uint8_t)((pg->bits[i / 4] & ~(3u << shift)) | m << shift);
  pg->marked = pg->marked + (m != 0) - (old != 0);
  pg->finished =
      pg->finished + (m == WEB_TH_OUT_FINISHED) - (old == WEB_TH_OUT_FINISHED);
  if (pg->marked == 0 || pg->finished == WEB_THREAD_ID_PAGE) {
    s->dir[p] = pg->marked ? WEB_IDPAGE_FULL : 0;
    el_free(pg);
    s->pool[d - 1] = NULL;
  }
  return true;
}

void web_thids_clear(web_thids_t *s) {
  for (size_t k = 0; k < WEB_THREAD_ID_PAGES; k++) {
    el_free(s->pool[k]);
    s->pool[k] = NULL;
  }
  el_free(s->dir);
  s->dir = NULL;
  s->capdir = 0;
}

size_t web_thids_pages(const web_thids_t *s) {
  size_t n = 0;
  for (size_t k = 0; k < WEB_THREAD_ID_PAGES; k++) n += s->pool[k] != NULL;
  return n;
}
