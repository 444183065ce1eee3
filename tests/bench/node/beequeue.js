// beequeue.js -- the Bee-Queue anchor of sidebyside.sh, the method of
// fleet-bench queue: 100000 jobs with empty data saved in bulk (saveAll of
// 1000, four in flight) and the server's used_memory delta per job, then
// one queue processing them (concurrency 50, a no-op handler,
// removeOnSuccess), for at most 3 x --seconds.
//
//   node beequeue.js --url redis://HOST:PORT [--seconds S]
//
// Metrics, as JSON lines: enqueue_bulk_*, pending_bytes_per_job,
// process_c50_* (ops/s and client and server CPU per job).
'use strict';

const BeeQueue = require('bee-queue');
const { emit, emitRates, run, sample, usedMemory, waitUntil } =
  require('./common');

const JOBS = 100000;
const BATCH = 1000;
const CONCURRENCY = 50;

run('beequeue', async (o, redis) => {
  const queue = new BeeQueue('bench', {
    redis: { host: o.host, port: o.port },
    removeOnSuccess: true,
    sendEvents: false,
  });
  await queue.ready();

  let next = 0;
  const adder = async () => {
    while (next < JOBS / BATCH) {
      next++;
      const jobs = [];
      for (let i = 0; i < BATCH; i++) jobs.push(queue.createJob({}));
      const errors = await queue.saveAll(jobs);
      if (errors.size > 0) throw errors.values().next().value;
    }
  };
  const m0 = await usedMemory(redis);
  let a = await sample(redis);
  await Promise.all([adder(), adder(), adder(), adder()]);
  let b = await sample(redis);
  const m1 = await usedMemory(redis);
  emitRates('beequeue', 'enqueue_bulk', JOBS, a, b);
  emit('beequeue', 'pending_bytes_per_job', (m1 - m0) / JOBS, 'B/job');

  let completed = 0;
  queue.on('succeeded', () => completed++);
  queue.on('failed', (job, err) => {
    throw err;
  });
  a = await sample(redis);
  queue.process(CONCURRENCY, async () => {});
  await waitUntil(() => completed >= JOBS, o.seconds * 3);
  b = await sample(redis);
  emitRates('beequeue', `process_c${CONCURRENCY}`, completed, a, b);
  await queue.close(5000);
});
