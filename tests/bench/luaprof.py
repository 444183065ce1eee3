#!/usr/bin/env python3
"""luaprof.py -- where the scripts spend their Lua VM instructions.

    cmake -S . -B build-prof -DFLEET_LUA=lua5.1 -DFLEET_LUA_PROFILE=ON
    cmake --build build-prof --target fleet-bench
    FLEET_LUA_PROFILE=/tmp/prof.txt build-prof/tests/bench/fleet-bench \\
        queue --jobs 20000 --seconds 2 --url memory://
    python3 tests/bench/luaprof.py /tmp/prof.txt --build build-prof \\
        [--script queue_complete_claim] [--lines 30] [--functions 20]

A FLEET_LUA_PROFILE build's memory backend counts, with a Lua count hook,
the VM instructions each line of each script runs, and writes them at
exit ("<chunk> <line> <count>" per line). This prints, for each script
(or the one --script names), its total, the share of each function of
the script's text (a line belongs to the `local function` above it; the
body the library registers is "(body)"), and its costliest lines with
their text, read from the build's generated scripts
(build/generated/lua/functions/<name>.lua, where a script is a function
library, else build/generated/lua/<name>.lua), whose line numbers the
counts use.

The counts are bytecodes, not time: a line that calls a C function
(string.find, redis.call) counts the few instructions of the call, not
the C function's work, which a server profile (tests/bench/instr.sh)
shows. Run the same operations on the memory backend as on Redis: both
run these scripts.
"""
import argparse
import collections
import os
import re
import sys


def load_counts(path):
    """{script name: {line: count}} from a profile file."""
    out = collections.defaultdict(collections.Counter)
    with open(path, 'rb') as f:
        for raw in f:
            parts = raw.rstrip(b'\n').rsplit(b' ', 2)
            if len(parts) != 3:
                continue
            chunk = parts[0].decode('utf-8', 'replace')
            m = re.match(r'^@(.+)\.lua$', chunk)
            if not m:
                continue
            out[m.group(1)][int(parts[1])] += int(parts[2])
    return out


def script_lines(build, name):
    """The text of script `name` as the memory backend loaded it."""
    for sub in ('functions', ''):
        path = os.path.join(build, 'generated', 'lua', sub, name + '.lua')
        if os.path.exists(path):
            with open(path, encoding='utf-8', errors='replace') as f:
                return f.read().split('\n')
    return []


def owners(lines):
    """The function each line belongs to (by index, 0-based)."""
    own, cur = [], '(top)'
    for line in lines:
        m = re.match(r'^(?:local )?function ([\w.:]+)', line)
        if m:
            cur = m.group(1)
        elif line.startswith('redis.register_function('):
            cur = '(body)'
        own.append(cur)
    return own


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('profile')
    ap.add_argument('--build', default='build')
    ap.add_argument('--script')
    ap.add_argument('--lines', type=int, default=20)
    ap.add_argument('--functions', type=int, default=15)
    a = ap.parse_args()
    counts = load_counts(a.profile)
    if not counts:
        sys.exit('luaprof.py: no counts in %s (a FLEET_LUA_PROFILE build, '
                 'with FLEET_LUA_PROFILE set when it ran?)' % a.profile)
    names = [a.script] if a.script else sorted(
        counts, key=lambda n: -sum(counts[n].values()))
    for name in names:
        c = counts.get(name)
        if not c:
            sys.exit('luaprof.py: no counts for script %s' % name)
        total = sum(c.values())
        print('%s: %d VM instructions' % (name, total))
        lines = script_lines(a.build, name)
        if not lines:
            print('  (no generated text for it under %s)' % a.build)
            continue
        own = owners(lines)
        by = collections.Counter()
        for ln, n in c.items():
            by[own[ln - 1] if 0 < ln <= len(own) else '?'] += n
        for fn, n in by.most_common(a.functions):
            print('  %6.2f%% %14d  %s' % (100.0 * n / total, n, fn))
        for ln, n in c.most_common(a.lines):
            text = lines[ln - 1].strip() if 0 < ln <= len(lines) else '?'
            print('  %14d %6d  %s' % (n, ln, text[:100]))
        if a.script is None and len(names) > 1:
            print()


if __name__ == '__main__':
    main()
