// kaal.js -- a protocol model of Kaal's fire with its Redis registry, the
// peer of `fleet-bench cron`: --defs definitions "every --every seconds",
// all due at the same instants, on --nodes schedulers of one namespace.
// It sends the Redis commands the real code sends, in the same order, one
// at a time per node (Kaal's coordinator is one thread making synchronous
// calls), from the small RESP client in resp.js (no package needed).
//
// Followed (Code-Vedas/kaal, core/kaal, read 2026-11):
//   lib/kaal/core/coordinator.rb   run_loop (a tick, then sleep
//     tick_interval), execute_tick (each enabled entry), the window
//     [now - window_lookback, now + window_lookahead],
//     dispatch_if_due (fire times not after now; acquire the lease on
//     "<namespace>:dispatch:<key>:<fire_s>", then the enqueue callback);
//   lib/kaal/core/enabled_entry_enumerator.rb and
//   lib/kaal/definition/registry.rb  the definitions read on every tick
//     (enabled_definitions: all_definitions, then a filter);
//   lib/kaal/definition/redis_engine.rb  all_definitions: HVALS of
//     "<namespace>:definitions" (JSON per key);
//   lib/kaal/backend/redis_adapter.rb  acquire: SET key uuid NX PX ttl_ms;
//   lib/kaal/backend/dispatch_attempt_logger.rb and
//   lib/kaal/dispatch/redis_engine.rb  with enable_log_dispatch_registry
//     (off by default), SETEX "<namespace>:cron_dispatch:<key>:<fire_s>";
//   lib/kaal/config/configuration.rb  the defaults: tick_interval 5,
//     window_lookback 120, window_lookahead 0, lease_ttl 125, the log off.
// Written here to send the same commands; no Kaal code is copied. The
// enqueue callback is the application's and sends nothing here.
//
//   node kaal.js --url redis://HOST:PORT [--defs N] [--every S]
//     [--rounds R] [--nodes K] [--tick S] [--lookback S] [--log]
//
// --lookback defaults to Kaal's 120 s; `--lookback 5` (one tick) is the
// tightest window that still sees every occurrence (each sent by each node
// on one or two ticks; with 0 a tick sees only an occurrence at its own
// instant).
// Metrics, as JSON lines in fleet-bench's format, bench "kaal-lookback<S>":
// fire_* (fires/s, client
// and server CPU per fire, commands and scripts per fire from INFO
// commandstats) and lateness_p50_us / lateness_p99_us (the wall clock when
// the lease is won minus the fire time).
'use strict';

const crypto = require('crypto');
const { connect, sample } = require('./resp');

// The bench's name carries the window: kaal-lookback<S>.
let BENCH = 'kaal';
const NS = 'kaal';

