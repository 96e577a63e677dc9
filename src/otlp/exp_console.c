/* exp_console.c: the console exporter (exp_console.h). Requests are
 * decoded with protobuf-c and rendered by walking the message descriptors
 * (reflection), so every OTLP message we send is covered by one set of
 * rules; JSON text is produced by jansson (no hand escaping). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio_ext.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "../common/el_arena.h"
#include "../common/el_buf.h"
#include "../common/el_fmt.h"
#include "exp_console.h"
#include "otlp_encode.h"

/* A serialized request waiting for the writer thread (async mode), which
 * renders it as OTLP/JSON and writes it. */
typedef struct line_s {
  struct line_s *next;
  el_tm_signal_t sig;
  size_t nrecords, len;
  char s[]; /* the request's len bytes */
} line_t;

struct el_otlp_console_s {
  FILE *out;
  size_t max_bytes;
  el_tm_store_t *st;
  uint64_t lines;
  /* Async mode (el_otlp_console_start_writer): lines go through a queue
   * of at most max_queued bytes to a writer thread, so that a slow or
   * stuck reader of out never blocks the loop. Under mu: */
  int async;
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t work, idle;
  line_t *head, *tail;
  size_t queued, max_queued;
  int to_file; /* a full queue makes the loop wait, not drop, and the
                  shutdown waits for every line (el_otlp_console_shutdown):
                  out never blocks (a regular file, /dev/null), or
                  reader */
  int reader;  /* to_file for a recorded file's replay into a pipe or
                  terminal (EL_OTLP_CONSOLE_WAIT_READER): the waits end at
                  a signal (*stop) */
  const volatile sig_atomic_t *stop; /* el_otlp_console_set_stop; NULL */
  uint64_t stop_dropped; /* records dropped after a stop (loop thread) */
  uint64_t stop_lost;    /* stop_dropped and, for a reader, what the
                            shutdown gave up after a signal (loop thread:
                            el_otlp_console_dropped_stopped) */
  int closing, busy;
  line_t *cur;     /* the line in the writer's hands (busy) */
  int writing;     /* the writer is writing cur (or waiting to start it),
                      not rendering */
  int inflight;    /* a pipe write that cannot block is under way
                      (put_pipe): its outcome is known at once */
  int cur_whole;   /* cur is written whole (set with inflight's end) */
  int abandoned;   /* the shutdown gave up what was left: write no more */
  int cur_counted; /* cur was counted as not written when abandoned */
  int werr;        /* errno of the first failed write */
  /* The writer writes fd = fileno(out) with write(2), not stdio, so that
   * it can wait for room in a pipe without being stuck in a write, and
   * the exit's flush of stdout finds nothing to write. Writer only: */
  int fd;
  int is_pipe;          /* a pipe or FIFO: a line starts only when it fits */
  size_t page;          /* the pipe's slot size (the page size) */
  uint64_t pipe_writes; /* our writes since the pipe was last seen empty */
  size_t room_known;    /* bytes the pipe surely takes without a write
                           blocking: pipe_room's last answer less the slots
                           our writes since may have filled (room_took) */
  int nowait;           /* pwritev2(RWF_NOWAIT) on fd: 0 untried, 1 works, -1
                 refused (kernels before 6.4, named FIFOs): writev */
  int no_grow;          /* F_SETPIPE_SZ refused: the pipe keeps its size */
  uint64_t lost[EL_TM_NSIGNALS]; /* records of failed writes, not
                                            yet counted in the store */
  /* loop thread only */
  uint64_t dropped[EL_TM_NSIGNALS]; /* records counted as dropped */
  uint64_t closed; /* of those, after stdout's reader had gone (EPIPE) */
  int warned_err;
  uint64_t full_dropped, full_warned_ms; /* dropped at a full queue */
  /* the memory of every render (el_otlp_json_in), kept from one request
   * to the next: used by the thread that renders (the loop, or the writer
   * thread in async mode) */
  el_arena_t render;
};

/* {====== protobuf -> OTLP/JSON ======} */

/* The memory of a render. A request of a few MB unpacks into tens of
 * thousands of protobuf-c messages and becomes a jansson tree of hundreds
 * of thousands of values; a malloc and a free for each made malloc the
 * console's largest cost (perf: about half of it, with the page faults of
 * the heap growing and shrinking per request). Both come from one arena
 * instead, forgotten at once when the line is made (el_otlp_json_in):
 *  - protobuf-c takes an allocator per call (pb_arena_alloc);
 *  - jansson has one allocator for the whole process
 *    (json_set_alloc_funcs), which other threads use too (src/control,
 *    plugins bound to the binary's copy). Ours is installed once, before
 *    main (render_setup, a constructor: no thread runs yet, so jansson's
 *    unsynchronised function pointers are never written while another
 *    thread reads them), and is malloc/free, jansson's default, except on
 *    a thread whose render_arena is set: there every allocation comes from
 *    that arena and every free does nothing. That is safe because while it
 *    is set the thread runs el_otlp_json_in's jansson calls only, which make
 *    and free only values made since it was set (no value made before or
 *    elsewhere is touched: a malloc'd block is never "freed" into the
 *    no-op), and nothing made in the arena escapes it: the tree is never
 *    freed by jansson after render_arena is cleared, it is forgotten with
 *    the arena. Other threads see their own render_arena (NULL): malloc
 *    and free, as before. Nothing else may call json_set_alloc_funcs. */
static _Thread_local el_arena_t *render_arena;

static void *json_alloc(size_t n) {
  el_arena_t *a = render_arena;
  return a ? el_arena_alloc(a, n) : malloc(n);
}

static void json_release(void *p) {
  if (!render_arena) free(p);
}

static void *pb_arena_alloc(void *ud, size_t n) {
  return el_arena_alloc(ud, n);
}
static void pb_arena_free(void *ud, void *p) {
  (void)ud; /* forgotten with the arena */
  (void)p;
}

/* "time_unix_nano" -> "timeUnixNano" into buf. */
static const char *camel(const char *name, char *buf, size_t size) {
  size_t j = 0;
  bool up = false;
  for (const char *p = name; *p && j + 1 < size; p++) {
    if (*p == '_') {
      up = true;
      continue;
    }
    buf[j++] = up && *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p;
    up = false;
  }
  buf[j] = '\0';
  return buf;
}

