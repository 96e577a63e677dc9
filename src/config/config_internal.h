/* config_internal.h: module-private declarations of src/config. */
#ifndef EL_CONFIG_INTERNAL_H
#define EL_CONFIG_INTERNAL_H

#include "config.h"

typedef enum { EL_CFG_PROP_STRING = 0, EL_CFG_PROP_STRATEGY } el_cfg_prop_type_t;

/* One property a processor entry may have. */
typedef struct el_cfg_prop_info_s {
  const char *key;              /* "name", "description", ... */
  el_cfg_prop_type_t type;
  bool metrics_only;            /* only metric processors have it */
  const char *doc;              /* meaning, for comments and docs */
} el_cfg_prop_info_t;

extern const el_cfg_proc_info_t el__cfg_procs[];
extern const size_t el__cfg_nprocs;
extern const el_cfg_prop_info_t el__cfg_props[];
extern const size_t el__cfg_nprops;

#endif
