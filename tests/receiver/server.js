#!/usr/bin/env node
// Test OTLP receiver for eventlog-live's tests: gRPC (@grpc/grpc-js) and
// HTTP/protobuf, decoding every request with OpenTelemetry's own message
// definitions (@opentelemetry/otlp-transformer 0.52.1, generated root.js),
// appending one JSON line per accepted request to --out, with fault
// injection (command line or control HTTP endpoint). See README.md.
'use strict';

const fs = require('fs');
const path = require('path');
const http = require('http');
const https = require('https');
const net = require('net');
const zlib = require('zlib');
const { parseArgs } = require('util');
const { execFileSync } = require('child_process');
const grpc = require('@grpc/grpc-js');
const protobuf = require('protobufjs');
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');

const P = root.opentelemetry.proto;

// {====== signals ======}

// For each signal: gRPC method path, HTTP path, request/response types
// (null for profiles: root.js has no profiles messages, so those requests
// are kept as raw bytes and decoded with protoc when --profiles-proto is
// given), and the partial_success field carrying the rejected count.
const SIGNALS = {
  metrics: {
    grpcPath: '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export',
    httpPath: '/v1/metrics',
    req: P.collector.metrics.v1.ExportMetricsServiceRequest,
    resp: P.collector.metrics.v1.ExportMetricsServiceResponse,
    rejectedField: 'rejectedDataPoints',
  },
  logs: {
    grpcPath: '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
    httpPath: '/v1/logs',
    req: P.collector.logs.v1.ExportLogsServiceRequest,
    resp: P.collector.logs.v1.ExportLogsServiceResponse,
    rejectedField: 'rejectedLogRecords',
  },
  traces: {
    grpcPath: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
    httpPath: '/v1/traces',
    req: P.collector.trace.v1.ExportTraceServiceRequest,
    resp: P.collector.trace.v1.ExportTraceServiceResponse,
    rejectedField: 'rejectedSpans',
  },
  profiles: {
    grpcPath: '/opentelemetry.proto.collector.profiles.v1development.' +
      'ProfilesService/Export',
    httpPath: '/v1development/profiles',
    req: null,
    resp: null,
    rejectedField: 'rejectedProfiles',
  },
};

// google.rpc.Status / RetryInfo, for grpc-status-details-bin (the OTLP
// spec's way to tell a client when to retry RESOURCE_EXHAUSTED).
const rpcRoot = protobuf.parse(`
  syntax = "proto3";
  package google.rpc;
  message Any { string type_url = 1; bytes value = 2; }
  message Duration { int64 seconds = 1; int32 nanos = 2; }
  message RetryInfo { Duration retry_delay = 1; }
  message Status { int32 code = 1; string message = 2; repeated Any details = 3; }
`, { keepCase: true }).root;
const RpcStatus = rpcRoot.lookupType('google.rpc.Status');
const RetryInfo = rpcRoot.lookupType('google.rpc.RetryInfo');

// {====== options ======}

const { values: opt } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    'grpc-port': { type: 'string', default: '0' },
    'http-port': { type: 'string', default: '0' },
    'control-port': { type: 'string', default: '0' },
    out: { type: 'string', default: 'received.jsonl' },
    'ready-file': { type: 'string' },
    'raw-dir': { type: 'string' },
    'profiles-proto': { type: 'string' },
    'tls-cert': { type: 'string' },
    'tls-key': { type: 'string' },
    'refuse-ms': { type: 'string', default: '0' },
    'delay-ms': { type: 'string', default: '0' },
    'max-recv-bytes': { type: 'string', default: String(4 * 1024 * 1024) },
    fault: { type: 'string', multiple: true, default: [] },
    'no-request': { type: 'boolean', default: false },
    quiet: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});

if (opt.help) {
  process.stdout.write(fs.readFileSync(path.join(__dirname, 'README.md')));
  process.exit(0);
}

// --tls-cert/--tls-key: serve gRPC and HTTP over TLS with this PEM pair.
const tls = opt['tls-cert'] && opt['tls-key']
  ? { cert: fs.readFileSync(opt['tls-cert']),
      key: fs.readFileSync(opt['tls-key']) }
  : null;

