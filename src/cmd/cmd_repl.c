/* cmd_repl.c: `eventlog-live repl [options] <source options>`: an
 * interactive Lua prompt over an eventlog (docs/repl.md).
 *
 * The Lua state is the host's (src/host/host.h), so what is typed is the
 * script API of docs/lua-api.md; the helpers (summary, head, events, ...)
 * are lua/eventlog_live/repl.lua over the host's trackers and the REPL's
 * event store (src/repl/repl_store.h), which decodes the same bytes with a
 * decoder of its own.
 *
 * Threads: the main thread owns the Lua state and runs the libuv loop
 * (live sources, wall timers, evaluating lines); libedit runs on a reader
 * thread (src/repl/repl_term.h) that hands each line over with uv_async.
 * `lua_mu` serialises Lua between the main thread and tab completion.
 * A file source is read to the end before the first prompt; a live source
 * (socket, FIFO, piped stdin, --follow) is read on the loop while the user
 * types; :quit and Ctrl-D drain a FIFO or piped stdin before leaving, as
 * the daemon does on SIGINT (el_src_pump_stop). Exit status: 0 after
 * :quit or Ctrl-D; 2 usage error; 1 setup failure. */
#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <lua.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>
#include <uv.h>

#include "cmd.h"
#include "control/control.h"
#include "host/host.h"
#include "otlp/exp_console.h"
#include "repl/repl_store.h"
#include "repl/repl_term.h"
#include "source/source.h"
#include "telemetry/telemetry.h"

typedef struct {
  el_src_opts_t src;
  const char *sets[256];    /* "key=value" */
  int nsets;
  const char *output;       /* "console" or "none" */
  const char *history;      /* NULL = default; "" = none */
  double store_mb;          /* event store bound, MiB */
} repl_opts_t;

typedef struct {
  const repl_opts_t *o;
  el_host_t *h;
  el_repl_store_t *store;
  el_tm_store_t *tm;
  lua_State *L;
  int mod_ref;              /* eventlog_live.repl */
  pthread_mutex_t lua_mu;
  char desc[200];
  int live;                 /* follow the source on the loop */
  int fd;                   /* file mode: the input is a recorded file */
  int ended;                /* el_host_end done */
  el_src_consumer_t host_c; /* the host's consumer (el_host_consumer) */
  uv_loop_t loop;
  uv_async_t line_async;
  uv_async_t int_async;
  uv_timer_t wall;
  int wall_on;              /* wall was initialised */
  int failed;               /* the line editor or the source failed */
  int handles;              /* open loop handles */
  el_src_t *src;
  el_ctl_sender_t ctl; /* el.control's way to src (cmd_run.c's) */
  el_repl_term_t *term;
  const el_repl_term_plugin_t *tp; /* the line editor's plugin */
  FILE *tty;                /* /dev/tty when stdin carries the eventlog */
  pthread_mutex_t line_mu;
  char *line;               /* handed over by the reader thread */
  int have_line, eof;
  char *buf;                /* input so far (multi-line statements) */
  int quitting;
  /* The lines come from a pipe or a file: a failing one sets failed. */
  int script;
} repl_t;

static void usage(FILE *f) {
  fprintf(f,
          "Usage: eventlog-live repl [OPTIONS] SOURCE-OPTIONS\n"
          "  or:  eventlog-live repl [OPTIONS] FILE.eventlog\n\n"
          "Interactive Lua over an eventlog (docs/repl.md): summary(), "
          "head(n), tail(n),\nevents{...}, threads(), gc(), heap(), "
          "census(t), markers(), messages(),\n:load FILE.lua, :help, "
          ":quit. A file is read before the first prompt; a\nlive source "
          "(socket, FIFO, piped stdin) is followed while you type.\n\n"
          "Options:\n"
          "  --set KEY=VALUE      visible as eventlog_live.config.KEY\n"
          "  --output none|console  where emitted telemetry goes "
          "(default none)\n"
          "  --history FILE       history file (default "
          "$EVENTLOG_LIVE_HISTORY or\n"
          "                       ~/.eventlog_live_history); "
          "--no-history: none\n"
          "  --store-mb N         bound of the event store kept for "
          "head/tail/events\n"
          "                       (default 64 MiB; older events are "
          "dropped and counted)\n"
          "  -v, --log-level LEVEL  debug, info, warn (default), error, "
          "quiet\n                         (trace, fatal: as debug, error)\n"
          "  -h, --help           this text\n\nSource options:\n%s",
          el_src_opts_help());
}

/* The argument at argv[*ip] (an option of ours or of the source, or the
 * input path); *ip moves past it. Returns 0, 1 (help printed) or 2
 * (usage error printed). */
