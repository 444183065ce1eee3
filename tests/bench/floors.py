#!/usr/bin/env python3
"""floors.py -- what redis-server itself costs, below which fleet cannot go.

    python3 tests/bench/floors.py [--seconds S] [--pin]

Starts its own redis-server on a free loopback port (no persistence) and
measures, with the Python standard library only:

  paced   server CPU per call at 2000 calls/s, one call per wake-up of the
          server (PING, and EVALSHA of `return 1`): the price of waking an
          idle redis-server, and of entering a script, at a low rate. At
          2000 jobs/s fleet-bench queue makes two such calls per 2 jobs;
  lock    the lock scripts fleet runs (adapters/scripts/lua/lock_acquire.lua,
          lock_release.lua), 50 locks per call as at 50 in flight (the
          acquire with one owner, TTL and mark for all, as fleet sends a
          batch of one owner's locks), split
          by INFO commandstats into the scripts as a whole, the four
          commands inside them (INCR, SET, GET, DEL), a script taking the
          same arguments that calls nothing, and one making four cheap calls
          (EXISTS) per lock: what each redis.call() costs beyond its command;
          and the server's whole CPU (INFO cpu) per pair while this client
          sends those calls one at a time, each waiting for the last
          reply (the lock-step floor): the scripts plus what each call
          costs the server around them (waking up, reading and parsing
          the request, writing the reply), paid twice per 50 pairs, as
          by one fleet client's 50 locks in flight;
  warmpool  the warm pool's acquire and release scripts
          (adapters/scripts/lua/warmpool_acquire.lua, warmpool_release.lua)
          one after the other at 1 in flight, as fleet-bench warmpool's c1
          runs them, on a pool of 200 idle entries: the server CPU per
          acquire + release, the scripts' own time in it (INFO
          commandstats), their commands, and the server CPU of a PING at 1
          in flight: two of those are what the pair's two round trips cost
          before the scripts do anything;
  cron    a cron fire as fleet-bench cron makes it, 256 definitions per
          call: three nodes' cron_fire_many (one wins each occurrence)
          and the winner's cron_complete, with keep_count 10 (trims
          included), against a script that runs the same commands per
          definition (three ZADD NX, HMGET, INCR, HSET, HGET, HSET) with
          no argument but the keys: the server CPU per fire of fleet's
          scripts and of the protocol's commands alone, and what 10 000
          occurrences due at once cost at each (the lateness floor);
  setup   what defining a queue script's libraries costs on every call:
          queue_enqueue, queue_claim, queue_complete and
          queue_complete_claim, each cut after its last --#include (its
          functions defined, nothing done), sent 50 to a pipelined batch,
          against `return 1`; the script time per call from INFO
          commandstats. An EVALSHA runs a script's whole text each time, so
          this is paid by every call before the script's work; and the
          same for the script's function library (what fleet calls with
          FCALL on Redis 7, docs/deploy.md) with its body cut to the
          per-call setters and `return 1`, when the build wrote it;
  results what a completion's 100-byte result and one event subscriber
          cost the server below any script of fleet's (issue 26): 25
          completions per call, as fleet-bench queue's 50 in flight batch
          them, through three bare scripts, sent one call at a time: the
          id, token pairs alone (a result argument, empty); with a
          100-byte result each, stored as it came (HSET of the argument
          itself, no Lua string made; a hash of 1000 results unlinked
          when full); and that plus one PUBLISH per call of the 25
          events (id and result), read by a subscriber. Beside fleet's own
          figure (fleet-bench queue --life, when built): the ratio of a
          job with a result and a subscriber to one without that no
          protocol sending the result through a script can go below;
  pool    the p50 of a PING at 1 in flight and of two hops through
          scripts: client A runs a script that publishes to B, and B, on
          the message, one that publishes back to A; the least a pool
          dispatch answered by its start waits (the dispatch, then the
          start report, each a script whose publish wakes the other node),
          in PINGs; beside fleet-bench pool's p50 at 1 in flight in
          fleet-bench ping's, when built;
  model   when build/tests/bench/fleet-bench exists, `fleet-bench lock
          --inflight 50`, and the rate its server and client CPU per pair
          allow when the two run one after the other (1 / (server +
          client)): one client's 50 locks move in step, so the server waits
          for the client and the client for the server.

--pin puts redis-server on one core and this script, with the fleet-bench it
runs, on another (the first two cores it may use), so that the client and
the server each have a core, as on a quiet machine; it needs two cores.

Prints JSON lines ({"bench":"floors","metric":...}) and a summary. Every
phase is bounded by --seconds (default 3) and a count; the server is
killed at the end. Needs redis-server on PATH. FLEET_BENCH, when set,
names the fleet-bench to run instead of build/tests/bench/fleet-bench, and
FLEET_FUNCTIONS the folder of function libraries instead of
build/generated/lua/functions.
"""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LUA = os.path.join(ROOT, 'adapters', 'scripts', 'lua')
# FLEET_BENCH names a fleet-bench built elsewhere (tests/bench/bundle-run.sh).
BENCH = os.environ.get('FLEET_BENCH') or os.path.join(
    ROOT, 'build', 'tests', 'bench', 'fleet-bench')