const state = {
  grpcPort: Number(opt['grpc-port']),
  httpPort: Number(opt['http-port']),
  delayMs: Number(opt['delay-ms']),
  maxRecvBytes: Number(opt['max-recv-bytes']),
  faults: [],        // queue of { kind, n, ... }, consumed front first
  seq: 0,            // requests seen (accepted or faulted)
  stats: { accepted: {}, faulted: {}, points: {}, bytes: 0, pings: 0 },
  grpcServer: null,
  httpServer: null,
  listening: false,
  refuseTimer: null,
  grpcEncoding: new Map(),   // peer -> grpc-encoding of its last call
  grpcSessions: new Map(),   // peer -> HTTP/2 session
};

function log(msg) {
  if (!opt.quiet) process.stderr.write(`receiver: ${msg}\n`);
}

// Fault spec from the command line: kind[:n[:arg]], e.g. unavailable:3,
// exhausted:2:500 (retry delay ms), reject:1:5 (rejected count, at most
// the request's records), overreject:1:1000000 (that count, unclamped: a
// receiver's bug), fail:1:3
// (gRPC code; HTTP status = 400), goaway:1, reset:1.
function parseFault(s) {
  const [kind, n, arg] = s.split(':');
  const f = { kind, n: n === undefined ? 1 : Number(n) };
  if (arg !== undefined) f.arg = Number(arg);
  return f;
}

const FAULT_KINDS = new Set([
  'unavailable', 'exhausted', 'exhausted-noinfo', 'calm', 'goaway',
  'goaway-after', 'reject', 'overreject', 'fail', 'reset', 'delay'
]);

function addFault(f) {
  if (!FAULT_KINDS.has(f.kind) || !(f.n >= 1)) {
    throw new Error(`bad fault ${JSON.stringify(f)}`);
  }
  state.faults.push(f);
}

// The fault that applies to the next request (consumes one count).
function takeFault() {
  while (state.faults.length > 0) {
    const f = state.faults[0];
    if (f.n <= 0) { state.faults.shift(); continue; }
    f.n -= 1;
    if (f.n <= 0) state.faults.shift();
    return f;
  }
  return null;
}

// {====== decoding and recording ======}

// Convert bytes fields that OTLP/JSON writes as hex (trace and span ids).
function hexIds(o) {
  if (Array.isArray(o)) { o.forEach(hexIds); return; }
  if (o === null || typeof o !== 'object') return;
  for (const k of Object.keys(o)) {
    const v = o[k];
    if ((k === 'traceId' || k === 'spanId' || k === 'parentSpanId') &&
        typeof v === 'string') {
      o[k] = Buffer.from(v, 'base64').toString('hex');
    } else {
      hexIds(v);
    }
  }
}

// Records inside a decoded request: metric data points, log records, spans.
function countRecords(signal, obj) {
  let n = 0;
  if (signal === 'metrics') {
    for (const rm of obj.resourceMetrics || [])
      for (const sm of rm.scopeMetrics || [])
        for (const m of sm.metrics || []) {
          const d = m.gauge || m.sum || m.histogram ||
            m.exponentialHistogram || m.summary;
          n += d && d.dataPoints ? d.dataPoints.length : 0;
        }
  } else if (signal === 'logs') {
    for (const rl of obj.resourceLogs || [])
      for (const sl of rl.scopeLogs || [])
        n += (sl.logRecords || []).length;
  } else if (signal === 'traces') {
    for (const rs of obj.resourceSpans || [])
      for (const ss of rs.scopeSpans || [])
        n += (ss.spans || []).length;
  }
  return n;
}