/* OTLP writes these bytes fields as hex, all others as base64. */
static bool hex_field(const char *name) {
  return strcmp(name, "trace_id") == 0 || strcmp(name, "span_id") == 0 ||
         strcmp(name, "parent_span_id") == 0;
}

/* What message_json needs of a field beyond its descriptor, made once for
 * every field of every message an OTLP request can hold (field_tables_make,
 * at the first render; read-only afterwards, so any thread reads it): the JSON key
 * and whether bytes go as hex. Static pools, no heap; a message that does
 * not fit is left out, and message_json computes its keys per use. */
typedef struct field_info_s {
  const char *key; /* camel(name): ASCII */
  size_t key_len;
  bool hex;
} field_info_t;

typedef struct msg_info_s {
  const ProtobufCMessageDescriptor *d; /* NULL: a free slot */
  const field_info_t *fields;          /* [d->n_fields] */
} msg_info_t;

#define MSG_SLOTS 256 /* 2^8 (msg_slot); at most half used (OTLP: ~70) */
static msg_info_t msg_tab[MSG_SLOTS];
static size_t msg_count;
static field_info_t field_pool[1024];
static size_t field_used;
static char key_pool[16384];
static size_t key_used;

static size_t msg_slot(const ProtobufCMessageDescriptor *d) {
  return (size_t)(((uint64_t)(uintptr_t)d * 0x9E3779B97F4A7C15u) >> 56);
}

/* The field table of d, or NULL when d was left out. */
static const field_info_t *msg_fields(const ProtobufCMessageDescriptor *d) {
  for (size_t i = msg_slot(d);; i = (i + 1) & (MSG_SLOTS - 1)) {
    if (msg_tab[i].d == d) return msg_tab[i].fields;
    if (!msg_tab[i].d) return NULL;
  }
}

/* Add d and the messages its fields hold to msg_tab (once each). */
static void field_table_add(const ProtobufCMessageDescriptor *d) {
  size_t i = msg_slot(d);
  for (; msg_tab[i].d; i = (i + 1) & (MSG_SLOTS - 1))
    if (msg_tab[i].d == d) return;
  if (msg_count >= MSG_SLOTS / 2 ||
      d->n_fields > sizeof field_pool / sizeof *field_pool - field_used)
    return;
  field_info_t *fi = field_pool + field_used;
  for (unsigned n = 0; n < d->n_fields; n++) {
    char key[64];
    size_t len = strlen(camel(d->fields[n].name, key, sizeof key));
    if (len + 1 > sizeof key_pool - key_used) return;
    fi[n].key = memcpy(key_pool + key_used, key, len + 1);
    fi[n].key_len = len;
    fi[n].hex = hex_field(d->fields[n].name);
    key_used += len + 1;
  }
  field_used += d->n_fields;
  msg_tab[i] = (msg_info_t){d, fi};
  msg_count++;
  for (unsigned n = 0; n < d->n_fields; n++)
    if (d->fields[n].type == PROTOBUF_C_TYPE_MESSAGE)
      field_table_add(d->fields[n].descriptor);
}

/* The field tables, made once at the first render (pthread_once in
 * el_otlp_json_in): a command that renders nothing (show, stats, --help)
 * does not pay their 180,000 instructions and page faults at start-up. */
static pthread_once_t field_tables_once = PTHREAD_ONCE_INIT;

static void field_tables_make(void) {
  for (int s = 0; s < EL_TM_NSIGNALS; s++) {
    const ProtobufCMessageDescriptor *d =
        el_otlp_request_descriptor((el_tm_signal_t)s);
    if (d) field_table_add(d);
  }
}

/* Before main (a constructor), while the process has one thread: install
 * the render allocator in jansson (before any thread uses jansson). */
__attribute__((constructor)) static void render_setup(void) {
  json_set_alloc_funcs(json_alloc, json_release);
}

/* json_dump_callback's sink: append to the el_buf_t at ud. Called per
 * token: the common case (room left, the NUL written at the end by
 * el_otlp_json_in) is a memcpy. */
static int text_put(const char *s, size_t n, void *ud) {
  el_buf_t *t = ud;
  if (n < t->cap - t->len) {
    memcpy(t->p + t->len, s, n);
    t->len += n;
    return 0;
  }
  el_buf_put(t, s, n);
  return t->oom ? -1 : 0;
}

/* A JSON string of ASCII text s[0..n) (digits, hex, base64, "NaN"):
 * valid UTF-8, so jansson's check is skipped. */
static json_t *ascii_json(const char *s, size_t n) {
  return json_stringn_nocheck(s, n);
}

