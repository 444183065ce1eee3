// pulse.js -- a protocol model of goa pulse's worker pool, the peer of
// `fleet-bench pool`: one operation is a DispatchJob of a new key from a
// client-only node, through the routing node's pool sink to one of its 8
// workers, the worker's start (the job recorded in the replicated maps)
// and its ack back to the dispatcher; with 1 and 50 dispatches in flight,
// as fleet-bench pool's c1 and c50. It sends the Redis commands the real
// code sends, in the same order, from the small RESP client in resp.js (no
// package needed).
//
// Followed (goadesign/pulse, read 2026-11, commit 4c3bed6b):
//   pool/node.go     AddNode (the pool stream with MaxLen maxQueuedJobs
//     1000, the "events" sink on it for nodes that are not client-only,
//     the node stream and its reader from the oldest event), DispatchJob
//     and dispatchJob (claimDispatch, poolStream.Add, the wait for the
//     dispatch return, releaseDispatchPending), routeWorkerEvent (the
//     start event added to the worker's stream WithOnlyIfStreamExists,
//     kept in pendingEvents), processNodeEvent and ackWorkerEvent (on the
//     worker's ack: a dispatch return added to the dispatching node's
//     stream, then the sink's Ack), returnDispatchStatus, workerForEvent
//     (the jump hash over the active workers, read from the local
//     replicas), the map, stream and key names at the end of the file;
//   pool/scripts.go  luaClaimDispatch (HGET payload, HGET pending, HSET,
//     HINCRBY =rev, HSET =kind, PUBLISH) and luaReleaseDispatch (HGET,
//     HDEL, HINCRBY, HSET, PUBLISH);
//   pool/worker.go   handleEvents and startJob (jobsMap.AppendUniqueValues,
//     then jobPayloadsMap.Set, then the handler), ackPoolEvent (an ack
//     added to the routing node's stream WithOnlyIfStreamExists);
//   pool/node_options.go  the defaults: maxQueuedJobs 1000, sink block 5 s,
//     ackGracePeriod 20 s, workerTTL 30 s (a worker reader blocks 15 s);
//   streaming/streams.go  Stream.Add: XADD key [NOMKSTREAM] MAXLEN ~ N *
//     n NAME p PAYLOAD, and no EXPIRE (no stream TTL is set);
//   streaming/sink.go and streaming/reader.go  the sink's XREADGROUP and a
//     reader's XREAD (COUNT 1000, BLOCK), Sink.Ack (XACK);
//   rmap/map.go      runLuaScript (EVALSHA on the map's hash and channel,
//     no EXPIRE without a TTL), each joined map's own subscription;
//   rmap/scripts.go  luaAppendUnique (HGET, HSET, HINCRBY, HSET, PUBLISH
//     when the key is new) and luaSet (HGET, HSET, HINCRBY, HSET,
//     PUBLISH).
// Written here to send the same commands; no pulse code is copied. The Lua
// below makes the calls of those scripts with its own code. Payloads keep
// pulse's binary layouts (marshalJob, marshalEnvelope, marshalAck), each
// byte carried as one character. Each Go loop (the sink's, the router's,
// each worker's, each node reader's) is an async loop here with its own
// connection, and each dispatch in flight has its own connection, as
// go-redis's pool gives each goroutine one; the 3 maps the routing node
// joined that change on every dispatch (pending jobs, jobs, job payloads)
// each have a subscribed connection, so that every PUBLISH is delivered.
// The periodic work (node and worker keep-alives, the sink's keep-alive
// and idle-message claims, the cleanups) is not per dispatch and is left
// out. As in fleet-bench pool, every key is new and the jobs stay
// started, so the pool grows during the run (and pulse's per-worker job
// list, a JSON array rewritten by every start, with it).
//
//   node pulse.js --url redis://HOST:PORT [--seconds S]
//
// Metrics, as JSON lines in fleet-bench's format, bench "pulse": c1_* and
// c50_* (ops/s, client and server CPU per dispatch, commands and scripts
// per dispatch from INFO commandstats, latency p50 and p99 in µs).
'use strict';