// Decode a request body; throws on malformed protobuf.
function decodeRequest(signal, body) {
  const sig = SIGNALS[signal];
  const rec = { signal };
  if (sig.req) {
    const msg = sig.req.decode(body);
    const obj = sig.req.toObject(msg, {
      longs: String, enums: Number, bytes: String, defaults: false,
    });
    hexIds(obj);
    rec.records = countRecords(signal, obj);
    if (!opt['no-request']) rec.request = obj;
    return rec;
  }
  // Profiles: raw bytes to a file, decoded with protoc when asked.
  const dir = opt['raw-dir'] || path.dirname(path.resolve(opt.out));
  const file = path.join(dir, `profiles-${state.seq}.bin`);
  fs.writeFileSync(file, body);
  rec.raw_file = file;
  if (opt['profiles-proto']) {
    const protoRoot = opt['profiles-proto'];
    rec.decoded_text = execFileSync('protoc', [
      `-I${protoRoot}`,
      '--decode=opentelemetry.proto.collector.profiles.v1development.' +
        'ExportProfilesServiceRequest',
      'opentelemetry/proto/collector/profiles/v1development/' +
        'profiles_service.proto',
    ], { input: body, encoding: 'utf8' });
  }
  return rec;
}

function record(rec, transport, bytes, extra) {
  const now = Date.now();
  const line = Object.assign({
    time: new Date(now).toISOString(), time_ms: now, transport, bytes,
  }, extra, rec);
  fs.appendFileSync(opt.out, JSON.stringify(line) + '\n');
  const s = state.stats;
  s.accepted[rec.signal] = (s.accepted[rec.signal] || 0) + 1;
  s.points[rec.signal] = (s.points[rec.signal] || 0) + (rec.records || 0);
  s.bytes += bytes;
}

function countFault(signal, kind) {
  const key = `${signal}:${kind}`;
  state.stats.faulted[key] = (state.stats.faulted[key] || 0) + 1;
}

function encodeResponse(signal, rejected, message) {
  const sig = SIGNALS[signal];
  if (!sig.resp) {
    // ExportProfilesServiceResponse: field 1 = partial_success
    // { int64 rejected_profiles = 1; string error_message = 2; }.
    if (!rejected) return Buffer.alloc(0);
    const w = protobuf.Writer.create();
    w.uint32(10).fork().uint32(8).int64(rejected);
    w.uint32(18).string(message || 'rejected by test receiver');
    return Buffer.from(w.ldelim().finish());
  }
  const body = {};
  if (rejected) {
    body.partialSuccess = {
      [sig.rejectedField]: rejected,
      errorMessage: message || 'rejected by test receiver',
    };
  }
  return Buffer.from(sig.resp.encode(sig.resp.fromObject(body)).finish());
}

function later(ms, fn) {
  if (ms > 0) setTimeout(fn, ms); else fn();
}

// {====== gRPC ======}

const identity = (b) => b;

function grpcServiceFor(signal) {
  return {
    Export: {
      path: SIGNALS[signal].grpcPath,
      requestStream: false,
      responseStream: false,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    },
  };
}

function retryInfoMetadata(code, message, delayMs) {
  const md = new grpc.Metadata();
  const info = RetryInfo.encode(RetryInfo.create({
    retry_delay: { seconds: Math.floor(delayMs / 1000),
                   nanos: (delayMs % 1000) * 1e6 },
  })).finish();
  const st = RpcStatus.encode(RpcStatus.create({
    code, message,
    details: [{ type_url: 'type.googleapis.com/google.rpc.RetryInfo',
                value: info }],
  })).finish();
  md.set('grpc-status-details-bin', Buffer.from(st));
  return md;
}

function grpcHandler(signal) {
  return (call, callback) => {
    state.seq += 1;
    const body = call.request;
    const f = takeFault();
    const delay = state.delayMs + (f && f.kind === 'delay' ? f.arg || 1000 : 0);
    later(delay, () => {
      if (f && f.kind !== 'delay') {
        if (grpcFault(signal, f, callback, call)) return;
      }
      let rec;
      try {
        rec = decodeRequest(signal, body);
      } catch (e) {
        countFault(signal, 'malformed');
        log(`grpc ${signal}: malformed request: ${e.message}`);
        callback({ code: grpc.status.INVALID_ARGUMENT, details: e.message });
        return;
      }
      const rejected = f && f.kind === 'overreject' ?
          f.arg :
          f && f.kind === 'reject' ?
          Math.min(f.arg || 1, rec.records || f.arg || 1) :
          0;
      const md = call.metadata.getMap();
      record(rec, 'grpc', body.length, {
        rejected,
        grpc_encoding: state.grpcEncoding.get(call.getPeer()) || 'unknown',
        headers: filterHeaders(md),
      });
      callback(null, encodeResponse(signal, rejected));
      if (f && f.kind === 'goaway-after') drainGrpc(1000);
    });
  };
}

