// common.js -- what the Node anchors share: their flags, INFO samples of
// the redis-server (CPU and memory, the method fleet-bench uses too) and
// JSON lines in fleet-bench's format.
'use strict';

const Redis = require('ioredis');

// Parses --url redis://HOST:PORT (required) and --seconds S (default 2).
function parseArgs(argv) {
  const o = { url: null, seconds: 2 };
  for (let i = 2; i < argv.length; i++) {
    if (argv[i] === '--url' && i + 1 < argv.length) o.url = argv[++i];
    else if (argv[i] === '--seconds' && i + 1 < argv.length)
      o.seconds = Number(argv[++i]);
    else throw new Error(`unknown flag '${argv[i]}'`);
  }
  if (!o.url || !(o.seconds > 0))
    throw new Error('usage: --url redis://HOST:PORT [--seconds S]');
  const u = new URL(o.url);
  o.host = u.hostname;
  o.port = Number(u.port || 6379);
  return o;
}

// The value of `field` in the INFO `section`, as a number.
async function infoField(redis, section, field) {
  const info = await redis.info(section);
  const m = info.match(new RegExp(`(?:^|\\n)${field}:([0-9.]+)`));
  if (!m) throw new Error(`INFO ${section} has no ${field}`);
  return Number(m[1]);
}

// CPU used so far, in microseconds: by this process and by the server
// (INFO cpu used_cpu_sys + used_cpu_user), and the wall clock.
async function sample(redis) {
  const sys = await infoField(redis, 'cpu', 'used_cpu_sys');
  const user = await infoField(redis, 'cpu', 'used_cpu_user');
  const self = process.cpuUsage();
  return {
    selfUs: self.user + self.system,
    serverUs: (sys + user) * 1e6,
    wallNs: process.hrtime.bigint(),
  };
}

function usedMemory(redis) {
  return infoField(redis, 'memory', 'used_memory');
}

function emit(bench, metric, value, unit) {
  process.stdout.write(
    JSON.stringify({ bench, metric, value: Number(value.toFixed(3)), unit }) +
      '\n'
  );
}

// Emits <label>_ops_per_s, <label>_client_cpu_us_per_op and
// <label>_server_cpu_us_per_op for `ops` operations between two samples.
function emitRates(bench, label, ops, a, b) {
  const secs = Number(b.wallNs - a.wallNs) / 1e9;
  if (ops === 0 || secs <= 0) return;
  emit(bench, `${label}_ops_per_s`, ops / secs, 'ops/s');
  emit(bench, `${label}_client_cpu_us_per_op`, (b.selfUs - a.selfUs) / ops,
    'us/op');
  emit(bench, `${label}_server_cpu_us_per_op`,
    (b.serverUs - a.serverUs) / ops, 'us/op');
}

// Resolves when `done()` says so or `seconds` pass, polling every 10 ms.
function waitUntil(done, seconds) {
  const deadline = Date.now() + seconds * 1000;
  return new Promise((resolve) => {
    const tick = () => {
      if (done() || Date.now() >= deadline) resolve();
      else setTimeout(tick, 10);
    };
    tick();
  });
}

// Adds jobs at `rate` per second for `seconds` (a timer every ms adds the
// ones due, one call each, as fleet-bench queue's e2e phase does) with
// `add(sentNs)`, while `completedCount()` counts them done; resolves with
// the number added once all are done or `seconds` + 10 s passed.
async function paced(rate, seconds, add, completedCount) {
  const total = Math.floor(rate * seconds);
  const t0 = process.hrtime.bigint();
  let sent = 0;
  await new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      const due = Math.min(total,
        Math.floor(Number(process.hrtime.bigint() - t0) * rate / 1e9));
      while (sent < due) {
        add(process.hrtime.bigint()).catch(reject);
        sent++;
      }
      if (sent >= total) {
        clearInterval(timer);
        resolve();
      }
    }, 1);
  });
  await waitUntil(() => completedCount() >= total, 10);
  return sent;
}

// The p-th percentile (0..100) of `values` (unsorted numbers).
function percentile(values, p) {
  if (values.length === 0) return 0;
  const v = values.slice().sort((a, b) => a - b);
  return v[Math.min(v.length - 1, Math.floor((p / 100) * v.length))];
}

// Runs `main(opts, redis)` with an INFO connection, exiting non-zero on
// any error so that the script sees the anchor fail.
function run(name, main) {
  let redis;
  (async () => {
    const o = parseArgs(process.argv);
    redis = new Redis({ host: o.host, port: o.port, lazyConnect: true });
    await redis.connect();
    await main(o, redis);
    await redis.quit();
    process.exit(0);
  })().catch((err) => {
    process.stderr.write(`${name}: ${err && err.stack ? err.stack : err}\n`);
    process.exit(1);
  });
}

module.exports = {
  Redis, emit, emitRates, paced, percentile, run, sample, usedMemory,
  waitUntil,
};