static json_t *bytes_json(const ProtobufCBinaryData *b, bool hex) {
  static const char b64[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t cap = hex ? 2 * b->len + 1 : 4 * ((b->len + 2) / 3) + 1;
  char small[128]; /* ids: 16 bytes of trace id, 8 of span id */
  char *s = cap <= sizeof small ? small : el_malloc(cap);
  if (!s) return NULL;
  size_t j = 0;
  if (hex) {
    j = (size_t)(el_fmt_hex(s, b->data, b->len) - s);
  } else {
    for (size_t i = 0; i < b->len; i += 3) {
      uint32_t v = (uint32_t)b->data[i] << 16;
      if (i + 1 < b->len) v |= (uint32_t)b->data[i + 1] << 8;
      if (i + 2 < b->len) v |= b->data[i + 2];
      s[j++] = b64[v >> 18 & 63];
      s[j++] = b64[v >> 12 & 63];
      s[j++] = i + 1 < b->len ? b64[v >> 6 & 63] : '=';
      s[j++] = i + 2 < b->len ? b64[v & 63] : '=';
    }
  }
  json_t *r = ascii_json(s, j);
  if (s != small) el_free(s);
  return r;
}

static json_t *double_json(double d) {
  if (isnan(d)) return ascii_json("NaN", 3);
  if (isinf(d))
    return d > 0 ? ascii_json("Infinity", 8) : ascii_json("-Infinity", 9);
  return json_real(d);
}

static json_t *i64_json(int64_t v) {
  char buf[EL_FMT_I64_ROOM];
  return ascii_json(buf, (size_t)(el_fmt_i64(buf, v) - buf));
}

static json_t *u64_json(uint64_t v) {
  char buf[EL_FMT_U64_ROOM];
  return ascii_json(buf, (size_t)(el_fmt_u64(buf, v) - buf));
}

static json_t *message_json(const ProtobufCMessage *m);

/* One value of field f stored at p (an element, for repeated fields);
 * hex: bytes as hex, not base64. */
static json_t *value_json(const ProtobufCFieldDescriptor *f, const void *p,
                          bool hex) {
  switch (f->type) {
  case PROTOBUF_C_TYPE_INT32:
  case PROTOBUF_C_TYPE_SINT32:
  case PROTOBUF_C_TYPE_SFIXED32:
  case PROTOBUF_C_TYPE_ENUM:
    return json_integer(*(const int32_t *)p);
  case PROTOBUF_C_TYPE_UINT32:
  case PROTOBUF_C_TYPE_FIXED32:
    return json_integer(*(const uint32_t *)p);
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_SFIXED64:
    return i64_json(*(const int64_t *)p);
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_FIXED64:
    return u64_json(*(const uint64_t *)p);
  case PROTOBUF_C_TYPE_FLOAT:
    return double_json(*(const float *)p);
  case PROTOBUF_C_TYPE_DOUBLE:
    return double_json(*(const double *)p);
  case PROTOBUF_C_TYPE_BOOL:
    return json_boolean(*(const protobuf_c_boolean *)p);
  case PROTOBUF_C_TYPE_STRING: {
    /* Not checked here: the store makes the strings it copies valid
     * UTF-8 (tm_intern.c), but el_otlp_json takes any bytes and protobuf-c
     * does not check UTF-8. jansson's dump checks every string it writes
     * all the same (utf8_iterate) and fails on invalid UTF-8, so such a
     * request still renders as NULL, as when json_string refused it. */
    const char *s = *(char *const *)p;
    return s ? json_stringn_nocheck(s, strlen(s)) : ascii_json("", 0);
  }
  case PROTOBUF_C_TYPE_BYTES:
    return bytes_json(p, hex);
  case PROTOBUF_C_TYPE_MESSAGE: {
    const ProtobufCMessage *sub = *(ProtobufCMessage *const *)p;
    return sub ? message_json(sub) : json_object();
  }
  }
  return NULL;
}

static size_t type_size(ProtobufCType t) {
  switch (t) {
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_SFIXED64:
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_FIXED64:
  case PROTOBUF_C_TYPE_DOUBLE:
    return 8;
  case PROTOBUF_C_TYPE_BOOL:
    return sizeof(protobuf_c_boolean);
  case PROTOBUF_C_TYPE_STRING:
  case PROTOBUF_C_TYPE_MESSAGE:
    return sizeof(void *);
  case PROTOBUF_C_TYPE_BYTES:
    return sizeof(ProtobufCBinaryData);
  default:
    return 4;
  }
}

/* Whether a singular field without presence holds its default value. */
static bool is_default(const ProtobufCFieldDescriptor *f, const void *p) {
  switch (f->type) {
  case PROTOBUF_C_TYPE_STRING: {
    const char *s = *(char *const *)p;
    return !s || !*s;
  }
  case PROTOBUF_C_TYPE_BYTES:
    return ((const ProtobufCBinaryData *)p)->len == 0;
  case PROTOBUF_C_TYPE_MESSAGE:
    return *(void *const *)p == NULL;
  case PROTOBUF_C_TYPE_DOUBLE:
    return *(const double *)p == 0.0 && !signbit(*(const double *)p);
  case PROTOBUF_C_TYPE_FLOAT:
    return *(const float *)p == 0.0f && !signbit(*(const float *)p);
  default: {
    static const unsigned char zero[8];
    return memcmp(p, zero, type_size(f->type)) == 0;
  }
  }
}

/* The JSON value of field f of the message at base, or NULL with *skip
 * set when the field is not written (default, unset, empty), or NULL when
 * out of memory or a string is not UTF-8. */
static json_t *field_json(const ProtobufCFieldDescriptor *f, const char *base,
                          bool hex, bool *skip) {
  const void *p = base + f->offset;
  *skip = true;
  if (f->label == PROTOBUF_C_LABEL_REPEATED) {
    size_t cnt = *(const size_t *)(base + f->quantifier_offset);
    if (cnt == 0) return NULL;
    *skip = false;
    const char *arr = *(char *const *)p;
    json_t *v = json_array();
    if (!v) return NULL;
    for (size_t i = 0; i < cnt; i++) {
      json_t *e = value_json(f, arr + i * type_size(f->type), hex);
      if (!e || json_array_append_new(v, e) < 0) {
        json_decref(v);
        return NULL;
      }
    }
    return v;
  }
  if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
    if (*(const uint32_t *)(base + f->quantifier_offset) != f->id) return NULL;
  } else if (f->label == PROTOBUF_C_LABEL_OPTIONAL &&
             f->type != PROTOBUF_C_TYPE_MESSAGE &&
             f->type != PROTOBUF_C_TYPE_STRING) {
    if (!*(const protobuf_c_boolean *)(base + f->quantifier_offset))
      return NULL;
  } else if (is_default(f, p)) {
    return NULL;
  }
  *skip = false;
  return value_json(f, p, hex);
}

static json_t *message_json(const ProtobufCMessage *m) {
  const ProtobufCMessageDescriptor *d = m->descriptor;
  const field_info_t *fi = msg_fields(d);
  json_t *obj = json_object();
  if (!obj) return NULL;
  /* protobuf-c sorts fields[] by number: the JSON follows that order. */
  for (unsigned n = 0; n < d->n_fields; n++) {
    const ProtobufCFieldDescriptor *f = &d->fields[n];
    bool skip;
    json_t *v = field_json(f, (const char *)m,
                           fi ? fi[n].hex : hex_field(f->name), &skip);
    if (skip) continue;
    char buf[64];
    const char *key = fi ? fi[n].key : camel(f->name, buf, sizeof buf);
    /* keys are ASCII (protobuf field names): jansson's check is skipped */
    if (!v || json_object_setn_new_nocheck(
                  obj, key, fi ? fi[n].key_len : strlen(key), v) < 0) {
      json_decref(obj);
      return NULL;
    }
  }
  return obj;
}

/* OTLP/JSON is about 2.7 times the protobuf bytes of spans (more for
 * metrics): one reservation holds most lines, without regrowing. */
