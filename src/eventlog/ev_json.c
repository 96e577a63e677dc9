/* ev_json.c: `eventlog-live show --json`: one JSON object per event, one
 * per line, in stream (arrival) order, for use with jq.
 *
 * Object: {"offset":N,"type":ID,"name":"RUN_THREAD","t_ns":T,
 *          "unix_ns":U|null,"cap":C|null,"fields":{"thread":7}}
 * Fields follow el_ev_type_info (spec/eventlog-format.md §2.1): integers
 * as numbers, text as strings (invalid UTF-8 becomes U+FFFD so the output
 * is valid JSON), EL_EV_STRLIST as an array of strings, EL_EV_CCS as an
 * array of cost-centre ids, EL_EV_BYTES as a lowercase hex string. An
 * event of a declared but unknown type (or malformed) has "name":null,
 * "desc" (the header's description) and "payload_hex"; a malformed one
 * also "malformed":true. Block markers are
 * included. The encoder is written here (output only; no JSON parsing). */
#include <stdio.h>
#include <string.h>

#include "../common/el_fmt.h"
#include "../common/el_grow.h"
#include "../common/el_utf8.h"
#include "eventlog_internal.h"

struct el_ev_json_s {
  FILE *out;
  el_ev_decoder_t *dec;
  char *buf;           /* one formatted line */
  size_t cap;
  int failed;
  el_diag_t corrupt; /* first corruption the decoder recovered from */
  el_diag_t diag;
  el_ev_warn_fn warn; /* el_ev_json_set_warn */
  void *warn_ud;
};

static char *put_lit(char *w, const char *s) {
  size_t n = strlen(s);
  memcpy(w, s, n);
  return w + n;
}

/* A JSON string: at most 6 output bytes per input byte, plus quotes. */
static char *put_str(char *w, const uint8_t *p, size_t n) {
  *w++ = '"';
  for (size_t i = 0; i < n;) {
    uint8_t c = p[i];
    if (c == '"' || c == '\\') {
      *w++ = '\\';
      *w++ = (char)c;
      i++;
    } else if (c < 0x20) {
      w += sprintf(w, "\\u%04x", c);
      i++;
    } else if (c < 0x80) {
      *w++ = (char)c;
      i++;
    } else {
      size_t len = el_utf8_len(p + i, n - i);
      if (len) {
        memcpy(w, p + i, len);
        w += len;
        i += len;
      } else {
        w = put_lit(w, "\\ufffd");
        i++;
      }
    }
  }
  *w++ = '"';
  return w;
}

static char *put_hex(char *w, const uint8_t *p, size_t n) {
  *w++ = '"';
  w = el_fmt_hex(w, p, n);
  *w++ = '"';
  return w;
}

static char *put_value(char *w, el_ev_kind_t kind, const el_ev_value_t *v) {
  const uint8_t *p = (const uint8_t *)v->s.p;
  switch (kind) {
  case EL_EV_U64:
    return el_fmt_u64(w, v->u);
  case EL_EV_I64:
    return el_fmt_i64(w, v->i);
  case EL_EV_TEXT:
    return put_str(w, p, v->s.len);
  case EL_EV_BYTES:
    return put_hex(w, p, v->s.len);
  case EL_EV_STRLIST: {
    *w++ = '[';
    size_t start = 0;
    int first = 1;
    for (size_t i = 0; i < v->s.len; i++) {
      if (p[i] == 0) {
        if (!first)
          *w++ = ',';
        first = 0;
        w = put_str(w, p + start, i - start);
        start = i + 1;
      }
    }
    if (start < v->s.len) { /* last string without its NUL */
      if (!first)
        *w++ = ',';
      w = put_str(w, p + start, v->s.len - start);
    }
    *w++ = ']';
    return w;
  }
  case EL_EV_CCS:
    *w++ = '[';
    for (uint64_t i = 0; i < v->u; i++) {
      if (i)
        *w++ = ',';
      w = el_fmt_u64(w, el_ev_be32(p + 4 * i));
    }
    *w++ = ']';
    return w;
  }
  return put_lit(w, "null");
}

/* Corruption the decoder skipped over (a cut block, §4.6) still makes the
 * command fail at the end, like ghc-events would: the first is kept (the
 * status of finish). Every warning, corruption included, goes to the warn
 * hook as it comes, so that the parts are said in byte order. */
static void on_warning(void *ud, const el_diag_t *d) {
  el_ev_json_t *j = ud;
  if (d->code && !j->corrupt.code)
    j->corrupt = *d;
  if (j->warn)
    j->warn(j->warn_ud, d);
}

