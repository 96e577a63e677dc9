/* lua_events.c: the `eventlog_live` module: subscriptions (el.on/el.off),
 * the reused `ev` table and the calling convention of handlers, the
 * session table and lifecycle hooks, and small utilities.
 * docs/lua-api.md §2, §3, §7. Spec: eventlog-format.md §2.1 (fields),
 * §2.4 and §5.4 (init events), §3.5 (time). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_internal.h"

/* {====== handler lists ======} */

static int hlist_push(el__hlist_t *l, el__handler_t *hd) {
  if (l->n == l->cap) {
    int ncap = l->cap ? l->cap * 2 : 4;
    void *nv = el_realloc(l->v, (size_t)ncap * sizeof *l->v);
    if (!nv) return EL_ENOMEM;
    l->v = nv;
    l->cap = ncap;
  }
  l->v[l->n++] = hd;
  return 0;
}

static void hlist_compact(el__hlist_t *l) {
  int j = 0;
  for (int i = 0; i < l->n; i++)
    if (!l->v[i]->dead) l->v[j++] = l->v[i];
  l->n = j;
}

/* Remove dead handlers from the dispatch lists (never during a dispatch:
 * the lists are walked by index). */
static void compact(el_host_t *h) {
  if (!h->need_compact || h->in_dispatch) return;
  hlist_compact(&h->star);
  hlist_compact(&h->ostar);
  if (h->star.n == 0) el__host_set_flag(h, -1, EL__F_STAR, 0);
  if (h->ostar.n == 0) h->star_flag &= (uint8_t)~EL__F_ORD;
  for (int t = 0; t < EL__HOST_NTYPES; t++) {
    hlist_compact(&h->types[t]);
    hlist_compact(&h->otypes[t]);
    if (h->types[t].n == 0) el__host_set_flag(h, t, EL__F_LUA, 0);
    if (h->otypes[t].n == 0 && h->ostar.n == 0)
      el__host_set_flag(h, t, EL__F_ORD, 0);
    else if (h->nolayout[t]) /* its flags follow star_flag's, just cut */
      el__host_set_flag(h, t, EL__F_ORD, 1);
  }
  h->need_compact = 0;
}

void el__handlers_free(el_host_t *h) {
  for (int t = 0; t < EL__HOST_NTYPES; t++) {
    el_free(h->types[t].v);
    el_free(h->otypes[t].v);
  }
  el_free(h->star.v);
  el_free(h->ostar.v);
  for (int i = 0; i < h->all.n; i++) el_free(h->all.v[i]);
  el_free(h->all.v);
}

/* The options of el.on (argument 3, a table or nil): args = "ev" | "t",
 * order = "stream" | "time" (default: el.order()). Raises on a bad value,
 * naming the option, and on an unknown key (el__lua_check_keys).
 * [-0, +0, v] */
static void on_opts(lua_State *L, el_host_t *h, int *args, int *ordered) {
  static const char *const argsv[] = {"ev", "t", NULL};
  static const char *const orderv[] = {"stream", "time", NULL};
  static const char *const keys[] = {"args", "order", NULL};
  *args = EL__ARGS_EV;
  *ordered = h->def_ordered;
  if (lua_isnoneornil(L, 3)) return;
  luaL_checktype(L, 3, LUA_TTABLE);
  el__lua_check_keys(L, 3, "el.on", "option", keys);
  lua_getfield(L, 3, "args");
  if (!lua_isnil(L, -1)) {
    const char *a = lua_tostring(L, -1);
    int i = 0;
    while (a && argsv[i] && strcmp(argsv[i], a) != 0) i++;
    if (!a || !argsv[i])
      luaL_error(L, "el.on: option args must be \"ev\" or \"t\" (got %s)",
                 a ? a : luaL_typename(L, -1));
    *args = i;
  }
  lua_getfield(L, 3, "order");
  if (!lua_isnil(L, -1)) {
    const char *o = lua_tostring(L, -1);
    int i = 0;
    while (o && orderv[i] && strcmp(orderv[i], o) != 0) i++;
    if (!o || !orderv[i])
      luaL_error(L,
                 "el.on: option order must be \"stream\" or \"time\" "
                 "(got %s)",
                 o ? o : luaL_typename(L, -1));
    *ordered = i;
  }
  lua_pop(L, 2);
}

/* The event type named by argument 1: an id, or -1 for "*". Raises for an
 * unknown name. [-0, +0, v] */
static int on_type(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  if (strcmp(name, "*") == 0) return -1;
  int type = el_ev_type_by_name(name);
  if (type < 0) {
    const char *near = el_ev_type_suggest(name);
    return luaL_error(L, "unknown event type '%s'%s%s%s", name,
                      near ? " (did you mean '" : "", near ? near : "",
                      near ? "'?)" : "");
  }
  if (type >= EL__HOST_NTYPES)
    return luaL_error(L,
                      "event type '%s' (id %d) cannot be subscribed "
                      "by name; use \"*\"",
                      name, type);
  return type;
}

/* The dispatch list a handler of `type` goes to. */
static el__hlist_t *on_list(el_host_t *h, int type, int ordered) {
  if (ordered) return type < 0 ? &h->ostar : &h->otypes[type];
  return type < 0 ? &h->star : &h->types[type];
}

static uint8_t on_flag(int type, int ordered) {
  return ordered ? EL__F_ORD : type < 0 ? EL__F_STAR : EL__F_LUA;
}

/* el.on(name, fn [, opts]) -> id. opts: {args = "ev"|"t",
 * order = "stream"|"time"} (docs/lua-api.md §2). [-0, +1, v] */
static int ev_on(lua_State *L) {
  el_host_t *h = el__host_from(L);
  int type = on_type(L);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  int args, ordered;
  on_opts(L, h, &args, &ordered);
  el__handler_t *hd = el_calloc(1, sizeof *hd);
  if (!hd) return luaL_error(L, "out of memory");
  if (hlist_push(&h->all, hd) != 0) {
    el_free(hd);
    return luaL_error(L, "out of memory");
  }
  if (hlist_push(on_list(h, type, ordered), hd) != 0) {
    hd->dead = 1;
    return luaL_error(L, "out of memory");
  }
  lua_Debug ar;
  lua_pushvalue(L, 2);
  lua_getinfo(L, ">S", &ar);
  snprintf(hd->where, sizeof hd->where, "%s:%d", ar.short_src,
           ar.linedefined);
  lua_pushvalue(L, 2);
  hd->ref = luaL_ref(L, LUA_REGISTRYINDEX);
  /* Outside dispatch the function also gets a slot on the dispatch
   * thread's stack: pushing it from there is cheaper than the registry. */
  if (!h->in_dispatch && L != h->D && h->d_top < 200 &&
      lua_checkstack(h->D, 24)) {
    lua_pushvalue(L, 2);
    lua_xmove(L, h->D, 1);
    hd->slot = ++h->d_top;
  }
  hd->type = type;
  hd->args = args;
  hd->ordered = ordered;
  hd->id = h->next_id++;
  if (type >= 0) h->ti[type] = el_ev_type_info((uint16_t)type);
  el__host_set_flag(h, type, on_flag(type, ordered), 1);
  lua_pushinteger(L, hd->id);
  return 1;
}

/* el.order([o [, opts]]) -> previous: o = "stream" or "time", the order
 * of the handlers that later el.on calls subscribe without an `order`
 * option (until the next script is loaded: each el_host_load starts with
 * "stream"). opts.max_held: events the reorder buffer holds before it
 * releases the oldest early (integer >= 1; default 1048576, host-wide);
 * any other key raises. docs/lua-api.md §2 "Order of events".
 * [-0, +1, v] */
static int ev_order(lua_State *L) {
  static const char *const orderv[] = {"stream", "time", NULL};
  el_host_t *h = el__host_from(L);
  lua_settop(L, 2);
  lua_pushstring(L, orderv[h->def_ordered]);
  if (!lua_isnoneornil(L, 1))
    h->def_ordered = luaL_checkoption(L, 1, NULL, orderv);
  if (!lua_isnoneornil(L, 2)) {
    static const char *const keys[] = {"max_held", NULL};
    luaL_checktype(L, 2, LUA_TTABLE);
    el__lua_check_keys(L, 2, "el.order", "option", keys);
    lua_getfield(L, 2, "max_held");
    if (!lua_isnil(L, -1)) {
      lua_Integer m = lua_tointeger(L, -1);
      if (!lua_isinteger(L, -1) || m < 1)
        return luaL_error(L, "el.order: max_held must be an integer >= 1");
      el__order_set_max(h, (size_t)m);
    }
    lua_pop(L, 1);
  }
  return 1;
}