#define TEXT_PER_BYTE 3

/* The unpacked request and the jansson tree live in a (see render_arena).
 * NULL also when a string is not UTF-8. */
char *el_otlp_json_in(el_arena_t *a, el_tm_signal_t sig, const uint8_t *bytes,
                      size_t len) {
  const ProtobufCMessageDescriptor *d = el_otlp_request_descriptor(sig);
  if (!d) return NULL;
  pthread_once(&field_tables_once, field_tables_make);
  ProtobufCAllocator pa = {pb_arena_alloc, pb_arena_free, a};
  ProtobufCMessage *m = protobuf_c_message_unpack(d, &pa, len, bytes);
  el_buf_t t = EL_BUF_INIT;
  int rc = -1;
  if (m) {
    render_arena = a; /* jansson's allocations: from a, frees: none */
    json_t *j = message_json(m);
    if (j && len <= SIZE_MAX / TEXT_PER_BYTE - 256 &&
        el_buf_reserve(&t, TEXT_PER_BYTE * len + 256))
      rc = json_dump_callback(j, text_put, &t,
                              JSON_COMPACT | JSON_PRESERVE_ORDER);
    render_arena = NULL; /* (j is forgotten with a, never freed) */
  }
  el_arena_reset(a);
  if (rc != 0 || t.oom) {
    el_buf_free(&t);
    return NULL;
  }
  el_buf_commit(&t, 0); /* the NUL text_put leaves out */
  return el_buf_take(&t);
}

char *el_otlp_json(el_tm_signal_t sig, const uint8_t *bytes, size_t len) {
  el_arena_t a = {0};
  char *s = el_otlp_json_in(&a, sig, bytes, len);
  el_arena_free(&a);
  return s;
}

/* {====== the exporter ======} */

typedef struct line_ctx_s {
  el_otlp_console_t *c;
  el_tm_signal_t sig;
  size_t handled;                     /* records written or counted */
  size_t lost;                        /* of those, dropped on a failed
                                         write */
} line_ctx_t;

/* Count n records of sig dropped, in the store and here (loop thread). */
static void drop(el_otlp_console_t *c, el_tm_signal_t sig, uint64_t n) {
  c->dropped[sig] += n;
  if (c->werr == EPIPE) c->closed += n;
  el_tm_store_count_dropped(c->st, sig, n);
}

/* {====== async writing ======} */

/* Monotonic milliseconds, for the rate of the queue-full warning. */
static uint64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The CLOCK_REALTIME time ms milliseconds from now, for a timed wait. */
static struct timespec realtime_in(int ms) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  t.tv_sec += ms / 1000;
  t.tv_nsec += (long)(ms % 1000) * 1000000L;
  if (t.tv_nsec >= 1000000000L) {
    t.tv_sec++;
    t.tv_nsec -= 1000000000L;
  }
  return t;
}

/* {====== writing a line ======} */

/* At most this big we grow a pipe (F_SETPIPE_SZ) so that a line fits it
 * whole: the default /proc/sys/fs/pipe-max-size, what any process may
 * ask for. */
#define PIPE_GROW_MAX ((size_t)1 << 20)

/* What became of a line (put_pipe, put_all; < 0: a negated errno). */
enum { PUT_WHOLE = 0, PUT_NONE = 1, PUT_CUT = 2 };

/* iov for the bytes [off, off + len) of the line s[0..m) "\n". Returns
 * how many of iov[0..2) it filled. */
static int line_iov(const char *s, size_t m, size_t off, size_t len,
                    struct iovec iov[2]) {
  int k = 0;
  if (off < m) {
    size_t a = m - off < len ? m - off : len;
    iov[k++] = (struct iovec){(void *)(s + off), a};
    len -= a;
  }
  if (len) iov[k++] = (struct iovec){(void *)"\n", 1};
  return k;
}

/* Write the bytes [off, off + len) of the line s[0..m) "\n" to c->fd
 * once, without blocking where the kernel allows it (pwritev2 with
 * RWF_NOWAIT: anonymous pipes since Linux 6.4; else a plain writev, which
 * the room put_pipe waited for keeps from blocking). Returns the bytes
 * written, maybe fewer than len, or -1 with errno (EAGAIN: none). Writer
 * thread. */
static ssize_t put_some(el_otlp_console_t *c, const char *s, size_t m,
                        size_t off, size_t len) {
  struct iovec iov[2];
  int k = line_iov(s, m, off, len, iov);
  for (;;) {
    ssize_t r;
#ifdef RWF_NOWAIT
    if (c->nowait >= 0) {
      r = pwritev2(c->fd, iov, k, -1, RWF_NOWAIT);
      if (r < 0 &&
          (errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL)) {
        c->nowait = -1;
        continue;
      }
      if (r >= 0) c->nowait = 1;
    } else
#endif
      r = writev(c->fd, iov, k);
    if (r >= 0 || errno != EINTR) return r;
  }
}

/* Write the line s[0..m) "\n" to c->fd to its end, blocking (a file,
 * a terminal, a socket). Returns PUT_WHOLE or a negated errno. Writer
 * thread. */
static int put_all(el_otlp_console_t *c, const char *s, size_t m) {
  for (size_t n = m + 1, done = 0; done < n;) {
    struct iovec iov[2];
    ssize_t r = writev(c->fd, iov, line_iov(s, m, done, n - done, iov));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return r < 0 ? -errno : -EIO;
    done += (size_t)r;
  }
  return PUT_WHOLE;
}

/* Bytes the pipe c->fd surely takes now without a write blocking, for a
 * line of want bytes, which the pipe is first grown to hold (at most
 * PIPE_GROW_MAX, when the kernel lets us); *empty: nothing in it is
 * unread. A pipe holds its bytes in slots of a page: besides full slots,
 * each write leaves at most one slot part filled and the reader at most
 * one part read, so U bytes unread after W of our writes take at most
 * U / page + W + 1 slots (another writer into the same pipe can make this
 * too few: a write then takes part of the line, without blocking). Writer
 * thread. */
