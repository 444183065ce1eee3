// table.js -- prints the table of sidebyside.sh from the JSON lines its
// runs produced, each tagged with its round: fleet's figures and their
// ratios to the anchors per round, their medians, and whether each median
// meets its target (issue 11's, and issue 25's for flow control, and
// issue 27's).
//
//   node table.js RESULTS [--skip-empty]
//
// --skip-empty leaves out the rows with no value in any round (the groups
// that SIDEBYSIDE_ONLY did not run).
'use strict';

const fs = require('fs');

const lines = fs.readFileSync(process.argv[2], 'utf8').split('\n');
const results = []; // results[round]["<bench> <metric>"] = value
for (const line of lines) {
  if (!line.startsWith('{')) continue;
  const r = JSON.parse(line);
  results[r.round] = results[r.round] || {};
  results[r.round][`${r.bench} ${r.metric}`] = r.value;
}
const rounds = [];
for (let i = 1; i < results.length; i++) if (results[i]) rounds.push(i);

const get = (res, key) => (key in res ? res[key] : undefined);
const ratio = (a, b) => (a !== undefined && b ? a / b : undefined);
// `fleet-bench lock --inflight 50` and plain `fleet-bench lock` both name
// the run with 50 in flight c50.
const lock = (res, metric) => get(res, `fleet-lock c50_${metric}`);
const P1M = 'fleet-queue process_c50_pending1000000_ops_per_s';
const P1K = 'fleet-queue process_c50_pending1000_ops_per_s';
// `fleet-bench queue --keep 1000`: keeping completed-job history.
const KEEP = 'fleet-queue process_c50_keep';
// Processing under flow control (issue 25): a queue-wide rate and
// concurrency limit far above the rate reached, and 1000 groups.
const LIMIT = 'fleet-queue process_c50_limit';
const GROUPS = 'fleet-queue process_c50_groups1000';

const num = (d) => (v) => v.toFixed(d);
const times = (v) => `${v.toFixed(1)}x`;
const times2 = (v) => `${v.toFixed(2)}x`;
const pair = (v) => `${v[0].toFixed(2)}, ${v[1].toFixed(2)}`;
// Commands and scripts per operation of BENCH's LABEL run.
const calls = (r, bench, label) => {
  const c = get(r, `${bench} ${label}_commands_per_op`);
  const s = get(r, `${bench} ${label}_scripts_per_op`);
  return c === undefined || s === undefined ? undefined : [c, s];
};
// The store's server CPU per OP (put, append) without index entries and
// with one.
const storeCpu = (r, op) => {
  const a = get(r, `fleet-store ${op}_plain_c50_server_cpu_us_per_op`);
  const b = get(r, `fleet-store ${op}_c50_server_cpu_us_per_op`);
  return a === undefined || b === undefined ? undefined : [a, b];
};
const slash = (v) => `${v[0].toFixed(2)} / ${v[1].toFixed(2)}`;
const pct = (v) => `${v >= 0 ? '+' : ''}${(v * 100).toFixed(1)}%`;