/* el.off(id). [-0, +0, -] */
static int ev_off(lua_State *L) {
  el_host_t *h = el__host_from(L);
  lua_Integer id = luaL_checkinteger(L, 1);
  for (int i = 0; i < h->all.n; i++) {
    el__handler_t *hd = h->all.v[i];
    if (hd->id != id || hd->dead) continue;
    hd->dead = 1;
    luaL_unref(L, LUA_REGISTRYINDEX, hd->ref);
    hd->ref = LUA_NOREF;
    if (hd->slot && !h->in_dispatch && L != h->D) {  /* release the slot */
      lua_pushnil(h->D);
      lua_replace(h->D, hd->slot);
    }
    h->need_compact = 1;
  }
  compact(h);
  return 0;
}

/* {====== the calling convention ======} */

/* Append the NUL-separated strings of s to the table on top of L, after
 * its *n elements (*n advances). */
static void add_strlist(lua_State *L, el_strview_t s, size_t *n) {
  size_t start = 0;
  for (size_t i = 0; i < s.len; i++) {
    if (s.p[i] != '\0') continue;
    lua_pushlstring(L, s.p + start, i - start);
    lua_rawseti(L, -2, (lua_Integer)++ * n);
    start = i + 1;
  }
  if (start < s.len) {  /* last string without its NUL */
    lua_pushlstring(L, s.p + start, s.len - start);
    lua_rawseti(L, -2, (lua_Integer)++ * n);
  }
}

static void push_strlist(lua_State *L, el_strview_t s) {
  size_t n = 0;
  lua_newtable(L);
  add_strlist(L, s, &n);
}

/* A session's program arguments s (NUL-separated) as a new table, without
 * the arguments the caller inserted after argv[0] when they are there
 * exactly (el_host_set_args_drop). */
static void push_args(el_host_t *h, lua_State *L, el_strview_t s) {
  const char *z = s.len ? memchr(s.p, '\0', s.len) : NULL;
  size_t a1 = z ? (size_t)(z - s.p) + 1 : s.len, k = h->args_drop_len;
  /* the dropped strings, the last one's NUL optional at the end */
  int drop = k && s.len - a1 >= k - 1 &&
             !memcmp(s.p + a1, h->args_drop, k - 1) &&
             (s.len - a1 == k - 1 || s.p[a1 + k - 1] == '\0');
  if (!drop) {
    push_strlist(L, s);
    return;
  }
  size_t n = 0, rest = a1 + k < s.len ? a1 + k : s.len;
  lua_newtable(L);
  add_strlist(L, (el_strview_t){s.p, a1}, &n);
  add_strlist(L, (el_strview_t){s.p + rest, s.len - rest}, &n);
}