static size_t pipe_room(el_otlp_console_t *c, size_t want, int *empty) {
  int cap = fcntl(c->fd, F_GETPIPE_SZ), unread = 0;
  *empty = 0;
  c->room_known = 0;
  if (cap <= 0 || ioctl(c->fd, FIONREAD, &unread) != 0 || unread < 0)
    return want; /* cannot tell: write it (as a blocking write would) */
  if (want > (size_t)cap && (size_t)cap < PIPE_GROW_MAX && !c->no_grow) {
    int r = fcntl(c->fd, F_SETPIPE_SZ,
                  (int)(want < PIPE_GROW_MAX ? want : PIPE_GROW_MAX));
    if (r > 0)
      cap = r;
    else
      c->no_grow = 1;
  }
  if (unread == 0) {
    *empty = 1;
    c->pipe_writes = 0;
    return c->room_known = (size_t)cap;
  }
  size_t slots = (size_t)cap / c->page;
  size_t used = (size_t)unread / c->page + c->pipe_writes + 1;
  return c->room_known = used < slots ? (slots - used) * c->page : 0;
}

/* Our write of r bytes (of take asked) into the pipe: room_known less
 * the slots it may have filled. A pipe write fills at most r / page
 * slots, rounded up, beyond the part-filled slot it may merge into (the
 * reader only frees slots), so room_known stays a bound; a short write
 * (another writer?) forgets it. Writer thread. */
static void room_took(el_otlp_console_t *c, size_t r, size_t take) {
  size_t filled = (r + c->page - 1) / c->page * c->page;
  c->room_known =
      r < take || filled > c->room_known ? 0 : c->room_known - filled;
}

/* Whether the pipe c->fd has no reader left: poll(2) sets POLLERR on a
 * pipe's write end once its read end is closed (on Linux for a named FIFO
 * too). A write would fail with EPIPE, and the bytes the last reader left
 * unread hold their room for good: waiting for room would last until the
 * shutdown budget ran out. Asked only when about to wait for room, so it
 * costs one system call per wait, none per line written. Writer
 * thread. */
static int reader_gone(el_otlp_console_t *c) {
  struct pollfd pf = {.fd = c->fd, .events = POLLOUT};
  return poll(&pf, 1, 0) == 1 && (pf.revents & POLLERR) != 0;
}

/* Whether a line of n bytes, not started, may be written without asking
 * the pipe for its room (pipe_room's two system calls): it fits in the
 * room known (room_took), or it is at most PIPE_BUF bytes and the write
 * cannot block (RWF_NOWAIT: all or nothing, EAGAIN when no room). Writer
 * thread. */
static int fits_unasked(el_otlp_console_t *c, size_t n) {
  return (n <= PIPE_BUF && c->nowait > 0) ||
         (n + c->page - 1) / c->page * c->page <= c->room_known;
}

/* Write the line s[0..m) "\n" to the pipe c->fd, never blocking in a
 * write (put_some; pipe_room when RWF_NOWAIT is refused), so that the
 * shutdown's giving up (abandoned) never leaves a line cut: the line
 * starts only when the pipe takes it whole (pipe_room),
 * waiting for the reader meanwhile; a line larger than the pipe can hold
 * starts when the pipe is empty and goes in pieces as the reader takes
 * them: only such a line can be cut, by a reader that stops in its
 * middle. A reader that went away ends the wait (reader_gone; a write
 * fails at once). Returns PUT_WHOLE, PUT_NONE (given up before its start),
 * PUT_CUT (given up after) or a negated errno (-EPIPE: a closed pipe). Sets
 * c->cur_whole when written whole, with c->inflight's end, under mu.
 * Writer thread; mu not held. */
static int put_pipe(el_otlp_console_t *c, const char *s, size_t m) {
  size_t n = m + 1, done = 0;
  int ms = 1; /* the wait for room, doubled up to 50 ms while none */
  pthread_mutex_lock(&c->mu);
  for (;;) { /* mu held here */
    if (c->abandoned) {
      pthread_mutex_unlock(&c->mu);
      return done ? PUT_CUT : PUT_NONE;
    }
    pthread_mutex_unlock(&c->mu);
    int empty = 0, unasked = !done && fits_unasked(c, n);
    size_t room = unasked ? n : pipe_room(c, n, &empty), take = 0;
    if (unasked)
      take = n;
    else if (done && c->nowait > 0)
      take = n - done; /* started: the kernel takes what fits, not blocking */
    else if (done || empty)
      take = n - done < room ? n - done : room;
    else if (room >= n || (n <= PIPE_BUF && c->nowait > 0))
      take = n; /* (a non-blocking write of PIPE_BUF is all or nothing) */
    if (!take && reader_gone(c))
      return -EPIPE; /* as the write would say: out is broken */
    ssize_t r = 0;
    int e = 0;
    pthread_mutex_lock(&c->mu);
    if (take && !c->abandoned) {
      c->inflight = 1;
      pthread_mutex_unlock(&c->mu);
      r = put_some(c, s, m, done, take);
      e = r < 0 && errno != EAGAIN ? errno : 0;
      if (r > 0) {
        done += (size_t)r;
        c->pipe_writes++;
        room_took(c, (size_t)r, take);
        ms = 1;
      }
      pthread_mutex_lock(&c->mu);
      c->inflight = 0;
      c->cur_whole = done == n;
      pthread_cond_broadcast(&c->idle);
      if (e || done == n) {
        pthread_mutex_unlock(&c->mu);
        return e ? -e : PUT_WHOLE;
      }
    }
    if (r <= 0 && !c->abandoned && done && c->nowait > 0) {
      /* a line under way: on until the reader makes room (poll's POLLOUT:
       * a free slot), 50 ms at most (abandon waits no longer) */
      pthread_mutex_unlock(&c->mu);
      struct pollfd pf = {.fd = c->fd, .events = POLLOUT};
      (void)poll(&pf, 1, 50);
      pthread_mutex_lock(&c->mu);
    } else if (r <= 0 && !c->abandoned) { /* no room: wait, or be woken */
      struct timespec until = realtime_in(ms);
      pthread_cond_timedwait(&c->work, &c->mu, &until);
      ms = ms < 50 ? 2 * ms : 50;
    }
  }
}

/* The writer thread: renders and writes the queued requests in order,
 * one line each (into a pipe: put_pipe, whole or not at all). After a
 * failed write it writes nothing more (out is broken: a closed pipe); the
 * requests still queued then are counted as lost. A line rendered after
 * the shutdown gave up (abandoned) is not written, and one given up while
 * waiting for the pipe is not finished: abandon counted them. */