// Apply a failing fault; returns true when the call has been answered.
function grpcFault(signal, f, callback, call) {
  const S = grpc.status;
  switch (f.kind) {
    case 'unavailable':
      countFault(signal, f.kind);
      callback({ code: S.UNAVAILABLE, details: 'test receiver: unavailable' });
      return true;
    case 'exhausted':
      countFault(signal, f.kind);
      callback({ code: S.RESOURCE_EXHAUSTED,
                 details: 'test receiver: resource exhausted',
                 metadata: retryInfoMetadata(S.RESOURCE_EXHAUSTED,
                   'test receiver: resource exhausted', f.arg || 200) });
      return true;
    case 'exhausted-noinfo':
      countFault(signal, f.kind);
      callback({ code: S.RESOURCE_EXHAUSTED,
                 details: 'test receiver: resource exhausted, no retry info' });
      return true;
    case 'fail':
      countFault(signal, f.kind);
      callback({ code: f.arg || S.INVALID_ARGUMENT,
                 details: 'test receiver: permanent failure' });
      return true;
    case 'calm': {
      // What a collector does to a client breaking its keepalive policy:
      // GOAWAY ENHANCE_YOUR_CALM "too_many_pings" on this call's session,
      // which is then closed; the call gets no answer.
      countFault(signal, f.kind);
      const session = state.grpcSessions.get(call.getPeer());
      if (session) {
        try {
          session.goaway(NGHTTP2_ENHANCE_YOUR_CALM, 0,
            Buffer.from('too_many_pings'));
        } catch (e) { /* already closing */ }
        setTimeout(() => session.destroy(), 50);
      }
      return true;
    }
    case 'goaway':
    case 'reset':
      // Close every HTTP/2 session (GOAWAY, then cancel what is in flight)
      // without answering this call.
      countFault(signal, f.kind);
      drainGrpc(0);
      return true;
    default:
      return false;
  }
}

// host:port for grpc-js, with brackets around an IPv6 address.
function hostPort(port) {
  return opt.host.includes(':') ? `[${opt.host}]:${port}` : `${opt.host}:${port}`;
}

function drainGrpc(graceMs) {
  if (state.grpcServer && state.grpcPort) {
    log(`grpc: GOAWAY to all sessions (grace ${graceMs} ms)`);
    state.grpcServer.drain(hostPort(state.grpcPort), graceMs);
  }
}

function filterHeaders(map) {
  const out = {};
  for (const [k, v] of Object.entries(map)) {
    if (k.startsWith(':') || k === 'content-length') continue;
    out[k] = Buffer.isBuffer(v) ? v.toString('base64') : String(v);
  }
  return out;
}

// A default collector (grpc-go keepalive.EnforcementPolicy: MinTime 5 min,
// PermitWithoutStream false) answers a client that pings while idle, or
// more often than every 5 minutes, more than twice with GOAWAY
// ENHANCE_YOUR_CALM "too_many_pings". grpc-js does not enforce this, so
// the receiver does it on the HTTP/2 sessions grpc-js creates (an internal
// field of the pinned grpc-js version).
const PING_MIN_MS = 5 * 60 * 1000;
const NGHTTP2_ENHANCE_YOUR_CALM = 0xb;

