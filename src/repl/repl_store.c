/* repl_store.c: the REPL's bounded event store (repl_store.h) and its Lua
 * binding (module eventlog_live.repl_store, docs/repl.md). */
#include "repl_store.h"

#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>

#include "../eventlog/eventlog.h"
#include "../common/el_grow.h"

#define CHUNK_MAX (1u << 20)         /* chunk size: max_bytes / 8, within */
#define CHUNK_MIN (64u << 10)        /* [CHUNK_MIN, CHUNK_MAX] */
#define TEXT_MAX (64u * 1024u)       /* longest text field kept */
#define DEFAULT_MAX ((size_t)64 << 20)
#define REC_HDR 20                   /* len u32, t u64, type, cap, session
                                        u16, known u8, nfields u8 */

#define SESSIONS_MAX 10000 /* sessions counted one by one */

/* One session's counters (headers seen, in order). */
typedef struct sess_s {
  uint64_t events, min_t, max_t;
  uint64_t *counts; /* per type id, ncounts of them */
  size_t ncounts;
} sess_t;

typedef struct chunk_s {
  uint8_t *buf;
  size_t used, cap;
  uint64_t first_seq;                /* seq of the first record */
  uint32_t n;                        /* records */
} chunk_t;

struct el_repl_store_s {
  el_ev_decoder_t *dec;
  chunk_t *chunks;                   /* oldest first */
  size_t nchunks, capchunks;
  size_t max_bytes;
  size_t chunk_bytes;                /* size of a new chunk */
  uint64_t bytes;                    /* sum of chunk.used */
  uint64_t next_seq;
  uint64_t events, dropped, truncated, sessions;
  uint64_t min_t, max_t;
  uint64_t *counts; /* per type id, 65536 entries */
  sess_t *sess;     /* the first SESSIONS_MAX sessions */
  size_t nsess, capsess;
  uint8_t *scratch;                  /* one record being built */
  size_t scratch_cap;
  int split;                         /* an event could not be stored: the
                                        next one starts a new chunk (seqs
                                        in a chunk are consecutive) */
};

/* {====== records ======} */

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint16_t get16(const uint8_t *p) {
  uint16_t v;
  memcpy(&v, p, 2);
  return v;
}
static uint32_t get32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static uint64_t get64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

/* Bytes a field of kind k with value v takes in a record. */
static size_t field_size(el_ev_kind_t k, const el_ev_value_t *v) {
  size_t len = v->s.len > TEXT_MAX ? TEXT_MAX : v->s.len;
  switch (k) {
  case EL_EV_U64:
  case EL_EV_I64: return 8;
  case EL_EV_CCS: return 8 + len;
  default: return 4 + len;
  }
}

static int reserve_scratch(el_repl_store_t *s, size_t n) {
  return el_grow(&s->scratch, &s->scratch_cap, n, 1);
}

/* Serialise ev into s->scratch; returns the record length or 0 (nomem). */
static size_t encode(el_repl_store_t *s, const el_ev_event_t *ev) {
  const el_ev_type_info_t *ti = ev->known ? el_ev_type_info(ev->type) : NULL;
  size_t n = REC_HDR;
  int nf = ti ? (ev->nfields < ti->nfields ? ev->nfields : ti->nfields) : 0;
  if (ti) {
    for (int i = 0; i < nf; i++) n += field_size(ti->fields[i].kind, &ev->v[i]);
  } else {
    n += 4 + (ev->payload_len > TEXT_MAX ? TEXT_MAX : ev->payload_len);
  }
  if (reserve_scratch(s, n) < 0) return 0;
  uint8_t *p = s->scratch;
  put32(p, (uint32_t)n);
  put64(p + 4, ev->t_ns);
  put16(p + 12, ev->type);
  put16(p + 14, ev->cap);
  put16(p + 16, (uint16_t)(s->sessions > 0xFFFF ? 0xFFFF : s->sessions));
  p[18] = ti ? 1 : 0;
  p[19] = (uint8_t)nf;
  p += REC_HDR;
  if (!ti) {
    uint32_t len = ev->payload_len > TEXT_MAX ? TEXT_MAX : ev->payload_len;
    if (len < ev->payload_len) s->truncated++;
    put32(p, len);
    if (len) memcpy(p + 4, ev->payload, len);
    return n;
  }
  for (int i = 0; i < nf; i++) {
    const el_ev_value_t *v = &ev->v[i];
    el_ev_kind_t k = ti->fields[i].kind;
    if (k == EL_EV_U64 || k == EL_EV_I64) {
      put64(p, v->u);
      p += 8;
      continue;
    }
    uint32_t len = v->s.len > TEXT_MAX ? TEXT_MAX : (uint32_t)v->s.len;
    if (len < v->s.len) s->truncated++;
    if (k == EL_EV_CCS) {
      put32(p, (uint32_t)v->u);
      p += 4;
    }
    put32(p, len);
    if (len) memcpy(p + 4, v->s.p, len);
    p += 4 + len;
  }
  return n;
}