function parseArgs(argv) {
  const o = {
    url: null, defs: 10000, every: 5, rounds: 3, nodes: 3, tick: 5,
    lookback: 120, log: false,
  };
  const num = (i) => Number(argv[i]);
  for (let i = 2; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--log') o.log = true;
    else if (i + 1 >= argv.length) throw new Error(`bad flag '${a}'`);
    else if (a === '--url') o.url = argv[++i];
    else if (a === '--defs') o.defs = num(++i);
    else if (a === '--every') o.every = num(++i);
    else if (a === '--rounds') o.rounds = num(++i);
    else if (a === '--nodes') o.nodes = num(++i);
    else if (a === '--tick') o.tick = num(++i);
    else if (a === '--lookback') o.lookback = num(++i);
    else throw new Error(`unknown flag '${a}'`);
  }
  if (!o.url || !(o.defs >= 1 && o.defs <= 1000000) ||
      !(o.every >= 1 && 60 % o.every === 0) || !(o.rounds >= 1 &&
      o.rounds <= 100) || !(o.nodes >= 1 && o.nodes <= 16) ||
      !(o.tick >= 1) || !(o.lookback >= 0))
    throw new Error('usage: --url redis://HOST:PORT [--defs N<=1e6] ' +
      '[--every S dividing 60] [--rounds R<=100] [--nodes K<=16] ' +
      '[--tick S] [--lookback S] [--log]');
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

const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

async function main() {
  const o = parseArgs(process.argv);
  BENCH = `kaal-lookback${o.lookback}`;
  const info = connect(o.host, o.port);
  const nodes = [];
  for (let k = 0; k < o.nodes; k++) nodes.push(connect(o.host, o.port));
  await Promise.all([info.ready, ...nodes.map((n) => n.ready)]);

  // The definitions, as the Redis definition engine stores them (one HSET
  // of JSON per key; fugit's six-field cron with seconds).
  const now0 = new Date().toISOString();
  for (let i = 0; i < o.defs; i++) {
    await nodes[0].send(['HSET', `${NS}:definitions`, `d${i}`, JSON.stringify({
      key: `d${i}`, cron: `*/${o.every} * * * * *`, enabled: true,
      source: 'code', metadata: {}, created_at: now0, updated_at: now0,
      disabled_at: null,
    })]);
  }

  const ttlMs = String((o.lookback + o.tick) * 1000); // lease_ttl's minimum
  const everyMs = o.every * 1000;
  let fires = 0;
  let measuring = false;
  const late = [];
  let stop = false;

  // One node's coordinator: a tick, then sleep tick_interval.
  const run = async (c, id) => {
    while (!stop) {
      const raw = await c.send(['HVALS', `${NS}:definitions`]);
      const defs = raw.map((j) => JSON.parse(j)).filter((d) => d.enabled)
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      for (const d of defs) {
        const now = Date.now();
        const from = now - o.lookback * 1000;
        const to = now; // window_lookahead 0, and only times not after now
        // The occurrences of "*/every" seconds in [from, to].
        for (let t = Math.ceil(from / everyMs) * everyMs; t <= to;
          t += everyMs) {
          const fireS = Math.floor(t / 1000);
          const key = `${NS}:dispatch:${d.key}:${fireS}`;
          const ok = await c.send(['SET', key, crypto.randomUUID(), 'NX',
            'PX', ttlMs]);
          if (ok !== 'OK') continue;
          if (o.log) {
            await c.send(['SETEX', `${NS}:cron_dispatch:${d.key}:${fireS}`,
              String(7 * 24 * 3600), JSON.stringify({
                key: d.key, fire_time: fireS,
                dispatched_at: Math.floor(Date.now() / 1000), node_id: id,
                status: 'dispatched',
              })]);
          }
          fires++;
          if (measuring) late.push((Date.now() - t) * 1000);
        }
      }
      await sleep(o.tick * 1000);
    }
  };

  // Nodes start a third of a tick apart (independent processes).
  const runs = nodes.map((c, k) => sleep((k * o.tick * 1000) / o.nodes)
    .then(() => run(c, `node${k}`)));
  // Warm-up: one period, plus the lookback's backlog of the first ticks.
  await sleep(everyMs + o.tick * 1000);
  const a = await sample(info);
  const f0 = fires;
  measuring = true;
  await sleep(o.rounds * everyMs);
  measuring = false;
  const b = await sample(info);
  const n = fires - f0;
  process.stdout.write(`# ${o.defs} definitions every ${o.every}s on ` +
    `${o.nodes} nodes, tick ${o.tick}s, lookback ${o.lookback}s: ${n} ` +
    `fires in ${o.rounds} periods (expected ${o.defs * o.rounds})\n`);
  const secs = Number(b.wallNs - a.wallNs) / 1e9;
  if (n > 0) {
    emit('fire_ops_per_s', n / secs, 'ops/s');
    emit('fire_client_cpu_us_per_op', (b.selfUs - a.selfUs) / n, 'us/op');
    emit('fire_server_cpu_us_per_op', (b.serverUs - a.serverUs) / n,
      'us/op');
    emit('fire_scripts_per_op', (b.scripts - a.scripts) / n, 'calls/op');
    emit('fire_commands_per_op', (b.commands - a.commands) / n, 'calls/op');
    late.sort((x, y) => x - y);
    emit('lateness_p50_us', late[Math.floor(late.length * 0.5)], 'us');
    emit('lateness_p99_us', late[Math.min(late.length - 1,
      Math.floor(late.length * 0.99))], 'us');
  }
  stop = true;
  await Promise.all(runs);
  for (const c of nodes) c.close();
  info.close();
}

main().catch((err) => {
  process.stderr.write(`${BENCH}: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