static int parse_one(repl_opts_t *o, int argc, char **argv, int *ip) {
  int i = *ip;
  const char *a = argv[i];
  int rc = el_src_opts_parse(&o->src, argc, argv, ip);
  if (rc < 0) {
    el_eprintf("repl: %s\n", o->src.err);
    return 2;
  }
  if (rc == 1) return 0;
  const char *eq = strchr(a, '=');
  size_t alen = a[0] == '-' && a[1] == '-' && eq ? (size_t)(eq - a) : strlen(a);
  const char *val = eq && a[0] == '-' ? eq + 1 : NULL;
#define OPT(s) (alen == strlen(s) && !strncmp(a, s, alen))
  if (OPT("--help") || OPT("-h")) {
    usage(stdout);
    return 1;
  } else if (OPT("--no-history")) {
    o->history = "";
  } else if (OPT("--set") || OPT("--output") || OPT("--history") ||
             OPT("--store-mb") || OPT("--log-level") || OPT("-v")) {
    if (!val) {
      if (i + 1 >= argc) {
        el_eprintf("repl: %.*s wants a value\n", (int)alen, a);
        return 2;
      }
      val = argv[++i];
    }
    if (OPT("--set")) {
      if (!strchr(val, '=') || val[0] == '=' || o->nsets == 256) {
        el_eprintf("repl: --set wants KEY=VALUE\n");
        return 2;
      }
      o->sets[o->nsets++] = val;
    } else if (OPT("--output")) {
      if (strcmp(val, "console") && strcmp(val, "none")) {
        el_eprintf("repl: --output console|none\n");
        return 2;
      }
      o->output = val;
    } else if (OPT("--history")) {
      o->history = val;
    } else if (OPT("--store-mb")) {
      char *end;
      o->store_mb = strtod(val, &end);
      if (*end || !(o->store_mb >= 1 && o->store_mb <= 1 << 20)) {
        el_eprintf(
            "repl: --store-mb wants 1.."
            "1048576\n");
        return 2;
      }
    } else if (el_opt_log_level("repl", OPT("-v") ? "-v" : "--log-level", val,
                                &el_log_threshold) != 0) {
      return 2;
    }
  } else if (a[0] == '-' && a[1] != '\0') {
    el_opt_unknown("repl", a, usage);
    return 2;
  } else {
    el_src_opts_set_path(&o->src, a);
  }
#undef OPT
  *ip = i + 1;
  return 0;
}

/* Returns 0, 1 (help printed) or 2 (usage error printed). An option
 * given twice with different values is warned about (cmd.h
 * el__cmd_note_option; --set per key). */
static int parse(repl_opts_t *o, int argc, char **argv) {
  static const char *const shorts[] = {"-v", "--log-level", NULL};
  el__cmd_seen_t seen = {.shorts = shorts};
  el_src_opts_init(&o->src);
  o->output = "none";
  o->store_mb = 64;
  for (int i = 1; i < argc;) {
    int start = i, rc = parse_one(o, argc, argv, &i);
    if (rc) return rc;
    el__cmd_note_option(&seen, argv, start, i);
  }
  if (el_src_opts_validate(&o->src) != 0) {
    el_eprintf("repl: %s\n", o->src.err);
    return 2;
  }
  el__cmd_warn_repeated(&seen, "repl");
  return 0;
}

/* {====== signals ======} */

static volatile sig_atomic_t g_int;      /* SIGINT seen */
static lua_State *volatile g_eval_L;     /* set while evaluating */
static uv_async_t *volatile g_int_async; /* wakes the loop */
/* The host of a :load script running over the file (run_script_file):
 * its handlers run in a Lua state of their own, which the hook on
 * g_eval_L does not reach. */
static el_host_t *volatile g_load_host;

static void lstop(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_sethook(L, NULL, 0, 0);
  luaL_error(L, "interrupted");
}