function enforcePingPolicy(server) {
  const servers = server.http2Servers;
  if (!servers || typeof servers.keys !== 'function') return;
  for (const h2 of servers.keys()) {
    h2.on('session', (session) => {
      const ps = { strikes: 0, last: 0, reset: true, active: 0 };
      const peer = session.socket
        ? `${session.socket.remoteAddress}:${session.socket.remotePort}` : '';
      state.grpcSessions.set(peer, session);
      session.on('close', () => state.grpcSessions.delete(peer));
      session.on('stream', (stream, headers) => {
        // grpc-js removes grpc-encoding from the call's metadata: note it
        // per peer for the request's JSON line (calls from one peer are
        // handled in order).
        state.grpcEncoding.set(peer, headers['grpc-encoding'] || 'identity');
        ps.active += 1;
        ps.reset = true;
        stream.on('close', () => { ps.active -= 1; });
      });
      session.on('ping', () => {
        state.stats.pings += 1;
        const now = Date.now();
        if (ps.reset) {
          ps.reset = false; ps.strikes = 0; ps.last = now; return;
        }
        if (ps.active === 0 || now - ps.last < PING_MIN_MS) ps.strikes += 1;
        ps.last = now;
        if (ps.strikes > 2) {
          countFault('grpc', 'too_many_pings');
          log('grpc: GOAWAY ENHANCE_YOUR_CALM too_many_pings');
          try {
            session.goaway(NGHTTP2_ENHANCE_YOUR_CALM, 0,
              Buffer.from('too_many_pings'));
          } catch (e) { /* session already closing */ }
        }
      });
    });
  }
}

function startGrpc() {
  return new Promise((resolve, reject) => {
    const server = new grpc.Server({
      'grpc.max_receive_message_length': state.maxRecvBytes,
    });
    for (const signal of Object.keys(SIGNALS)) {
      server.addService(grpcServiceFor(signal),
        { Export: grpcHandler(signal) });
    }
    const creds = tls
      ? grpc.ServerCredentials.createSsl(null,
        [{ private_key: tls.key, cert_chain: tls.cert }], false)
      : grpc.ServerCredentials.createInsecure();
    server.bindAsync(hostPort(state.grpcPort), creds, (err, port) => {
      if (err) { reject(err); return; }
      state.grpcPort = port;
      state.grpcServer = server;
      enforcePingPolicy(server);
      resolve();
    });
  });
}

// {====== HTTP/protobuf ======}

const HTTP_SIGNALS = Object.fromEntries(
  Object.entries(SIGNALS).map(([k, v]) => [v.httpPath, k]));

function httpHandler(req, res) {
  const signal = HTTP_SIGNALS[req.url.split('?')[0]];
  if (req.method !== 'POST' || !signal) {
    res.writeHead(404, { 'Content-Type': 'text/plain' });
    res.end('not found\n');
    return;
  }
  const chunks = [];
  let size = 0;
  let tooBig = false;
  req.on('data', (c) => {
    size += c.length;
    if (size > state.maxRecvBytes) tooBig = true; else chunks.push(c);
  });
  req.on('end', () => {
    state.seq += 1;
    const f = takeFault();
    const delay = state.delayMs + (f && f.kind === 'delay' ? f.arg || 1000 : 0);
    later(delay, () => httpAnswer(req, res, signal, f, tooBig,
      Buffer.concat(chunks), size));
  });
}

function httpAnswer(req, res, signal, f, tooBig, raw, size) {
  if (tooBig) {
    countFault(signal, 'too-big');
    res.writeHead(413, { 'Content-Type': 'text/plain' });
    res.end(`request of ${size} bytes exceeds ${state.maxRecvBytes}\n`);
    return;
  }
  if (f && httpFault(req, res, signal, f)) return;
  let body = raw;
  const enc = (req.headers['content-encoding'] || '').toLowerCase();
  let rec;
  try {
    if (enc === 'gzip') body = zlib.gunzipSync(raw);
    else if (enc && enc !== 'identity') throw new Error(`encoding ${enc}`);
    if (body.length > state.maxRecvBytes) throw new Error('too big');
    rec = decodeRequest(signal, body);
  } catch (e) {
    countFault(signal, 'malformed');
    log(`http ${signal}: malformed request: ${e.message}`);
    res.writeHead(400, { 'Content-Type': 'text/plain' });
    res.end(`malformed: ${e.message}\n`);
    return;
  }
  const rejected = f && f.kind === 'overreject' ?
      f.arg :
      f && f.kind === 'reject' ?
      Math.min(f.arg || 1, rec.records || f.arg || 1) :
      0;
  record(rec, 'http', raw.length, {
    rejected, compressed: enc === 'gzip', headers: filterHeaders(req.headers),
  });
  res.writeHead(200, { 'Content-Type': 'application/x-protobuf' });
  res.end(encodeResponse(signal, rejected));
}