static void push_ccs(lua_State *L, const el_ev_value_t *v) {
  size_t depth = v->s.len / 4;
  lua_createtable(L, (int)depth, 0);
  const uint8_t *p = (const uint8_t *)v->s.p;
  for (size_t i = 0; i < depth; i++, p += 4) {
    uint32_t id = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
                  (uint32_t)p[2] << 8 | p[3];
    lua_pushinteger(L, id);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

int el__push_field(lua_State *L, const el_ev_event_t *ev, int i,
                   el_ev_kind_t kind) {
  const el_ev_value_t *v = &ev->v[i];
  switch (kind) {
  case EL_EV_U64:
    lua_pushinteger(L, (lua_Integer)v->u);
    break;
  case EL_EV_I64:
    lua_pushinteger(L, (lua_Integer)v->i);
    break;
  case EL_EV_TEXT:
  case EL_EV_BYTES:
    lua_pushlstring(L, v->s.p ? v->s.p : "", v->s.len);
    break;
  case EL_EV_STRLIST:
    push_strlist(L, v->s);
    break;
  case EL_EV_CCS:
    push_ccs(L, v);
    break;
  default:
    lua_pushnil(L);
  }
  return 1;
}

/* Push the event's fields as arguments. [-0, +n, m] */
static int push_fields(lua_State *L, const el_ev_event_t *ev,
                       const el_ev_type_info_t *ti) {
  if (!ev->known || !ti) return 0;
  int n = ev->nfields < ti->nfields ? ev->nfields : ti->nfields;
  if (n > 8) luaL_checkstack(L, n + 4, "event fields");
  for (int i = 0; i < n; i++) el__push_field(L, ev, i, ti->fields[i].kind);
  return n;
}

static void push_type_name(lua_State *L, uint16_t type) {
  const el_ev_type_info_t *ti = el_ev_type_info(type);
  if (ti)
    lua_pushstring(L, ti->name);
  else
    lua_pushfstring(L, "UNKNOWN_%d", (int)type);
}

/* Refresh the reused ev table (slot D_EV of the dispatch thread): only t
 * and cap are stored; every other key is computed by __index from the
 * current event. The keys are kept on the stack: no string lookup. Only
 * handlers with args = "ev" need it. */
/* Push cap as a handler sees it: an integer, or nil for an event without
 * a capability (EL_EV_NO_CAP). [-0, +1, -] */
static inline void push_cap(lua_State *D, int cap) {
  if (cap == EL_EV_NO_CAP)
    lua_pushnil(D);
  else
    lua_pushinteger(D, cap);
}

static void set_ev(el_host_t *h, lua_State *D, const el_ev_event_t *ev) {
  lua_pushvalue(D, D_KT);
  lua_pushinteger(D, (lua_Integer)ev->t_ns);
  lua_rawset(D, D_EV);
  if (ev->cap == h->ev_cap) return;  /* unchanged since the last event */
  h->ev_cap = ev->cap;
  lua_pushvalue(D, D_KCAP);
  push_cap(D, ev->cap);
  lua_rawset(D, D_EV);
}

/* Push what precedes the fields: ev (args = "ev", its table refreshed
 * once per event: *ev_set), or t and cap (args = "t"). Returns the count.
 * [-0, +1|2, -] */
static int push_head(el_host_t *h, lua_State *D, const el__handler_t *hd,
                     const el_ev_event_t *ev, int *ev_set) {
  if (hd->args == EL__ARGS_T) {
    lua_pushinteger(D, (lua_Integer)ev->t_ns);
    push_cap(D, ev->cap);
    return 2;
  }
  if (!*ev_set) {
    set_ev(h, D, ev);
    *ev_set = 1;
  }
  lua_pushvalue(D, D_EV);
  return 1;
}

/* Events with string or list fields: the fields are pushed inside the
 * protected call (they allocate), by this trampoline. Args: host, event,
 * handler, type info (light userdata). [-0, +0, e] */
static int call_tramp(lua_State *D) {
  el_host_t *h = lua_touserdata(D, 1);
  const el_ev_event_t *ev = lua_touserdata(D, 2);
  el__handler_t *hd = lua_touserdata(D, 3);
  const el_ev_type_info_t *ti = lua_touserdata(D, 4);
  lua_rawgeti(D, LUA_REGISTRYINDEX, hd->ref);
  int ev_set = 0, n;
  if (hd->args == EL__ARGS_T) {
    n = push_head(h, D, hd, ev, &ev_set);
  } else {
    lua_rawgeti(D, LUA_REGISTRYINDEX, h->ev_ref);
    n = 1;
  }
  n += push_fields(D, ev, ti);
  lua_call(D, n, 0);
  return 0;
}

/* True when every field of the type is an integer (pushing them cannot
 * allocate, so the handler is called directly). */
static int int_fields(const el_ev_type_info_t *ti) {
  if (!ti) return 1;
  for (int i = 0; i < ti->nfields; i++)
    if (ti->fields[i].kind != EL_EV_U64 && ti->fields[i].kind != EL_EV_I64)
      return 0;
  return 1;
}

/* Push handler hd with the event's integer fields as its arguments (the
 * direct path). Returns the number of arguments. [-0, +(1+n), -] */
static int push_direct(el_host_t *h, lua_State *D, el__handler_t *hd,
                       const el_ev_event_t *ev, const el_ev_type_info_t *ti,
                       int *ev_set) {
  if (hd->slot)
    lua_pushvalue(D, hd->slot);
  else
    lua_rawgeti(D, LUA_REGISTRYINDEX, hd->ref);
  int n = push_head(h, D, hd, ev, ev_set);
  int nf = ev->known && ti
               ? (ev->nfields < ti->nfields ? ev->nfields : ti->nfields)
               : 0;
  for (int k = 0; k < nf; k++) /* integer fields only: .u and .i alike */
    lua_pushinteger(D, (lua_Integer)ev->v[k].u);
  return n + nf;
}

static void call_list(el_host_t *h, el__hlist_t *l, const el_ev_event_t *ev,
                      const el_ev_type_info_t *ti, int *ev_set) {
  lua_State *D = h->D;
  int direct = !ev->known ||
               (ev->type < EL__HOST_NTYPES ? (h->direct[ev->type] & EL__D_INTS)
                                           : int_fields(ti));
  for (int i = 0; i < l->n && !h->stop && !h->interrupted; i++) {
    el__handler_t *hd = l->v[i];
    if (hd->dead) continue;
    int n;
    if (direct) {
      n = push_direct(h, D, hd, ev, ti, ev_set);
    } else {
      if (hd->args == EL__ARGS_EV && !*ev_set) {
        set_ev(h, D, ev); /* outside the trampoline: cannot allocate */
        *ev_set = 1;
      }
      lua_pushcfunction(D, call_tramp);
      lua_pushlightuserdata(D, h);
      lua_pushlightuserdata(D, (void *)ev);
      lua_pushlightuserdata(D, hd);
      lua_pushlightuserdata(D, (void *)ti);
      n = 4;
    }
    hd->calls++;
    h->st.dispatched++;
    if (lua_pcall(D, n, 0, D_TB) != LUA_OK)
      el__host_error(h, D, hd, "handler");
  }
}

/* Call the lists of ev's type (types/star, or otypes/ostar when ordered)
 * that flags f select. */
static void dispatch_lists(el_host_t *h, const el_ev_event_t *ev, uint8_t f,
                           int ordered) {
  lua_State *D = h->D;
  if (h->in_dispatch) {  /* fed from inside a handler: not supported */
    h->st.reentrant_dropped++;
    return;
  }
  const el_ev_type_info_t *ti =
      ev->type < EL__HOST_NTYPES ? h->ti[ev->type] : NULL;
  const el_ev_type_info_t *sti = ti ? ti : el_ev_type_info(ev->type);
  int ev_set = 0;
  h->in_dispatch++;
  if (!ordered) {
    if (f & EL__F_LUA) call_list(h, &h->types[ev->type], ev, ti, &ev_set);
    if (f & EL__F_STAR) call_list(h, &h->star, ev, sti, &ev_set);
  } else {
    /* A "*" handler's EL__F_ORD brings a type of nolayout[] here (the
     * stream order's lists follow flags[]): an event without its fields
     * is not for its type's handlers. */
    if (ev->type < EL__HOST_NTYPES && ev->known)
      call_list(h, &h->otypes[ev->type], ev, ti ? ti : sti, &ev_set);
    call_list(h, &h->ostar, ev, sti, &ev_set);
  }
  if (lua_gettop(D) != h->d_top) lua_settop(D, h->d_top);  /* paranoia */
  h->in_dispatch--;
  if (h->need_compact) compact(h);
}

void el__events_dispatch(el_host_t *h, const el_ev_event_t *ev, uint8_t f) {
  dispatch_lists(h, ev, f, 0);
}

void el__events_dispatch_ordered(el_host_t *h, const el_ev_event_t *ev) {
  const el_ev_event_t *saved = h->cur;
  h->cur = ev;
  dispatch_lists(h, ev, EL__F_ORD, 1);
  h->cur = saved;
}

/* {====== event records ======} */

size_t el__rec_size(const el_ev_event_t *ev) {
  size_t nf = ev->known ? ev->nfields : 0, nstr = 0;
  const uint8_t *p = ev->payload;
  for (size_t i = 0; i < nf; i++) {
    const uint8_t *sp = (const uint8_t *)ev->v[i].s.p;
    nstr += sp && sp >= p && sp + ev->v[i].s.len <= p + ev->payload_len;
  }
  return sizeof(el__rec_t) + nf * sizeof(uint64_t) +
         nstr * sizeof(el__rec_str_t) + ev->payload_len;
}

void el__rec_fill(el__rec_t *r, const el_ev_event_t *ev, el_rts_ns_t now) {
  size_t nf = ev->known ? ev->nfields : 0;
  el__rec_fill_header(r, ev, now, ev->known, nf);
  const uint8_t *p = ev->payload;
  el__rec_str_t *sv = (el__rec_str_t *)&r->f[nf];
  for (size_t i = 0; i < nf; i++) {
    const el_ev_value_t *v = &ev->v[i];
    const uint8_t *sp = (const uint8_t *)v->s.p; /* stale for integers */
    r->f[i] = v->u;
    if (sp && sp >= p && sp + v->s.len <= p + ev->payload_len) {
      r->strmask |= (uint16_t)(1u << i);
      *sv++ = (el__rec_str_t){(uint32_t)(sp - p), (uint32_t)v->s.len};
    }
  }
  if (ev->payload_len) memcpy(sv, p, ev->payload_len);
}

void el__rec_event(const el__rec_t *r, el_ev_event_t *ev) {
  const el__rec_str_t *sv = (const el__rec_str_t *)&r->f[r->nfields];
  const uint8_t *p =
      (const uint8_t *)&sv[__builtin_popcount((unsigned)r->strmask)];
  ev->type = r->type;
  ev->cap = r->cap;
  ev->t_ns = r->t;
  ev->offset = r->offset;
  ev->payload = p;
  ev->payload_len = r->plen;
  ev->known = r->known;
  ev->malformed = 0;
  ev->layout = r->layout;
  ev->nfields = r->nfields;
  for (int i = 0; i < r->nfields; i++) ev->v[i].u = r->f[i];
  if (!r->strmask) return; /* integers: their .s, as decoded, unset */
  for (int i = 0; i < r->nfields; i++) {
    if (r->strmask & (1u << i)) {
      ev->v[i].s.p = (const char *)p + sv->off;
      ev->v[i].s.len = sv->len;
      sv++;
    } else {
      ev->v[i].s.p = NULL;
      ev->v[i].s.len = 0;
    }
  }
}

/* {====== batched dispatch ======} */

void el__rec_fill_ints(el__rec_t *r, const el_ev_event_t *ev, el_rts_ns_t now) {
  el__rec_fill_header(r, ev, now, 1, ev->nfields);
  /* all EL__BATCH_FIELDS slots (the record has room): no loop */
  r->f[0] = ev->v[0].u;
  r->f[1] = ev->v[1].u;
  r->f[2] = ev->v[2].u;
  r->f[3] = ev->v[3].u;
  el__small_copy((unsigned char *)&r->f[ev->nfields], ev->payload,
                 ev->payload_len);
}

int el__batch_grow(el_host_t *h) {
  if (!h->batch) h->batch = el_malloc(EL__BATCH * EL__REC_SMALL);
  return h->batch ? 0 : EL_ENOMEM;
}

int el__batch_add(el_host_t *h, const el_ev_event_t *ev) {
  return el__batch_add_in(h, ev);
}

int el__batch_add_ordered(el_host_t *h, const el__rec_t *r) {
  if (!h->batch && el__batch_grow(h) != 0) return EL_ENOMEM;
  el__rec_t *s = (el__rec_t *)(h->batch + (size_t)h->nbatch++ * EL__REC_SMALL);
  memcpy(s, r, EL__REC_SMALL);
  s->now = h->now; /* released now: its handlers see this stream time */
  s->ordered = 1;
  if (h->nbatch == EL__BATCH) el__batch_flush(h);
  return 0;
}

/* The handler function of hd onto the replay frame: copied into the frame
 * on first use (pushing a stack slot is cheaper than a registry lookup per
 * call). gen: this replay call's generation. [-0, +1, -] */
static void replay_push_fn(lua_State *D, el__handler_t *hd, unsigned gen) {
  if (hd->rgen == gen) {
    lua_pushvalue(D, hd->rslot);
  } else if (lua_checkstack(D, 16)) {
    lua_rawgeti(D, LUA_REGISTRYINDEX, hd->ref);
    hd->rslot = lua_gettop(D);
    hd->rgen = gen;
    lua_pushvalue(D, -1);
  } else {
    lua_rawgeti(D, LUA_REGISTRYINDEX, hd->ref);
  }
}

/* Store the record's t and cap in the ev table (index 2; keys "t" and
 * "cap" at 3 and 4), for handlers with args = "ev". */
_Static_assert(EL__ARGS_EV == 0 && EL__ARGS_T == 1,
               "replay_batch counts a handler's arguments with args");
static void replay_set_ev(el_host_t *h, lua_State *D, const el__rec_t *r) {
  lua_pushvalue(D, 3);
  lua_pushinteger(D, (lua_Integer)r->t);
  lua_rawset(D, 2);
  if (r->cap == h->ev_cap) return;
  h->ev_cap = r->cap;
  lua_pushvalue(D, 4);
  push_cap(D, r->cap);
  lua_rawset(D, 2);
}

/* Push the r->nfields (<= EL__BATCH_FIELDS = 4) integer fields of a
 * batch record. Each count its own case with constant offsets: nothing
 * about r but r itself is kept across the calls. [-0, +nfields, -] */
static inline __attribute__((always_inline)) void push_rec_fields(
    lua_State *D, const el__rec_t *r) {
  switch (r->nfields) {
  case 1:
    lua_pushinteger(D, (lua_Integer)r->f[0]);
    break;
  case 2:
    lua_pushinteger(D, (lua_Integer)r->f[0]);
    lua_pushinteger(D, (lua_Integer)r->f[1]);
    break;
  case 3:
    lua_pushinteger(D, (lua_Integer)r->f[0]);
    lua_pushinteger(D, (lua_Integer)r->f[1]);
    lua_pushinteger(D, (lua_Integer)r->f[2]);
    break;
  case 4:
    lua_pushinteger(D, (lua_Integer)r->f[0]);
    lua_pushinteger(D, (lua_Integer)r->f[1]);
    lua_pushinteger(D, (lua_Integer)r->f[2]);
    lua_pushinteger(D, (lua_Integer)r->f[3]);
    break;
  default:
    break;
  }
}

/* Call handler hd (not dead) with record r's arguments, unprotected:
 * t and cap (args = "t") or the ev table (index 2, its t and cap stored
 * once per record: h->bset), then the fields. h->replay_hd names the
 * handler for the error path. [-0, +0, e] */
static inline __attribute__((always_inline)) void replay_call(
    el_host_t *h, lua_State *D, el__handler_t *hd, const el__rec_t *r,
    unsigned gen) {
  h->replay_hd = hd;
  if (hd->rgen == gen)
    lua_pushvalue(D, hd->rslot);
  else
    replay_push_fn(D, hd, gen);
  if (hd->args == EL__ARGS_T) {
    lua_pushinteger(D, (lua_Integer)r->t);
    push_cap(D, r->cap);
  } else {
    if (h->bset != r) { /* t and cap: once per event */
      replay_set_ev(h, D, r);
      h->bset = r;
    }
    lua_pushvalue(D, 2);
  }
  push_rec_fields(D, r);
  hd->calls++;
  h->st.dispatched++;
  /* the fields, and t and cap (EL__ARGS_T = 1) or ev (EL__ARGS_EV = 0) */
  lua_call(D, r->nfields + 1 + hd->args, 0);
}

/* The time-order handlers of batch slot r (r->ordered), from handler bh
 * of list h->olist (0: its type's, 1: "*"), as call_list calls them for
 * an event released by lua_order.c: each list read after each call (a
 * handler may subscribe), stop and interruption checked before each
 * call. Leaves h->olist at 0 when done. [-0, +0, e] */
static __attribute__((noinline)) void replay_ordered(el_host_t *h, lua_State *D,
                                                     const el__rec_t *r, int bh,
                                                     unsigned gen) {
  for (; h->olist < 2; h->olist++, bh = 0) {
    const el__hlist_t *l = h->olist ? &h->ostar : &h->otypes[r->type];
    for (; bh < l->n; bh++) {
      if (h->stop | h->interrupted) return;
      el__handler_t *hd = l->v[bh];
      if (hd->dead) continue;
      replay_call(h, D, hd, r, gen);
    }
  }
  h->olist = 0;
}

/* The batch queue's replay: stream-order handlers of each record's type,
 * integer fields (EL__D_BATCH types) only, from (h->bpos, h->bh). The
 * position is kept in locals; before each call only h->cur_rec (the
 * record) and h->replay_hd (the handler) are stored, from which
 * replay_resume finds the position after an error. Stack: 2 ev, 3 "t",
 * 4 "cap". [-0, +0, e] */
static void replay_batch(el_host_t *h, lua_State *D, unsigned gen) {
  const unsigned char *p = h->batch + (size_t)h->bpos * EL__REC_SMALL;
  const unsigned char *end = h->batch + (size_t)h->nbatch * EL__REC_SMALL;
  int bh = h->bh;
  for (; p < end; p += EL__REC_SMALL, bh = 0) {
    if (h->stop | h->interrupted) break;
    const el__rec_t *r = (const el__rec_t *)p;
    h->cur_rec = r; /* h->cur is NULL: el__host_cur makes it from r */
    h->now = r->now;
    /* A timer added during this replay (el.at, el.every in a handler)
     * whose deadline this record reaches fires before its handlers, as
     * on_event_rare fires those known when the record was queued (not
     * again for a record resumed after an error: bh > 0). */
    if (__builtin_expect(r->now >= h->next_deadline, 0) && bh == 0) {
      h->cur_rec = NULL; /* a timer is not this record's handler */
      el__timers_fire(h);
      if (h->stop | h->interrupted) break;
      h->cur_rec = r;
    }
    if (__builtin_expect(r->ordered, 0)) {
      replay_ordered(h, D, r, bh, gen);
      continue;
    }
    const el__hlist_t *l = &h->types[r->type];
    /* l->v and l->n are read after each call: a handler may subscribe */
    for (; bh < l->n; bh++) {
      el__handler_t *hd = l->v[bh];
      if (hd->dead) continue;
      replay_call(h, D, hd, r, gen);
    }
  }
  h->bpos = h->nbatch; /* done (or stopped: the caller's loop ends too) */
}

/* Replay the queue from (bpos, bh) with unprotected calls;
 * the caller's lua_pcall catches an error, which leaves bpos/bh at the
 * failing handler. Args: host, the ev table, "t", "cap". [-4, +0, e] */
static int replay(lua_State *D) {
  el_host_t *h = lua_touserdata(D, 1); /* 2 ev, 3 "t", 4 "cap" */
  /* Handler functions are copied into this frame on first use (5...). */
  replay_batch(h, D, ++h->replay_gen);
  return 0;
}

/* After an error in the handler h->replay_hd of the record h->cur_rec:
 * resume the replay with the next handler of that record (handler lists
 * are not compacted during a dispatch, so its index still holds). */
static void replay_resume(el_host_t *h) {
  const el__rec_t *r = h->cur_rec;
  const el__hlist_t *l = !r->ordered ? &h->types[r->type]
                         : h->olist  ? &h->ostar
                                     : &h->otypes[r->type];
  int k = 0;
  while (k < l->n && l->v[k] != h->replay_hd) k++;
  h->bpos = (int)(((const unsigned char *)r - h->batch) / EL__REC_SMALL);
  h->bh = k + 1;
}

/* Run the replay over the queue to its end. Not inlined: the check in
 * el__batch_flush, made per event, stays a few instructions. */
__attribute__((noinline)) static void replay_run(el_host_t *h) {
  lua_State *D = h->D;
  el_rts_ns_t saved_now = h->now;
  const el_ev_event_t *saved_cur = h->cur;
  int n = h->nbatch;
  h->in_dispatch++;
  h->bpos = h->bh = h->olist = 0;
  h->bset = NULL;
  h->cur = NULL;
  h->cur_built = NULL;
  while (h->bpos < n && !h->stop && !h->interrupted) {
    lua_pushcfunction(D, replay);
    lua_pushlightuserdata(D, h);
    lua_pushvalue(D, D_EV);
    lua_pushvalue(D, D_KT);
    lua_pushvalue(D, D_KCAP);
    if (lua_pcall(D, 4, 0, D_TB) != LUA_OK) {
      replay_resume(h); /* go on with the next handler of that event */
      h->cur = saved_cur;
      h->cur_rec = NULL;
      el__host_error(h, D, h->replay_hd, "handler");
      h->cur = NULL;
    }
  }
  h->now = saved_now;
  h->cur = saved_cur;
  h->cur_rec = NULL;
  if (lua_gettop(D) != h->d_top) lua_settop(D, h->d_top);
  h->in_dispatch--;
  el__host_quiet_sync(h); /* a deadline added may be behind h->now */
  if (h->need_compact) compact(h);
}

void el__batch_flush(el_host_t *h) {
  if (!h->nbatch || h->in_dispatch) return;
  replay_run(h);
  h->nbatch = 0;
}

/* {====== the ev table's lazy keys ======} */

const el_ev_event_t *el__host_cur(el_host_t *h) {
  if (h->cur || !h->cur_rec) return h->cur;
  if (h->cur_built != h->cur_rec) {
    el__rec_event(h->cur_rec, &h->cur_buf);
    h->cur_built = h->cur_rec;
  }
  return &h->cur_buf;
}

static int ev_field_by_name(lua_State *L, const el_ev_event_t *ev,
                            const char *name) {
  const el_ev_type_info_t *ti = el_ev_type_info(ev->type);
  if (!ev->known || !ti) return 0;
  int i = el_ev_field_index(ev->type, name);
  if (i < 0 || i >= ev->nfields) return 0;
  return el__push_field(L, ev, i, ti->fields[i].kind);
}

/* The keys of ev besides its fields (docs/lua-api.md §2). */
static const char *const ev_keys[] = {"t",       "cap",    "type",    "type_id",
                                      "unix_ns", "offset", "session", "payload",
                                      "field",   "fields"};

/* Whether `k` names a field of some known event type (ids below 1024:
 * every known one). */
static int field_of_any_type(const char *k) {
  for (unsigned id = 0; id < 1024; id++)
    if (el_ev_type_info((uint16_t)id) &&
        el_ev_field_index((uint16_t)id, k) >= 0)
      return 1;
  return 0;
}

/* The field of some known event type nearest to k (el_nearest), for a
 * key near none of ev's own: its name, with ", a field of TYPE?)" in
 * other[size]; NULL when none is near (or out of memory). */
static const char *nearest_field_of_any(const char *k, char *other,
                                        size_t size) {
  size_t n = 0, cap = 0;
  const char **cands = NULL;
  uint16_t *types = NULL;
  for (unsigned id = 0; id < 1024; id++) {
    const el_ev_type_info_t *ti = el_ev_type_info((uint16_t)id);
    for (int i = 0; ti && i < ti->nfields; i++) {
      if (n == cap) {
        cap = cap ? 2 * cap : 256;
        const char **c = el_realloc(cands, cap * sizeof *c);
        uint16_t *t = c ? el_realloc(types, cap * sizeof *t) : NULL;
        if (c) cands = c;
        if (!t) goto done;
        types = t;
      }
      types[n] = (uint16_t)id;
      cands[n++] = ti->fields[i].name;
    }
  }
  const char *near = el_nearest(k, cands, n);
  for (size_t i = 0; near && i < n; i++)
    if (cands[i] == near) {
      snprintf(other, size, ", a field of %s?)",
               el_ev_type_info(types[i])->name);
      el_free(cands);
      el_free(types);
      return near;
    }
done:
  el_free(cands);
  el_free(types);
  return NULL;
}

/* ev.k is nil: k is no key of ev and no field of ev's type. A key that
 * is no field of any event type either (a misspelling: ev.staus) is said
 * once per host as a warning, where the handler read it, with the
 * nearest of ev's keys (h69: it read as nil, silently). A field of other
 * types (ev.thread in a "*" handler) stays a plain nil. Keys judged are
 * kept in a registry table, so each is looked for once. [-0, +0, m] */
static void ev_unknown_key(lua_State *L, const el_ev_event_t *ev,
                           const char *k) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, "el.ev_keys_judged") != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, "el.ev_keys_judged");
  }
  int judged = lua_getfield(L, -1, k) != LUA_TNIL;
  lua_pop(L, 1);
  if (judged) {
    lua_pop(L, 1);
    return;
  }
  lua_pushboolean(L, 1);
  lua_setfield(L, -2, k);
  lua_pop(L, 1);
  for (size_t i = 0; i < sizeof ev_keys / sizeof *ev_keys; i++)
    if (!strcmp(k, ev_keys[i])) return; /* ev:field("t"): a key, no field */
  if (field_of_any_type(k)) return;
  const el_ev_type_info_t *ti = ev->known ? el_ev_type_info(ev->type) : NULL;
  const char *cands[EL_EV_MAX_FIELDS + sizeof ev_keys / sizeof *ev_keys];
  size_t n = 0;
  for (int i = 0; ti && i < ti->nfields; i++) cands[n++] = ti->fields[i].name;
  for (size_t i = 0; i < sizeof ev_keys / sizeof *ev_keys; i++)
    cands[n++] = ev_keys[i];
  const char *near = el_nearest(k, cands, n);
  char other[96] = "";
  if (!near) near = nearest_field_of_any(k, other, sizeof other);
  luaL_where(L, 1);
  el_log(EL_LOG_WARN,
         "Lua: %sev: '%s' is no field of %s nor of any event type%s%s%s%s: "
         "it reads as nil (said once)",
         lua_tostring(L, -1), k, ti ? ti->name : "this event",
         near ? " (did you mean '" : "", near ? near : "", near ? "'" : "",
         near ? (other[0] ? other : "?)") : "");
  lua_pop(L, 1);
}