/* As lua.c does: a hook raises the error at the next Lua instruction. */
static void on_sigint(int sig) {
  g_int = 1;
  el_host_t *lh = g_load_host;
  lua_State *L = g_eval_L;
  if (lh) /* :load answers "interrupted" itself */
    el_host_interrupt_signal(lh, sig);
  else if (L)
    lua_sethook(L, lstop, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
  else if (g_int_async)
    uv_async_send(g_int_async);
}

/* SIGTERM / SIGHUP while libedit may hold the terminal in raw mode: put
 * the terminal back as it was at start, then die of the signal (the
 * history is already saved: it is written after every line). */
static struct termios g_tty_saved;
static volatile int g_tty_fd = -1;

static void on_fatal(int sig) {
  if (g_tty_fd >= 0) tcsetattr(g_tty_fd, TCSANOW, &g_tty_saved);
  signal(sig, SIG_DFL);
  raise(sig);
}

/* {====== Lua glue ======} */

static int traceback(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  luaL_traceback(L, L, msg ? msg : "(error object is not a string)", 1);
  return 1;
}

/* Call repl.<name> with nargs arguments on the stack; leaves nres
 * results, or returns -1 with the error printed. Caller holds lua_mu. */
static int call_mod(repl_t *r, const char *name, int nargs, int nres) {
  lua_State *L = r->L;
  int base = lua_gettop(L) - nargs;
  lua_pushcfunction(L, traceback);
  lua_rawgeti(L, LUA_REGISTRYINDEX, r->mod_ref);
  lua_getfield(L, -1, name);
  lua_remove(L, -2);
  lua_rotate(L, base + 1, 2);  /* traceback, fn, args */
  if (lua_pcall(L, nargs, nres, base + 1) != LUA_OK) {
    el_eprintf("repl: %s\n", lua_tostring(L, -1));
    lua_settop(L, base);
    return -1;
  }
  lua_remove(L, base + 1);
  return 0;
}

/* {====== feeding: the host and the event store, through el_src_pump ======}
 * The REPL's consumer is the host's (el_host_consumer) plus the event
 * store, under lua_mu (tab completion runs Lua on the reader thread). In
 * file mode a Ctrl-C stops the reading (feed answers EL_ESTOPPED). */

static void r_reset(void *ud) {
  repl_t *r = ud;
  pthread_mutex_lock(&r->lua_mu);
  r->host_c.reset(r->host_c.ud);
  el_repl_store_reset(r->store);
  pthread_mutex_unlock(&r->lua_mu);
}

static int r_feed(void *ud, const uint8_t *buf, size_t len) {
  repl_t *r = ud;
  if (!r->live && g_int) return EL_ESTOPPED;
  pthread_mutex_lock(&r->lua_mu);
  el_repl_store_feed(r->store, buf, len);
  int rc = r->host_c.feed(r->host_c.ud, buf, len);
  pthread_mutex_unlock(&r->lua_mu);
  return rc;
}

static int r_finish(void *ud) {
  repl_t *r = ud;
  pthread_mutex_lock(&r->lua_mu);
  int rc = r->host_c.finish(r->host_c.ud);
  pthread_mutex_unlock(&r->lua_mu);
  return rc;
}

/* The session ends because :quit stopped the input (el_src_pump_stop):
 * nothing is said about where its bytes stop. */
static int r_finish_stopped(void *ud) {
  repl_t *r = ud;
  pthread_mutex_lock(&r->lua_mu);
  int rc = r->host_c.finish_stopped(r->host_c.ud);
  pthread_mutex_unlock(&r->lua_mu);
  return rc;
}

static const el_diag_t *r_diag(void *ud) {
  repl_t *r = ud;
  return r->host_c.diag(r->host_c.ud);
}

static void r_received(void *ud, uint64_t by, int live) {
  repl_t *r = ud;
  r->host_c.received(r->host_c.ud, by, live);
}

static void r_input_waits(void *ud, int waiting) {
  repl_t *r = ud;
  pthread_mutex_lock(&r->lua_mu);
  r->host_c.input_waits(r->host_c.ud, waiting);
  pthread_mutex_unlock(&r->lua_mu);
}

static void r_scan(void *ud, int fd, uint64_t from, uint64_t len) {
  repl_t *r = ud;
  pthread_mutex_lock(&r->lua_mu);
  r->host_c.scan(r->host_c.ud, fd, from, len);
  pthread_mutex_unlock(&r->lua_mu);
}

static void r_input_name(void *ud, const char *name) {
  repl_t *r = ud;
  r->host_c.input_name(r->host_c.ud, name);
}

/* The source exists (src) or is gone (NULL): el.control, typed at the
 * prompt or in a handler, goes to it as in `run` (the main thread runs
 * both the loop and the Lua lines); without one it answers nil, "not
 * connected" (docs/lua-api.md). */
static void r_source(void *ud, el_src_t *src) {
  repl_t *r = ud;
  r->src = src;
  r->ctl.send = src ? el_ctl_src_send : NULL;
  r->ctl.ud = src;
}

static void consumer(repl_t *r, el_src_consumer_t *c) {
  el_host_consumer(r->h, &r->host_c);
  memset(c, 0, sizeof *c);
  c->ud = r;
  c->reset = r_reset;
  c->feed = r_feed;
  c->finish = r_finish;
  c->finish_stopped = r_finish_stopped;
  c->diag = r_diag;
  c->received = r_received;
  c->input_waits = r_input_waits;
  c->scan = r_scan;
  c->on_source = r_source;
  c->input_name = r_input_name;
  c->own_signals = 1;
}

static void end_input(repl_t *r) {
  if (!r->ended) {
    r->ended = 1;
    el_host_end(r->h);
  }
}

/* A :load script's host over the file: the plain host consumer, Ctrl-C
 * stopping the reading. */
typedef struct {
  el_src_consumer_t c;
} load_t;

static int load_feed(void *ud, const uint8_t *buf, size_t len) {
  load_t *l = ud;
  if (g_int) return EL_ESTOPPED;
  return l->c.feed(l->c.ud, buf, len);
}
static void load_reset(void *ud) { ((load_t *)ud)->c.reset(((load_t *)ud)->c.ud); }
static int load_finish(void *ud) {
  return ((load_t *)ud)->c.finish(((load_t *)ud)->c.ud);
}
static const el_diag_t *load_diag(void *ud) {
  return ((load_t *)ud)->c.diag(((load_t *)ud)->c.ud);
}
static void load_received(void *ud, uint64_t by, int live) {
  ((load_t *)ud)->c.received(((load_t *)ud)->c.ud, by, live);
}
static void load_input_waits(void *ud, int waiting) {
  ((load_t *)ud)->c.input_waits(((load_t *)ud)->c.ud, waiting);
}
static void load_scan(void *ud, int fd, uint64_t from, uint64_t len) {
  ((load_t *)ud)->c.scan(((load_t *)ud)->c.ud, fd, from, len);
}
static void load_input_name(void *ud, const char *name) {
  ((load_t *)ud)->c.input_name(((load_t *)ud)->c.ud, name);
}

/* {====== :load ======} */

static void apply_sets(const repl_opts_t *o, el_host_t *h) {
  for (int i = 0; i < o->nsets; i++) {
    const char *eq = strchr(o->sets[i], '=');
    char key[256];
    snprintf(key, sizeof key, "%.*s", (int)(eq - o->sets[i]), o->sets[i]);
    el_host_set_config(h, key, eq + 1);
  }
}

/* A :load script called os.exit(code) (its host's exit_stops): its run
 * stopped as `run`'s would, the REPL goes on. Says so on stderr. */
static void said_exit(el_host_t *h, const char *path) {
  int code;
  if (el_host_exit_status(h, &code))
    el_eprintf(
        "%s: os.exit(%d) stopped the script's run (`run` would exit "
        "with %d); the REPL goes on\n",
        path, code, code);
}

/* File mode: run the script like `eventlog-live run` over the whole file,
 * in a host of its own; os.exit stops that run as in `run` (on_end hooks
 * run), not the REPL. */
static int run_script_file(lua_State *L, repl_t *r, const char *path) {
  el_host_opts_t ho = {.exit_stops = 1};
  el_host_t *h = el_host_new(&ho);
  if (!h) return luaL_error(L, "out of memory");
  el_host_set_store(h, r->tm);
  apply_sets(r->o, h);
  int rc = el_host_load(h, path);
  if (rc < 0 && el_host_exit_status(h, &(int){0})) {
    said_exit(h, path); /* while it loaded: nothing read, as `run` */
    el_host_free(h);
    lua_pushboolean(L, 1);
    return 1;
  }
  if (rc < 0) {
    lua_pushnil(L);
    lua_pushstring(L, el_host_error(h));
    el_host_free(h);
    return 2;
  }
  g_int = 0;
  load_t l;
  el_host_consumer(h, &l.c);
  el_src_consumer_t c = {.ud = &l,
                         .reset = load_reset,
                         .feed = load_feed,
                         .finish = load_finish,
                         .diag = load_diag,
                         .received = load_received,
                         .input_waits = load_input_waits,
                         .scan = load_scan,
                         .input_name = load_input_name,
                         .own_signals = 1};
  if (r->o->src.kind == EL_SRC_STDIN) lseek(0, 0, SEEK_SET);
  el_src_pump_result_t res;
  g_load_host = h;
  rc = el_src_pump(NULL, &r->o->src, &c, &res);
  g_load_host = NULL;
  const el_diag_t *d = c.diag(c.ud);
  int no_header = rc < 0 && d && d->code && d->header;
  el_host_end(h);
  fflush(stdout);
  el_host_report_errors(h);
  int exited = el_host_exit_status(h, &(int){0});
  said_exit(h, path);
  el_host_free(h);
  if (rc == EL_ESTOPPED && exited) {
    lua_pushboolean(L, 1);
    return 1;
  }
  if (rc == EL_ESTOPPED) {
    lua_pushnil(L);
    lua_pushliteral(L, "interrupted");
    return 2;
  }
  if (rc < 0) { /* the pump logged where, and what */
    lua_pushnil(L);
    /* EL_ETRUNC's "eventlog truncated" would be untrue without a header */
    lua_pushfstring(
        L, "reading the input: %s",
        no_header ? "no eventlog header read (said above)" : el_strerror(rc));
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* repl host callback load_script(path) -> true | nil, message. Live mode:
 * the script joins the REPL's host and sees the events from now on. */
static int l_load_script(lua_State *L) {
  repl_t *r = lua_touserdata(L, lua_upvalueindex(1));
  const char *path = luaL_checkstring(L, 1);
  if (!r->live) return run_script_file(L, r, path);
  if (r->ended) {
    lua_pushnil(L);
    lua_pushliteral(L, "the source has ended: the script would see no "
                       "event");
    return 2;
  }
  int rc = el_host_load(r->h, path);
  if (rc < 0) {
    lua_pushnil(L);
    lua_pushstring(L, el_host_error(r->h));
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* Protected: require the module, call install{...}, keep a ref. */
static int setup_lua(lua_State *L) {
  repl_t *r = lua_touserdata(L, 1);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "eventlog_live.repl");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "install");
  lua_createtable(L, 0, 3);
  el_repl_store_push_lua(L, r->store);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, "eventlog_live.repl_store");  /* require() finds it */
  lua_pop(L, 1);
  lua_setfield(L, -2, "store");
  lua_pushstring(L, r->desc);
  lua_setfield(L, -2, "source");
  lua_pushlightuserdata(L, r);
  lua_pushcclosure(L, l_load_script, 1);
  lua_setfield(L, -2, "load_script");
  lua_pushstring(L, r->live ? "live" : "file");
  lua_setfield(L, -2, "mode");
  lua_call(L, 1, 0);
  r->mod_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  return 0;
}

/* {====== completion (reader thread) ======} */

static char **complete(void *ud, const char *text, const char *line,
                       int start, int *files) {
  repl_t *r = ud;
  char **out = NULL;
  pthread_mutex_lock(&r->lua_mu);
  lua_State *L = r->L;
  int top = lua_gettop(L);
  lua_pushstring(L, text);
  lua_pushstring(L, line);
  lua_pushinteger(L, start);
  if (call_mod(r, "complete", 3, 2) != 0) {
    /* printed */
  } else if (lua_isstring(L, -1) && !strcmp(lua_tostring(L, -1), "files")) {
    *files = 1;
  } else if (lua_istable(L, -2)) {
    lua_pop(L, 1);
    size_t n = (size_t)luaL_len(L, -1);
    if (n > 10000) n = 10000;
    out = calloc(n + 1, sizeof *out);  /* libedit frees with free() */
    for (size_t i = 0; out && i < n; i++) {
      lua_geti(L, -1, (lua_Integer)i + 1);
      const char *s = lua_tostring(L, -1);
      out[i] = strdup(s ? s : "");
      lua_pop(L, 1);
    }
  }
  lua_settop(L, top);
  pthread_mutex_unlock(&r->lua_mu);
  return out;
}

/* {====== lines ======} */

static void on_line(void *ud, char *line) {
  repl_t *r = ud;
  pthread_mutex_lock(&r->line_mu);
  free(r->line);
  r->line = line;
  r->have_line = 1;
  r->eof = line == NULL;
  pthread_mutex_unlock(&r->line_mu);
  uv_async_send(&r->line_async);
}

static void closed(uv_handle_t *hd) {
  repl_t *r = hd->data;
  r->handles--;
}

static void close_handle(repl_t *r, uv_handle_t *hd) {
  if (!uv_is_closing(hd)) uv_close(hd, closed);
}

/* Leave once the source has ended: close our handles, the loop returns. */
static void maybe_finish(repl_t *r) {
  if (!r->quitting || r->src) return;
  close_handle(r, (uv_handle_t *)&r->line_async);
  close_handle(r, (uv_handle_t *)&r->int_async);
  if (r->wall_on) close_handle(r, (uv_handle_t *)&r->wall);
}

/* :quit, Ctrl-D or the end of piped lines. A live source is stopped as
 * SIGINT stops the daemon's: a FIFO or a pipe on stdin is first drained
 * until its writer closes it (at most --eventlog-drain-timeout; Ctrl-C
 * stops at once), so that the program writing it is not left blocked
 * (docs/sources.md "Stopping"); no wall timer runs meanwhile. The pump's
 * end (follow) then calls maybe_finish. */
static void quit(repl_t *r) {
  r->quitting = 1;
  if (r->src) {
    if (r->wall_on) uv_timer_stop(&r->wall);
    el_src_pump_stop(r->src, "Ctrl-C");
  }
  maybe_finish(r);
}

static int buf_append(repl_t *r, const char *line) {
  size_t old = r->buf ? strlen(r->buf) : 0, n = strlen(line);
  char *b = el_realloc(r->buf, old + n + 2);
  if (!b) return EL_ENOMEM;
  if (old) b[old++] = '\n';
  memcpy(b + old, line, n + 1);
  r->buf = b;
  return 0;
}

static void on_line_async(uv_async_t *a) {
  repl_t *r = a->data;
  pthread_mutex_lock(&r->line_mu);
  char *line = r->line;
  int have = r->have_line, eof = r->eof;
  r->line = NULL;
  r->have_line = 0;
  pthread_mutex_unlock(&r->line_mu);
  if (!have || r->quitting) {
    free(line);
    return;
  }
  if (eof) {
    fputc('\n', stdout);
    fflush(stdout);
    if (r->buf) { /* an unfinished statement: not run, and said so */
      el_eprintf(
          "repl: the input ended inside an unfinished statement "
          "(not run): %.60s%s\n",
          r->buf, strlen(r->buf) > 60 ? "..." : "");
      if (r->script) r->failed = 1;
    }
    quit(r);
    return;
  }
  int rc = buf_append(r, line);
  free(line);
  if (rc < 0) {
    el_eprintf("repl: out of memory\n");
    el_free(r->buf);
    r->buf = NULL;
    r->tp->read(r->term, "el> ");
    return;
  }
  pthread_mutex_lock(&r->lua_mu);
  lua_State *L = r->L;
  int top = lua_gettop(L);
  lua_pushstring(L, r->buf);
  g_int = 0;
  g_eval_L = L;
  const char *st = "error";
  if (call_mod(r, "eval", 1, 1) == 0 && lua_isstring(L, -1))
    st = lua_tostring(L, -1);
  g_eval_L = NULL;
  lua_sethook(L, NULL, 0, 0);
  int incomplete = !strcmp(st, "incomplete");
  int want_quit = !strcmp(st, "quit") || !strcmp(st, "error_quit");
  if (r->script && !strncmp(st, "error", 5)) r->failed = 1;
  lua_settop(L, top);
  pthread_mutex_unlock(&r->lua_mu);
  fflush(stdout);
  fflush(stderr);
  if (!incomplete) {
    el_free(r->buf);
    r->buf = NULL;
  }
  if (want_quit) {
    quit(r);
    return;
  }
  r->tp->read(r->term, incomplete ? ">> " : "el> ");
}

/* Ctrl-C at the prompt: forget a partial multi-line input and the line
 * being typed; the next prompt is the first line's ("el> "). After :quit,
 * while a live source drains: stop the drain at once (no prompt). */
static void on_int_async(uv_async_t *a) {
  repl_t *r = a->data;
  g_int = 0;
  if (r->quitting) {
    if (r->src) el_src_pump_stop(r->src, "Ctrl-C");
    return;
  }
  el_free(r->buf);
  r->buf = NULL;
  if (r->term) r->tp->cancel(r->term, "el> ");
}

/* {====== live sources ======} */

static void on_wall(uv_timer_t *t) {
  repl_t *r = t->data;
  pthread_mutex_lock(&r->lua_mu);
  int64_t next = el_host_run_wall_timers(r->h, uv_now(t->loop));
  pthread_mutex_unlock(&r->lua_mu);
  uint64_t delay = next < 0 || next > 100 ? 100 : (uint64_t)next;
  uv_timer_start(t, on_wall, delay ? delay : 1, 0);
}

/* {====== setup ======} */

/* Decide file vs live; open the file (file mode) or /dev/tty (stdin
 * carries the eventlog). Returns 0, or prints and returns the exit
 * status: 1 when the input file cannot be opened (as every command,
 * docs/exit-codes.md), 2 for a usage error (stdin a terminal). */
static int choose_mode(repl_t *r) {
  const el_src_opts_t *s = &r->o->src;
  struct stat st;
  r->fd = -1;
  /* stat first: opening a FIFO would wait for (and lose) its writer. A
   * recorded file is a regular one or a device that is not a terminal
   * (/dev/null: an empty input), el_src_fd_recorded. */
  if (s->kind == EL_SRC_FILE && !s->follow && !s->log_file &&
      (stat(s->path, &st) != 0 || S_ISREG(st.st_mode) || S_ISCHR(st.st_mode))) {
    int fd = open(s->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
      el_eprintf("repl: cannot open %s: %s\n", s->path, strerror(errno));
      return 1;
    }
    if (el_src_fd_recorded(fd)) {
      r->fd = fd;
      return 0;
    }
    int tty = isatty(fd);
    close(fd); /* a FIFO: follow it on the loop */
    if (tty) { /* the prompt's own keys would be read as the eventlog */
      el_eprintf(
          "repl: %s is a terminal; name an eventlog file, a FIFO "
          "or a socket\n",
          s->path);
      return 2;
    }
  }
  if (s->kind == EL_SRC_STDIN) {
    if (isatty(0)) {
      el_eprintf(
          "repl: stdin is a terminal; pipe the "
          "eventlog in or name a file\n");
      return 2;
    }
    r->tty = fopen("/dev/tty", "r+e");
    if (!r->tty) {
      el_eprintf(
          "repl: stdin carries the eventlog and "
          "/dev/tty cannot be opened: %s\n",
          strerror(errno));
      return 1; /* the line editor cannot start */
    }
    if (!s->log_file && el_src_fd_recorded(0)) {
      r->fd = fcntl(0, F_DUPFD_CLOEXEC, 0);
      if (r->fd >= 0) return 0;
    }
  }
  r->live = 1;
  return 0;
}

static const char *history_path(const repl_opts_t *o, char *buf,
                                size_t size) {
  if (o->history) return o->history[0] ? o->history : NULL;
  const char *env = getenv("EVENTLOG_LIVE_HISTORY");
  if (env) return env[0] ? env : NULL;
  const char *home = getenv("HOME");
  if (!home || !*home) return NULL;
  snprintf(buf, size, "%s/.eventlog_live_history", home);
  return buf;
}

/* The wall-clock timers of a live source's host. */
static void start_wall(repl_t *r) {
  uv_timer_init(&r->loop, &r->wall);
  r->wall.data = r;
  r->wall_on = 1;
  r->handles++;
  uv_timer_start(&r->wall, on_wall, 0, 0);
}

/* Follow a live source on the loop while the user types, until it ends
 * (or :quit stops it). */
static void follow(repl_t *r) {
  /* The source may pause: never hold an event back (EL_EV_OPT_LIVE); a
   * socket's end in its words (EL_EV_OPT_CONNECTION). */
  el_ev_decoder_set_opts(el_host_decoder(r->h),
                         EL_EV_OPT_LIVE | el_src_opts_decoder_opts(&r->o->src));
  el_repl_store_set_live(r->store);
  el_src_consumer_t c;
  consumer(r, &c);
  el_src_pump_result_t res;
  int rc = el_src_pump(&r->loop, &r->o->src, &c, &res);
  r->src = NULL;
  pthread_mutex_lock(&r->lua_mu);
  end_input(r);
  pthread_mutex_unlock(&r->lua_mu);
  if (!r->quitting) {
    const el_diag_t *d = c.diag ? c.diag(c.ud) : NULL;
    if (rc == 0 || rc == EL_ESTOPPED)
      fprintf(stderr, "\n[%s: end of input]\n", r->desc);
    else /* EL_ETRUNC's "eventlog truncated" is untrue without a header */
      fprintf(stderr, "\n[%s: input ended: %s]\n", r->desc,
              d && d->code && d->header ? "no eventlog header read (said above)"
                                        : el_strerror(rc));
  }
  if (rc < 0 && rc != EL_ESTOPPED && !res.sessions) r->failed = 1;
  maybe_finish(r);
}

/* Read the recorded file into the store and print the "loaded" line.
 * Returns 0, or -1 when no session began (an empty file, one cut inside
 * its header, not an eventlog: the pump said why), as every other
 * command exits 1 then (docs/exit-codes.md "header", "notlog", "empty"). */
static int load_file(repl_t *r) {
  g_int = 0;
  el_src_consumer_t c;
  consumer(r, &c);
  el_src_pump_result_t res;
  int rc = el_src_pump(NULL, &r->o->src, &c, &res);
  pthread_mutex_lock(&r->lua_mu);
  end_input(r);
  const el_diag_t *d = c.diag ? c.diag(c.ud) : NULL;
  if (rc < 0 && rc != EL_ESTOPPED && d && d->code && d->header) {
    pthread_mutex_unlock(&r->lua_mu);
    el_eprintf("repl: %s holds no eventlog to explore\n", r->desc);
    return -1;
  }
  if (rc == EL_ESTOPPED && g_int)
    fprintf(stderr, "interrupted: the rest of the file is not loaded\n");
  if (call_mod(r, "loaded_line", 0, 1) == 0) {
    printf("%s\n", lua_tostring(r->L, -1));
    lua_pop(r->L, 1);
  }
  pthread_mutex_unlock(&r->lua_mu);
  fflush(stdout);
  return 0;
}

/* The host, the event store, the telemetry store and the Lua side of the
 * REPL. Returns 0, or -1 after a message. */
static int setup(repl_t *r) {
  const repl_opts_t *o = r->o;
  r->h = el_host_new(NULL);
  r->store = el_repl_store_new((size_t)(o->store_mb * 1024 * 1024));
  r->tm = el_tm_store_new("eventlog-live", EL_VERSION);
  if (!r->h || !r->store || !r->tm) {
    el_eprintf("repl: out of memory\n");
    return -1;
  }
  el_host_set_store(r->h, r->tm);
  el_host_set_control(r->h, el_ctl_host_control, &r->ctl);
  /* el.control writing to a socket whose program went away gets EPIPE,
   * not the end of the session (h43: it was never wired) */
  if (o->src.kind == EL_SRC_UNIX || o->src.kind == EL_SRC_TCP)
    signal(SIGPIPE, SIG_IGN);
  if (!strcmp(o->output, "console") &&
      el_otlp_console_add(r->tm, stdout, NULL) < 0)
    return -1;
  apply_sets(o, r->h);
  r->L = el_host_lua(r->h);
  lua_pushcfunction(r->L, traceback);
  lua_pushcfunction(r->L, setup_lua);
  lua_pushlightuserdata(r->L, r);
  if (lua_pcall(r->L, 1, 0, -3) != LUA_OK) {
    el_eprintf("repl: %s\n", lua_tostring(r->L, -1));
    return -1;
  }
  lua_pop(r->L, 1);
  return 0;
}

/* SIGINT interrupts what runs (on_sigint); SIGTERM and SIGHUP restore the
 * terminal and end the process (on_fatal). Until restore_signals. */
static void install_signals(repl_t *r) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  FILE *in = r->tty ? r->tty : stdin;
  if (isatty(fileno(in)) && tcgetattr(fileno(in), &g_tty_saved) == 0)
    g_tty_fd = fileno(in);
  sa.sa_handler = on_fatal;
  sa.sa_flags = 0;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
}

static void restore_signals(void) {
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGHUP, SIG_DFL);
  g_tty_fd = -1;
}