const crypto = require('crypto');
const { connect, sample } = require('./resp');

const BENCH = 'pulse';
const POOL = 'bench';
const WORKERS = 8;
const MAXLEN = 1000; // maxQueuedJobs and the streams' default MaxLen
const COUNT = 1000; // the readers' and the sink's MaxPolled
const SINK_BLOCK_MS = 5000;
const WORKER_BLOCK_MS = 15000; // workerTTL / 2
const ACK_GRACE_NS = 20n * 1000000000n;

const mapContent = (name) => `map:${POOL}:${name}:content`;
const mapUpdates = (name) => `map:${POOL}:${name}:updates`;
const stream = (name) => `pulse:stream:${name}`;
const K = {
  payloads: mapContent('job-payloads'),
  pending: mapContent('pending-jobs'),
  pendingCh: mapUpdates('pending-jobs'),
  jobs: mapContent('jobs'),
  jobsCh: mapUpdates('jobs'),
  payloadsCh: mapUpdates('job-payloads'),
  pool: stream(`${POOL}:pool`),
};
const nodeStream = (id) => stream(`${POOL}:node:${id}`);
const workerStream = (id) => stream(`worker:${id}`);

// The notification every map change publishes: the key, the value (for a
// set) and the revision, each after its length.
const NOTE = `
local function note(kind, ...)
  local parts = {}
  for i, v in ipairs({...}) do
    parts[#parts + 1] = string.format('%08x', #v) .. v
  end
  return kind .. ':' .. table.concat(parts)
end`;

// claimDispatch: refused when the job runs or a live guard exists; else the
// guard is set and announced.
const CLAIM = NOTE + `
if redis.call('HGET', KEYS[1], ARGV[1]) then return {3, ''} end
local cur = redis.call('HGET', KEYS[2], ARGV[1])
if cur then
  if not cur:match('^%d+$') then return {4, cur} end
  if #cur > #ARGV[2] or (#cur == #ARGV[2] and cur >= ARGV[2]) then
    return {2, cur}
  end
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
local rev = tostring(redis.call('HINCRBY', KEYS[2], '=rev', 1))
redis.call('HSET', KEYS[2], '=kind', 'set')
redis.call('PUBLISH', KEYS[3], note('set', ARGV[1], ARGV[3], rev))
return {1, ARGV[3]}`;

// releaseDispatchPending: the guard goes only if it is still this one.
const RELEASE = NOTE + `
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
local rev = tostring(redis.call('HINCRBY', KEYS[1], '=rev', 1))
redis.call('HSET', KEYS[1], '=kind', 'del')
redis.call('PUBLISH', KEYS[2], note('del', ARGV[1], rev))
return 1`;

// AppendUniqueValues(worker, key): the worker's JSON array of job keys.
const APPEND_UNIQUE = NOTE + `
local old = redis.call('HGET', KEYS[1], ARGV[1])
if #ARGV == 1 then return old end
local list = {}
if old then
  local ok, v = pcall(cjson.decode, old)
  if ok and type(v) == 'table' then list = v end
end
local seen, added = {}, false
for _, x in ipairs(list) do seen[x] = true end
for i = 2, #ARGV do
  if not seen[ARGV[i]] then
    seen[ARGV[i]] = true
    list[#list + 1] = ARGV[i]
    added = true
  end
end
if not added then return old end
local enc = cjson.encode(list)
redis.call('HSET', KEYS[1], ARGV[1], enc)
local rev = tostring(redis.call('HINCRBY', KEYS[1], '=rev', 1))
redis.call('HSET', KEYS[1], '=kind', 'set')
redis.call('PUBLISH', KEYS[2], note('set', ARGV[1], enc, rev))
return enc`;