# The scripts' function libraries the build writes (cmake/embed_lua.cmake);
# FLEET_FUNCTIONS names a copy of them made elsewhere.
FUNCTIONS = os.environ.get('FLEET_FUNCTIONS') or os.path.join(
    ROOT, 'build', 'generated', 'lua', 'functions')
LOCKS = 50
# Completions per call, and bytes per result, of the results phase.
RESULT_JOBS = 25
RESULT_LEN = 100


def emit(metric, value, unit):
    print(json.dumps({'bench': 'floors', 'metric': metric,
                      'value': round(value, 3), 'unit': unit}), flush=True)


class Conn:
    """A RESP2 connection: one command, then its reply."""

    def __init__(self, port):
        self.s = socket.create_connection(('127.0.0.1', port), timeout=10)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.f = self.s.makefile('rb')

    @staticmethod
    def encode(args):
        out = [b'*%d\r\n' % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b'$%d\r\n%s\r\n' % (len(a), a))
        return b''.join(out)

    def reply(self):
        line = self.f.readline()
        kind, rest = line[:1], line[1:-2]
        if kind == b'+':
            return rest
        if kind == b'-':
            raise RuntimeError(rest.decode())
        if kind == b':':
            return int(rest)
        if kind == b'$':
            n = int(rest)
            return None if n < 0 else self.f.read(n + 2)[:-2]
        if kind == b'*':
            n = int(rest)
            return None if n < 0 else [self.reply() for _ in range(n)]
        raise RuntimeError('unexpected reply %r' % line)

    def call(self, *args):
        self.s.sendall(self.encode(args))
        return self.reply()