/* Start the line editor (the plugin) on the REPL's terminal or stdin,
 * with its history file. Returns 0, or -1 after a message. */
static int start_term(repl_t *r) {
  char hbuf[4096];
  r->script = !isatty(fileno(r->tty ? r->tty : stdin));
  el_repl_term_cfg_t tc = {.in = r->tty ? r->tty : stdin,
                           .out = stdout,
                           .history = history_path(r->o, hbuf, sizeof hbuf),
                           .ud = r,
                           .complete = complete,
                           .on_line = on_line};
  char err[1024];
  r->tp = el_repl_term_plugin(err, sizeof err);
  if (!r->tp) el_eprintf("repl: %s\n", err);
  r->term = r->tp ? r->tp->start(&tc) : NULL;
  if (!r->term && r->tp) el_eprintf("repl: cannot start the line editor\n");
  return r->term ? 0 : -1;
}

/* Load the file (or announce the live source), then read lines until
 * :quit or the end of input, following a live source on the loop. */
static void interact(repl_t *r) {
  uv_loop_init(&r->loop);
  uv_async_init(&r->loop, &r->line_async, on_line_async);
  uv_async_init(&r->loop, &r->int_async, on_int_async);
  r->line_async.data = r->int_async.data = r;
  r->handles = 2;
  g_int_async = &r->int_async;
  int loaded = r->live ? 0 : load_file(r);
  if (r->live)
    printf("following %s (events arrive while you type; :help)\n", r->desc);
  fflush(stdout);
  /* a source that cannot start gets no prompt */
  if (loaded < 0 || start_term(r) != 0) {
    r->failed = 1;
    r->quitting = 1;
    maybe_finish(r);
  } else {
    r->tp->read(r->term, "el> ");
    if (r->live) {
      start_wall(r);
      follow(r);
    }
  }
  while (r->handles > 0) uv_run(&r->loop, UV_RUN_DEFAULT);
  g_int_async = NULL;
  if (r->term) r->tp->stop(r->term);
  uv_loop_close(&r->loop);
}

