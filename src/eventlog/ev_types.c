/* ev_types.c: the table of known event types and their layouts.
 *
 * Implements spec/eventlog-format.md §2.1 (master table): every GHC id
 * 0-212 that GHC defines, the Eden ids (23/24, 60-69), Mercury (100-113)
 * and perf (140-142). Field names are the spec's payload column. Older
 * layouts (§1.8: STOP_THREAD 6, GC_STATS_GHC 50, NONMOVING_HEAP_CENSUS 13;
 * §2.9 ticky) are extra rows with variant > 0; they deliver the newest
 * layout's fields, absent ones as 0 / empty. */
#include <pthread.h>
#include <string.h>
#include <strings.h>

#include "eventlog_internal.h"

#define U8 EL__W_U8
#define U16 EL__W_U16
#define U32 EL__W_U32
#define U64 EL__W_U64
#define TEXT EL__W_TEXT
#define CSTR EL__W_CSTR

typedef struct {
  const char *n;
  uint8_t w;
} fdef_t;

typedef struct {
  uint16_t id;
  const char *name;
  uint8_t variant;
  fdef_t f[EL_EV_MAX_FIELDS];
} tdef_t;

/* One row per (id, variant). Variant 0 rows define the type info. */
static const tdef_t defs[] = {
    {0, "CREATE_THREAD", 0, {{"thread", U32}}},
    {1, "RUN_THREAD", 0, {{"thread", U32}}},
    {2, "STOP_THREAD", 0, {{"thread", U32}, {"status", U16}, {"info", U32}}},
    {2, "STOP_THREAD", 1, {{"thread", U32}, {"status", U16}}},
    {3, "THREAD_RUNNABLE", 0, {{"thread", U32}}},
    {4, "MIGRATE_THREAD", 0, {{"thread", U32}, {"new_cap", U16}}},
    {5, "RUN_SPARK", 0, {{"thread", U32}}},
    {6, "STEAL_SPARK", 0, {{"thread", U32}, {"victim_cap", U16}}},
    {7, "SHUTDOWN", 0, {{0}}},
    {8, "THREAD_WAKEUP", 0, {{"thread", U32}, {"other_cap", U16}}},
    {9, "GC_START", 0, {{0}}},
    {10, "GC_END", 0, {{0}}},
    {11, "REQUEST_SEQ_GC", 0, {{0}}},
    {12, "REQUEST_PAR_GC", 0, {{0}}},
    {13, "CREATE_SPARK", 0, {{0}}},
    {14, "SPARK_TO_THREAD", 0, {{0}}},
    {15, "CREATE_SPARK_THREAD", 0, {{"spark_thread", U32}}},
    {16, "LOG_MSG", 0, {{"text", TEXT}}},
    {17, "STARTUP", 0, {{"n_caps", U16}}},
    {18, "BLOCK_MARKER", 0,
     {{"block_size", U32}, {"end_time", U64}, {"cap", U16}}},
    {19, "USER_MSG", 0, {{"text", TEXT}}},
    {20, "GC_IDLE", 0, {{0}}},
    {21, "GC_WORK", 0, {{0}}},
    {22, "GC_DONE", 0, {{0}}},
    {23, "VERSION", 0, {{"text", TEXT}}},
    {24, "PROGRAM_INVOCATION", 0, {{"text", TEXT}}},
    {25, "CAPSET_CREATE", 0, {{"capset", U32}, {"capset_type", U16}}},
    {26, "CAPSET_DELETE", 0, {{"capset", U32}}},
    {27, "CAPSET_ASSIGN_CAP", 0, {{"capset", U32}, {"cap", U16}}},
    {28, "CAPSET_REMOVE_CAP", 0, {{"capset", U32}, {"cap", U16}}},
    {29, "RTS_IDENTIFIER", 0, {{"capset", U32}, {"text", TEXT}}},
    {30, "PROGRAM_ARGS", 0, {{"capset", U32}, {"args", EL__W_STRLIST}}},
    {31, "PROGRAM_ENV", 0, {{"capset", U32}, {"env", EL__W_STRLIST}}},
    {32, "OSPROCESS_PID", 0, {{"capset", U32}, {"pid", U32}}},
    {33, "OSPROCESS_PPID", 0, {{"capset", U32}, {"ppid", U32}}},
    {34, "SPARK_COUNTERS", 0,
     {{"created", U64}, {"dud", U64}, {"overflowed", U64},
      {"converted", U64}, {"gcd", U64}, {"fizzled", U64},
      {"remaining", U64}}},
    {35, "SPARK_CREATE", 0, {{0}}},
    {36, "SPARK_DUD", 0, {{0}}},
    {37, "SPARK_OVERFLOW", 0, {{0}}},
    {38, "SPARK_RUN", 0, {{0}}},
    {39, "SPARK_STEAL", 0, {{"victim_cap", U16}}},
    {40, "SPARK_FIZZLE", 0, {{0}}},
    {41, "SPARK_GC", 0, {{0}}},
    {42, "INTERN_STRING", 0, {{"string", EL__W_TEXT_M4}, {"id", U32}}},
    {43, "WALL_CLOCK_TIME", 0,
     {{"capset", U32}, {"unix_sec", U64}, {"nsec", U32}}},
    {44, "THREAD_LABEL", 0, {{"thread", U32}, {"label", TEXT}}},
    {45, "CAP_CREATE", 0, {{"cap", U16}}},
    {46, "CAP_DELETE", 0, {{"cap", U16}}},
    {47, "CAP_DISABLE", 0, {{"cap", U16}}},
    {48, "CAP_ENABLE", 0, {{"cap", U16}}},
    {49, "HEAP_ALLOCATED", 0, {{"heap_capset", U32}, {"alloc_bytes", U64}}},
    {50, "HEAP_SIZE", 0, {{"heap_capset", U32}, {"size_bytes", U64}}},
    {51, "HEAP_LIVE", 0, {{"heap_capset", U32}, {"live_bytes", U64}}},
    {52, "HEAP_INFO_GHC", 0,
     {{"heap_capset", U32}, {"n_generations", U16}, {"max_heap_size", U64},
      {"alloc_area_size", U64}, {"mblock_size", U64}, {"block_size", U64}}},
    {53, "GC_STATS_GHC", 0,
     {{"heap_capset", U32}, {"generation", U16}, {"copied", U64},
      {"slop", U64}, {"frag", U64}, {"par_n_threads", U32},
      {"par_max_copied", U64}, {"par_tot_copied", U64},
      {"par_balanced_copied", U64}}},
    {53, "GC_STATS_GHC", 1,
     {{"heap_capset", U32}, {"generation", U16}, {"copied", U64},
      {"slop", U64}, {"frag", U64}, {"par_n_threads", U32},
      {"par_max_copied", U64}, {"par_tot_copied", U64}}},
    {54, "GC_GLOBAL_SYNC", 0, {{0}}},
    {55, "TASK_CREATE", 0,
     {{"task_id", U64}, {"cap", U16}, {"kernel_tid", U64}}},
    {56, "TASK_MIGRATE", 0,
     {{"task_id", U64}, {"cap", U16}, {"new_cap", U16}}},
    {57, "TASK_DELETE", 0, {{"task_id", U64}}},
    {58, "USER_MARKER", 0, {{"marker", TEXT}}},
    {59, "HACK_BUG_T9003", 0, {{0}}},
    {60, "EDEN_START_RECEIVE", 0, {{0}}},
    {61, "EDEN_END_RECEIVE", 0, {{0}}},
    {62, "CREATE_PROCESS", 0, {{"process", U32}}},
    {63, "KILL_PROCESS", 0, {{"process", U32}}},
    {64, "ASSIGN_THREAD_TO_PROCESS", 0, {{"thread", U32}, {"process", U32}}},
    {65, "CREATE_MACHINE", 0, {{"machine", U16}, {"realtime", U64}}},
    {66, "KILL_MACHINE", 0, {{"machine", U16}}},
    {67, "SEND_MESSAGE", 0,
     {{"tag", U8}, {"sender_process", U32}, {"sender_thread", U32},
      {"receiver_machine", U16}, {"receiver_process", U32},
      {"receiver_inport", U32}}},
    {68, "RECEIVE_MESSAGE", 0,
     {{"tag", U8}, {"receiver_process", U32}, {"receiver_inport", U32},
      {"sender_machine", U16}, {"sender_process", U32},
      {"sender_thread", U32}, {"message_size", U32}}},
    {69, "SEND_RECEIVE_LOCAL_MESSAGE", 0,
     {{"tag", U8}, {"sender_process", U32}, {"sender_thread", U32},
      {"receiver_process", U32}, {"receiver_inport", U32}}},
    {90, "MEM_RETURN", 0,
     {{"heap_capset", U32}, {"current_mblocks", U32},
      {"needed_mblocks", U32}, {"returned_mblocks", U32}}},
    {91, "BLOCKS_SIZE", 0, {{"heap_capset", U32}, {"size_bytes", U64}}},
    {100, "MER_START_PAR_CONJUNCTION", 0,
     {{"dyn_id", U64}, {"static_id", U32}}},
    {101, "MER_STOP_PAR_CONJUNCTION", 0, {{"dyn_id", U64}}},
    {102, "MER_STOP_PAR_CONJUNCT", 0, {{"dyn_id", U64}}},
    {103, "MER_CREATE_SPARK", 0, {{"dyn_id", U64}, {"spark_id", U32}}},
    {104, "MER_FUT_CREATE", 0, {{"future_id", U64}, {"name_id", U32}}},
    {105, "MER_FUT_WAIT_NOSUSPEND", 0, {{"future_id", U64}}},
    {106, "MER_FUT_WAIT_SUSPENDED", 0, {{"future_id", U64}}},
    {107, "MER_FUT_SIGNAL", 0, {{"future_id", U64}}},
    {108, "MER_LOOKING_FOR_GLOBAL_CONTEXT", 0, {{0}}},
    {109, "MER_WORK_STEALING", 0, {{0}}},
    {110, "MER_RELEASE_CONTEXT", 0, {{"thread", U32}}},
    {111, "MER_ENGINE_SLEEPING", 0, {{0}}},
    {112, "MER_LOOKING_FOR_LOCAL_SPARK", 0, {{0}}},
    {113, "MER_CALLING_MAIN", 0, {{0}}},
    {140, "PERF_NAME", 0, {{"perf_num", U32}, {"name", TEXT}}},
    {141, "PERF_COUNTER", 0,
     {{"perf_num", U32}, {"kernel_tid", U64}, {"period", U64}}},
    {142, "PERF_TRACEPOINT", 0, {{"perf_num", U32}, {"kernel_tid", U64}}},
    {160, "HEAP_PROF_BEGIN", 0,
     {{"profile_id", U8}, {"sampling_period_ns", U64}, {"breakdown", U32},
      {"module", CSTR}, {"closure_descr", CSTR}, {"type_descr", CSTR},
      {"cost_centre", CSTR}, {"ccs", CSTR}, {"retainer", CSTR},
      {"biography", CSTR}}},
    {161, "HEAP_PROF_COST_CENTRE", 0,
     {{"cc_id", U32}, {"label", CSTR}, {"module", CSTR}, {"srcloc", CSTR},
      {"flags", U8}}},
    {162, "HEAP_PROF_SAMPLE_BEGIN", 0, {{"era", U64}}},
    {163, "HEAP_PROF_SAMPLE_COST_CENTRE", 0,
     {{"profile_id", U8}, {"residency_bytes", U64},
      {"depth", EL__W_DEPTH}, {"stack", EL__W_STACK}}},
    {164, "HEAP_PROF_SAMPLE_STRING", 0,
     {{"profile_id", U8}, {"residency_bytes", U64}, {"label", CSTR}}},
    {165, "HEAP_PROF_SAMPLE_END", 0, {{"era", U64}}},
    {166, "HEAP_BIO_PROF_SAMPLE_BEGIN", 0,
     {{"era", U64}, {"sample_time_ns", U64}}},
    {167, "PROF_SAMPLE_COST_CENTRE", 0,
     {{"capability", U32}, {"tick", U64}, {"depth", EL__W_DEPTH},
      {"stack", EL__W_STACK}}},
    {168, "PROF_BEGIN", 0, {{"tick_interval_ns", U64}}},
    {169, "IPE", 0,
     {{"info_ptr", U64}, {"table_name", CSTR}, {"closure_desc", CSTR},
      {"ty_desc", CSTR}, {"label", CSTR}, {"module", CSTR},
      {"src_loc", CSTR}}},
    {181, "USER_BINARY_MSG", 0, {{"bytes", EL__W_BYTES}}},
    {200, "CONC_MARK_BEGIN", 0, {{0}}},
    {201, "CONC_MARK_END", 0, {{"marked_objects", U32}}},
    {202, "CONC_SYNC_BEGIN", 0, {{0}}},
    {203, "CONC_SYNC_END", 0, {{0}}},
    {204, "CONC_SWEEP_BEGIN", 0, {{0}}},
    {205, "CONC_SWEEP_END", 0, {{0}}},
    {206, "CONC_UPD_REM_SET_FLUSH", 0, {{"cap", U16}}},
    {207, "NONMOVING_HEAP_CENSUS", 0,
     {{"blk_size", U16}, {"active_segs", U32}, {"filled_segs", U32},
      {"live_blocks", U32}}},
    {207, "NONMOVING_HEAP_CENSUS", 1,
     {{"blk_size", EL__W_LOG2U8}, {"active_segs", U32},
      {"filled_segs", U32}, {"live_blocks", U32}}},
    {208, "NONMOVING_PRUNED_SEGMENTS", 0,
     {{"pruned_segments", U32}, {"free_segments", U32}}},
    {210, "TICKY_COUNTER_DEF", 0,
     {{"counter_id", U64}, {"arity", U16}, {"arg_kinds", CSTR},
      {"name", CSTR}, {"info_tbl", EL__W_OPT_U64},
      {"json", EL__W_OPT_CSTR}}},
    {211, "TICKY_COUNTER_SAMPLE", 0,
     {{"counter_id", U64}, {"entry_count", U64}, {"allocs", U64},
      {"allocd", U64}}},
    {212, "TICKY_COUNTER_BEGIN_SAMPLE", 0, {{0}}},
};

