/* el_mapguard.h: reading a mapped file that may shrink under us.
 *
 * A page of a file mapping (mmap) that lies wholly past the file's end
 * raises SIGBUS when read: another process truncated the file after it
 * was mapped (or after MADV_DONTNEED gave a page back). Unguarded, the
 * process dies. A guarded region instead returns to where it began, with
 * the offset of the byte that faulted:
 *
 *   el_mapguard_t g;
 *   if (el_mapguard_push(&g, buf, len) < 0) ... (no guard: do not read)
 *   if (sigsetjmp(g.env, 1)) {
 *     el_mapguard_pop(&g);       // g.fault_offset: the byte that faulted
 *     ... free what the region allocated; report ...
 *   }
 *   ... read buf[0..len) ...
 *   el_mapguard_pop(&g);
 *
 * Rules for the region (the jump abandons whatever it was doing):
 *   - nothing between el_mapguard_push and sigsetjmp reads the mapping;
 *   - no Lua, no lock, no stdio inside; memory it allocates must be
 *     reachable from variables set before sigsetjmp (and not changed after
 *     it unless volatile), so the fault branch can free it; a fault can
 *     only happen in code that reads the mapping, never inside el_malloc;
 *   - the branch pops the guard before anything else.
 * Only faults at addresses inside [buf, buf + len) of the thread's
 * innermost guard jump; any other SIGBUS goes to the handler that was
 * installed before (SIG_DFL: the process dies as it would have).
 * The SIGBUS handler is installed when the first guard of the process is
 * pushed and the previous one restored when the last is popped.
 * Thread: any; each thread has its own stack of guards. */
#ifndef EL_MAPGUARD_H
#define EL_MAPGUARD_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct el_mapguard_s {
  sigjmp_buf env;      /* where a fault returns; set by the caller
                                 with sigsetjmp(env, 1) after the push */
  const uint8_t *base; /* the guarded bytes: base[0..len) */
  size_t len;
  volatile uint64_t fault_offset; /* after a fault: the byte (from base)
                                     whose read raised SIGBUS */
  struct el_mapguard_s *prev;     /* the thread's enclosing guard */
} el_mapguard_t;

/* Guard reads of base[0..len) on this thread until el_mapguard_pop(g).
 * g: caller's memory, must stay in place until the pop; the caller sets
 * g->env with sigsetjmp(g->env, 1) right after this returns 0.
 * Returns 0, or a negated errno when the handler cannot be installed
 * (nothing pushed; the caller must not read the mapping). */
int el_mapguard_push(el_mapguard_t *g, const void *base, size_t len);

/* End g, the thread's innermost guard (also after a fault, first thing in
 * the fault branch). Restores the previous SIGBUS handler when g was the
 * process's last guard. */
void el_mapguard_pop(el_mapguard_t *g);

#ifdef __cplusplus
}
#endif
#endif /* EL_MAPGUARD_H */
