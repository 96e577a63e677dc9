/* httpd_table.c: the table of the HTTP server plugin (httpd_plugin.h),
 * the one symbol eventlog-live-httpd.so exports to the binary. */
#include "httpd_plugin.h"

const el_httpd_plugin_t el_plugin_httpd = {
    .head = {EL_HTTPD_ABI, "httpd"},
    .ctl_server_start = el_ctl_server_start,
    .ctl_server_port = el_ctl_server_port,
    .ctl_server_counts = el_ctl_server_counts,
    .ctl_server_free = el_ctl_server_free,
    .web_new = el_web_new,
    .web_start = el_web_start,
    .web_allow_page_origins = el_web_allow_page_origins,
    .web_prom_port = el_web_prom_port,
    .web_view_port = el_web_view_port,
    .web_set_control_port = el_web_set_control_port,
    .web_set_ended = el_web_set_ended,
    .web_set_producer = el_web_set_producer,
    .web_set_reconnecting = el_web_set_reconnecting,
    .web_serve_until_signal = el_web_serve_until_signal,
    .web_free = el_web_free,
};
