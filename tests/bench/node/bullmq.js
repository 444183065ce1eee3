// bullmq.js -- the BullMQ anchor of sidebyside.sh, the method of
// fleet-bench queue: 100000 jobs with empty data added in bulk (1000 per
// call, four calls in flight) and the server's used_memory delta per job,
// then one worker (concurrency 50, a no-op processor, removeOnComplete)
// processing them, for at most 3 x --seconds; then, the worker still
// running, jobs added one call each at 2000 per second for --seconds
// (fleet-bench queue's e2e phase), timed from the add call to the
// worker's completed event.
//
//   node bullmq.js --url redis://HOST:PORT [--seconds S]
//
// Metrics, as JSON lines: enqueue_bulk_*, pending_bytes_per_job,
// process_c50_* (ops/s and client and server CPU per job), e2e_2000_*
// (the same per job at 2000 jobs/s, and p50/p99 latency in us).
'use strict';

const { Queue, Worker } = require('bullmq');
const { emit, emitRates, paced, percentile, run, sample, usedMemory,
  waitUntil } = require('./common');

const JOBS = 100000;
const BATCH = 1000;
const CONCURRENCY = 50;
const RATE = 2000;

run('bullmq', async (o, redis) => {
  const connection = { host: o.host, port: o.port, maxRetriesPerRequest: null };
  const queue = new Queue('bench', { connection });
  await queue.waitUntilReady();

  const batch = [];
  for (let i = 0; i < BATCH; i++)
    batch.push({ name: 'bench', data: {}, opts: { removeOnComplete: true } });
  let next = 0;
  const adder = async () => {
    while (next < JOBS / BATCH) {
      next++;
      await queue.addBulk(batch);
    }
  };
  const m0 = await usedMemory(redis);
  let a = await sample(redis);
  await Promise.all([adder(), adder(), adder(), adder()]);
  let b = await sample(redis);
  const m1 = await usedMemory(redis);
  emitRates('bullmq', 'enqueue_bulk', JOBS, a, b);
  emit('bullmq', 'pending_bytes_per_job', (m1 - m0) / JOBS, 'B/job');

  let completed = 0;
  const worker = new Worker('bench', async () => {}, {
    connection,
    concurrency: CONCURRENCY,
    autorun: false,
  });
  worker.on('completed', () => completed++);
  worker.on('failed', (job, err) => {
    throw err;
  });
  a = await sample(redis);
  worker.run();
  await waitUntil(() => completed >= JOBS, o.seconds * 3);
  b = await sample(redis);
  emitRates('bullmq', `process_c${CONCURRENCY}`, completed, a, b);

  const lat = [];
  let done = 0;
  worker.on('completed', (job) => {
    if (job.data.t === undefined) return;
    lat.push(Number(process.hrtime.bigint() - BigInt(job.data.t)) / 1000);
    done++;
  });
  a = await sample(redis);
  const sent = await paced(RATE, o.seconds,
    (t) => queue.add('bench', { t: t.toString() }, { removeOnComplete: true }),
    () => done);
  b = await sample(redis);
  if (done < sent) throw new Error(`paced: ${done} of ${sent} jobs done`);
  emitRates('bullmq', `e2e_${RATE}`, done, a, b);
  emit('bullmq', `e2e_${RATE}_p50_us`, percentile(lat, 50), 'us');
  emit('bullmq', `e2e_${RATE}_p99_us`, percentile(lat, 99), 'us');
  await worker.close(true);
  await queue.close();
});