/* ev:field(name) [-0, +1, m] */
static int evt_field(lua_State *L) {
  el_host_t *h = el__host_from(L);
  const char *name = luaL_checkstring(L, 2);
  const el_ev_event_t *ev = el__host_cur(h);
  if (ev && ev_field_by_name(L, ev, name)) return 1;
  if (ev) ev_unknown_key(L, ev, name);
  lua_pushnil(L);
  return 1;
}

/* ev:fields() -> {name = value} [-0, +1, m] */
static int evt_fields(lua_State *L) {
  el_host_t *h = el__host_from(L);
  lua_newtable(L);
  const el_ev_event_t *ev = el__host_cur(h);
  const el_ev_type_info_t *ti = ev ? el_ev_type_info(ev->type) : NULL;
  if (!ev || !ev->known || !ti) return 1;
  for (int i = 0; i < ev->nfields && i < ti->nfields; i++) {
    el__push_field(L, ev, i, ti->fields[i].kind);
    lua_setfield(L, -2, ti->fields[i].name);
  }
  return 1;
}

/* __index(ev, key) for keys not stored in the table. [-0, +1, m] */
static int evt_index(lua_State *L) {
  el_host_t *h = el__host_from(L);
  int named = lua_type(L, 2) == LUA_TSTRING; /* (lua_tostring converts) */
  const char *k = lua_tostring(L, 2);
  const el_ev_event_t *ev = el__host_cur(h);
  if (!k) return 0;
  if (!strcmp(k, "field")) {
    lua_pushcfunction(L, evt_field);
    return 1;
  }
  if (!strcmp(k, "fields")) {
    lua_pushcfunction(L, evt_fields);
    return 1;
  }
  if (!ev || !strcmp(k, "cap") || !strcmp(k, "t")) return 0;
  if (!strcmp(k, "type")) {
    push_type_name(L, ev->type);
    return 1;
  }
  if (!strcmp(k, "type_id")) {
    lua_pushinteger(L, ev->type);
    return 1;
  }
  if (!strcmp(k, "unix_ns")) {
    lua_pushinteger(L, (lua_Integer)el__host_unix(h, ev->t_ns));
    return 1;
  }
  if (!strcmp(k, "offset")) {
    lua_pushinteger(L, (lua_Integer)ev->offset);
    return 1;
  }
  if (!strcmp(k, "session")) {
    lua_pushinteger(L, h->sess.number);
    return 1;
  }
  if (!strcmp(k, "payload")) {
    lua_pushlstring(L, (const char *)ev->payload, ev->payload_len);
    return 1;
  }
  if (ev_field_by_name(L, ev, k)) return 1;
  if (named) ev_unknown_key(L, ev, k); /* not ev[1] */
  return 0;
}