function httpFault(req, res, signal, f) {
  const retryAfter = String(Math.max(0, Math.ceil((f.arg || 1000) / 1000)));
  switch (f.kind) {
    case 'unavailable':
      countFault(signal, f.kind);
      res.writeHead(503, { 'Retry-After': retryAfter });
      res.end('test receiver: unavailable\n');
      return true;
    case 'exhausted':
      countFault(signal, f.kind);
      res.writeHead(429, { 'Retry-After': retryAfter });
      res.end('test receiver: too many requests\n');
      return true;
    case 'exhausted-noinfo':
      countFault(signal, f.kind);
      res.writeHead(429);
      res.end('test receiver: too many requests\n');
      return true;
    case 'fail':
      // As the OpenTelemetry Collector answers (OTLP/HTTP spec: a failed
      // request's body is a google.rpc.Status in the request's encoding).
      countFault(signal, f.kind);
      res.writeHead(400, {'Content-Type': 'application/x-protobuf'});
      res.end(Buffer.from(
          RpcStatus
              .encode(RpcStatus.create(
                  {code: 3, message: 'test receiver: permanent failure'}))
              .finish()));
      return true;
    case 'goaway':
    case 'reset':
    case 'calm':
      countFault(signal, f.kind);
      req.socket.destroy();
      return true;
    default:
      return false;
  }
}

function startHttp() {
  return new Promise((resolve, reject) => {
    const server = tls
      ? https.createServer({ key: tls.key, cert: tls.cert }, httpHandler)
      : http.createServer(httpHandler);
    server.keepAliveTimeout = 30000;
    server.on('error', reject);
    server.listen(state.httpPort, opt.host, () => {
      state.httpPort = server.address().port;
      state.httpServer = server;
      resolve();
    });
  });
}

// {====== listening, refusing ======}

// A port free now, for a server that must know its port before it listens
// (--refuse-ms at start). Drawn from below the kernel's ephemeral range: a
// port the kernel handed out for port 0 and that was closed again can be
// taken at once by the local end of another test's outgoing connection
// (CI saw EADDRINUSE). Same rule as tests/tools/free_port.py.
function ephemeralLow() {
  try {
    return Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range',
      'utf8').split(/\s+/)[0]) || 32768;
  } catch (e) { return 32768; }
}

function tryPort(port) {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.on('error', () => resolve(false));
    s.listen(port, opt.host, () => s.close(() => resolve(true)));
  });
}

async function freePort() {
  const hi = Math.min(ephemeralLow(), 65536) - 1;
  const lo = hi > 21000 ? 20000 : 1024;
  for (let i = 0; i < 200; i++) {
    const p = lo + Math.floor(Math.random() * (hi - lo + 1));
    if (await tryPort(p)) return p;
  }
  throw new Error('no free port found');
}