static void *writer_main(void *ud) {
  el_otlp_console_t *c = ud;
  pthread_mutex_lock(&c->mu);
  for (;;) {
    while (!c->head && !c->closing) pthread_cond_wait(&c->work, &c->mu);
    line_t *l = c->head;
    if (!l) break; /* closing, nothing left */
    c->head = l->next;
    if (!c->head) c->tail = NULL;
    c->busy = 1;
    c->cur = l;
    int werr = c->werr;
    pthread_mutex_unlock(&c->mu);
    int e = 0, lost = werr != 0;
    char *js = werr ? NULL
                    : el_otlp_json_in(&c->render, l->sig, (const uint8_t *)l->s,
                                      l->len);
    if (!werr && !js) lost = 1; /* not rendered (out of memory) */
    pthread_mutex_lock(&c->mu);
    int write = js && !c->abandoned;
    c->writing = write;
    pthread_mutex_unlock(&c->mu);
    int put = PUT_NONE;
    if (write) {
      put =
          c->is_pipe ? put_pipe(c, js, strlen(js)) : put_all(c, js, strlen(js));
      if (put < 0) {
        e = -put;
        lost = 1;
      }
    }
    el_free(js);
    pthread_mutex_lock(&c->mu);
    if (put == PUT_NONE || put == PUT_CUT) /* given up: abandon counts */
      while (write && !c->cur_counted) pthread_cond_wait(&c->work, &c->mu);
    c->busy = c->writing = c->cur_whole = 0;
    c->cur = NULL;
    c->queued -= l->len;
    if (e && !c->werr) c->werr = e;
    if (c->cur_counted)
      c->cur_counted = 0; /* counted as not written by the shutdown */
    else if (lost)
      c->lost[l->sig] += l->nrecords;
    else if (write)
      c->lines++;
    free(l);
    pthread_cond_broadcast(&c->idle);
  }
  pthread_mutex_unlock(&c->mu);
  return NULL;
}

int el_otlp_console_start_writer(el_otlp_console_t *c, size_t max_queued,
                                 int to_file) {
  int fd = fileno(c->out);
  if (fd < 0) return EL_EINVAL;
  fflush(c->out); /* what stdio holds goes first */
  struct stat st;
  long page = sysconf(_SC_PAGESIZE);
  c->fd = fd;
  c->is_pipe = fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) &&
               fcntl(fd, F_GETPIPE_SZ) > 0;
  c->page = page > 0 ? (size_t)page : 4096;
  c->max_queued = max_queued;
  c->to_file = to_file != 0;
  c->reader = to_file == EL_OTLP_CONSOLE_WAIT_READER;
  if (pthread_mutex_init(&c->mu, NULL) != 0) return EL_ENOMEM;
  if (pthread_cond_init(&c->work, NULL) != 0 ||
      pthread_cond_init(&c->idle, NULL) != 0 ||
      pthread_create(&c->th, NULL, writer_main, c) != 0)
    return EL_ENOMEM; /* (the few bytes of a half-made mutex are kept) */
  c->async = 1;
  return 0;
}

void el_otlp_console_set_stop(el_otlp_console_t *c,
                              const volatile sig_atomic_t *stop) {
  c->stop = stop;
}

/* Loop thread: count in the store the records the writer lost, and say
 * once why writing failed. */
static void take_lost(el_otlp_console_t *c) {
  uint64_t lost[EL_TM_NSIGNALS];
  pthread_mutex_lock(&c->mu);
  memcpy(lost, c->lost, sizeof lost);
  memset(c->lost, 0, sizeof c->lost);
  int werr = c->werr;
  pthread_mutex_unlock(&c->mu);
  for (int s = 0; s < EL_TM_NSIGNALS; s++)
    if (lost[s]) drop(c, (el_tm_signal_t)s, lost[s]);
  if (werr && !c->warned_err) {
    c->warned_err = 1;
    el_log(EL_LOG_WARN,
           "console: writing the output failed: %s; the console "
           "output is dropped from now on (counted)",
           strerror(werr));
  }
}

/* Queue the serialized request bytes[0..len) of nrecords records of sig
 * for the writer, which renders and writes it; dropped and counted when
 * the queue is full or the output broken. Rendering happens on the writer
 * thread too: OTLP/JSON is several times the bytes of the request and
 * slow to make (spans: ~90 MB/s of it), and a live program must not wait
 * for that either. */
static void queue_request(el_otlp_console_t *c, el_tm_signal_t sig,
                          const uint8_t *bytes, size_t len, size_t nrecords) {
  pthread_mutex_lock(&c->mu);
  /* Waiting: until the request fits, or the queue is empty (a request
   * larger than the bound alone), or the output broke; for a reader, a
   * signal ends the wait (checked every 100 ms: it may have come before
   * the wait began), and then a request that does not fit is dropped. */
  int stopped = 0;
  while (c->to_file && !c->werr && !c->abandoned && c->head &&
         c->queued + len > c->max_queued) {
    if (!c->reader || !c->stop) {
      pthread_cond_wait(&c->idle, &c->mu);
      continue;
    }
    if ((stopped = *c->stop != 0)) break;
    struct timespec until = realtime_in(100);
    pthread_cond_timedwait(&c->idle, &c->mu, &until);
  }
  int broken = c->werr != 0 || c->abandoned;
  int full = c->head && c->queued + len > c->max_queued;
  pthread_mutex_unlock(&c->mu);
  line_t *l = NULL;
  if (!broken && !full && (l = malloc(sizeof *l + len)) != NULL) {
    memcpy(l->s, bytes, len);
    l->len = len;
    l->sig = sig;
    l->nrecords = nrecords;
    l->next = NULL;
    pthread_mutex_lock(&c->mu);
    if (c->tail)
      c->tail->next = l;
    else
      c->head = l;
    c->tail = l;
    c->queued += len;
    pthread_cond_signal(&c->work);
    pthread_mutex_unlock(&c->mu);
    return;
  }
  drop(c, sig, nrecords);
  if (broken) return; /* said once by take_lost, or by the shutdown */
  if (stopped) {      /* said by the shutdown */
    c->stop_dropped += nrecords;
    c->stop_lost += nrecords;
    return;
  }
  c->full_dropped += nrecords;
  uint64_t now = mono_ms();
  if (!c->full_warned_ms || now - c->full_warned_ms >= 10000) {
    c->full_warned_ms = now ? now : 1;
    el_log(EL_LOG_WARN,
           "console: the output is not read fast enough (%zu "
           "MiB waiting): %llu records dropped so far, so that a live "
           "program is never held up",
           c->max_queued >> 20, (unsigned long long)c->full_dropped);
  }
}