#define NDEFS (sizeof defs / sizeof defs[0])
#define NTYPES 256 /* every known id is below this */

static el__ev_layout_t layouts[NDEFS];
static el_ev_type_info_t infos[NTYPES];
static uint8_t have_info[NTYPES];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static el_ev_kind_t kind_of(uint8_t w) {
  switch (w) {
  case EL__W_TEXT:
  case EL__W_TEXT_M4:
  case EL__W_CSTR:
  case EL__W_OPT_CSTR:
    return EL_EV_TEXT;
  case EL__W_STRLIST:
    return EL_EV_STRLIST;
  case EL__W_STACK:
    return EL_EV_CCS;
  case EL__W_BYTES:
    return EL_EV_BYTES;
  default:
    return EL_EV_U64;
  }
}

static unsigned fixed_size(uint8_t w) {
  switch (w) {
  case EL__W_U8:
  case EL__W_LOG2U8:
  case EL__W_DEPTH:
    return 1;
  case EL__W_U16:
    return 2;
  case EL__W_U32:
    return 4;
  case EL__W_U64:
    return 8;
  case EL__W_TEXT_M4:
    return 0; /* its u32 id is counted separately */
  default:
    return 0;
  }
}

static void build(void) {
  for (size_t i = 0; i < NDEFS; i++) {
    const tdef_t *d = &defs[i];
    el__ev_layout_t *L = &layouts[i];
    L->id = d->id;
    L->variant = d->variant;
    unsigned n = 0, size = 0, var = 0;
    while (n < EL_EV_MAX_FIELDS && d->f[n].n) {
      uint8_t w = d->f[n].w;
      L->wire[n] = w;
      size += fixed_size(w);
      if (!fixed_size(w))
        var = 1;
      n++;
    }
    L->nwire = (uint8_t)n;
    L->nfields = (uint8_t)n;
    L->variable = (uint8_t)var;
    L->min_size = (uint16_t)size;
    L->intonly = 1;
    for (unsigned k = 0; k < n; k++)
      if (L->wire[k] != EL__W_U8 && L->wire[k] != EL__W_U16 &&
          L->wire[k] != EL__W_U32 && L->wire[k] != EL__W_U64 &&
          L->wire[k] != EL__W_LOG2U8)
        L->intonly = 0;
    /* Straight-line shapes (only when no older-variant zero fill). */
    static const uint8_t s_u32[] = {EL__W_U32},
                         s_u32_u16[] = {EL__W_U32, EL__W_U16},
                         s_stop[] = {EL__W_U32, EL__W_U16, EL__W_U32};
    L->shape = EL__SHAPE_GENERIC;
    if (d->variant == 0) {
      if (n == 0)
        L->shape = EL__SHAPE_NONE;
      else if (n == 1 && !memcmp(L->wire, s_u32, 1))
        L->shape = EL__SHAPE_U32;
      else if (n == 2 && !memcmp(L->wire, s_u32_u16, 2))
        L->shape = EL__SHAPE_U32_U16;
      else if (n == 3 && !memcmp(L->wire, s_stop, 3))
        L->shape = EL__SHAPE_U32_U16_U32;
    }
    if (d->variant == 0 && d->id < NTYPES) {
      el_ev_type_info_t *t = &infos[d->id];
      t->id = d->id;
      t->name = d->name;
      t->nfields = (uint8_t)n;
      for (unsigned k = 0; k < n; k++) {
        t->fields[k].name = d->f[k].n;
        t->fields[k].kind = kind_of(d->f[k].w);
      }
      have_info[d->id] = 1;
    }
  }
  /* Older variants deliver the newest layout's field count. */
  for (size_t i = 0; i < NDEFS; i++)
    if (layouts[i].variant && layouts[i].id < NTYPES)
      layouts[i].nfields = infos[layouts[i].id].nfields;
}

