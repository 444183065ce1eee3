#!/usr/bin/env python3
"""fence.py -- what the failover epoch costs a grant (lib/fence.lua).

    python3 tests/bench/fence.py [--seconds S]

Starts its own redis-server with cluster mode on (one node that serves
every slot, so that CLUSTER INFO answers as on a Redis Cluster) on a free
loopback port, and runs fleet's lock acquire script
(adapters/scripts/lua/lock_acquire.lua, expanded as the build embeds it)
with each failover epoch a grant can carry:

  0      one Redis, memory:// (and Sentinel before its first failover):
         INCR, as before the epoch existed;
  5      Sentinel after failovers: INCR, and on the epoch's first grant
         an INCRBY by the difference up to 5 * 2^32;
  c      Redis Cluster: the script reads cluster_my_epoch from CLUSTER
         INFO on its first grant of the call, then as for 5.

each with 1 lock per call (the CLUSTER INFO read paid by every grant) and
50 locks per call (paid once per call, as the batcher sends them). The
leases are freed with DEL between calls, outside the script. It reports
per grant: the script's server time (INFO commandstats, usec of EVALSHA)
and the server's CPU (INFO cpu, the DEL and the protocol included), as
JSON lines ({"bench":"fence","metric":...}) and a summary. Every phase is
bounded by --seconds (default 2) and a count. Needs redis-server on PATH.
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import floors  # noqa: E402  (the server, the connection, the script text)

EPOCHS = ('0', '5', 'c')


def emit(metric, value, unit):
    print(floors.json.dumps({'bench': 'fence', 'metric': metric,
                             'value': round(value, 3), 'unit': unit}),
          flush=True)


def start_cluster_node(work):
    """floors.start_server with --cluster-enabled yes, all slots added."""
    orig = floors.subprocess.Popen

    def popen(args, **kw):
        return orig(args + ['--cluster-enabled', 'yes',
                            '--cluster-config-file',
                            os.path.join(work, 'nodes.conf')], **kw)

    floors.subprocess.Popen = popen
    try:
        proc, port, c = floors.start_server(work)
    finally:
        floors.subprocess.Popen = orig
    c.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383')
    for _ in range(100):
        if b'cluster_state:ok' in c.call('CLUSTER', 'INFO'):
            return proc, port, c
        time.sleep(0.05)
    proc.kill()
    sys.exit('fence.py: the one-node cluster did not come up')


def grants(c, sha, epoch, per_call, seconds):
    """Acquire `per_call` free locks per call with `epoch`, then DEL their
    leases, until `seconds` pass (at most 50000 calls). Returns the
    grants made."""
    # One hash tag for all, so that a call's keys share a slot.
    keys = ['{fb}%s:%d' % (epoch, i) for i in range(per_call)]
    leases = [k + ':lock' for k in keys]
    args = []
    for _ in keys:
        args += ['bench', '10000', '0']
    args.append(epoch)
    end = time.monotonic() + seconds
    calls = 0
    while time.monotonic() < end and calls < 50000:
        got = c.call('EVALSHA', sha, per_call, *keys, *args)
        if not isinstance(got, list) or got[0] <= 0:
            sys.exit('fence.py: the acquire did not grant: %r' % (got,))
        c.call('DEL', *leases)
        calls += 1
    return calls * per_call


def cluster_info_calls(c):
    """How many CLUSTER INFO calls the server has run (scripts' included)."""
    info = c.call('INFO', 'commandstats').decode()
    m = floors.re.search(r'cmdstat_cluster\|info:calls=(\d+)', info)
    return int(m.group(1)) if m else 0


def measure(c, sha, epoch, per_call, seconds):
    grants(c, sha, epoch, per_call, min(0.3, seconds))  # warm up
    i0 = cluster_info_calls(c)
    s0, cpu0 = floors.commandstats(c), floors.server_cpu(c)
    n = grants(c, sha, epoch, per_call, seconds)
    s1, cpu1 = floors.commandstats(c), floors.server_cpu(c)
    script = (s1['evalsha'][1] - s0['evalsha'][1]) / n
    return script, (cpu1 - cpu0) / n * 1e6, cluster_info_calls(c) - i0


def main():
    seconds = floors.parse_seconds('fence.py', 2.0, __doc__)
    if seconds is None:
        return

    res = {}
    with floors.tempfile.TemporaryDirectory(prefix='fleet-fence.') as work:
        proc, port, c = start_cluster_node(work)
        try:
            sha = c.call('SCRIPT', 'LOAD',
                         floors.script('lock_acquire')).decode()
            for per_call in (1, 50):
                for epoch in EPOCHS:
                    script, cpu, infos = measure(c, sha, epoch, per_call,
                                                 seconds)
                    name = 'epoch_%s_x%d' % (epoch, per_call)
                    emit(name + '_script_us_per_grant', script, 'us/grant')
                    emit(name + '_server_cpu_us_per_grant', cpu, 'us/grant')
                    res[(epoch, per_call)] = (script, cpu, infos)
        finally:
            proc.kill()
            proc.wait()

    for per_call in (1, 50):
        print('\n%d lock(s) per call, per grant: script server time / '
              'server CPU' % per_call, file=sys.stderr)
        for epoch in EPOCHS:
            script, cpu, infos = res[(epoch, per_call)]
            print('  epoch %-2s %6.2f us / %6.2f us%s'
                  % (epoch, script, cpu,
                     '  (CLUSTER INFO calls: %d)' % infos if infos else ''),
                  file=sys.stderr)


if __name__ == '__main__':
    main()