/* Wait until the queue is written and the writer idle, at most ms.
 * Returns 1 when lines are left (queued or in the writer's hands), 0. */
static int writer_wait(el_otlp_console_t *c, int ms) {
  struct timespec until = realtime_in(ms);
  pthread_mutex_lock(&c->mu);
  while ((c->head || c->busy) &&
         pthread_cond_timedwait(&c->idle, &c->mu, &until) == 0) {
  }
  int left = c->head || c->busy;
  pthread_mutex_unlock(&c->mu);
  return left;
}

/* The shutdown gives up what is left (loop thread): the queued lines and
 * the one in the writer's hands are counted as dropped, in the store and
 * here, with one warning per signal naming the count and the cause (the
 * budget of budget_ms ran out; interrupted: a signal ended the unbounded
 * wait of a file). The writer writes nothing more (into a pipe it had
 * not started the line: put_pipe); later requests are dropped and
 * counted. */
static void abandon(el_otlp_console_t *c, int budget_ms, int interrupted) {
  uint64_t n[EL_TM_NSIGNALS] = {0};
  pthread_mutex_lock(&c->mu);
  c->abandoned = 1;
  pthread_cond_broadcast(&c->work); /* a writer waiting for the pipe */
  /* A pipe write under way does not block (put_pipe): its outcome, soon
   * known, says whether the line was written whole (bounded all the same,
   * for a kernel without RWF_NOWAIT). */
  struct timespec until = realtime_in(1000);
  while (c->inflight && pthread_cond_timedwait(&c->idle, &c->mu, &until) == 0) {
  }
  for (line_t *l = c->head, *nx; l; l = nx) {
    nx = l->next;
    n[l->sig] += l->nrecords;
    c->queued -= l->len;
    free(l);
  }
  c->head = c->tail = NULL;
  int writing = c->writing;
  if (c->busy && c->cur && !c->cur_counted && !c->cur_whole) {
    n[c->cur->sig] += c->cur->nrecords;
    c->cur_counted = 1;
    pthread_cond_broadcast(&c->work); /* the writer waits for this */
  }
  pthread_mutex_unlock(&c->mu);
  char cause[160];
  snprintf(cause, sizeof cause,
           interrupted && c->to_file && !c->reader /* (a reader's wait
                                                      is bounded anyway) */
               ? "a signal ended the final flush, past the shutdown budget "
                 "of %d ms (--otlp-shutdown-timeout)"
               : "the shutdown budget of %d ms (--otlp-shutdown-timeout) "
                 "ran out",
           budget_ms);
  for (int s = 0; s < EL_TM_NSIGNALS; s++) {
    if (!n[s]) continue;
    drop(c, (el_tm_signal_t)s, n[s]);
    if (c->reader) c->stop_lost += n[s]; /* (bounded by a signal only) */
    el_log(EL_LOG_WARN, "console: %llu %s (%s) not written: %s%s",
           (unsigned long long)n[s], el_otlp_record_name((el_tm_signal_t)s),
           el_otlp_signal_name((el_tm_signal_t)s), cause,
           !writing ? "; the OTLP/JSON was still being rendered"
           : c->to_file && !c->reader
               ? "; a write to the output was still under way"
               : "; the output was not read fast enough");
  }
}

int el_otlp_console_shutdown(el_otlp_console_t *c, int budget_ms,
                             const volatile sig_atomic_t *interrupt) {
  if (!c->async) return fflush(c->out) == 0 ? 0 : EL_EEXPORT;
  if (budget_ms < 0) budget_ms = 0;
  uint64_t start = mono_ms();
  int left = writer_wait(c, 0);
  while (left) {
    /* The budget bounds waiting for a reader, not CPU work into a file
     * (docs/otlp.md §5): a file is waited for until a signal comes. */
    int bounded = !c->to_file || (interrupt && *interrupt) ||
                  (c->reader && c->stop && *c->stop);
    uint64_t spent = mono_ms() - start;
    if (bounded && spent >= (uint64_t)budget_ms) break;
    uint64_t slice =
        bounded && budget_ms - spent < 100 ? budget_ms - spent : 100;
    left = writer_wait(c, (int)slice);
  }
  if (left) abandon(c, budget_ms, interrupt && *interrupt);
  if (c->stop_dropped)
    el_log(EL_LOG_WARN,
           "console: %llu records not written: a signal stopped the wait "
           "for the output's reader (it read too slowly or not at all)",
           (unsigned long long)c->stop_dropped);
  take_lost(c);
  return left || c->werr ? EL_EEXPORT : 0;
}

void el_otlp_console_sync(el_otlp_console_t *c) {
  if (!c || !c->async || !c->to_file) return; /* (0: never waits) */
  pthread_mutex_lock(&c->mu);
  while ((c->head || c->busy) && !c->werr && !c->abandoned &&
         !(c->reader && c->stop && *c->stop)) {
    struct timespec until = realtime_in(100); /* (a signal: *stop) */
    pthread_cond_timedwait(&c->idle, &c->mu, &until);
  }
  pthread_mutex_unlock(&c->mu);
}

/* {====== the exporter ======} */

static int emit_line(void *ud, const uint8_t *bytes, size_t len,
                     size_t nrecords) {
  line_ctx_t *ctx = ud;
  if (ctx->c->async) {
    ctx->handled += nrecords;
    queue_request(ctx->c, ctx->sig, bytes, len, nrecords);
    return 0;
  }
  if (ctx->c->werr) { /* the output broke earlier: said once, counted */
    ctx->handled += nrecords;
    drop(ctx->c, ctx->sig, nrecords);
    return 0;
  }
  char *s = el_otlp_json_in(&ctx->c->render, ctx->sig, bytes, len);
  ctx->handled += nrecords;
  if (!s) {
    drop(ctx->c, ctx->sig, nrecords);
    el_log(EL_LOG_WARN, "console: cannot render a %s request; %zu records "
           "dropped", el_otlp_signal_name(ctx->sig), nrecords);
    return 0;
  }

  errno = 0;
  int bad = fputs(s, ctx->c->out) < 0 || fputc('\n', ctx->c->out) == EOF ||
            fflush(ctx->c->out) != 0;
  el_free(s);
  if (bad) {
    int e = errno;
    if (e == EPIPE) ctx->c->werr = EPIPE; /* (before drop: counted so) */
    drop(ctx->c, ctx->sig, nrecords);
    if (e == EPIPE) { /* closed for good (`| head`): say it once */
      ctx->c->warned_err = 1;
      el_log(EL_LOG_WARN,
             "console: writing the output failed: %s; the "
             "console output is dropped from now on (counted)",
             strerror(EPIPE));
      return 0;
    }
    ctx->lost += nrecords;
    return EL_EEXPORT;
  }
  ctx->c->lines++;
  return 0;
}