/* __newindex of the ev table and of el.event()'s: both are reused for
 * every event, so a key written would stay for every later event and
 * handler. [-0, +0, v] */
static int evt_newindex(lua_State *L) {
  return luaL_error(L,
                    "ev is read-only (one table is reused for every "
                    "event): copy what you keep, e.g. local f = "
                    "ev:fields(); key %s",
                    luaL_tolstring(L, 2, NULL));
}

/* __index of el.event()'s table: t and cap of the current event too
 * (nothing is stored in that table). [-0, +1, m] */
static int evl_index(lua_State *L) {
  el_host_t *h = el__host_from(L);
  const char *k = lua_tostring(L, 2);
  const el_ev_event_t *ev = el__host_cur(h);
  if (ev && k && !strcmp(k, "t")) {
    lua_pushinteger(L, (lua_Integer)ev->t_ns);
    return 1;
  }
  if (ev && k && !strcmp(k, "cap")) {
    if (ev->cap == EL_EV_NO_CAP) return 0;
    lua_pushinteger(L, ev->cap);
    return 1;
  }
  return evt_index(L);
}

/* el.event() -> a table describing the event being dispatched, for
 * handlers with args = "t": the keys of the ev table (t, cap, type,
 * offset, ... and :field, :fields), all computed on access; each is nil
 * outside handlers. One table, reused. [-0, +1, -] */