const el__ev_layout_t *el__ev_layouts(size_t *n) {
  pthread_once(&once, build);
  *n = NDEFS;
  return layouts;
}

const el_ev_type_info_t *el_ev_type_info(uint16_t id) {
  pthread_once(&once, build);
  return id < NTYPES && have_info[id] ? &infos[id] : NULL;
}

int el_ev_type_by_name(const char *name) {
  if (!name)
    return -1;
  pthread_once(&once, build);
  if (strncasecmp(name, "EVENT_", 6) == 0)
    name += 6;
  for (unsigned i = 0; i < NTYPES; i++)
    if (have_info[i] && strcasecmp(infos[i].name, name) == 0)
      return (int)i;
  return -1;
}

int el_ev_field_index(uint16_t id, const char *name) {
  const el_ev_type_info_t *t = el_ev_type_info(id);
  if (!t || !name)
    return -1;
  for (unsigned i = 0; i < t->nfields; i++)
    if (strcmp(t->fields[i].name, name) == 0)
      return (int)i;
  return -1;
}

/* {====== field decoding ======} */

static const uint8_t *find_nul(const uint8_t *p, const uint8_t *end) {
  const void *z = memchr(p, 0, (size_t)(end - p));
  return z ? (const uint8_t *)z : NULL;
}