/* Drop the oldest chunk. */
static void drop_oldest(el_repl_store_t *s) {
  chunk_t *c = &s->chunks[0];
  s->dropped += c->n;
  s->bytes -= c->used;
  el_free(c->buf);
  memmove(s->chunks, s->chunks + 1, (s->nchunks - 1) * sizeof *s->chunks);
  s->nchunks--;
}

/* A chunk with room for n more bytes, or NULL (nomem). */
static chunk_t *room(el_repl_store_t *s, size_t n) {
  if (s->nchunks && !s->split) {
    chunk_t *c = &s->chunks[s->nchunks - 1];
    if (c->cap - c->used >= n) return c;
  }
  size_t cap = n > s->chunk_bytes ? n : s->chunk_bytes;
  /* the new chunk will fill up: make room for all of it */
  while (s->nchunks > 0 && s->bytes + cap > s->max_bytes) drop_oldest(s);
  if (el_grow(&s->chunks, &s->capchunks, s->nchunks + 1, sizeof *s->chunks) < 0)
    return NULL;
  uint8_t *buf = el_malloc(cap);
  if (!buf) return NULL;
  chunk_t *c = &s->chunks[s->nchunks++];
  c->buf = buf;
  c->used = 0;
  c->cap = cap;
  c->first_seq = s->next_seq;
  c->n = 0;
  s->split = 0;
  return c;
}

/* Count ev in its session's counters (when that session is counted). */
static void count_session(el_repl_store_t *s, const el_ev_event_t *ev) {
  if (s->sessions == 0 || s->sessions > s->nsess) return;
  sess_t *x = &s->sess[s->sessions - 1];
  if (ev->type >= x->ncounts) {
    size_t old = x->ncounts;
    if (el_grow(&x->counts, &x->ncounts, (size_t)ev->type + 1,
                sizeof *x->counts) < 0)
      return;
    memset(x->counts + old, 0, (x->ncounts - old) * sizeof *x->counts);
  }
  x->counts[ev->type]++;
  if (x->events++ == 0 || ev->t_ns < x->min_t) x->min_t = ev->t_ns;
  if (ev->t_ns > x->max_t) x->max_t = ev->t_ns;
}

static int on_event(void *ud, const el_ev_event_t *ev) {
  el_repl_store_t *s = ud;
  count_session(s, ev);
  s->events++;
  s->next_seq++;
  s->counts[ev->type]++;
  if (s->events == 1 || ev->t_ns < s->min_t) s->min_t = ev->t_ns;
  if (ev->t_ns > s->max_t) s->max_t = ev->t_ns;
  size_t n = encode(s, ev);
  chunk_t *c = n ? room(s, n) : NULL;
  if (!c) {
    s->dropped++;
    s->split = 1;
    return 0;
  }
  if (c->n == 0) c->first_seq = s->next_seq;
  memcpy(c->buf + c->used, s->scratch, n);
  c->used += n;
  c->n++;
  s->bytes += n;
  return 0;
}