// Set(key, value): returns whether it existed, the previous value, the
// revision.
const SET = NOTE + `
local old = redis.call('HGET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local rev = tostring(redis.call('HINCRBY', KEYS[1], '=rev', 1))
redis.call('HSET', KEYS[1], '=kind', 'set')
redis.call('PUBLISH', KEYS[2], note('set', ARGV[1], ARGV[2], rev))
return {old and 1 or 0, old or '', rev}`;

function parseArgs(argv) {
  const o = { url: null, seconds: 2 };
  for (let i = 2; i < argv.length; i++) {
    if (argv[i] === '--url' && i + 1 < argv.length) o.url = argv[++i];
    else if (argv[i] === '--seconds' && i + 1 < argv.length)
      o.seconds = Number(argv[++i]);
    else throw new Error(`unknown flag '${argv[i]}'`);
  }
  if (!o.url || !(o.seconds > 0 && o.seconds <= 600))
    throw new Error('usage: --url redis://HOST:PORT [--seconds S<=600]');
  const u = new URL(o.url);
  o.host = u.hostname;
  o.port = Number(u.port || 6379);
  return o;
}

function emit(metric, value, unit) {
  process.stdout.write(JSON.stringify({
    bench: BENCH, metric, value: Number(value.toFixed(3)), unit,
  }) + '\n');
}

// pulse's binary layouts (little-endian int32 lengths), one character per
// byte.
const i32 = (n) => {
  const b = Buffer.alloc(4);
  b.writeInt32LE(n);
  return b.toString('latin1');
};
const field = (s) => i32(Buffer.byteLength(s, 'latin1')) + s;
const readField = (s, at) => {
  const n = Buffer.from(s.slice(at, at + 4), 'latin1').readInt32LE();
  return [s.slice(at + 4, at + 4 + n), at + 4 + n];
};
function marshalJob(key, nodeId, payload) {
  const t = Buffer.alloc(9);
  t.writeBigInt64LE(BigInt(Date.now()) * 1000000n);
  t[8] = 0; // Requeued
  return field(key) + field(nodeId) + field(payload) + t.toString('latin1');
}
const envelope = (sender, payload) => field(sender) + field(payload);
const openEnvelope = (s) => {
  const [sender, at] = readField(s, 0);
  return [sender, readField(s, at)[0]];
};
const marshalAck = (eventId, error) => field(eventId) + field(error);

// A ULID's shape (26 characters), as pulse names nodes and workers.
const ulid = () => crypto.randomBytes(13).toString('hex').toUpperCase();

// The jump hash of pulse's workerForEvent.
function jumpHash(key, buckets) {
  let h = BigInt('0x' + crypto.createHash('sha1').update(key).digest('hex')
    .slice(0, 16));
  let b = -1n;
  let j = 0n;
  const mask = (1n << 64n) - 1n;
  while (j < BigInt(buckets)) {
    b = j;
    h = (h * 2862933555777941757n + 1n) & mask;
    j = BigInt(Math.floor(Number(b + 1n) * (2 ** 31 /
      Number((h >> 33n) + 1n))));
  }
  return Number(b);
}

// A stream's events from an XREAD / XREADGROUP reply: [id, name, payload].
function events(reply) {
  const out = [];
  if (!reply) return out;
  for (const [, msgs] of reply) {
    for (const [id, fields] of msgs) {
      const f = {};
      for (let i = 0; i + 1 < fields.length; i += 2)
        f[fields[i]] = fields[i + 1];
      out.push([id, f.n, f.p]);
    }
  }
  return out;
}

const xadd = (c, key, name, payload, onlyIfExists) => c.send([
  'XADD', key, ...(onlyIfExists ? ['NOMKSTREAM'] : []), 'MAXLEN', '~',
  MAXLEN, '*', 'n', name, 'p', payload]);

