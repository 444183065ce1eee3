// opensandbox.js -- a protocol model of OpenSandbox's Redis pool store, the
// peer of fleet-bench warmpool: one operation is a take of an idle sandbox
// (Acquire from idle) plus the put of one back into idle (the primary's
// commit of a warm-up), with 1 and 50 in flight on a pool pre-filled with
// --idle entries. It sends the Redis commands the real code sends, in the
// same order, from the small RESP client in resp.js (no package needed).
//
// Followed (opensandbox-group/OpenSandbox, Go SDK, read 2026-11):
//   sdks/sandbox/go/poolredis/store.go  the scripts takeIdle, putIdle and
//     renewLock, GetDestroyState (a GET) and resolveIdleTTL (a GET);
//   sdks/sandbox/go/pool.go             Acquire: ensureNamespaceActive
//     (GET destroy:state), TryTakeIdleWithMinTTL, then after the connect
//     ensureNamespaceActiveAfterCreate (GET destroy:state again);
//   sdks/sandbox/go/pool_reconciler.go  each warm-up commit:
//     RenewPrimaryLock, then PutIdle.
// The Lua below is written here to make the same calls (TIME, LPOP, HGET,
// HDEL; GET, GET, PEXPIRE; GET, TIME, HGET, RPUSH, HSET), not copied.
// Sandbox HTTP calls (connect, renew, kill) are not Redis and not modelled.
//
//   node opensandbox.js --url redis://HOST:PORT [--seconds S] [--idle N]
//
// Metrics, as JSON lines in fleet-bench's format: c1_* and c50_* (ops/s,
// client and server CPU per operation, commands and scripts per operation
// from INFO commandstats).
'use strict';

const { connect, sample } = require('./resp');

const BENCH = 'opensandbox';
const POOL = '{b3BlbnNhbmRib3g}'; // the key tag: base64url of the pool name
const PREFIX = `opensandbox:pool:${POOL}:`;
const K = {
  list: PREFIX + 'idle:list',
  exp: PREFIX + 'idle:expires',
  lock: PREFIX + 'lock',
  destroy: PREFIX + 'destroy:state',
  ttl: PREFIX + 'idleTtlMillis',
};
const OWNER = 'owner-1';
const LOCK_TTL_MS = 60000;
const IDLE_TTL_MS = 3600000;
const MIN_TTL_MS = 60000;

// TryTakeIdleWithMinTTL: pops ids until one has more than the minimum left.
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cut = now + (tonumber(ARGV[1]) or 0)
local alive = {}
while true do
  local id = redis.call('LPOP', KEYS[1])
  if not id then
    if #alive == 0 then return nil end
    return {'', alive}
  end
  local e = redis.call('HGET', KEYS[2], id)
  if e then
    redis.call('HDEL', KEYS[2], id)
    if tonumber(e) > cut then return {id, alive} end
    if tonumber(e) > now then alive[#alive + 1] = id end
  end
end`;

// RenewPrimaryLock: refused under a destroy fence or another owner.
const RENEW = `
if redis.call('GET', KEYS[2]) then return 0 end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`;

// PutIdle: appends the id with its expiry unless it is there and alive.
const PUT = `
if redis.call('GET', KEYS[3]) then return -1 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cur = redis.call('HGET', KEYS[2], ARGV[1])
if cur and tonumber(cur) > now then return 0 end
if cur then redis.call('LREM', KEYS[1], 0, ARGV[1]) end
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], now + tonumber(ARGV[2]))
return 1`;

function parseArgs(argv) {
  const o = { url: null, seconds: 2, idle: 200 };
  for (let i = 2; i < argv.length; i++) {
    if (argv[i] === '--url' && i + 1 < argv.length) o.url = argv[++i];
    else if (argv[i] === '--seconds' && i + 1 < argv.length)
      o.seconds = Number(argv[++i]);
    else if (argv[i] === '--idle' && i + 1 < argv.length)
      o.idle = Number(argv[++i]);
    else throw new Error(`unknown flag '${argv[i]}'`);
  }
  if (!o.url || !(o.seconds > 0) || !(o.idle >= 1))
    throw new Error('usage: --url redis://HOST:PORT [--seconds S] [--idle N]');
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

function emitRates(label, ops, a, b) {
  const secs = Number(b.wallNs - a.wallNs) / 1e9;
  if (ops === 0 || secs <= 0) return;
  emit(`${label}_ops_per_s`, ops / secs, 'ops/s');
  emit(`${label}_client_cpu_us_per_op`, (b.selfUs - a.selfUs) / ops, 'us/op');
  emit(`${label}_server_cpu_us_per_op`, (b.serverUs - a.serverUs) / ops,
    'us/op');
  // The two samples' own INFO calls are not counted (info is skipped).
  emit(`${label}_scripts_per_op`, (b.scripts - a.scripts) / ops, 'calls/op');
  emit(`${label}_commands_per_op`, (b.commands - a.commands) / ops,
    'calls/op');
}

async function main() {
  const o = parseArgs(process.argv);
  const c = connect(o.host, o.port);
  const info = connect(o.host, o.port);
  await Promise.all([c.ready, info.ready]);
  const sha = {};
  for (const [name, body] of [['take', TAKE], ['renew', RENEW], ['put', PUT]])
    sha[name] = await c.send(['SCRIPT', 'LOAD', body]);

  // The pool as a started primary leaves it: its lock, the idle TTL, and
  // --idle committed sandboxes.
  await c.send(['SET', K.lock, OWNER, 'PX', LOCK_TTL_MS]);
  await c.send(['SET', K.ttl, IDLE_TTL_MS]);
  for (let i = 0; i < o.idle; i++)
    await c.send(['EVALSHA', sha.put, 3, K.list, K.exp, K.destroy, `sbx-${i}`,
      IDLE_TTL_MS]);

  // One operation: Acquire's take (between its two fence reads), then the
  // commit of a sandbox into idle (the one just taken, so idle stays full).
  const op = async () => {
    if (await c.send(['GET', K.destroy])) throw new Error('pool destroyed');
    const r = await c.send(['EVALSHA', sha.take, 2, K.list, K.exp, MIN_TTL_MS]);
    if (!r || !r[0]) throw new Error('no idle sandbox');
    if (await c.send(['GET', K.destroy])) throw new Error('pool destroyed');
    const renewed = await c.send(['EVALSHA', sha.renew, 2, K.lock, K.destroy,
      OWNER, LOCK_TTL_MS]);
    if (renewed !== 1) throw new Error('primary lock lost');
    const ttl = await c.send(['GET', K.ttl]);
    const put = await c.send(['EVALSHA', sha.put, 3, K.list, K.exp, K.destroy,
      r[0], ttl]);
    if (put !== 1) throw new Error(`put refused (${put})`);
  };

  for (const inflight of [1, 50]) {
    const deadline = Date.now() + o.seconds * 1000;
    let done = 0;
    const slot = async () => {
      while (Date.now() < deadline) {
        await op();
        done++;
      }
    };
    const a = await sample(info);
    const slots = [];
    for (let i = 0; i < inflight; i++) slots.push(slot());
    await Promise.all(slots);
    const b = await sample(info);
    emitRates(`c${inflight}`, done, a, b);
  }
  c.close();
  info.close();
}

main().catch((err) => {
  process.stderr.write(`${BENCH}: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