static int on_header(void *ud, const el_ev_header_t *hdr) {
  (void)hdr;
  el_repl_store_t *s = ud;
  s->sessions++;
  /* out of memory or past SESSIONS_MAX: counted in the totals only */
  if (s->nsess == s->sessions - 1 && s->nsess < SESSIONS_MAX &&
      el_grow(&s->sess, &s->capsess, s->nsess + 1, sizeof *s->sess) == 0)
    memset(&s->sess[s->nsess++], 0, sizeof *s->sess);
  return 0;
}

/* {====== public C API ======} */

el_repl_store_t *el_repl_store_new(size_t max_bytes) {
  el_repl_store_t *s = el_calloc(1, sizeof *s);
  if (!s) return NULL;
  s->max_bytes = max_bytes ? max_bytes : DEFAULT_MAX;
  /* at least 7/8 of the bound stays usable when the oldest chunk goes */
  s->chunk_bytes = s->max_bytes / 8;
  if (s->chunk_bytes > CHUNK_MAX) s->chunk_bytes = CHUNK_MAX;
  if (s->chunk_bytes < CHUNK_MIN) s->chunk_bytes = CHUNK_MIN;
  s->counts = el_calloc(65536, sizeof *s->counts);
  el_ev_sink_t sink = {.ud = s, .on_event = on_event,
                       .on_header = on_header};
  s->dec = el_ev_decoder_new(&sink);
  if (!s->counts || !s->dec) {
    el_repl_store_free(s);
    return NULL;
  }
  return s;
}

void el_repl_store_free(el_repl_store_t *s) {
  if (!s) return;
  for (size_t i = 0; i < s->nchunks; i++) el_free(s->chunks[i].buf);
  el_free(s->chunks);
  el_free(s->counts);
  for (size_t i = 0; i < s->nsess; i++) el_free(s->sess[i].counts);
  el_free(s->sess);
  el_free(s->scratch);
  el_ev_decoder_free(s->dec);
  el_free(s);
}

int el_repl_store_feed(el_repl_store_t *s, const uint8_t *buf, size_t len) {
  return el_ev_decoder_feed(s->dec, buf, len);
}

void el_repl_store_reset(el_repl_store_t *s) { el_ev_decoder_reset(s->dec); }

void el_repl_store_set_live(el_repl_store_t *s) {
  el_ev_decoder_set_opts(s->dec, EL_EV_OPT_LIVE);
}

void el_repl_store_stats(const el_repl_store_t *s,
                         el_repl_store_stats_t *out) {
  memset(out, 0, sizeof *out);
  out->events = s->events;
  out->dropped = s->dropped;
  out->stored = s->events - s->dropped;
  out->truncated = s->truncated;
  out->bytes = s->bytes;
  out->max_bytes = s->max_bytes;
  out->sessions = s->sessions;
  out->first_seq = s->nchunks ? s->chunks[0].first_seq : s->next_seq + 1;
  out->min_t = s->min_t;
  out->max_t = s->max_t;
}

uint64_t el_repl_store_count(const el_repl_store_t *s, uint16_t type) {
  return s->counts[type];
}

/* {====== queries ======} */

typedef struct {
  uint8_t types[65536 / 8];          /* bitmap; all set when no filter */
  int has_types;
  int cap;                           /* -2 any, -1 = no capability */
  int has_thread;
  uint64_t thread;
  uint64_t from, to;                 /* inclusive time window */
  int has_session;
  unsigned session;
  const char *text;                  /* substring of a text field */
  size_t text_len;
} filter_t;

typedef struct {
  const uint8_t *rec;
  uint64_t seq;
} hit_t;

/* Field value offsets: returns 1 and sets *thread when the record has an
 * integer field named "thread"; text matches set *text_hit. */