// Each row: its figure, its target (text and test, or none), how to get
// the value from one round, and how to print it.
const rows = [
  ['processed jobs/s vs BullMQ, same run', '>= 8x', (v) => v >= 8,
    (r) => ratio(get(r, 'fleet-queue process_c50_ops_per_s'),
      get(r, 'bullmq process_c50_ops_per_s')), times],
  ['redis-server CPU per processed job (us)', '<= 5', (v) => v <= 5,
    (r) => get(r, 'fleet-queue process_c50_server_cpu_us_per_op'), num(2)],
  // Issue 27's queue targets.
  ['processed jobs/s vs BullMQ, same run (issue 27)', '>= 12x',
    (v) => v >= 12,
    (r) => ratio(get(r, 'fleet-queue process_c50_ops_per_s'),
      get(r, 'bullmq process_c50_ops_per_s')), times],
  ['server CPU per job vs per ping, 50 in flight', '<= 5x', (v) => v <= 5,
    (r) => ratio(get(r, 'fleet-queue process_c50_server_cpu_us_per_op'),
      get(r, 'fleet-ping c50_server_cpu_us_per_op')), times],
  ['memory backend jobs/s vs the Redis backend, same run', '>= 2x',
    (v) => v >= 2,
    (r) => ratio(get(r, 'fleet-queue-memory process_c50_ops_per_s'),
      get(r, 'fleet-queue process_c50_ops_per_s')), times],
  ['commands, scripts per processed job, 50 in flight', '', null,
    (r) => calls(r, 'fleet-queue', 'process_c50'), pair],
  ['commands, scripts per job at 2000 jobs/s', '', null,
    (r) => calls(r, 'fleet-queue', 'e2e_2000'), pair],
  ['client CPU per processed job (us)', '<= 0.7', (v) => v <= 0.7,
    (r) => get(r, 'fleet-queue process_c50_client_cpu_us_per_op'), num(2)],
  ['Redis memory per pending job, empty payload (B)', '<= 150',
    (v) => v <= 150,
    (r) => get(r, 'fleet-queue pending_bytes_per_job'), num(0)],
  ['server CPU per job at 2000 jobs/s (us)', '<= 20', (v) => v <= 20,
    (r) => get(r, 'fleet-queue e2e_2000_server_cpu_us_per_op'), num(2)],
  ['e2e p99 at 2000 jobs/s (ms)', '<= 0.5', (v) => v <= 0.5,
    (r) => {
      const us = get(r, 'fleet-queue e2e_2000_p99_us');
      return us === undefined ? undefined : us / 1000;
    }, num(3)],
  ['processing with 1M pending vs 1k pending', 'within 10%',
    (v) => Math.abs(v) <= 0.1,
    (r) => {
      const q = ratio(get(r, P1M), get(r, P1K));
      return q === undefined ? undefined : q - 1;
    }, pct],
  ['lock acquire+release/s at 50 in flight vs Redlock', '>= 8x',
    (v) => v >= 8,
    (r) => ratio(lock(r, 'ops_per_s'), get(r, 'redlock c50_ops_per_s')),
    times],
  ['redis-server CPU per acquire+release (us)', '<= 3.5', (v) => v <= 3.5,
    (r) => lock(r, 'server_cpu_us_per_op'), num(2)],
  ['server CPU per job, queue-wide limit vs none', '<= +15%',
    (v) => v <= 0.15,
    (r) => {
      const q = get(r, `${LIMIT}_server_cpu_ratio`);
      return q === undefined ? undefined : q - 1;
    }, pct],
  ['server CPU per job, 1000 groups vs none', '<= +15%', (v) => v <= 0.15,
    (r) => {
      const q = get(r, `${GROUPS}_server_cpu_ratio`);
      return q === undefined ? undefined : q - 1;
    }, pct],
  ['jobs/s with a queue-wide limit vs BullMQ unlimited', '>= 8x',
    (v) => v >= 8,
    (r) => ratio(get(r, `${LIMIT}_ops_per_s`),
      get(r, 'bullmq process_c50_ops_per_s')), times],
  ['jobs/s with 1000 groups vs BullMQ unlimited', '>= 8x', (v) => v >= 8,
    (r) => ratio(get(r, `${GROUPS}_ops_per_s`),
      get(r, 'bullmq process_c50_ops_per_s')), times],
  ['a limit of 1000 jobs/s held over 10 s, 4 workers', 'within 2%',
    (v) => Math.abs(v) <= 0.02,
    (r) => {
      const p = get(r, 'fleet-queue rate_held_1000_pct');
      return p === undefined ? undefined : p / 100 - 1;
    }, pct],
  ['Redis memory per pending grouped job, empty payload (B)', '<= 100',
    (v) => v <= 100,
    (r) => get(r, 'fleet-queue pending_grouped_bytes_per_job'), num(0)],
  ['processed jobs/s vs Bee-Queue, same run', '', null,
    (r) => ratio(get(r, 'fleet-queue process_c50_ops_per_s'),
      get(r, 'beequeue process_c50_ops_per_s')), times],
  ['fleet processed jobs/s', '', null,
    (r) => get(r, 'fleet-queue process_c50_ops_per_s'), num(0)],
  ['BullMQ processed jobs/s', '', null,
    (r) => get(r, 'bullmq process_c50_ops_per_s'), num(0)],
  ['Bee-Queue processed jobs/s', '', null,
    (r) => get(r, 'beequeue process_c50_ops_per_s'), num(0)],
  ['BullMQ memory per pending job (B)', '', null,
    (r) => get(r, 'bullmq pending_bytes_per_job'), num(0)],
  ['Bee-Queue memory per pending job (B)', '', null,
    (r) => get(r, 'beequeue pending_bytes_per_job'), num(0)],
  ['BullMQ redis-server CPU per processed job (us)', '', null,
    (r) => get(r, 'bullmq process_c50_server_cpu_us_per_op'), num(2)],
  ['Bee-Queue redis-server CPU per processed job (us)', '', null,
    (r) => get(r, 'beequeue process_c50_server_cpu_us_per_op'), num(2)],
  ['BullMQ server CPU per job at 2000 jobs/s (us)', '', null,
    (r) => get(r, 'bullmq e2e_2000_server_cpu_us_per_op'), num(2)],
  ['BullMQ e2e p99 at 2000 jobs/s (ms)', '', null,
    (r) => {
      const us = get(r, 'bullmq e2e_2000_p99_us');
      return us === undefined ? undefined : us / 1000;
    }, num(3)],
  ['fleet client CPU per job at 2000 jobs/s (us)', '', null,
    (r) => get(r, 'fleet-queue e2e_2000_client_cpu_us_per_op'), num(2)],
  ['fleet processed jobs/s, keeping 1000 completed', '', null,
    (r) => get(r, `${KEEP}_ops_per_s`), num(0)],
  ['redis-server CPU per processed job, keeping 1000 completed (us)', '',
    null, (r) => get(r, `${KEEP}_server_cpu_us_per_op`), num(2)],
  ['fleet processed jobs/s, 1k pending', '', null, (r) => get(r, P1K),
    num(0)],
  ['fleet processed jobs/s, 1M pending', '', null, (r) => get(r, P1M),
    num(0)],
  ['fleet lock acquire+release/s, 50 in flight', '', null,
    (r) => lock(r, 'ops_per_s'), num(0)],
  ['Redlock acquire+release/s, 50 in flight', '', null,
    (r) => get(r, 'redlock c50_ops_per_s'), num(0)],
  ['Redlock redis-server CPU per acquire+release (us)', '', null,
    (r) => get(r, 'redlock c50_server_cpu_us_per_op'), num(2)],
  // The warm pool (issue 27): fleet's acquire + release beside the model
  // of OpenSandbox's take + put (opensandbox.js).
  ['warm pool commands per acquire+release, 1 in flight', '<= 8',
    (v) => v <= 8, (r) => get(r, 'fleet-warmpool c1_commands_per_op'),
    num(2)],
  ['warm pool scripts per acquire+release, 1 in flight', '', null,
    (r) => get(r, 'fleet-warmpool c1_scripts_per_op'), num(2)],
  ['warm pool server CPU per acquire+release, 1 in flight (us)', '', null,
    (r) => get(r, 'fleet-warmpool c1_server_cpu_us_per_op'), num(2)],
  ['warm pool server CPU per acquire+release vs OpenSandbox, 1 in flight',
    '', null, (r) => ratio(get(r, 'fleet-warmpool c1_server_cpu_us_per_op'),
      get(r, 'opensandbox c1_server_cpu_us_per_op')), times2],
  ['warm pool server CPU per acquire+release vs OpenSandbox, 50 in flight',
    '', null, (r) => ratio(get(r, 'fleet-warmpool c50_server_cpu_us_per_op'),
      get(r, 'opensandbox c50_server_cpu_us_per_op')), times2],
  ['OpenSandbox commands, scripts per take+put', '', null,
    (r) => {
      const c = get(r, 'opensandbox c1_commands_per_op');
      const s = get(r, 'opensandbox c1_scripts_per_op');
      return c === undefined || s === undefined ? undefined : [c, s];
    }, (v) => `${v[0].toFixed(2)}, ${v[1].toFixed(2)}`],
  ['OpenSandbox server CPU per take+put, 1 in flight (us)', '', null,
    (r) => get(r, 'opensandbox c1_server_cpu_us_per_op'), num(2)],
  // Cron (issue 27): 10,000 definitions due at once on 3 schedulers,
  // beside the model of Kaal's fire (kaal.js).
  ['cron commands per fire', '<= 10', (v) => v <= 10,
    (r) => get(r, 'fleet-cron fire_commands_per_op'), num(2)],
  ['cron scripts per fire', '<= 2', (v) => v <= 2,
    (r) => get(r, 'fleet-cron fire_scripts_per_op'), num(3)],
  ['cron server CPU per fire (us)', '', null,
    (r) => get(r, 'fleet-cron fire_server_cpu_us_per_op'), num(2)],
  ['cron lateness p50, 10,000 due at once (ms)', '', null,
    (r) => {
      const us = get(r, 'fleet-cron lateness_p50_us');
      return us === undefined ? undefined : us / 1000;
    }, num(0)],
  ['cron lateness p99, 10,000 due at once (ms)', '<= 100', (v) => v <= 100,
    (r) => {
      const us = get(r, 'fleet-cron lateness_p99_us');
      return us === undefined ? undefined : us / 1000;
    }, num(0)],
  ['cron server CPU per fire vs Kaal, lookback one tick', '', null,
    (r) => ratio(get(r, 'fleet-cron fire_server_cpu_us_per_op'),
      get(r, 'kaal-lookback5 fire_server_cpu_us_per_op')), times2],
  ['cron server CPU per fire vs Kaal, its defaults (1,000 definitions)', '',
    null, (r) => ratio(get(r, 'fleet-cron fire_server_cpu_us_per_op'),
      get(r, 'kaal-lookback120 fire_server_cpu_us_per_op')), times2],
  ['Kaal commands per fire, lookback one tick', '', null,
    (r) => get(r, 'kaal-lookback5 fire_commands_per_op'), num(2)],
  ['Kaal commands per fire, its defaults (1,000 definitions)', '', null,
    (r) => get(r, 'kaal-lookback120 fire_commands_per_op'), num(2)],
  ['Kaal lateness p99, lookback one tick (ms)', '', null,
    (r) => {
      const us = get(r, 'kaal-lookback5 lateness_p99_us');
      return us === undefined ? undefined : us / 1000;
    }, num(0)],
  // The pool (issue 27): dispatch + start beside the model of goa
  // pulse's DispatchJob (pulse.js).
  ['pool commands per dispatch, 50 in flight', '<= 10', (v) => v <= 10,
    (r) => get(r, 'fleet-pool c50_commands_per_op'), num(2)],
  ['pool scripts per dispatch, 50 in flight', '<= 2', (v) => v <= 2,
    (r) => get(r, 'fleet-pool c50_scripts_per_op'), num(2)],
  ['pool commands, scripts per dispatch, 1 in flight', '', null,
    (r) => calls(r, 'fleet-pool', 'c1'), pair],
  ['pool p50 at 1 in flight, in ping round trips', '<= 3', (v) => v <= 3,
    (r) => ratio(get(r, 'fleet-pool c1_p50_us'),
      get(r, 'fleet-ping c1_p50_us')), num(2)],
  ['pool server CPU per dispatch, 1 in flight (us)', '', null,
    (r) => get(r, 'fleet-pool c1_server_cpu_us_per_op'), num(2)],
  ['pool server CPU per dispatch, 50 in flight (us)', '', null,
    (r) => get(r, 'fleet-pool c50_server_cpu_us_per_op'), num(2)],
  ['pool server CPU per dispatch vs pulse, 1 in flight', '', null,
    (r) => ratio(get(r, 'fleet-pool c1_server_cpu_us_per_op'),
      get(r, 'pulse c1_server_cpu_us_per_op')), times2],
  ['pool server CPU per dispatch vs pulse, 50 in flight', '', null,
    (r) => ratio(get(r, 'fleet-pool c50_server_cpu_us_per_op'),
      get(r, 'pulse c50_server_cpu_us_per_op')), times2],
  ['pool dispatches/s vs pulse, 50 in flight', '', null,
    (r) => ratio(get(r, 'fleet-pool c50_ops_per_s'),
      get(r, 'pulse c50_ops_per_s')), times],
  ['pulse commands, scripts per dispatch, 1 in flight', '', null,
    (r) => calls(r, 'pulse', 'c1'), pair],
  ['pulse commands, scripts per dispatch, 50 in flight', '', null,
    (r) => calls(r, 'pulse', 'c50'), pair],
  ['pulse server CPU per dispatch, 1 in flight (us)', '', null,
    (r) => get(r, 'pulse c1_server_cpu_us_per_op'), num(2)],
  ['pulse server CPU per dispatch, 50 in flight (us)', '', null,
    (r) => get(r, 'pulse c50_server_cpu_us_per_op'), num(2)],
  ['pulse p50 at 1 in flight (us)', '', null,
    (r) => get(r, 'pulse c1_p50_us'), num(0)],
  // The record store (issue 27): a put (a record replaced) and an event
  // append, without index entries and with one.
  ['store commands per put, no index entry', '<= 4', (v) => v <= 4,
    (r) => get(r, 'fleet-store put_plain_c50_commands_per_op'), num(2)],
  ['store commands per append, no index entry', '<= 4', (v) => v <= 4,
    (r) => get(r, 'fleet-store append_plain_c50_commands_per_op'), num(2)],
  ['store commands, scripts per put, one index entry', '', null,
    (r) => calls(r, 'fleet-store', 'put_c50'), pair],
  ['store commands, scripts per append, one index entry', '', null,
    (r) => calls(r, 'fleet-store', 'append_c50'), pair],
  ['store server CPU per put, no index entry / one (us)', '', null,
    (r) => storeCpu(r, 'put'), slash],
  ['store server CPU per append, no index entry / one (us)', '', null,
    (r) => storeCpu(r, 'append'), slash],
  ['baseline: fleet-bench ping p50, 1 in flight (us)', '', null,
    (r) => get(r, 'fleet-ping c1_p50_us'), num(0)],
  ['baseline: server CPU per ping, 50 in flight (us)', '', null,
    (r) => get(r, 'fleet-ping c50_server_cpu_us_per_op'), num(2)],
  ['baseline: fleet-bench ping/s, 1 in flight', '', null,
    (r) => get(r, 'fleet-ping c1_ops_per_s'), num(0)],
  ['baseline: fleet-bench ping/s, 50 in flight', '', null,
    (r) => get(r, 'fleet-ping c50_ops_per_s'), num(0)],
  ['baseline: server CPU per ping, 2000 paced pings/s (us)', '', null,
    (r) => get(r, 'fleet-ping paced_2000_server_cpu_us_per_op'), num(2)],
];