static int ev_event(lua_State *L) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, el__host_from(L)->evl_ref);
  return 1;
}

/* {====== sessions and hooks ======} */

/* The key of the hooks table that lists where each hook of `hook` was
 * added, in the order of hooks[hook]. */
static const char *hook_where_key(const char *hook) {
  return !strcmp(hook, "on_header")    ? "on_header@"
         : !strcmp(hook, "on_session") ? "on_session@"
         : !strcmp(hook, "on_end")     ? "on_end@"
                                       : "on_session_end@";
}

/* Call every function of hooks[hook] with the session table (or no
 * argument). */
void el__hooks_call(el_host_t *h, const char *hook, int with_session) {
  lua_State *L = h->L;
  /* The end hooks run after a --fail-fast stop too (docs/lua-api.md §4),
   * every one of them: an error of one is logged and counted (and under
   * --fail-fast stops the run) but does not keep the others from running
   * (docs/exit-codes.md "run"). */
  int stopped = h->stop;
  int end_hook = !strcmp(hook, "on_end") || !strcmp(hook, "on_session_end");
  if (stopped && !end_hook) return;
  h->stop = 0;
  h->in_end_hooks = end_hook;
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->hooks_ref);
  lua_getfield(L, -1, hook);
  lua_getfield(L, -2, hook_where_key(hook));
  lua_Integer n = luaL_len(L, -2);
  const char *outer = h->call_where;
  for (lua_Integer i = 1; i <= n && (end_hook || !h->stop); i++) {
    lua_rawgeti(L, -1, i); /* where it was added: kept by the table */
    h->call_where = lua_tostring(L, -1);
    lua_pop(L, 1);
    lua_rawgeti(L, -2, i);
    if (with_session) lua_rawgeti(L, LUA_REGISTRYINDEX, h->session_ref);
    el__host_pcall(h, with_session ? 1 : 0, &h->hook_handler, hook);
    h->call_where = outer;
  }
  lua_pop(L, 3);
  h->in_end_hooks = 0;
  h->stop |= stopped;
  el__host_quiet_sync(h);
}

/* Add the function at 1 to hooks[hook], and where the script added it
 * ("file.lua:12", what its errors name) to hooks[hook_where_key(hook)]. */
static int add_hook(lua_State *L, const char *hook) {
  el_host_t *h = el__host_from(L);
  luaL_checktype(L, 1, LUA_TFUNCTION);
  char where[128];
  el__host_caller_where(L, where, sizeof where);
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->hooks_ref);
  lua_getfield(L, -1, hook);
  lua_Integer n = luaL_len(L, -1) + 1;
  lua_pushvalue(L, 1);
  lua_rawseti(L, -2, n);
  lua_getfield(L, -2, hook_where_key(hook));
  lua_pushstring(L, where);
  lua_rawseti(L, -2, n);
  return 0;
}

/* [-0, +0, v] el.on_header(fn) (and the three hooks below) */
static int ev_on_header(lua_State *L) { return add_hook(L, "on_header"); }
static int ev_on_session(lua_State *L) { return add_hook(L, "on_session"); }
static int ev_on_session_end(lua_State *L) {
  return add_hook(L, "on_session_end");
}
static int ev_on_end(lua_State *L) { return add_hook(L, "on_end"); }

/* Replace el.session with a fresh table {number = n}. */
static void new_session_table(el_host_t *h) {
  lua_State *L = h->L;
  lua_createtable(L, 0, 12);
  lua_pushinteger(L, h->sess.number);
  lua_setfield(L, -2, "number");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "ready");
  lua_newtable(L);
  lua_setfield(L, -2, "caps");
  el__clock_push_fields(h, L, -1);
  lua_pushvalue(L, -1);
  lua_rawseti(L, LUA_REGISTRYINDEX, h->session_ref);
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->mod_ref);
  lua_insert(L, -2);
  lua_setfield(L, -2, "session");
  lua_pop(L, 1);
}

static void session_end_body(el_host_t *h);
static void breakdown_from_args(lua_State *L, el_strview_t s);
static void set_int(lua_State *L, const char *k, lua_Integer v);
static void rts_identifier(lua_State *L, el_strview_t s);

/* A recorded file's scan found the session's init events (host.h
 * el_host_set_hints): their fields into el.session now, as the events
 * themselves will set them (session_event_body), so the resource is
 * complete from the first record, wherever the events sit. */
static void init_from_hint(el_host_t *h, const el_host_hint_t *hint) {
  if (!hint->has_pid && !hint->has_ppid && !hint->rts_id.p && !hint->args.p)
    return;
  lua_State *L = h->L;
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->session_ref);
  if (hint->has_pid) set_int(L, "pid", (lua_Integer)hint->pid);
  if (hint->has_ppid) set_int(L, "ppid", (lua_Integer)hint->ppid);
  if (hint->rts_id.p) rts_identifier(L, hint->rts_id);
  if (hint->args.p) {
    push_args(h, L, hint->args);
    lua_setfield(L, -2, "args");
    breakdown_from_args(L, hint->args);
  }
  lua_pushboolean(L, 1);
  lua_setfield(L, -2, "init_scanned");
  lua_pop(L, 1);
}

static void session_header_body(el_host_t *h) {
  if (h->sess.number > 0 && !h->sess.ended) session_end_body(h);
  if (h->sess.number > 0) el__ana_session(h);
  unsigned n = h->sess.number + 1;
  memset(&h->sess, 0, sizeof h->sess);
  h->sess.number = n;
  /* The main resource describes this program from now on (a web store
   * re-keys a session's series when its resource is corrected, and cuts
   * them at the next session). */
  if (h->store) el_tm_store_set_session(h->store, n);
  /* A new clock and stream time: a restarted program counts from 0. */
  h->now = 0;
  h->sess.rebase_timers = 1;
  el__host_quiet_sync(h);
  const el_host_hint_t *hint = el__clock_session(h);
  new_session_table(h);
  if (hint) init_from_hint(h, hint);
  el__hooks_call(h, "on_header", 1);
}

static void session_ready(el_host_t *h) {
  if (h->sess.ready || h->sess.number == 0) return;
  h->sess.ready = 1;
  lua_rawgeti(h->L, LUA_REGISTRYINDEX, h->session_ref);
  lua_pushboolean(h->L, 1);
  lua_setfield(h->L, -2, "ready");
  lua_pop(h->L, 1);
  el__hooks_call(h, "on_session", 1);
}

static void session_end_body(el_host_t *h) {
  if (h->sess.number == 0 || h->sess.ended) return;
  el__clock_end(h);
  el__ana_flush(h);
  el__order_release(h, 1);
  el__order_report(h);
  session_ready(h);
  h->sess.ended = 1;
  el__hooks_call(h, "on_session_end", 1);
}

/* -h<X> in the program arguments (reference §5.2.2 fallback). */
static void breakdown_from_args(lua_State *L, el_strview_t s) {
  size_t start = 0;
  for (size_t i = 0; i <= s.len; i++) {
    if (i < s.len && s.p[i] != '\0') continue;
    const char *a = s.p + start;
    size_t len = i - start;
    start = i + 1;
    if (len == 3 && a[0] == '-' && a[1] == 'h' &&
        strchr("cmdyrbTie", a[2])) {
      lua_pushlstring(L, a, 3);
      lua_setfield(L, -2, "heap_prof_breakdown");
      return;
    }
  }
}

static void add_cap(el_host_t *h, unsigned cap) {
  if (cap >= 65535 || (h->sess.caps[cap >> 3] & (1u << (cap & 7)))) return;
  h->sess.caps[cap >> 3] |= (uint8_t)(1u << (cap & 7));
  lua_State *L = h->L;
  /* Capabilities usually come in ascending order: append to the list
   * when cap is above its last entry, else rebuild it. */
  if (lua_getfield(L, -1, "caps") == LUA_TTABLE) {
    lua_Integer len = (lua_Integer)lua_rawlen(L, -1);
    int last = len > 0 ? lua_rawgeti(L, -1, len) : LUA_TNIL;
    int above = last == LUA_TNUMBER && lua_tointeger(L, -1) < (lua_Integer)cap;
    if (len > 0) lua_pop(L, 1);
    if (above || len == 0) {
      lua_pushinteger(L, cap);
      lua_rawseti(L, -2, len + 1);
      lua_pop(L, 1);
      return;
    }
  }
  lua_pop(L, 1);
  lua_newtable(L);  /* rebuild caps, ascending */
  lua_Integer n = 0;
  for (unsigned c = 0; c < 65535; c++)
    if (h->sess.caps[c >> 3] & (1u << (c & 7))) {
      lua_pushinteger(L, c);
      lua_rawseti(L, -2, ++n);
    }
  lua_setfield(L, -2, "caps");
}