// One run: a routing node of 8 workers and a client-only node, `inflight`
// dispatches at a time for `seconds`; returns the metrics' samples.
async function runOnce(o, inflight, sha, info) {
  const conns = [];
  const open = async (onPush) => {
    const c = connect(o.host, o.port, onPush);
    conns.push(c);
    await c.ready;
    return c;
  };
  let stop = false;
  const W = ulid(); // the routing node, with the workers
  const C = ulid(); // the client-only node that dispatches
  const wids = [];
  for (let i = 0; i < WORKERS; i++) wids.push(ulid());
  const setup = await open();

  // The routing node: the maps it joined (their subscriptions), the sink,
  // its node stream; the workers' streams; the dispatcher's node stream.
  for (const ch of [K.pendingCh, K.jobsCh, K.payloadsCh]) {
    const s = await open(() => {});
    await s.send(['SUBSCRIBE', ch]);
  }
  await setup.send(['XGROUP', 'CREATE', K.pool, 'events', '$', 'MKSTREAM']);
  await xadd(setup, nodeStream(W), 'i', W, false);
  for (const wid of wids)
    await xadd(setup, workerStream(wid), 'i', envelope(W, wid), false);
  await xadd(setup, nodeStream(C), 'i', C, false);

  // A reader's loop from the oldest event: XREAD, then each event in turn.
  const reader = async (key, blockMs, handle) => {
    const c = await open();
    let cursor = '0';
    while (!stop) {
      const r = await c.send(['XREAD', 'COUNT', COUNT, 'BLOCK', blockMs,
        'STREAMS', key, cursor]).catch(() => null);
      const evs = events(r);
      for (const ev of evs) if (!stop) await handle(ev);
      if (evs.length) cursor = evs[evs.length - 1][0];
    }
  };

  // The routing node: the pool sink and routeWorkerEvent.
  const pendingEvents = new Map(); // "<wid>:<worker event id>" -> pool id
  const sinkConn = await open();
  const route = await open();
  const consumer = ulid();
  const sink = (async () => {
    while (!stop) {
      const r = await sinkConn.send(['XREADGROUP', 'GROUP', 'events',
        consumer, 'COUNT', COUNT, 'BLOCK', SINK_BLOCK_MS, 'STREAMS', K.pool,
        '>']).catch(() => null);
      for (const [id, name, payload] of events(r)) {
        if (stop || name !== 'j') continue;
        const key = readField(payload, 0)[0];
        const wid = wids[jumpHash(key, WORKERS)];
        const weid = await xadd(route, workerStream(wid), name,
          envelope(W, payload), true);
        pendingEvents.set(`${wid}:${weid}`, [id, payload]);
      }
    }
  })();

  // The routing node's events: a worker's ack becomes a dispatch return
  // to the dispatching node, then the sink's XACK.
  const nodeConn = await open();
  const nodeLoop = reader(nodeStream(W), SINK_BLOCK_MS, async ([, n, p]) => {
    if (n !== 'a') return;
    const [wid, ackBody] = openEnvelope(p);
    const weid = readField(ackBody, 0)[0];
    const pend = pendingEvents.get(`${wid}:${weid}`);
    if (!pend) return;
    const [poolId, job] = pend;
    const [, at] = readField(job, 0);
    const origin = readField(job, at)[0];
    await xadd(nodeConn, nodeStream(origin), 'd', marshalAck(poolId, ''),
      true);
    await nodeConn.send(['XACK', K.pool, 'events', poolId]);
    pendingEvents.delete(`${wid}:${weid}`);
  });

  // Each worker: startJob (the jobs map, then the payloads map), then the
  // ack to the routing node's stream.
  const workerLoops = [];
  for (const wid of wids) {
    const c = await open();
    workerLoops.push(reader(workerStream(wid), WORKER_BLOCK_MS,
      async ([weid, n, p]) => {
        if (n !== 'j') return;
        const [nodeId, job] = openEnvelope(p);
        const [key, at] = readField(job, 0);
        const [, at2] = readField(job, at);
        const payload = readField(job, at2)[0];
        await c.send(['EVALSHA', sha.append, 2, K.jobs, K.jobsCh, wid, key]);
        await c.send(['EVALSHA', sha.set, 2, K.payloads, K.payloadsCh, key,
          payload]);
        await xadd(c, nodeStream(nodeId), 'a',
          envelope(wid, marshalAck(weid, '')), true);
      }));
  }

  // The dispatching node: its reader resolves the waiting dispatches.
  const waiting = new Map(); // pool event id -> resolve
  const cLoop = reader(nodeStream(C), SINK_BLOCK_MS, async ([, n, p]) => {
    if (n !== 'd') return;
    const [poolId, at] = readField(p, 0);
    const err = readField(p, at)[0];
    const w = waiting.get(poolId);
    if (w) w(err);
  });

  let next = 0;
  const dispatch = async (c) => {
    const key = `r${inflight}-${next++}`;
    const now = BigInt(Date.now()) * 1000000n;
    const claim = await c.send(['EVALSHA', sha.claim, 3, K.payloads,
      K.pending, K.pendingCh, key, String(now),
      String(now + 2n * ACK_GRACE_NS)]);
    if (claim[0] !== 1) throw new Error(`claim refused (${claim[0]})`);
    const job = marshalJob(key, C, 'p');
    let resolve;
    const done = new Promise((r) => { resolve = r; });
    const id = await xadd(c, K.pool, 'j', job, false);
    waiting.set(id, resolve);
    const err = await done;
    waiting.delete(id);
    await c.send(['EVALSHA', sha.release, 2, K.pending, K.pendingCh, key,
      claim[1]]);
    if (err) throw new Error(`start failed: ${err}`);
  };

  const slots = [];
  for (let i = 0; i < inflight; i++) slots.push(await open());
  // Warm-up: one dispatch per slot.
  await Promise.all(slots.map((c) => dispatch(c)));
  const lat = [];
  let ops = 0;
  const a = await sample(info);
  const deadline = Date.now() + o.seconds * 1000;
  await Promise.all(slots.map(async (c) => {
    while (Date.now() < deadline) {
      const t0 = process.hrtime.bigint();
      await dispatch(c);
      lat.push(Number(process.hrtime.bigint() - t0) / 1000);
      ops++;
    }
  }));
  const b = await sample(info);

  stop = true;
  for (const c of conns) c.destroy();
  void [sink, nodeLoop, cLoop, ...workerLoops];
  return { ops, lat, a, b };
}

