/* ev_codes.c: the names of the codes carried inside event payloads, one
 * table each: STOP_THREAD statuses (spec/eventlog-format.md §2.2) and
 * HEAP_PROF_BEGIN breakdowns (§2.5), each with the text `show` prints
 * (ghc-events 0.21, §6.4) beside its name. */
#include <string.h>

#include "../common/el_fmt.h"
#include "eventlog_internal.h"

/* By status code: the ghc-events constructor name (the telemetry's
 * `status` attribute, the Lua `status.name`) and the `show` text, padded
 * to EL__EV_STATUS_TEXT bytes so that show copies it with a constant
 * size. 19 is ThreadMigrating in GHC's numbering but "NoStatus" in
 * ghc-events 0.21, whose table we follow. */
static const struct {
  const char *name;
  char text[EL__EV_STATUS_TEXT];
} statuses[] = {
    {"NoStatus", "No stop thread status"},
    {"HeapOverflow", "heap overflow"},
    {"StackOverflow", "stack overflow"},
    {"ThreadYielding", "thread yielding"},
    {"ThreadBlocked", "thread blocked"},
    {"ThreadFinished", "thread finished"},
    {"ForeignCall", "making a foreign call"},
    {"BlockedOnMVar", "blocked on an MVar"},
    {"BlockedOnBlackHole", "blocked on a black hole"},
    {"BlockedOnRead", "blocked on I/O read"},
    {"BlockedOnWrite", "blocked on I/O write"},
    {"BlockedOnDelay", "blocked on threadDelay"},
    {"BlockedOnSTM", "blocked in STM retry"},
    {"BlockedOnDoProc", "blocked on asyncDoProc"},
    {"BlockedOnCCall", "blocked in a foreign call"},
    {"BlockedOnCCall_NoUnblockExc", "blocked in a foreign call"},
    {"BlockedOnMsgThrowTo", "blocked in throwTo"},
    {"ThreadMigrating", "thread migrating"},
    {"BlockedOnMsgGlobalise", "waiting for data to be globalised"},
    {"NoStatus", "No stop thread status"},
    {"BlockedOnMVarRead", "blocked reading an MVar"},
};

/* Copy the n bytes at s into buf (size bytes) as snprintf("%s") would:
 * cut to size - 1 and NUL-terminated; returns n. Without snprintf: the
 * host's native thread spans name a status per span. */
static size_t put_name(char *buf, size_t size, const char *s, size_t n) {
  if (size) {
    size_t k = n < size ? n : size - 1;
    memcpy(buf, s, k);
    buf[k] = '\0';
  }
  return n;
}

size_t el_ev_stop_status_name(uint64_t code, uint64_t info, char *buf,
                              size_t size) {
  /* info 0: the RTS found no owner (GHC numbers threads from 1), and
   * ghc-events names a black hole without one "BlockedOnBlackHole". */
  if (code == EL_EV_STATUS_BLOCKED_ON_BLACK_HOLE && info != 0) {
    static const char owned[] = "BlockedOnBlackHoleOwnedBy ";
    char tmp[sizeof owned - 1 + EL_FMT_U64_ROOM];
    memcpy(tmp, owned, sizeof owned - 1);
    char *e = el_fmt_u64(tmp + sizeof owned - 1, info);
    return put_name(buf, size, tmp, (size_t)(e - tmp));
  }
  const char *s = statuses[code < EL_ARRAY_LEN(statuses) ? code : 0].name;
  return put_name(buf, size, s, strlen(s));
}

const char *el__ev_stop_status_text(uint64_t code) {
  return statuses[code < EL_ARRAY_LEN(statuses) ? code : 0].text;
}

/* By breakdown code: the RTS flag that selects it and the `show` text. */
static const struct {
  const char *flag, *text;
} breakdowns[] = {
    {NULL, "unknown"},           {"-hc", "cost centre"},
    {"-hm", "module"},           {"-hd", "closure description"},
    {"-hy", "type description"}, {"-hr", "retainer"},
    {"-hb", "biography"},        {"-hT", "closure type"},
    {"-hi", "info table"},       {"-he", "era"},
};

const char *el_ev_breakdown_flag(uint64_t code) {
  return code < EL_ARRAY_LEN(breakdowns) ? breakdowns[code].flag : NULL;
}

const char *el__ev_breakdown_text(uint64_t code) {
  return breakdowns[code < EL_ARRAY_LEN(breakdowns) ? code : 0].text;
}