static void set_int(lua_State *L, const char *k, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
}

static void rts_identifier(lua_State *L, el_strview_t s) {
  lua_pushlstring(L, s.p, s.len);
  lua_setfield(L, -2, "rts_version");
  const char *sp = memchr(s.p, ' ', s.len);
  size_t vlen = sp ? (size_t)(sp - s.p) : s.len;
  if (vlen > 4 && !memcmp(s.p, "GHC-", 4)) {
    lua_pushlstring(L, s.p + 4, vlen - 4);
    lua_setfield(L, -2, "ghc_version");
  }
  if (sp) {
    lua_pushlstring(L, sp + 1, s.len - vlen - 1);
    lua_setfield(L, -2, "rts_way");
  }
}

/* Init events update el.session (spec §2.4, §2.5, §3.5). */
/* HEAP_PROF_BEGIN: the breakdown (it wins over -h<X> in the arguments)
 * and the sampling interval into the session table on top of L. */
static void heap_prof_begin(el_host_t *h, lua_State *L,
                            const el_ev_value_t *v) {
  const char *b = el_ev_breakdown_flag(v[2].u);
  if (b) {
    lua_pushstring(L, b);
    lua_setfield(L, -2, "heap_prof_breakdown");
    h->sess.breakdown_from_begin = 1;
  }
  set_int(L, "heap_prof_interval_ns", (lua_Integer)v[1].u);
}

static void session_event_body(el_host_t *h, const el_ev_event_t *ev) {
  if (!ev->known) return;
  lua_State *L = h->L;
  const el_ev_value_t *v = ev->v;
  if (h->sess.number == 0) return;  /* no header yet */
  lua_rawgeti(L, LUA_REGISTRYINDEX, h->session_ref);
  if (el__clock_event(h, ev)) el__clock_push_fields(h, L, -1);
  switch (ev->type) {
  case EL_EV_BLOCK_MARKER:
    if (ev->nfields >= 3 && v[2].u != EL_EV_NO_CAP)
      add_cap(h, (unsigned)v[2].u);
    break;
  case EL_EV_CAP_CREATE:
    add_cap(h, (unsigned)v[0].u);
    break;
  case EL_EV_WALL_CLOCK_TIME:
    set_int(L, "wall_clock_unix_ns",
            (lua_Integer)el__host_unix(h, ev->t_ns));
    h->sess.seen_wct = 1;
    break;
  case EL_EV_OSPROCESS_PID:
    set_int(L, "pid", (lua_Integer)v[1].u);
    h->sess.seen_pid = 1;
    break;
  case EL_EV_OSPROCESS_PPID:
    set_int(L, "ppid", (lua_Integer)v[1].u);
    break;
  case EL_EV_RTS_IDENTIFIER:
    rts_identifier(L, v[1].s);
    h->sess.seen_rts = 1;
    break;
  case EL_EV_PROGRAM_ARGS:
    push_args(h, L, v[1].s);
    lua_setfield(L, -2, "args");
    if (!h->sess.breakdown_from_begin) breakdown_from_args(L, v[1].s);
    h->sess.seen_args = 1;
    break;
  case EL_EV_HEAP_PROF_BEGIN:
    heap_prof_begin(h, L, v);
    break;
  }
  lua_pop(L, 1);
  if (h->sess.seen_wct && h->sess.seen_pid && h->sess.seen_rts &&
      h->sess.seen_args)
    session_ready(h);
}

/* The session functions allocate (strings, tables): they run protected,
 * so that running out of memory is an error, never a Lua panic. */
static int p_session(lua_State *L) {
  el_host_t *h = lua_touserdata(L, 1);
  const el_ev_event_t *ev = lua_touserdata(L, 2);
  switch ((int)lua_tointeger(L, 3)) {
  case 0: session_event_body(h, ev); break;
  case 1: session_header_body(h); break;
  default: session_end_body(h); break;
  }
  return 0;
}

static void protect_session(el_host_t *h, const el_ev_event_t *ev, int op) {
  lua_State *L = h->L;
  lua_pushcfunction(L, p_session);
  lua_pushlightuserdata(L, h);
  lua_pushlightuserdata(L, (void *)ev);
  lua_pushinteger(L, op);
  if (lua_pcall(L, 3, 0, 0) != LUA_OK) {
    if (el__host_stopped(h, "session tracking", "session",
                         lua_tostring(L, -1))) {
      lua_pop(L, 1);
      return;
    }
    h->st.handler_errors++;
    el_log(EL_LOG_ERROR, "session tracking: %s", lua_tostring(L, -1));
    lua_pop(L, 1);
  }
}

void el__session_event(el_host_t *h, const el_ev_event_t *ev) {
  protect_session(h, ev, 0);
}
void el__session_header(el_host_t *h) { protect_session(h, NULL, 1); }
void el__session_end(el_host_t *h) {
  if (h->sess.number == 0 || h->sess.ended) return;
  protect_session(h, NULL, 2);
}

/* {====== utilities ======} */

/* [-0, +1, -] el.now() -> stream time, ns */
static int ev_now(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)el__host_from(L)->now);
  return 1;
}

/* [-0, +1, -] el.watermark() -> eventlog ns, or nil when no capability
 * is waited for */
static int ev_watermark(lua_State *L) {
  el_host_t *h = el__host_from(L);
  el_rts_ns_t wm;
  h->prog.wm_dirty = 1;  /* the horizon moves with the clock */
  if (el__watermark(h, &wm) < 0)
    lua_pushnil(L);
  else
    lua_pushinteger(L, wm > (el_rts_ns_t)LUA_MAXINTEGER ? LUA_MAXINTEGER
                                                       : (lua_Integer)wm);
  return 1;
}

/* [-0, +1, -] el.wall_t() -> the wall clock now in the session's eventlog
 * time (live sessions with a clock), or nil */
static int ev_wall_t(lua_State *L) {
  el_rts_ns_t t;
  if (el__clock_wall_t(el__host_from(L), &t) < 0)
    lua_pushnil(L);
  else
    lua_pushinteger(L, t > (el_rts_ns_t)LUA_MAXINTEGER ? LUA_MAXINTEGER
                                                      : (lua_Integer)t);
  return 1;
}

/* [-0, +1, v] el.unix_ns(t) -> Unix ns (0 while the clock is unknown) */
static int ev_unix_ns(lua_State *L) {
  el_host_t *h = el__host_from(L);
  lua_Integer t = luaL_checkinteger(L, 1);
  luaL_argcheck(L, t >= 0, 1, "a time must be >= 0 (ns)");
  lua_pushinteger(L, (lua_Integer)el__host_unix(h, (el_rts_ns_t)t));
  return 1;
}

/* el.type_info(name_or_id) -> {id, name, fields}, or nil for a name or id
 * the decoder's table does not know. [-0, +1, m] */
static int ev_type_info(lua_State *L) {
  int id;
  if (lua_type(L, 1) == LUA_TNUMBER)
    id = (int)luaL_checkinteger(L, 1);
  else
    id = el_ev_type_by_name(luaL_checkstring(L, 1));
  const el_ev_type_info_t *ti =
      id >= 0 && id <= 0xFFFF ? el_ev_type_info((uint16_t)id) : NULL;
  if (!ti) {
    lua_pushnil(L); /* one value: print() and table.insert() see it */
    return 1;
  }
  lua_createtable(L, 0, 3);
  set_int(L, "id", ti->id);
  lua_pushstring(L, ti->name);
  lua_setfield(L, -2, "name");
  lua_createtable(L, ti->nfields, 0);
  for (int i = 0; i < ti->nfields; i++) {
    lua_pushstring(L, ti->fields[i].name);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "fields");
  return 1;
}

/* el.status_name(code [, info]) -> the STOP_THREAD status name
 * (el_ev_stop_status_name: "BlockedOnMVar", "BlockedOnBlackHoleOwnedBy
 * <info>", "BlockedOnBlackHole" when info is absent or 0, i.e. the owner
 * is unknown; "NoStatus" for an unknown code). [-0, +1, v] */