function median(values) {
  const v = values.filter((x) => x !== undefined);
  // Pairs (commands, scripts): the median of each.
  if (v.length && Array.isArray(v[0]))
    return [median(v.map((x) => x[0])), median(v.map((x) => x[1]))];
  v.sort((a, b) => a - b);
  if (v.length === 0) return undefined;
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

const header = ['figure', 'target', ...rounds.map((r) => `round ${r}`),
  'median', 'met'];
const table = [header];
const skipEmpty = process.argv.includes('--skip-empty');
for (const [figure, target, meets, value, show] of rows) {
  const values = rounds.map((r) => value(results[r]));
  if (skipEmpty && values.every((v) => v === undefined)) continue;
  const m = median(values);
  const cell = (v) => (v === undefined ? 'n/a' : show(v));
  const met = !meets ? '' : m === undefined ? 'n/a' : meets(m) ? 'yes' : 'no';
  table.push([figure, target, ...values.map(cell), cell(m), met]);
}
const widths = header.map((_, i) => Math.max(...table.map((r) => r[i].length)));
for (const row of table) {
  const cells = row.map((c, i) => (i < 2 ? c.padEnd(widths[i])
    : c.padStart(widths[i])));
  process.stdout.write(`| ${cells.join(' | ')} |\n`);
  if (row === header) {
    const rule = widths.map((w) => '-'.repeat(w + 2)).join('|');
    process.stdout.write(`|${rule}|\n`);
  }
}
