// resp.js -- a small RESP2 client for the protocol models (opensandbox.js,
// kaal.js, pulse.js), so that they need no package: connect(host, port,
// onPush) returns {ready, send(args), close()}; send resolves with the
// parsed reply (errors rejected as Error objects), in the order the
// commands were written; a reply that no command waits for (a message to
// a subscribed connection) goes to onPush when given; and sample(info),
// what the models measure before and after a run.
'use strict';

const net = require('net');

// A RESP2 connection: send(args) resolves with the parsed reply (errors
// as Error objects, rejected); onPush(reply), when given, receives the
// replies no command waits for (pub/sub messages).
function connect(host, port, onPush) {
  const sock = net.createConnection({ host, port });
  sock.setNoDelay(true);
  const waiting = [];
  let buf = Buffer.alloc(0);

  // Parses one reply at `i`; returns [value, next] or null when incomplete.
  const parse = (i) => {
    if (i >= buf.length) return null;
    const eol = buf.indexOf('\r\n', i);
    if (eol < 0) return null;
    const type = String.fromCharCode(buf[i]);
    const line = buf.toString('utf8', i + 1, eol);
    if (type === '+') return [line, eol + 2];
    if (type === '-') return [new Error(line), eol + 2];
    if (type === ':') return [Number(line), eol + 2];
    if (type === '$') {
      const n = Number(line);
      if (n < 0) return [null, eol + 2];
      if (buf.length < eol + 2 + n + 2) return null;
      return [buf.toString('utf8', eol + 2, eol + 2 + n), eol + 4 + n];
    }
    if (type === '*') {
      const n = Number(line);
      if (n < 0) return [null, eol + 2];
      const out = [];
      let j = eol + 2;
      for (let k = 0; k < n; k++) {
        const r = parse(j);
        if (r === null) return null;
        out.push(r[0]);
        j = r[1];
      }
      return [out, j];
    }
    throw new Error(`bad reply type '${type}'`);
  };

  sock.on('data', (chunk) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    let i = 0;
    for (;;) {
      const r = parse(i);
      if (r === null) break;
      i = r[1];
      const w = waiting.shift();
      if (w === undefined) {
        if (onPush) onPush(r[0]);
        continue;
      }
      if (r[0] instanceof Error) w.reject(r[0]);
      else w.resolve(r[0]);
    }
    buf = buf.subarray(i);
  });
  const ready = new Promise((resolve, reject) => {
    sock.once('connect', resolve);
    sock.once('error', reject);
  });
  // A connection that fails fails the commands waiting on it.
  sock.on('error', (err) => {
    while (waiting.length) waiting.shift().reject(err);
  });
  const send = (args) =>
    new Promise((resolve, reject) => {
      waiting.push({ resolve, reject });
      let s = `*${args.length}\r\n`;
      for (const a of args) {
        const v = String(a);
        s += `$${Buffer.byteLength(v)}\r\n${v}\r\n`;
      }
      sock.write(s);
    });
  return {
    ready, send, close: () => sock.end(), destroy: () => sock.destroy(),
  };
}

// Server CPU (µs) and the calls of INFO commandstats on connection `info`,
// as fleet-bench counts them (scripts: evalsha and eval; commands: the
// rest but info and config), with this process's CPU and the wall clock.
async function sample(info) {
  const cpu = await info.send(['INFO', 'cpu']);
  const f = (name) => Number(cpu.match(new RegExp(`${name}:([0-9.]+)`))[1]);
  const stats = await info.send(['INFO', 'commandstats']);
  let scripts = 0;
  let commands = 0;
  for (const m of stats.matchAll(/cmdstat_([a-z|_-]+):calls=(\d+)/g)) {
    const n = Number(m[2]);
    if (m[1] === 'evalsha' || m[1] === 'eval') scripts += n;
    else if (m[1] !== 'info' && !m[1].startsWith('config')) commands += n;
  }
  const self = process.cpuUsage();
  return {
    serverUs: (f('used_cpu_sys') + f('used_cpu_user')) * 1e6,
    selfUs: self.user + self.system,
    scripts,
    commands,
    wallNs: process.hrtime.bigint(),
  };
}

module.exports = { connect, sample };
