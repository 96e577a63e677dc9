/* el_grow.c: geometric array growth (el_grow.h). */
#include "el_grow.h"

#include <stdint.h>
#include <string.h>

#include "el_common.h"

int el__grow(void *arrp, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return 0;
  size_t ncap = *cap ? *cap : EL_GROW_MIN;
  while (ncap < need) {
    if (ncap > SIZE_MAX / 2) return EL_ENOMEM;
    ncap *= 2;
  }
  if (elem && ncap > SIZE_MAX / elem) return EL_ENOMEM;
  void *old;
  memcpy(&old, arrp, sizeof old); /* arrp is a T **: same representation */
  void *p = el_realloc(old, ncap * elem);
  if (!p) return EL_ENOMEM;
  memcpy(arrp, &p, sizeof p);
  *cap = ncap;
  return 0;
}
