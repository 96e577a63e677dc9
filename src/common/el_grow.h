/* el_grow.h: geometric growth of el_malloc'd arrays, the one place that
 * decides how arrays grow (doubling, from EL_GROW_MIN elements) and checks
 * the size arithmetic for overflow. Depends on libc only.
 *
 * Usage (arr is any T *, cap a size_t counting elements):
 *   if (el_grow(&a->items, &a->cap, a->n + 1, sizeof *a->items) < 0)
 *     return EL_ENOMEM;
 *   a->items[a->n++] = x;
 */
#ifndef EL_GROW_H
#define EL_GROW_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The capacity an empty array gets on its first growth, in elements. */
#define EL_GROW_MIN 8

/* The slow path of el_grow; call el_grow. */
int el__grow(void *arrp, size_t *cap, size_t need, size_t elem);

/* Make the array *arrp hold at least `need` elements of `elem` bytes.
 * arrp: the address of the array pointer (a T **, passed as void *); the
 *   array is NULL or was allocated with el_malloc/el_realloc.
 * cap: its capacity in elements, updated on growth.
 * The new capacity is the old one doubled (EL_GROW_MIN when it was 0)
 * until it reaches need. The array moves (el_realloc): pointers into it
 * are invalid after a growth. New elements are not initialised.
 * Returns 0 (nothing done when need <= *cap), or EL_ENOMEM when memory
 * runs out or the byte size would overflow size_t; *arrp and *cap are
 * then unchanged. Thread: any; the array is the caller's. */
static inline int el_grow(void *arrp, size_t *cap, size_t need, size_t elem) {
  return need <= *cap ? 0 : el__grow(arrp, cap, need, elem);
}

#ifdef __cplusplus
}
#endif
#endif /* EL_GROW_H */