static int console_export(void *ud, el_tm_signal_t sig, el_tm_batch_t *b) {
  el_otlp_console_t *c = ud;
  line_ctx_t ctx = {c, sig, 0, 0};
  if (c->async) take_lost(c);
  /* Bytes another writer of out left in its stdio buffer (Lua's io.write,
   * after its el_otlp_console_sync: the queue is empty) go first, as
   * when the loop wrote each line itself. */
  if (c->async && c->to_file && __fpending(c->out) > 0) {
    el_otlp_console_sync(c);
    fflush(c->out);
  }
  size_t total = el_tm_batch_count(b);
  int rc = el_otlp_encode(sig, b, c->max_bytes, emit_line, &ctx);
  el_tm_batch_free(b);
  if (rc > 0) {
    drop(c, sig, (uint64_t)rc);
    el_log(EL_LOG_WARN, "console: %d %s larger than %zu bytes dropped", rc,
           el_otlp_record_name(sig), c->max_bytes);
  } else if (rc < 0) {
    /* Stopped early: what was neither written nor counted is lost (this
     * includes records the encoder had set aside as too large); the
     * message also counts the line whose write failed. */
    drop(c, sig, total - ctx.handled);
    el_log(EL_LOG_WARN, "console: %s: %zu %s dropped", el_strerror(rc),
           total - ctx.handled + ctx.lost, el_otlp_record_name(sig));
  }
  return 0;
}

static int console_flush(void *ud, int timeout_ms) {
  return el_otlp_console_shutdown(ud, timeout_ms, NULL);
}

int el_otlp_console_new(FILE *out, unsigned signals, size_t max_message_bytes,
                        el_tm_store_t *st, el_otlp_console_t **out_c,
                        el_tm_exporter_t *tm) {
  el_otlp_console_t *c = el_calloc(1, sizeof(*c));
  if (!c) return EL_ENOMEM;
  c->out = out ? out : stdout;
  c->max_bytes = max_message_bytes ? max_message_bytes
                                   : EL_OTLP_DEFAULT_MAX_BYTES;
  c->st = st;
  *out_c = c;
  *tm = (el_tm_exporter_t){.name = "console", .ud = c, .signals = signals,
                           .export = console_export,
                           .flush = console_flush};
  return 0;
}

/* Say how many records the console dropped in all, by signal, when any
 * (at the end: the warnings on the way are rate-limited or said once). */
static void report_drops(el_otlp_console_t *c) {
  uint64_t n[EL_TM_NSIGNALS], total = 0;
  if (c->async) pthread_mutex_lock(&c->mu);
  for (int s = 0; s < EL_TM_NSIGNALS; s++)
    total += n[s] = c->dropped[s] + (c->async ? c->lost[s] : 0);
  if (c->async) pthread_mutex_unlock(&c->mu);
  if (!total) return;
  el_log(EL_LOG_WARN,
         "console: %llu records dropped in all (metrics %llu, logs %llu, "
         "traces %llu, profiles %llu)%s",
         (unsigned long long)total, (unsigned long long)n[EL_TM_SIGNAL_METRICS],
         (unsigned long long)n[EL_TM_SIGNAL_LOGS],
         (unsigned long long)n[EL_TM_SIGNAL_TRACES],
         (unsigned long long)n[EL_TM_SIGNAL_PROFILES],
         c->werr == EPIPE ? ": the output's reader had gone" : "");
}

void el_otlp_console_free(el_otlp_console_t *c) {
  if (!c) return;
  report_drops(c);
  if (c->async) {
    pthread_mutex_lock(&c->mu);
    c->closing = 1;
    int stuck = c->busy;
    if (stuck) { /* blocked in a write (a reader that stopped reading),
                    or waiting for room in a pipe (stops now): the rest
                    is dropped, the thread left to the exit */
      c->abandoned = c->cur_counted = 1; /* (counting is over) */
      for (line_t *l = c->head, *nx; l; l = nx) {
        nx = l->next;
        free(l);
      }
      c->head = c->tail = NULL;
    }
    pthread_cond_broadcast(&c->work);
    pthread_mutex_unlock(&c->mu);
    if (stuck) {
      pthread_detach(c->th);
      return; /* c stays: the writer may still touch it */
    }
    pthread_join(c->th, NULL); /* (the store may be gone: no counting) */
  }
  el_arena_free(&c->render);
  el_free(c);
}

static void console_release(void *ud) { el_otlp_console_free(ud); }

int el_otlp_console_add(el_tm_store_t *st, FILE *out,
                        el_otlp_console_t **out_c) {
  el_otlp_console_t *c;
  el_tm_exporter_t tm;
  int rc = el_otlp_console_new(out, 0xfu, 0, st, &c, &tm);
  if (rc < 0) return rc;
  tm.release = console_release;
  rc = el_tm_store_add_exporter(st, &tm);
  if (rc < 0) el_otlp_console_free(c);
  if (rc == 0 && out_c) *out_c = c;
  return rc;
}

uint64_t el_otlp_console_lines(const el_otlp_console_t *c) {
  return c->lines;
}

uint64_t el_otlp_console_dropped_closed(const el_otlp_console_t *c) {
  return c->closed;
}

uint64_t el_otlp_console_dropped_stopped(const el_otlp_console_t *c) {
  return c->stop_lost;
}

uint64_t el_otlp_console_dropped(const el_otlp_console_t *c, int sig) {
  return sig >= 0 && sig < EL_TM_NSIGNALS ? c->dropped[sig] : 0;
}