static int on_event(void *ud, const el_ev_event_t *e) {
  el_ev_json_t *j = ud;
  size_t need = 8 * (size_t)e->payload_len + 1024;
  for (unsigned i = 0; i < e->nfields; i++)
    need += 8 * e->v[i].s.len + 64;
  if (el_grow(&j->buf, &j->cap, need, 1) < 0) {
    j->failed = 1;
    return 1;
  }
  char *w = j->buf;
  const el_ev_type_info_t *t = e->known ? el_ev_type_info(e->type) : NULL;
  w = put_lit(w, "{\"offset\":");
  w = el_fmt_u64(w, e->offset);
  w = put_lit(w, ",\"type\":");
  w = el_fmt_u64(w, e->type);
  w = put_lit(w, ",\"name\":");
  if (t) {
    *w++ = '"';
    w = put_lit(w, t->name);
    *w++ = '"';
  } else {
    w = put_lit(w, "null");
  }
  w = put_lit(w, ",\"t_ns\":");
  w = el_fmt_u64(w, e->t_ns);
  w = put_lit(w, ",\"unix_ns\":");
  el_unix_ns_t u = el_ev_decoder_unix_ns(j->dec, e->t_ns);
  w = u ? el_fmt_u64(w, u) : put_lit(w, "null");
  w = put_lit(w, ",\"cap\":");
  w = e->cap == EL_EV_NO_CAP ? put_lit(w, "null") : el_fmt_u64(w, e->cap);
  if (t) {
    w = put_lit(w, ",\"fields\":{");
    for (unsigned i = 0; i < e->nfields && i < t->nfields; i++) {
      if (i)
        *w++ = ',';
      *w++ = '"';
      w = put_lit(w, t->fields[i].name);
      w = put_lit(w, "\":");
      w = put_value(w, t->fields[i].kind, &e->v[i]);
    }
    *w++ = '}';
  } else {
    el_strview_t d = decl_desc(j->dec, e->type);
    w = put_lit(w, ",\"desc\":");
    w = put_str(w, (const uint8_t *)d.p, d.len);
    w = put_lit(w, ",\"payload_hex\":");
    w = put_hex(w, e->payload, e->payload_len);
    if (e->malformed)
      w = put_lit(w, ",\"malformed\":true");
  }
  w = put_lit(w, "}\n");
  fwrite(j->buf, 1, (size_t)(w - j->buf), j->out);
  return 0;
}

el_ev_json_t *el_ev_json_new(FILE *out) {
  el_ev_json_t *j = el_calloc(1, sizeof *j);
  if (!j)
    return NULL;
  j->out = out;
  el_ev_sink_t sink = {.ud = j, .on_event = on_event,
                       .on_warning = on_warning};
  j->dec = el_ev_decoder_new(&sink);
  if (!j->dec) {
    el_ev_json_free(j);
    return NULL;
  }
  j->diag.event_type = -1;
  return j;
}

void el_ev_json_free(el_ev_json_t *j) {
  if (!j)
    return;
  el_ev_decoder_free(j->dec);
  el_free(j->buf);
  el_free(j);
}

void el_ev_json_set_warn(el_ev_json_t *j, el_ev_warn_fn fn, void *ud) {
  j->warn = fn;
  j->warn_ud = ud;
}

void el_ev_json_reset(el_ev_json_t *j) { el_ev_decoder_reset(j->dec); }

int el_ev_json_set_opts(el_ev_json_t *j, unsigned opts) {
  return el_ev_decoder_set_opts(j->dec, opts);
}

int el_ev_json_feed(el_ev_json_t *j, const uint8_t *buf, size_t len) {
  int rc = el_ev_decoder_feed(j->dec, buf, len);
  if (j->failed) {
    j->diag.code = EL_ENOMEM;
    snprintf(j->diag.msg, sizeof j->diag.msg, "out of memory");
    return EL_ENOMEM;
  }
  if (rc)
    j->diag = *el_ev_decoder_diag(j->dec);
  return rc;
}

int el_ev_json_finish(el_ev_json_t *j) {
  int rc = el_ev_decoder_finish(j->dec);
  if (rc) {
    j->diag = *el_ev_decoder_diag(j->dec);
  } else if (j->corrupt.code) { /* a warning: said by the warn hook */
    rc = EL_ECORRUPT;
    j->diag = j->corrupt;
  }
  /* No header read: a failure, as in el_ev_show_finish (before, a header
   * not found or cut kept EL_ETRUNC, and show --json exited 0); a
   * connection's bytes without one said as they came (EL_ECORRUPT)
   * stay so. */
  if (rc != EL_ECORRUPT && !el_ev_decoder_stats(j->dec)->sessions) {
    if (!rc)
      j->diag = *el_ev_decoder_diag(j->dec);
    rc = EL_EBADHDR;
  }
  return rc;
}

const el_diag_t *el_ev_json_diag(const el_ev_json_t *j) { return &j->diag; }
