-- The script eventlog-live-otelcol runs: the default processors.
require("eventlog_live.processors").start(require("eventlog_live"))