static int ev_status_name(lua_State *L) {
  lua_Integer code = luaL_checkinteger(L, 1);
  lua_Integer info = luaL_optinteger(L, 2, 0);
  char buf[64];
  size_t n = el_ev_stop_status_name(code < 0 ? UINT64_MAX : (uint64_t)code,
                                    (uint64_t)info, buf, sizeof buf);
  lua_pushlstring(L, buf, n < sizeof buf ? n : sizeof buf - 1);
  return 1;
}

/* [-0, +1, m] el.stats() -> counters */
static int ev_stats(lua_State *L) {
  el_host_t *h = el__host_from(L);
  const el_ev_stats_t *ds = el_ev_decoder_stats(h->dec);
  lua_createtable(L, 0, 8);
  set_int(L, "events", (lua_Integer)h->st.events);
  set_int(L, "dispatched", (lua_Integer)h->st.dispatched);
  set_int(L, "handler_errors", (lua_Integer)h->st.handler_errors);
  set_int(L, "timer_skipped", (lua_Integer)h->st.timer_skipped);
  set_int(L, "reorder_forced", (lua_Integer)h->st.reorder_forced);
  set_int(L, "reorder_late", (lua_Integer)h->st.reorder_late);
  set_int(L, "warnings", (lua_Integer)h->st.warnings);
  set_int(L, "reentrant_dropped", (lua_Integer)h->st.reentrant_dropped);
  set_int(L, "budget_exceeded", (lua_Integer)h->st.budget_exceeded);
  set_int(L, "handlers_disabled", (lua_Integer)h->st.handlers_disabled);
  set_int(L, "lua_memory", (lua_Integer)h->lua_bytes);
  set_int(L, "lua_memory_limit", (lua_Integer)h->opts.lua_memory);
  set_int(L, "lua_memory_refused", (lua_Integer)h->st.lua_memory_refused);
  set_int(L, "helper_dropped", (lua_Integer)h->st.helper_dropped);
  set_int(L, "threads_evicted", (lua_Integer)h->st.threads_evicted);
  set_int(L, "usage_other", (lua_Integer)h->st.usage_other);
  set_int(L, "malformed", (lua_Integer)h->st.malformed);
  set_int(L, "order_late", (lua_Integer)h->st.order_late);
  set_int(L, "order_forced", (lua_Integer)h->st.order_forced);
  size_t peak, held = el__order_held(h, &peak);
  set_int(L, "order_held", (lua_Integer)held);
  set_int(L, "order_held_max", (lua_Integer)peak);
  set_int(L, "bytes", ds ? (lua_Integer)ds->bytes : 0);
  return 1;
}

/* el.control(namespace, command_id) or el.control(builtin_name) -> true |
 * nil, msg (spec/eventlog-format.md §5.7). namespace: 1..255 bytes;
 * command_id: 1..255; builtin_name: a route name of docs/control.md (e.g.
 * "request-heap-census"), passed to the control hook with id 0. Out of
 * range values, an unknown name and a closed connection ("not connected")
 * return nil, msg and send nothing; a wrong type raises. [-0, +1|2, v] */
static int ev_control(lua_State *L) {
  el_host_t *h = el__host_from(L);
  size_t nslen;
  const char *ns = luaL_checklstring(L, 1, &nslen);
  lua_Integer id = 0; /* 0: ns is a builtin command name */
  if (!lua_isnoneornil(L, 2)) id = luaL_checkinteger(L, 2);
  const char *bad = nslen < 1 || nslen > 255 ? "namespace must be 1..255 bytes"
                    : !lua_isnoneornil(L, 2) && (id < 1 || id > 255)
                        ? "command id must be 1..255"
                        : NULL;
  if (bad) {
    lua_pushnil(L);
    lua_pushstring(L, bad);
    return 2;
  }
  if (!h->control_fn) {
    lua_pushnil(L);
    lua_pushliteral(L, "not connected");
    return 2;
  }
  int rc = h->control_fn(h->control_ud, ns, nslen, (uint32_t)id);
  if (rc == 0) {
    lua_pushboolean(L, 1);
    return 1;
  }
  lua_pushnil(L);
  lua_pushstring(L, rc == EL_ECLOSED ? "not connected"
                    : rc == EL_EINVAL && id == 0
                        ? "not a builtin command name (give a namespace "
                          "and a command id)"
                        : el_strerror(rc));
  return 2;
}

/* [-0, +0, v] el.host_log(level, msg) */
static int ev_host_log(lua_State *L) {
  static const char *const lv[] = {"debug", "info", "warn", "error", NULL};
  int level = luaL_checkoption(L, 1, NULL, lv);
  el_log((el_log_level_t)level, "%s", luaL_checkstring(L, 2));
  return 0;
}

/* {====== the module ======} */

static const luaL_Reg ev_funcs[] = {
    {"on", ev_on},
    {"off", ev_off},
    {"order", ev_order},
    {"event", ev_event},
    {"on_header", ev_on_header},
    {"on_session", ev_on_session},
    {"on_session_end", ev_on_session_end},
    {"on_end", ev_on_end},
    {"now", ev_now},
    {"unix_ns", ev_unix_ns},
    {"watermark", ev_watermark},
    {"wall_t", ev_wall_t},
    {"type_info", ev_type_info},
    {"status_name", ev_status_name},
    {"stats", ev_stats},
    {"control", ev_control},
    {"host_log", ev_host_log},
    {NULL, NULL},
};

int el__lua_open_module(lua_State *L) {
  el_host_t *h = el__host_from(L);
  if (h->mod_ref != LUA_NOREF) {  /* already open: same table */
    lua_rawgeti(L, LUA_REGISTRYINDEX, h->mod_ref);
    return 1;
  }
  luaL_newlib(L, ev_funcs);
  el__lua_time_register(L);
  el__lua_emit_register(L);
  el__lua_analysis_register(L);
  lua_newtable(L);
  lua_setfield(L, -2, "config");
  lua_pushstring(L, EL_VERSION);
  lua_setfield(L, -2, "version");
  /* the reused ev table and its metatable; t and cap exist from the start
   * so that dispatch only overwrites them (never allocates) */
  lua_createtable(L, 0, 4);
  lua_pushinteger(L, 0);
  lua_setfield(L, -2, "t");
  lua_pushinteger(L, 0);
  lua_setfield(L, -2, "cap");
  lua_createtable(L, 0, 2);
  lua_pushcfunction(L, evt_index);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, evt_newindex);
  lua_setfield(L, -2, "__newindex");
  lua_setmetatable(L, -2);
  lua_newtable(L); /* el.event()'s table */
  lua_createtable(L, 0, 2);
  lua_pushcfunction(L, evl_index);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, evt_newindex);
  lua_setfield(L, -2, "__newindex");
  lua_setmetatable(L, -2);
  h->evl_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  for (int t = 0; t < EL__HOST_NTYPES; t++) {
    const el_ev_type_info_t *ti = el_ev_type_info((uint16_t)t);
    int ints = int_fields(ti);
    int batch = ints && ti && ti->nfields <= EL__BATCH_FIELDS;
    h->direct[t] =
        (uint8_t)((ints ? EL__D_INTS : 0) | (batch ? EL__D_BATCH : 0) |
                  (batch ? ti->nfields << EL__D_NSHIFT : 0));
    h->bkey[t] = batch ? EL__BKEY(ti->nfields) : EL__BKEY_NONE;
  }
  /* the dispatch thread with its fixed slots */
  h->D = lua_newthread(L);
  h->D_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushcfunction(h->D, el__host_traceback);   /* D_TB */
  lua_pushvalue(L, -1);
  lua_xmove(L, h->D, 1);                          /* D_EV */
  lua_pushliteral(h->D, "t");                     /* D_KT */
  lua_pushliteral(h->D, "cap");                   /* D_KCAP */
  h->d_top = D_NSLOTS;
  h->ev_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  /* hooks, and where each was added */
  lua_createtable(L, 0, 8);
  static const char *hooks[] = {"on_header", "on_session", "on_session_end",
                                "on_end"};
  for (size_t i = 0; i < EL_ARRAY_LEN(hooks); i++) {
    lua_newtable(L);
    lua_setfield(L, -2, hooks[i]);
    lua_newtable(L);
    lua_setfield(L, -2, hook_where_key(hooks[i]));
  }
  h->hooks_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  /* an empty session until the first header */
  lua_createtable(L, 0, 2);
  lua_pushinteger(L, 0);
  lua_setfield(L, -2, "number");
  lua_newtable(L);
  lua_setfield(L, -2, "caps");
  lua_pushvalue(L, -1);
  h->session_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_setfield(L, -2, "session");
  lua_pushvalue(L, -1);
  h->mod_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  return 1;
}
