/* fake_plugin.c: the plugins unit/test_plugin opens (tests/CMakeLists.txt
 * builds it twice): eventlog-live-fake.so with the table el_plugin_fake,
 * and eventlog-live-fake-dash.so with el_plugin_fake_dash (a '-' in a
 * plugin's name is a '_' in its symbol), both of interface version 7. */
#include "plugin/plugin.h"

typedef struct {
  el_plugin_head_t head;
  int (*answer)(void);
} fake_table_t;

static int answer(void) { return FAKE_ANSWER; }

extern const fake_table_t FAKE_SYMBOL;
const fake_table_t FAKE_SYMBOL = {{7, FAKE_NAME}, answer};