async function main() {
  const o = parseArgs(process.argv);
  const info = connect(o.host, o.port);
  await info.ready;
  const sha = {};
  for (const [name, body] of [['claim', CLAIM], ['release', RELEASE],
    ['append', APPEND_UNIQUE], ['set', SET]])
    sha[name] = await info.send(['SCRIPT', 'LOAD', body]);

  for (const inflight of [1, 50]) {
    const { ops, lat, a, b } = await runOnce(o, inflight, sha, info);
    const label = `c${inflight}`;
    const secs = Number(b.wallNs - a.wallNs) / 1e9;
    if (ops > 0 && secs > 0) {
      emit(`${label}_ops_per_s`, ops / secs, 'ops/s');
      emit(`${label}_client_cpu_us_per_op`, (b.selfUs - a.selfUs) / ops,
        'us/op');
      emit(`${label}_server_cpu_us_per_op`, (b.serverUs - a.serverUs) / ops,
        'us/op');
      emit(`${label}_scripts_per_op`, (b.scripts - a.scripts) / ops,
        'calls/op');
      emit(`${label}_commands_per_op`, (b.commands - a.commands) / ops,
        'calls/op');
      lat.sort((x, y) => x - y);
      emit(`${label}_p50_us`, lat[Math.floor(lat.length * 0.5)], 'us');
      emit(`${label}_p99_us`, lat[Math.min(lat.length - 1,
        Math.floor(lat.length * 0.99))], 'us');
    }
    // The next run starts from an empty pool.
    const keys = await info.send(['KEYS', `*${POOL}*`]);
    const more = await info.send(['KEYS', 'pulse:stream:worker:*']);
    for (const k of [...keys, ...more]) await info.send(['DEL', k]);
  }
  info.close();
}

main().catch((err) => {
  process.stderr.write(`${BENCH}: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
