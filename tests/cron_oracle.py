#!/usr/bin/python3
# cron_oracle.py -- croniter as an oracle for fleet's cron expressions, run
# by the test cron_oracle (tests/test_cron_tz.c) with Debian's
# python3-croniter.
#
# Input, one case per line, tab-separated:
#   <croniter expression> <zone> <start> <t1> ... <tN-1>
# (times in Unix seconds). For each case it prints one line with N numbers:
# croniter's next fire time after <start>, after <t1>, ..., after <tN-1>,
# each from a fresh croniter started at that instant in that zone (the test
# passes fleet's own fire times, so one early difference does not shift all
# the later ones). A case croniter refuses prints "ERR <reason>".
#
# A line "@off <zone> <t1> ... <tN>" asks for the zone's UTC offsets (in
# seconds) at those instants instead, from Python's zoneinfo.
#
# With the single argument --probe it prints "ok" when croniter imports, so
# the test can tell a missing oracle from a broken one.
import sys
from datetime import datetime
from zoneinfo import ZoneInfo

from croniter import croniter


def main():
    if sys.argv[1:] == ["--probe"]:
        print("ok")
        return
    zones = {}
    out = sys.stdout
    for line in sys.stdin:
        parts = line.rstrip("\n").split("\t")
        expr, zone, times = parts[0], parts[1], parts[2:]
        tz = zones.get(zone)
        if tz is None:
            tz = zones[zone] = ZoneInfo(zone)
        if expr == "@off":
            # The zone's UTC offsets at the given instants, in seconds.
            offs = []
            for t in times:
                d = datetime.fromtimestamp(int(t), tz)
                offs.append(str(int(d.utcoffset().total_seconds())))
            out.write(" ".join(offs) + "\n")
            continue
        try:
            res = []
            for t in times:
                start = datetime.fromtimestamp(int(t), tz)
                res.append(str(int(croniter(expr, start).get_next(float))))
            out.write(" ".join(res) + "\n")
        except Exception as e:  # croniter's errors are several classes
            out.write("ERR %s\n" % str(e).replace("\n", " "))
    out.flush()


main()