int el__ev_decode_fields(const el__ev_layout_t *L, const uint8_t *p,
                         uint32_t len, el_ev_event_t *ev) {
  const uint8_t *q = p, *end = p + len;
  el_ev_value_t *v = ev->v;
  unsigned n = L->nwire;
  ev->layout = L->variant;
  for (unsigned i = 0; i < n; i++, v++) {
    size_t left = (size_t)(end - q);
    switch (L->wire[i]) {
    case EL__W_U8:
    case EL__W_DEPTH:
      if (left < 1)
        return -1;
      v->u = q[0];
      q += 1;
      break;
    case EL__W_LOG2U8:
      if (left < 1)
        return -1;
      v->u = q[0] < 64 ? (uint64_t)1 << q[0] : 0;
      q += 1;
      break;
    case EL__W_U16:
      if (left < 2)
        return -1;
      v->u = el__be16(q);
      q += 2;
      break;
    case EL__W_U32:
      if (left < 4)
        return -1;
      v->u = el__be32(q);
      q += 4;
      break;
    case EL__W_U64:
      if (left < 8)
        return -1;
      v->u = el__be64(q);
      q += 8;
      break;
    case EL__W_OPT_U64:
      if (left == 0) {
        v->u = 0;
        ev->layout = 2;
        break;
      }
      if (left < 8)
        return -1;
      v->u = el__be64(q);
      q += 8;
      break;
    case EL__W_STRLIST:
      /* Every string is followed by a NUL, the last one too (§3.1). */
      if (left && q[left - 1] != 0)
        return -1;
      /* fall through */
    case EL__W_TEXT:
    case EL__W_BYTES:
      v->s.p = (const char *)q;
      v->s.len = left;
      v->u = left;
      q = end;
      break;
    case EL__W_TEXT_M4:
      if (left < 4)
        return -1;
      v->s.p = (const char *)q;
      v->s.len = left - 4;
      v->u = left - 4;
      q += left - 4;
      break;
    case EL__W_OPT_CSTR:
      if (left == 0) {
        v->s.p = NULL;
        v->s.len = 0;
        v->u = 0;
        if (!ev->layout)
          ev->layout = 1;
        break;
      }
      /* fall through */
    case EL__W_CSTR: {
      const uint8_t *z = find_nul(q, end);
      if (!z)
        return -1;
      v->s.p = (const char *)q;
      v->s.len = (size_t)(z - q);
      v->u = v->s.len;
      q = z + 1;
      break;
    }
    case EL__W_STACK: {
      uint64_t depth = v[-1].u;
      if (left < depth * 4)
        return -1;
      v->s.p = (const char *)q;
      v->s.len = depth * 4;
      v->u = depth;
      q += depth * 4;
      break;
    }
    default:
      return -1;
    }
  }
  for (unsigned i = n; i < L->nfields; i++) {
    ev->v[i].u = 0;
    ev->v[i].s.p = NULL;
    ev->v[i].s.len = 0;
  }
  ev->nfields = L->nfields;
  return 0;
}