static void scan_fields(const uint8_t *rec, const filter_t *f, int *thr_ok,
                        int *text_ok) {
  uint16_t type = get16(rec + 12);
  const el_ev_type_info_t *ti = rec[18] ? el_ev_type_info(type) : NULL;
  const uint8_t *p = rec + REC_HDR;
  *thr_ok = !f->has_thread;
  *text_ok = !f->text;
  if (!ti) {
    if (f->text && get32(p) >= f->text_len && f->text_len &&
        memmem(p + 4, get32(p), f->text, f->text_len))
      *text_ok = 1;
    return;
  }
  for (int i = 0; i < rec[19]; i++) {
    el_ev_kind_t k = ti->fields[i].kind;
    if (k == EL_EV_U64 || k == EL_EV_I64) {
      if (f->has_thread && get64(p) == f->thread &&
          !strcmp(ti->fields[i].name, "thread"))
        *thr_ok = 1;
      p += 8;
      continue;
    }
    if (k == EL_EV_CCS) p += 4;
    uint32_t len = get32(p);
    if (f->text && (k == EL_EV_TEXT || k == EL_EV_STRLIST) &&
        (f->text_len == 0 || memmem(p + 4, len, f->text, f->text_len)))
      *text_ok = 1;
    p += 4 + len;
  }
}

static int match(const uint8_t *rec, const filter_t *f) {
  uint16_t type = get16(rec + 12);
  if (f->has_types && !(f->types[type >> 3] & (1u << (type & 7)))) return 0;
  if (f->cap != -2) {
    uint16_t cap = get16(rec + 14);
    int c = cap == EL_EV_NO_CAP ? -1 : cap;
    if (c != f->cap) return 0;
  }
  uint64_t t = get64(rec + 4);
  if (t < f->from || t > f->to) return 0;
  if (f->has_session && get16(rec + 16) != f->session) return 0;
  if (f->has_thread || f->text) {
    int a, b;
    scan_fields(rec, f, &a, &b);
    return a && b;
  }
  return 1;
}

/* Push the value of one field stored at p (see encode); returns the
 * position of the next field. [-0, +1, m] */