// listen() on fixed ports again after a refusal: the port may be held for
// a moment (another process's connection); retry for up to 10 s.
async function listenAgain() {
  for (let i = 0; ; i++) {
    try { await listen(); return; } catch (e) {
      stopListening();
      if (i >= 100 || !/EADDRINUSE/.test(String(e.message))) throw e;
      log(`listen failed (${e.message}), retrying`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function listen() {
  await startGrpc();
  await startHttp();
  state.listening = true;
  log(`listening: grpc ${opt.host}:${state.grpcPort}, ` +
      `http ${opt.host}:${state.httpPort}`);
}

function stopListening() {
  if (state.grpcServer) { state.grpcServer.forceShutdown(); }
  if (state.httpServer) {
    state.httpServer.close();
    state.httpServer.closeAllConnections();
  }
  state.grpcServer = null;
  state.httpServer = null;
  state.listening = false;
}

// Stop listening now without losing an answer: new connections are
// refused at once, open ones are closed as soon as they are idle (gRPC:
// GOAWAY, calls in flight still answered; HTTP: idle keep-alive
// connections closed now, busy ones right after their answer). Closing a
// connection whose request was recorded but not yet answered would make
// the client's retry a duplicate that no client can avoid (docs/otlp.md
// "Delivery guarantee").
function stopListeningGracefully() {
  const g = state.grpcServer;
  const h = state.httpServer;
  state.grpcServer = null;
  state.httpServer = null;
  state.listening = false;
  if (g) g.tryShutdown(() => {});
  if (h) {
    h.close();
    h.closeIdleConnections();
    // Busy connections become idle once answered: close them then.
    const t = setInterval(() => h.closeIdleConnections(), 20);
    h.on('close', () => clearInterval(t));
  }
}

// Stop listening now and listen again on the same ports after ms.
function refuse(ms) {
  if (state.refuseTimer) clearTimeout(state.refuseTimer);
  stopListeningGracefully();
  log(`refusing connections for ${ms} ms`);
  state.refuseTimer = setTimeout(() => {
    state.refuseTimer = null;
    listenAgain().catch((e) => { log(`listen failed: ${e.message}`); });
  }, ms);
}

// {====== control endpoint ======}

function controlHandler(req, res) {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const url = new URL(req.url, 'http://x');
    const reply = (code, obj) => {
      res.writeHead(code, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(obj) + '\n');
    };
    try {
      const body = chunks.length ? JSON.parse(Buffer.concat(chunks)) : {};
      if (url.pathname === '/stats') {
        reply(200, Object.assign({ listening: state.listening,
          pending_faults: state.faults }, state.stats));
      } else if (url.pathname === '/fault' && req.method === 'POST') {
        addFault({ kind: body.kind, n: body.n || 1, arg: body.arg });
        reply(200, { ok: true, pending_faults: state.faults });
      } else if (url.pathname === '/refuse' && req.method === 'POST') {
        refuse(Number(body.ms || 1000));
        reply(200, { ok: true });
      } else if (url.pathname === '/goaway' && req.method === 'POST') {
        drainGrpc(Number(body.grace_ms || 0));
        reply(200, { ok: true });
      } else if (url.pathname === '/config' && req.method === 'POST') {
        if (body.delay_ms !== undefined) state.delayMs = Number(body.delay_ms);
        reply(200, { ok: true, delay_ms: state.delayMs });
      } else if (url.pathname === '/reset' && req.method === 'POST') {
        state.faults = [];
        state.delayMs = 0;
        reply(200, { ok: true });
      } else {
        reply(404, { error: 'unknown control path' });
      }
    } catch (e) {
      reply(400, { error: e.message });
    }
  });
}

// {====== main ======}

async function main() {
  for (const s of opt.fault) addFault(parseFault(s));
  fs.writeFileSync(opt.out, '');
  const refuseMs = Number(opt['refuse-ms']);
  // Ports the kernel picks (0) are bound at once; only a receiver that
  // refuses at start must name its ports before it listens.
  if (refuseMs > 0) {
    if (!state.grpcPort) state.grpcPort = await freePort();
    if (!state.httpPort) state.httpPort = await freePort();
  }
  const control = http.createServer(controlHandler);
  await new Promise((resolve) => control.listen(
    Number(opt['control-port']), opt.host, resolve));
  if (refuseMs > 0) {
    log(`refusing connections for ${refuseMs} ms`);
    state.refuseTimer = setTimeout(() => {
      state.refuseTimer = null;
      listenAgain().catch((e) => { log(`listen failed: ${e.message}`); });
    }, refuseMs);
  } else {
    await listen();
  }
  const ready = { grpc: state.grpcPort, http: state.httpPort,
                  control: control.address().port, pid: process.pid };
  if (opt['ready-file']) {
    const tmp = opt['ready-file'] + '.tmp';
    fs.writeFileSync(tmp, JSON.stringify(ready) + '\n');
    fs.renameSync(tmp, opt['ready-file']);
  }
  process.stdout.write(`READY ${JSON.stringify(ready)}\n`);
  const stop = () => { stopListening(); control.close(); process.exit(0); };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((e) => {
  process.stderr.write(`receiver: ${e.stack || e}\n`);
  process.exit(1);
});
