/* otlp_encode.h: encode telemetry batches as OTLP protobuf requests.
 *
 * One batch becomes one or more Export<Signal>ServiceRequest messages
 * (protobuf-c, proto/ OTLP v1.11.0) of at most max_bytes each:
 *   metrics  ExportMetricsServiceRequest   (collector.metrics.v1)
 *   logs     ExportLogsServiceRequest      (collector.logs.v1)
 *   traces   ExportTraceServiceRequest     (collector.trace.v1)
 *   profiles ExportProfilesServiceRequest  (collector.profiles.v1development)
 *            with a ProfilesDictionary built per request.
 * See docs/otlp.md for the mapping of each record field.
 *
 * Thread: any thread holding a reference to the batch; the functions keep
 * no global state. */
#ifndef EL_OTLP_ENCODE_H
#define EL_OTLP_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "../telemetry/telemetry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Default receiver message limit (gRPC's default maximum receive size). */
#define EL_OTLP_DEFAULT_MAX_BYTES ((size_t)4 * 1024 * 1024)

/* Called once per encoded request. bytes[0..len) is a serialized request,
 * valid during the call only (copy to keep). nrecords: data points, log
 * records, spans or samples inside it. Return 0 to continue, or a negative
 * EL_E* code to stop encoding (el_otlp_encode then returns that code). */
typedef int (*el_otlp_emit_fn)(void *ud, const uint8_t *bytes, size_t len,
                               size_t nrecords);

/* Encode batch (signal sig) into requests of at most max_bytes serialized
 * bytes each (0 = no limit) and call emit for each, in record order.
 * A batch that does not fit is split between records (never inside one);
 * a single record that does not fit on its own is dropped and counted in
 * the return value (the caller counts and logs it; the encoder logs
 * nothing).
 * An empty batch emits nothing.
 * batch: borrowed for the call. Returns the number of records dropped for
 * size (>= 0), or EL_ENOMEM / EL_EINVAL (sig does not match the batch) /
 * the negative code returned by emit; requests emitted before an error
 * stay emitted. Spec: reference-behaviour.md §2, §5.4.2; otlp-profiles.md.
 */
int el_otlp_encode(el_tm_signal_t sig, const el_tm_batch_t *batch,
                   size_t max_bytes, el_otlp_emit_fn emit, void *ud);

/* An upper bound of the serialized bytes el_otlp_encode makes of batch
 * (the sum of the per-record, per-item and per-resource estimates it cuts
 * requests by: every field's tag and length prefix counted as 16 bytes, so
 * about 1.5-3x the real size). O(records), no allocation. 0 for NULL.
 * The exporter counts a batch waiting in its queue by it. */
size_t el_otlp_encode_estimate(const el_tm_batch_t *batch);

/* The protobuf-c descriptor of sig's Export request / response message
 * (for decoding, e.g. ..._response to read partial_success). NULL for an
 * invalid sig. */
const ProtobufCMessageDescriptor *el_otlp_request_descriptor(
    el_tm_signal_t sig);
const ProtobufCMessageDescriptor *el_otlp_response_descriptor(
    el_tm_signal_t sig);

/* Lower-case signal name: "metrics", "logs", "traces", "profiles". */
const char *el_otlp_signal_name(el_tm_signal_t sig);

/* What one record of sig is, plural, for messages that count them: "data
 * points", "log records", "spans", "profile samples" ("records" for an
 * invalid sig). Static strings. */
const char *el_otlp_record_name(el_tm_signal_t sig);

#ifdef __cplusplus
}
#endif
#endif /* EL_OTLP_ENCODE_H */
