// redlock.js -- the Redlock anchor of sidebyside.sh, the method of
// fleet-bench lock --inflight 50: the `redlock` package on one ioredis
// client, 50 acquire + release pairs in flight on distinct resources (so
// nothing contends) for --seconds. One operation is one acquire plus one
// release.
//
//   node redlock.js --url redis://HOST:PORT [--seconds S]
//
// Metrics, as JSON lines: c50_* (ops/s and client and server CPU per
// operation).
'use strict';

const Redlock = require('redlock');
const { Redis, emitRates, run, sample } = require('./common');

const INFLIGHT = 50;
const TTL_MS = 10000;

run('redlock', async (o, redis) => {
  const client = new Redis({ host: o.host, port: o.port });
  const redlock = new Redlock([client], { retryCount: 0 });
  const deadline = Date.now() + o.seconds * 1000;
  let done = 0;
  const slot = async (i) => {
    while (Date.now() < deadline) {
      const lock = await redlock.lock(`bench-${i}`, TTL_MS);
      await lock.unlock();
      done++;
    }
  };
  const slots = [];
  for (let i = 0; i < INFLIGHT; i++) slots.push(slot(i));
  const a = await sample(redis);
  await Promise.all(slots);
  const b = await sample(redis);
  emitRates('redlock', `c${INFLIGHT}`, done, a, b);
  await client.quit();
});