static const uint8_t *push_field(lua_State *L, el_ev_kind_t kind,
                                 const uint8_t *p) {
  switch (kind) {
  case EL_EV_U64:
  case EL_EV_I64:
    lua_pushinteger(L, (lua_Integer)get64(p));
    return p + 8;
  case EL_EV_CCS: {
    uint32_t len = get32(p + 4);
    lua_createtable(L, (int)(len / 4), 0);
    for (uint32_t j = 0; j + 4 <= len; j += 4) {
      const uint8_t *q = p + 8 + j;
      uint32_t id = (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 |
                    (uint32_t)q[2] << 8 | q[3];
      lua_pushinteger(L, id);
      lua_rawseti(L, -2, (lua_Integer)(j / 4 + 1));
    }
    return p + 8 + len;
  }
  case EL_EV_STRLIST: {
    uint32_t len = get32(p);
    const char *b = (const char *)p + 4, *e = b + len;
    lua_newtable(L);
    int k = 1;
    while (b < e) {
      const char *z = memchr(b, '\0', (size_t)(e - b));
      size_t l = z ? (size_t)(z - b) : (size_t)(e - b);
      lua_pushlstring(L, b, l);
      lua_rawseti(L, -2, k++);
      b += l + 1;
    }
    return p + 4 + len;
  }
  default:
    lua_pushlstring(L, (const char *)p + 4, get32(p));
    return p + 4 + get32(p);
  }
}

/* Set the field `name` of the table below the value on top to that value.
 * A field named like a key of every event (BLOCK_MARKER.cap,
 * CAP_CREATE.cap) does not hide it: it becomes "<name>_field".
 * [-1, +0, m] */
static void set_field(lua_State *L, const char *name) {
  if (!strcmp(name, "cap") || !strcmp(name, "t") || !strcmp(name, "type") ||
      !strcmp(name, "seq") || !strcmp(name, "session") ||
      !strcmp(name, "type_id")) {
    lua_pushfstring(L, "%s_field", name);
    lua_insert(L, -2);
    lua_settable(L, -3);
  } else {
    lua_setfield(L, -2, name);
  }
}

/* Push one record as an event table. [-0, +1, m] */
static void push_record(lua_State *L, const uint8_t *rec, uint64_t seq) {
  uint16_t type = get16(rec + 12);
  uint16_t cap = get16(rec + 14);
  const el_ev_type_info_t *ti = el_ev_type_info(type);
  lua_createtable(L, 0, 8);
  lua_pushinteger(L, (lua_Integer)seq);
  lua_setfield(L, -2, "seq");
  lua_pushinteger(L, (lua_Integer)get64(rec + 4));
  lua_setfield(L, -2, "t");
  if (ti)
    lua_pushstring(L, ti->name);
  else
    lua_pushfstring(L, "UNKNOWN_%d", (int)type);
  lua_setfield(L, -2, "type");
  lua_pushinteger(L, type);
  lua_setfield(L, -2, "type_id");
  if (cap != EL_EV_NO_CAP) {
    lua_pushinteger(L, cap);
    lua_setfield(L, -2, "cap");
  }
  lua_pushinteger(L, get16(rec + 16));
  lua_setfield(L, -2, "session");
  const uint8_t *p = rec + REC_HDR;
  if (!rec[18]) {
    lua_pushlstring(L, (const char *)p + 4, get32(p));
    lua_setfield(L, -2, "payload");
    return;
  }
  for (int i = 0; i < rec[19]; i++) {
    p = push_field(L, ti->fields[i].kind, p);
    set_field(L, ti->fields[i].name);
  }
}

static el_repl_store_t *self(lua_State *L) {
  return lua_touserdata(L, lua_upvalueindex(1));
}

/* stats() -> table of the counters. */
static int l_stats(lua_State *L) {
  el_repl_store_stats_t st;
  el_repl_store_stats(self(L), &st);
  lua_createtable(L, 0, 10);
#define F(k)                                 \
  lua_pushinteger(L, (lua_Integer)st.k);     \
  lua_setfield(L, -2, #k)
  F(events); F(stored); F(dropped); F(truncated); F(bytes); F(max_bytes);
  F(sessions); F(first_seq); F(min_t); F(max_t);
#undef F
  return 1;
}

/* counts([session]) -> {[type name] = count} for every type seen (in
 * that session, numbered from 1 as headers come; nil for a session not
 * counted one by one). */
static int l_counts(lua_State *L) {
  el_repl_store_t *s = self(L);
  const uint64_t *counts = s->counts;
  size_t n = 65536;
  if (!lua_isnoneornil(L, 1)) {
    lua_Integer k = luaL_checkinteger(L, 1);
    if (k < 1 || (lua_Unsigned)k > s->nsess) return lua_pushnil(L), 1;
    counts = s->sess[k - 1].counts;
    n = s->sess[k - 1].ncounts;
  }
  lua_newtable(L);
  for (unsigned i = 0; i < n; i++) {
    if (!counts[i]) continue;
    const el_ev_type_info_t *ti = el_ev_type_info((uint16_t)i);
    if (ti)
      lua_pushstring(L, ti->name);
    else
      lua_pushfstring(L, "UNKNOWN_%d", (int)i);
    lua_pushinteger(L, (lua_Integer)counts[i]);
    lua_settable(L, -3);
  }
  return 1;
}

/* sessions() -> array of {events =, min_t =, max_t =}, one per session
 * counted one by one (the first SESSIONS_MAX), in the order of their
 * headers. */
static int l_sessions(lua_State *L) {
  el_repl_store_t *s = self(L);
  lua_createtable(L, (int)s->nsess, 0);
  for (size_t i = 0; i < s->nsess; i++) {
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, (lua_Integer)s->sess[i].events);
    lua_setfield(L, -2, "events");
    lua_pushinteger(L, (lua_Integer)s->sess[i].min_t);
    lua_setfield(L, -2, "min_t");
    lua_pushinteger(L, (lua_Integer)s->sess[i].max_t);
    lua_setfield(L, -2, "max_t");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* Raise "<key> must be <what>, got <value>" about the query option at the
 * top of the stack (a number is shown, another value by its type name):
 * luaL_check* would say "bad argument #-1 to 'query'". Does not return. */
static int bad_option(lua_State *L, const char *key, const char *what) {
  if (lua_type(L, -1) == LUA_TNUMBER)
    return luaL_error(L, "%s must be %s, got %s", key, what,
                      lua_tostring(L, -1));
  return luaL_error(L, "%s must be %s, got %s", key, what,
                    luaL_typename(L, -1));
}

/* The integer at the top of the stack (a float with an exact integer
 * value, or a numeric string, is taken as luaL_checkinteger takes it), or
 * bad_option's error. */
static lua_Integer opt_integer(lua_State *L, const char *key,
                               const char *what) {
  int ok = 0;
  lua_Integer v = lua_tointegerx(L, -1, &ok);
  if (!ok) bad_option(L, key, what);
  return v;
}

#define TYPE_WHAT "an event type name or id (0..65535), or a list of them"

static void add_type(lua_State *L, filter_t *f, int idx) {
  int id;
  lua_pushvalue(L, idx);
  if (lua_type(L, -1) == LUA_TNUMBER) {
    lua_Integer v = opt_integer(L, "type", TYPE_WHAT);
    if (v < 0 || v > 65535) bad_option(L, "type", TYPE_WHAT);
    id = (int)v;
  } else if (lua_type(L, -1) == LUA_TSTRING) {
    const char *name = lua_tostring(L, -1);
    id = el_ev_type_by_name(name);
    if (id < 0 && !strncmp(name, "UNKNOWN_", 8)) id = atoi(name + 8);
    if (id < 0 || id > 65535) {
      const char *near = el_ev_type_suggest(name);
      luaL_error(L, "unknown event type '%s'%s%s%s", name,
                 near ? " (did you mean '" : "", near ? near : "",
                 near ? "'?)" : "");
    }
  } else {
    bad_option(L, "type", TYPE_WHAT);
    return;
  }
  lua_pop(L, 1);
  f->has_types = 1;
  f->types[id >> 3] |= (uint8_t)(1u << (id & 7));
}

static uint64_t opt_time(lua_State *L, int t, const char *k, uint64_t d) {
  uint64_t v = d;
  if (lua_getfield(L, t, k) != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TNUMBER) bad_option(L, k, "a time in ns");
    lua_Number n = lua_tonumber(L, -1);
    v = n <= 0 ? 0 : n >= 1.8e19 ? UINT64_MAX : (uint64_t)n;
    if (lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 0)
      v = (uint64_t)lua_tointeger(L, -1);
  }
  lua_pop(L, 1);
  return v;
}

/* The filter's event types from query's `type` (a name, an id, or a list
 * of them; an empty list is an error: it would match nothing, silently).
 * [-0, +0, v] */
static void read_types(lua_State *L, filter_t *f) {
  int ty = lua_getfield(L, 1, "type");
  if (ty == LUA_TTABLE) {
    lua_Integer n = luaL_len(L, -1);
    if (n == 0)
      luaL_error(L, "type is an empty list: give at least one event type");
    for (lua_Integer i = 1; i <= n; i++) {
      lua_geti(L, -1, i);
      add_type(L, f, lua_gettop(L));
      lua_pop(L, 1);
    }
  } else if (ty != LUA_TNIL) {
    add_type(L, f, lua_gettop(L));
  }
  lua_pop(L, 1);
}

/* The filter from query's table at index 1 (absent: everything), and the
 * `limit` and `last` options. f->text points into that table, which
 * outlives the query. [-0, +0, v] */
static void read_filter(lua_State *L, filter_t *f, lua_Integer *limit,
                        lua_Integer *last) {
  memset(f, 0, sizeof *f);
  f->cap = -2;
  f->to = UINT64_MAX;
  *limit = LUA_MAXINTEGER;
  *last = 0;
  if (lua_isnoneornil(L, 1)) return;
  luaL_checktype(L, 1, LUA_TTABLE);
  read_types(L, f);
  int ct = lua_getfield(L, 1, "cap");
  if (ct == LUA_TSTRING && !strcmp(lua_tostring(L, -1), "none"))
    f->cap = -1;
  else if (ct != LUA_TNIL) {
    lua_Integer c = opt_integer(L, "cap", "a capability (integer) or \"none\"");
    f->cap = c < 0 ? -1 : c > 65535 ? 65535 : (int)c;
  }
  lua_pop(L, 1);
  if (lua_getfield(L, 1, "thread") != LUA_TNIL) {
    f->has_thread = 1;
    f->thread = (uint64_t)opt_integer(L, "thread", "a thread id (integer)");
  }
  lua_pop(L, 1);
  if (lua_getfield(L, 1, "session") != LUA_TNIL) {
    f->has_session = 1;
    f->session = (unsigned)opt_integer(L, "session", "a session (integer)");
  }
  lua_pop(L, 1);
  if (lua_getfield(L, 1, "text") != LUA_TNIL) {
    /* a string only: a number converted here would die with the pop */
    if (lua_type(L, -1) != LUA_TSTRING) bad_option(L, "text", "a string");
    f->text = lua_tolstring(L, -1, &f->text_len);
  }
  lua_pop(L, 1); /* the string stays alive: it is in the table */
  f->from = opt_time(L, 1, "from", 0);
  f->to = opt_time(L, 1, "to", UINT64_MAX);
  if (lua_getfield(L, 1, "limit") != LUA_TNIL)
    *limit = opt_integer(L, "limit", "a count (integer)");
  lua_pop(L, 1);
  if (lua_getfield(L, 1, "last") != LUA_TNIL)
    *last = opt_integer(L, "last", "a count (integer)");
  lua_pop(L, 1);
}

/* query{type=, cap=, thread=, from=, to=, session=, text=, limit=, last=}
 * -> array of event tables, number of matching events. */
static int l_query(lua_State *L) {
  el_repl_store_t *s = self(L);
  filter_t *f = lua_newuserdatauv(L, sizeof *f, 0);  /* freed by the GC */
  lua_Integer limit, last;
  read_filter(L, f, &limit, &last);
  if (limit < 0) limit = 0;
  if (last < 0) last = 0;
  uint64_t held = s->events - s->dropped;  /* no ring beyond the store */
  if ((uint64_t)last > held) last = (lua_Integer)(held ? held : 1);
  hit_t *ring = NULL;
  if (last) {
    ring = lua_newuserdatauv(L, (size_t)last * sizeof *ring, 0);
  }
  lua_newtable(L);
  int out = lua_gettop(L);
  lua_Integer nout = 0;
  uint64_t matched = 0;
  for (size_t ci = 0; ci < s->nchunks; ci++) {
    const chunk_t *c = &s->chunks[ci];
    const uint8_t *p = c->buf, *end = c->buf + c->used;
    uint64_t seq = c->first_seq;
    for (; p < end; p += get32(p), seq++) {
      if (!match(p, f)) continue;
      matched++;
      if (ring) {
        ring[(matched - 1) % (uint64_t)last] = (hit_t){p, seq};
      } else if (nout < limit) {
        push_record(L, p, seq);
        lua_rawseti(L, out, ++nout);
      }
    }
  }
  if (ring) {
    uint64_t n = matched < (uint64_t)last ? matched : (uint64_t)last;
    for (uint64_t i = 0; i < n; i++) {
      const hit_t *h = &ring[(matched - n + i) % (uint64_t)last];
      push_record(L, h->rec, h->seq);
      lua_rawseti(L, out, (lua_Integer)i + 1);
    }
  }
  lua_pushinteger(L, (lua_Integer)matched);
  return 2;
}

void el_repl_store_push_lua(lua_State *L, el_repl_store_t *s) {
  static const luaL_Reg fns[] = {{"stats", l_stats},
                                 {"counts", l_counts},
                                 {"sessions", l_sessions},
                                 {"query", l_query},
                                 {NULL, NULL}};
  lua_createtable(L, 0, 4);
  lua_pushlightuserdata(L, s);
  luaL_setfuncs(L, fns, 1);
}