static int repl_run(const repl_opts_t *o) {
  repl_t r;
  memset(&r, 0, sizeof r);
  r.o = o;
  r.mod_ref = LUA_NOREF;
  int status = 1;
  pthread_mutex_init(&r.lua_mu, NULL);
  pthread_mutex_init(&r.line_mu, NULL);
  el_src_opts_describe(&o->src, r.desc, sizeof r.desc);
  int mode_rc = choose_mode(&r);
  if (mode_rc != 0) {
    status = mode_rc;
  } else if (setup(&r) == 0) {
    install_signals(&r);
    interact(&r);
    pthread_mutex_lock(&r.lua_mu);
    end_input(&r);
    pthread_mutex_unlock(&r.lua_mu);
    el_tm_store_shutdown(r.tm, 2000);
    el_host_report_errors(r.h);
    status = r.failed ? 1 : 0;
    restore_signals();
  }
  if (r.fd >= 0) close(r.fd);
  if (r.tty) fclose(r.tty);
  el_free(r.buf);
  free(r.line);
  el_host_free(r.h);
  el_repl_store_free(r.store);
  el_tm_store_free(r.tm);
  pthread_mutex_destroy(&r.lua_mu);
  pthread_mutex_destroy(&r.line_mu);
  return status;
}

int el_cmd_repl(int argc, char **argv) {
  repl_opts_t o;
  memset(&o, 0, sizeof o);
  int rc = parse(&o, argc, argv);
  if (rc == 1) return 0;
  if (rc) return 2;
  return repl_run(&o);
}