def start_server(work):
    """redis-server on a free loopback port; retried if the port is taken."""
    for _ in range(5):
        probe = socket.socket()
        probe.bind(('127.0.0.1', 0))
        port = probe.getsockname()[1]
        probe.close()
        proc = subprocess.Popen(
            ['redis-server', '--port', str(port), '--bind', '127.0.0.1',
             '--save', '', '--appendonly', 'no', '--dir', work],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(50):
            try:
                c = Conn(port)
                if c.call('PING') == b'PONG':
                    return proc, port, c
            except OSError:
                pass
            if proc.poll() is not None:
                break
            time.sleep(0.1)
        proc.kill()
        proc.wait()
    sys.exit('floors.py: redis-server did not start')


def server_cpu(c):
    """redis-server's CPU seconds so far (INFO cpu, as fleet-bench reads)."""
    info = c.call('INFO', 'cpu').decode()
    f = dict(re.findall(r'(used_cpu_\w+):([\d.]+)', info))
    return float(f['used_cpu_sys']) + float(f['used_cpu_user'])


def commandstats(c):
    info = c.call('INFO', 'commandstats').decode()
    return {m[0]: (int(m[1]), int(m[2])) for m in
            re.findall(r'cmdstat_(\w+):calls=(\d+),usec=(\d+)', info)}


def expand(text):
    """`text` with its --#include lines expanded as cmake/embed_lua.cmake
    does: each lib once, at its first include line (depth first, in text
    order), a later line naming it dropped; wake_sharded false
    (lib/wake.lua). (A lib expanded at every line naming it would define
    its locals again, past Lua's 200 in one chunk for the queue scripts.)"""
    seen = set()

    def one(m):
        name = m.group(1)
        if name in seen:
            return ''
        seen.add(name)
        with open(os.path.join(LUA, 'lib', name + '.lua')) as f:
            return re.sub(r'^--#include (\w+)\n', one, f.read(), flags=re.M)

    text = re.sub(r'^--#include (\w+)\n', one, text, flags=re.M)
    return text.replace('local wake_sharded\n', 'local wake_sharded = false\n')


def script(name):
    """A script as fleet's build embeds it for one Redis (expand())."""
    with open(os.path.join(LUA, name + '.lua')) as f:
        return expand(f.read())


def paced(c, args, seconds):
    """Server CPU per call of `args`, one call every 0.5 ms (2000/s)."""
    n = int(seconds * 2000)
    c0 = server_cpu(c)
    t0 = time.monotonic()
    for i in range(n):
        c.call(*args)
        wait = t0 + (i + 1) / 2000.0 - time.monotonic()
        if wait > 0:
            time.sleep(wait)
    return (server_cpu(c) - c0) / n * 1e6


def lock_round(c, acq, rel, seconds, tag):
    """Acquire and release LOCKS locks per call until `seconds` pass (at
    most 20000 rounds); returns the rounds made. The locks share their
    owner, TTL and mark, which the acquire carries once, as fleet's batcher
    sends them (lock_acquire.lua's short form)."""
    keys = ['{fb:%s%d}' % (tag, i) for i in range(LOCKS)]
    aargs = ['floors', '10000', '0']
    aargs.append('0')  # the failover epoch (lib/fence.lua): one Redis
    end = time.monotonic() + seconds
    rounds = 0
    while time.monotonic() < end and rounds < 20000:
        got = c.call('EVALSHA', acq, LOCKS, *keys, *aargs)
        vals = ['%d:floors' % (got[2 * i] if isinstance(got[2 * i], int)
                               else 0) for i in range(LOCKS)]
        c.call('EVALSHA', rel, LOCKS, *keys, *vals)
        rounds += 1
    return rounds


def lock_costs(c, seconds):
    """µs per acquire+release pair, from INFO commandstats."""
    noop_acq = ('local r = {} for i = 1, #KEYS do r[2 * i - 1] = i '
                'r[2 * i] = 0 end return r')
    noop_rel = 'local r = {} for i = 1, #KEYS do r[i] = 1 end return r'
    calls_acq = ("local r = {} for i = 1, #KEYS do "
                 "redis.call('EXISTS', 'x') redis.call('EXISTS', 'x') "
                 "r[2 * i - 1] = i r[2 * i] = 0 end return r")
    calls_rel = ("local r = {} for i = 1, #KEYS do "
                 "redis.call('EXISTS', 'x') redis.call('EXISTS', 'x') "
                 "r[i] = 1 end return r")
    variants = [('fleet', script('lock_acquire'), script('lock_release')),
                ('noop', noop_acq, noop_rel),
                ('exists4', calls_acq, calls_rel)]
    out = {}
    for name, a, r in variants:
        sa = c.call('SCRIPT', 'LOAD', a).decode()
        sr = c.call('SCRIPT', 'LOAD', r).decode()
        lock_round(c, sa, sr, min(0.5, seconds), name)  # warm up
        s0, c0 = commandstats(c), server_cpu(c)
        rounds = lock_round(c, sa, sr, seconds, name)
        c1, s1 = server_cpu(c), commandstats(c)
        pairs = rounds * LOCKS

        def per_pair(cmd):
            return (s1.get(cmd, (0, 0))[1] - s0.get(cmd, (0, 0))[1]) / pairs

        out[name] = per_pair('evalsha')
        if name == 'fleet':
            out['lockstep'] = (c1 - c0) / pairs * 1e6
            out['commands'] = sum(per_pair(k)
                                  for k in ('incr', 'set', 'get', 'del'))
            calls = sum(s1.get(k, (0, 0))[0] - s0.get(k, (0, 0))[0]
                        for k in ('incr', 'set', 'get', 'del'))
            if calls != 4 * pairs:
                sys.exit('floors.py: %d lock commands for %d pairs, not 4 '
                         'each: the lock scripts changed' % (calls, pairs))
        if name == 'exists4':
            out['exists'] = per_pair('exists')
    return out


def warmpool_costs(c, seconds):
    """Acquire + release at 1 in flight: server CPU, script time and
    commands per pair, and server CPU per PING at 1 in flight."""
    tag, owner, nonce, idle = '{fb:wp}', 'floors', '0123456789abcdef', 200
    acq = c.call('SCRIPT', 'LOAD', script('warmpool_acquire')).decode()
    rel = c.call('SCRIPT', 'LOAD', script('warmpool_release')).decode()
    # A pool as a started client-only node sees it: its owner lease, the
    # target (and its copy), `idle` entries with an hour left.
    c.call('SET', tag + ':wp:own:' + owner, nonce, 'PX', '600000')
    c.call('HSET', tag + ':wp:meta', 'target', str(idle))
    c.call('SET', tag + ':wp:tgt', str(idle))
    exp = int(time.time() * 1000) + 3600000
    for i in range(idle):
        c.call('ZADD', tag + ':wp:idle', str(exp + i), 'floors-%d' % i)

    def pairs(n_max, end):
        n = 0
        while time.monotonic() < end and n < n_max:
            got = c.call('EVALSHA', acq, 1, tag, '60000', '0', owner, nonce)
            if got[0] != 1:
                sys.exit('floors.py: warm pool acquire found nothing idle')
            if c.call('EVALSHA', rel, 1, tag, owner, '60000', '60000',
                      nonce, '0', got[1], '0') != [1]:
                sys.exit('floors.py: warm pool release did not go to idle')
            n += 1
        return n

    pairs(2000, time.monotonic() + min(0.5, seconds))  # warm up
    s0, c0 = commandstats(c), server_cpu(c)
    n = pairs(200000, time.monotonic() + seconds)
    c1, s1 = server_cpu(c), commandstats(c)
    out = {'cpu': (c1 - c0) / n * 1e6,
           'scripts': (s1['evalsha'][1] - s0['evalsha'][1]) / n,
           'commands': sum(s1[k][0] - s0.get(k, (0, 0))[0] for k in s1
                           if k not in ('evalsha', 'info')) / n}
    c0, end, m = server_cpu(c), time.monotonic() + seconds, 0
    while time.monotonic() < end and m < 400000:
        c.call('PING')
        m += 1
    out['ping'] = (server_cpu(c) - c0) / m * 1e6
    return out


def cron_costs(c, seconds):
    """Server CPU per fire of fleet's cron scripts (three nodes' claims and
    the completion, 256 definitions per call) and of the same commands in
    one bare script per 256 definitions."""
    n_defs, keep = 256, '10'
    fire = c.call('SCRIPT', 'LOAD', script('cron_fire_many')).decode()
    done = c.call('SCRIPT', 'LOAD', script('cron_complete')).decode()
    bare = c.call('SCRIPT', 'LOAD', """
local t = ARGV[1]
for i = 1, #KEYS do
  local s = KEYS[i]
  redis.call('ZADD', s .. ':occ', 'NX', t, t)
  redis.call('ZADD', s .. ':occ', 'NX', t, t)
  redis.call('ZADD', s .. ':occ', 'NX', t, t)
  redis.call('HMGET', s .. ':ent', 'top', 'floor')
  local f = redis.call('INCR', s .. ':fence')
  redis.call('HSET', s .. ':ent', t, f, 'top', t, 'floor', '0')
  redis.call('HGET', s .. ':ent', t)
  redis.call('HSET', s .. ':ent', t, f)
end
return 1""").decode()
    keys = ['{fc:%d}' % i for i in range(n_defs)]
    occs = ['{fc:%d}:cron:ns:d%d:occ' % (i, i) for i in range(n_defs)]

    def rounds(n_max, end, first):
        n = 0
        while time.monotonic() < end and n < n_max:
            t = str(1000 * (first + n + 1))
            for node in ('n1', 'n2', 'n3'):
                # Each definition's S:occ, its one occurrence and its
                # minimum token (no limit, start or end), as a scheduler
                # sends them; each answer is its token when it fired.
                args = [node, keep, '0', '0']
                for i in range(n_defs):
                    args += [t + 'f', '0']
                got = c.call('EVALSHA', fire, n_defs,
                             *(occs + args + ['0']))
                if node == 'n1':
                    toks = got[1:]
                    if any(not isinstance(e, int) or e <= 0 for e in toks):
                        sys.exit('floors.py: cron: n1 did not fire all')
            args = ['ns']
            for i in range(n_defs):
                args += ['d%d' % i, t, str(toks[i]), 'completed']
            c.call('EVALSHA', done, n_defs, *(keys + args))
            n += 1
        return n

    rounds(20, time.monotonic() + min(0.5, seconds), 0)  # warm up, trims
    c0 = server_cpu(c)
    n = rounds(2000, time.monotonic() + seconds, 20)
    fleet = (server_cpu(c) - c0) / (n * n_defs) * 1e6
    c0, end, m = server_cpu(c), time.monotonic() + seconds, 0
    while time.monotonic() < end and m < 2000:
        c.call('EVALSHA', bare, n_defs, *(keys + [str(10 ** 7 + m)]))
        m += 1
    return {'fleet': fleet,
            'bare': (server_cpu(c) - c0) / (m * n_defs) * 1e6}


SETUP_SCRIPTS = ('queue_enqueue', 'queue_claim', 'queue_complete',
                 'queue_complete_claim')


def setup_costs(c, seconds):
    """Script time per call (INFO commandstats) of each queue script cut
    after its last --#include, and of `return 1`, 50 calls per pipelined
    batch: what defining the libraries costs every call."""
    bodies = [('return 1', 'return 1')]
    for name in SETUP_SCRIPTS:
        with open(os.path.join(LUA, name + '.lua')) as f:
            text = f.read()
        last = list(re.finditer(r'^--#include \w+\n', text, re.M))[-1]
        body = expand(text[:last.end()])
        bodies.append((name, body + '\nreturn 1\n'))
    out = {}

    def per_call(command, stat):
        batch = c.encode(command) * 50
        s0 = commandstats(c).get(stat, (0, 0))
        end, n = time.monotonic() + seconds, 0
        while time.monotonic() < end and n < 20000:
            c.s.sendall(batch)
            for _ in range(50):
                c.reply()
            n += 50
        s1 = commandstats(c)[stat]
        return (s1[1] - s0[1]) / (s1[0] - s0[0])

    for name, body in bodies:
        sha = c.call('SCRIPT', 'LOAD', body).decode()
        out[name] = per_call(['EVALSHA', sha, 1, '{fb:setup}'], 'evalsha')
        lib = os.path.join(FUNCTIONS, name + '.lua')
        if name == 'return 1' or not os.path.exists(lib):
            continue
        with open(lib) as f:
            text = f.read()
        # The function's body after its setters becomes `return 1`, under
        # a name of its own.
        head = 'for i = 1, #__pc do __pc[i]() end\n'
        text = text[:text.index(head) + len(head)] + 'return 1\nend)\n'
        text = re.sub(r'fleet_[0-9a-f]{40}', 'fb_setup_' + name, text)
        c.call('FUNCTION', 'LOAD', 'REPLACE', text)
        out[name + ' fcall'] = per_call(
            ['FCALL', 'fb_setup_' + name, 1, '{fb:setup}'], 'fcall')
    return out


def results_costs(c, port, seconds):
    """Server CPU per job of the results phase's three scripts (none,
    result, result + event), sent one call at a time."""
    import threading
    none = ('local n = 0 for i = 1, #ARGV, 3 do '
            'if ARGV[i + 1] ~= \'\' then n = n + 1 end end return n')
    result = ('local kv = {} for i = 1, #ARGV, 3 do '
              'kv[#kv + 1] = ARGV[i] kv[#kv + 1] = ARGV[i + 2] end '
              'redis.call(\'HSET\', KEYS[1], unpack(kv)) return #kv / 2')
    event = ('local kv, ev = {}, {} for i = 1, #ARGV, 3 do '
             'kv[#kv + 1] = ARGV[i] kv[#kv + 1] = ARGV[i + 2] '
             'ev[#ev + 1] = ARGV[i] ev[#ev + 1] = \'\\0\' '
             'ev[#ev + 1] = ARGV[i + 2] ev[#ev + 1] = \'\\0\' end '
             'redis.call(\'HSET\', KEYS[1], unpack(kv)) '
             'redis.call(\'PUBLISH\', KEYS[2], table.concat(ev)) '
             'return #kv / 2')
    # The subscriber, drained by a thread so that its output buffer never
    # fills (the server would drop it).
    sub = Conn(port)
    sub.call('SUBSCRIBE', 'fr:events')
    stop = threading.Event()

    def drain():
        sub.s.settimeout(0.2)
        while not stop.is_set():
            try:
                if not sub.s.recv(1 << 16):
                    return
            except socket.timeout:
                pass
            except OSError:
                return

    th = threading.Thread(target=drain, daemon=True)
    th.start()
    payload = b'r' * RESULT_LEN
    per_call = RESULT_JOBS
    out = {}
    try:
        for name, text in (('none', none), ('result', result),
                           ('event', event)):
            sha = c.call('SCRIPT', 'LOAD', text).decode()

            def calls(n_max, end, seq=[0]):
                n = 0
                while time.monotonic() < end and n < n_max:
                    k = seq[0]
                    seq[0] += 1
                    args = []
                    for j in range(per_call):
                        args += ['%d' % (k * per_call + j), '%d' % (k + 7),
                                 b'' if name == 'none' else payload]
                    key = 'fr:res:%d' % (k * per_call // 1000)
                    c.call('EVALSHA', sha, 2, key, 'fr:events', *args)
                    # A full hash of 1000 results goes, as fleet's chunks
                    # do once their results expired.
                    if (k + 1) * per_call % 1000 == 0:
                        c.call('UNLINK', key)
                    n += 1
                return n

            calls(2000, time.monotonic() + min(0.5, seconds))  # warm up
            c0 = server_cpu(c)
            n = calls(400000, time.monotonic() + seconds)
            out[name] = (server_cpu(c) - c0) / (n * per_call) * 1e6
            c.call('FLUSHALL')
    finally:
        stop.set()
        th.join(timeout=2)
        sub.s.close()
    return out


def run_bench(port, args, timeout):
    """fleet-bench with `args` against the server: its metrics by name."""
    res = subprocess.run(
        [BENCH] + args + ['--url', 'redis://127.0.0.1:%d' % port],
        capture_output=True, text=True, timeout=timeout)
    if res.returncode != 0:
        sys.exit('floors.py: fleet-bench %s failed:\n%s'
                 % (' '.join(args), res.stderr))
    m = {}
    for line in res.stdout.splitlines():
        d = json.loads(line)
        m[d['metric']] = d['value']
    return m


def bench_life(port, seconds):
    """fleet-bench queue --life: its default processing's server CPU per
    job and the result + events run's ratio to it, or None."""
    if not os.access(BENCH, os.X_OK):
        return None
    m = run_bench(port, ['queue', '--life', '--seconds', str(seconds)], 600)
    base = m.get('process_c50_server_cpu_us_per_op')
    ratio = m.get('process_c50_result_events_server_cpu_ratio')
    return None if base is None or ratio is None else (base, ratio)


def bench_model(port, seconds):
    """fleet-bench lock --inflight 50 and 1 / (server + client per pair)."""
    if not os.access(BENCH, os.X_OK):
        print('floors.py: no %s: model skipped (build fleet-bench first)'
              % BENCH, file=sys.stderr)
        return None
    m = run_bench(port, ['lock', '--seconds', str(seconds), '--inflight',
                         str(LOCKS)], seconds + 60)
    return (m['c50_ops_per_s'], m['c50_server_cpu_us_per_op'],
            m['c50_client_cpu_us_per_op'])


def pool_hops(port, seconds):
    """The p50 (us) of a PING at 1 in flight and of two hops through
    scripts (client A's script publishes to B; B, on the message, runs one
    that publishes back to A), one after the other, in this client."""
    a, b, sa, sb = Conn(port), Conn(port), Conn(port), Conn(port)
    sa.call('SUBSCRIBE', 'fl:hop:a')
    sb.call('SUBSCRIBE', 'fl:hop:b')
    pub = a.call('SCRIPT', 'LOAD',
                 "redis.call('PUBLISH', KEYS[1], ARGV[1]) return 1").decode()
    pings, hops = [], []
    end = time.monotonic() + seconds
    while time.monotonic() < end and len(hops) < 20000:
        t0 = time.perf_counter()
        a.call('PING')
        t1 = time.perf_counter()
        # (Each publisher's own reply is read after the round.)
        a.s.sendall(Conn.encode(['EVALSHA', pub, 1, 'fl:hop:b', 'x' * 64]))
        sb.reply()
        b.s.sendall(Conn.encode(['EVALSHA', pub, 1, 'fl:hop:a', 'r']))
        sa.reply()
        t2 = time.perf_counter()
        a.reply()
        b.reply()
        pings.append(t1 - t0)
        hops.append(t2 - t1)
    for x in (a, b, sa, sb):
        x.s.close()
    pings.sort()
    hops.sort()
    return pings[len(pings) // 2] * 1e6, hops[len(hops) // 2] * 1e6


def bench_pool(port, seconds):
    """fleet-bench pool's and ping's p50 at 1 in flight (us), or None."""
    if not os.access(BENCH, os.X_OK):
        return None
    pool = run_bench(port, ['pool', '--seconds', str(seconds)], 600)
    ping = run_bench(port, ['ping', '--seconds', str(seconds)], 120)
    return pool['c1_p50_us'], ping['c1_p50_us']


def pin_cores(server_pid):
    """--pin: redis-server on the first core this process may use, this
    process (and the fleet-bench it starts, which inherits it) on the
    second."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        sys.exit('floors.py: --pin needs two cores')
    os.sched_setaffinity(server_pid, {cpus[0]})
    os.sched_setaffinity(0, {cpus[1]})


def parse_seconds(name, default, doc):
    """The bench's one option, --seconds S (0 < S <= 60), from sys.argv;
    prints `doc` and returns None for -h or --help; exits on bad usage."""
    argv = sys.argv[1:]
    if argv[:1] in (['-h'], ['--help']):
        print(doc.strip())
        return None
    seconds = default
    if len(argv) == 2 and argv[0] == '--seconds':
        try:
            seconds = float(argv[1])
        except ValueError:
            seconds = 0
    elif argv:
        sys.exit('usage: python3 tests/bench/%s [--seconds S]' % name)
    if not 0 < seconds <= 60:
        sys.exit('%s: --seconds wants a number in (0, 60]' % name)
    return seconds


def main():
    pin = '--pin' in sys.argv[1:]
    if pin:
        sys.argv.remove('--pin')
    seconds = parse_seconds('floors.py', 3.0, __doc__)
    if seconds is None:
        return

    with tempfile.TemporaryDirectory(prefix='fleet-floors.') as work:
        proc, port, c = start_server(work)
        try:
            if pin:
                pin_cores(proc.pid)
            tiny = c.call('SCRIPT', 'LOAD', 'return 1').decode()
            ping = paced(c, ['PING'], seconds)
            evalsha = paced(c, ['EVALSHA', tiny, 0], seconds)
            emit('paced_2000_ping_server_cpu_us_per_call', ping, 'us/call')
            emit('paced_2000_evalsha_server_cpu_us_per_call', evalsha,
                 'us/call')
            lk = lock_costs(c, seconds)
            glue = (lk['exists4'] - lk['noop'] - lk['exists']) / 4
            emit('lock_scripts_us_per_pair', lk['fleet'], 'us/pair')
            emit('lock_commands_us_per_pair', lk['commands'], 'us/pair')
            emit('lock_noop_script_us_per_pair', lk['noop'], 'us/pair')
            emit('lock_lockstep_server_cpu_us_per_pair', lk['lockstep'],
                 'us/pair')
            emit('redis_call_glue_us', glue, 'us/call')
            wp = warmpool_costs(c, seconds)
            emit('warmpool_c1_server_cpu_us_per_pair', wp['cpu'], 'us/pair')
            emit('warmpool_scripts_us_per_pair', wp['scripts'], 'us/pair')
            emit('warmpool_commands_per_pair', wp['commands'], 'calls/pair')
            emit('ping_c1_server_cpu_us_per_call', wp['ping'], 'us/call')
            cr = cron_costs(c, seconds)
            emit('cron_scripts_server_cpu_us_per_fire', cr['fleet'],
                 'us/fire')
            emit('cron_commands_server_cpu_us_per_fire', cr['bare'],
                 'us/fire')
            st = setup_costs(c, seconds)
            emit('script_return1_us_per_call', st['return 1'], 'us/call')
            for name in SETUP_SCRIPTS:
                emit('%s_setup_us_per_call' % name, st[name], 'us/call')
                if name + ' fcall' in st:
                    emit('%s_setup_fcall_us_per_call' % name,
                         st[name + ' fcall'], 'us/call')
            rs = results_costs(c, port, seconds)
            emit('results_none_server_cpu_us_per_job', rs['none'], 'us/job')
            emit('results_result_extra_us_per_job',
                 rs['result'] - rs['none'], 'us/job')
            emit('results_result_event_extra_us_per_job',
                 rs['event'] - rs['none'], 'us/job')
            life = bench_life(port, seconds)
            if life:
                emit('results_fleet_default_server_cpu_us_per_job', life[0],
                     'us/job')
                emit('results_fleet_result_events_ratio', life[1], 'x')
                emit('results_floor_ratio',
                     1 + (rs['event'] - rs['none']) / life[0], 'x')
            model = bench_model(port, seconds)
            if model:
                rate, srv, cli = model
                emit('lock_c50_ops_per_s', rate, 'ops/s')
                emit('lock_c50_server_cpu_us_per_op', srv, 'us/op')
                emit('lock_c50_client_cpu_us_per_op', cli, 'us/op')
                emit('lock_c50_serial_model_ops_per_s', 1e6 / (srv + cli),
                     'ops/s')
                emit('lock_c50_server_cpu_to_scripts', srv / lk['fleet'],
                     'ratio')
                emit('lock_c50_server_cpu_to_lockstep', srv / lk['lockstep'],
                     'ratio')
            hop_ping, hop = pool_hops(port, seconds)
            emit('ping_c1_p50_us', hop_ping, 'us')
            emit('pool_two_hops_c1_p50_us', hop, 'us')
            emit('pool_two_hops_to_ping', hop / hop_ping, 'x')
            fp = bench_pool(port, seconds)
            if fp:
                emit('pool_fleet_c1_p50_to_ping', fp[0] / fp[1], 'x')
        finally:
            proc.kill()
            proc.wait()

    print('\nAt 2000 calls/s, one call per wake-up, redis-server spends '
          '%.1f us per PING and %.1f us per EVALSHA of `return 1`.'
          % (ping, evalsha), file=sys.stderr)
    print('fleet-bench queue\'s 2000 jobs/s phase enqueues 2 jobs every ms, '
          'and each tick wakes the server twice to run a script (the '
          'enqueue, which hands the jobs to the parked worker, and the '
          'worker\'s completion): at least %.1f us per job before the '
          'scripts do anything.' % evalsha, file=sys.stderr)
    print('A lock pair\'s scripts (50 per call) take %.2f us: %.2f in their '
          'four commands, %.2f for a script with the same arguments that '
          'calls nothing, and about %.2f per redis.call() beyond its '
          'command.' % (lk['fleet'], lk['commands'], lk['noop'], glue),
          file=sys.stderr)
    print('Sent one call at a time, as one client\'s 50 locks move, a pair '
          'costs the server %.2f us in all (the lock-step floor): %.2f '
          'beyond its scripts, for waking up, reading and writing, twice '
          'per 50 pairs.' % (lk['lockstep'], lk['lockstep'] - lk['fleet']),
          file=sys.stderr)
    print('A warm pool acquire + release at 1 in flight costs the server '
          '%.1f us: %.1f in the two scripts (%.1f commands), and two round '
          'trips at %.1f us each (a PING at 1 in flight) before any script '
          'runs, a floor of %.1f us for this protocol.'
          % (wp['cpu'], wp['scripts'], wp['commands'], wp['ping'],
             2 * wp['ping'] + wp['scripts']), file=sys.stderr)
    print('A cron fire (three nodes\' claims and the completion, 256 '
          'definitions per call) costs the server %.1f us in fleet\'s '
          'scripts; the same commands alone, %.1f us: 10 000 occurrences '
          'due at once take at least %.0f ms of server time as the scripts '
          'are, %.0f ms for the commands alone.'
          % (cr['fleet'], cr['bare'], cr['fleet'] * 10, cr['bare'] * 10),
          file=sys.stderr)
    print('Defining its libraries costs each call of a queue script, '
          'before it does anything: %s (`return 1`: %.2f us).'
          % (', '.join('%s %.1f us' % (n, st[n]) for n in SETUP_SCRIPTS),
             st['return 1']), file=sys.stderr)
    if any(n + ' fcall' in st for n in SETUP_SCRIPTS):
        print('As function libraries (FCALL, what fleet sends on Redis 7), '
              'each call pays only its per-call setters: %s.'
              % ', '.join('%s %.1f us' % (n, st[n + ' fcall'])
                          for n in SETUP_SCRIPTS if n + ' fcall' in st),
              file=sys.stderr)
    print('A completion\'s 100-byte result costs the server %.2f us per '
          'job more below any script of fleet\'s (sent as an argument and '
          'stored as it came), and %.2f us with one event per job published '
          'to a subscriber.' % (rs['result'] - rs['none'],
                                rs['event'] - rs['none']), file=sys.stderr)
    if life:
        print('fleet\'s default job costs the server %.2f us (fleet-bench '
              'queue --life), so a job with a result and a subscriber costs '
              'at least %.2fx one without, whatever the scripts do; fleet\'s '
              'own is %.2fx.' % (life[0], 1 + (rs['event'] - rs['none']) /
                                 life[0], life[1]), file=sys.stderr)
    if model:
        print('fleet-bench lock --inflight 50: %.0f pairs/s at %.2f us '
              'server + %.2f us client per pair; one after the other they '
              'allow %.0f pairs/s. Its server CPU is %.2fx the scripts\' '
              'and %.2fx the lock-step floor.'
              % (rate, srv, cli, 1e6 / (srv + cli), srv / lk['fleet'],
                 srv / lk['lockstep']), file=sys.stderr)
    print('At 1 in flight a PING takes %.0f us here (p50, this client); '
          'two hops through scripts (one client\'s script publishes to '
          'another, whose script publishes back) take %.0f us, %.2f PINGs: '
          'the floor of a pool dispatch answered by its start, which makes '
          'these two hops at least.' % (hop_ping, hop, hop / hop_ping),
          file=sys.stderr)
    if fp:
        print('fleet-bench pool\'s p50 at 1 in flight is %.2f of its own '
              'PINGs (fleet-bench ping).' % (fp[0] / fp[1]), file=sys.stderr)


if __name__ == '__main__':
    main()
