#!/usr/bin/env python3
"""gen-op-docs.py -- writes the table of a primitive's scripts (its ops)
into docs/<primitive>.md from the scripts' headers, the one source of an
op's contract (adapters/backend.h, "One source per op").

Each script of adapters/scripts/lua opens with its header (lib/README):

    -- <name>.lua -- what it does (any number of lines).
    -- KEYS...: the keys: the tag(s) and the parts it touches.
    -- ARGV...: the arguments.
    -- Returns: the reply, then its errors.

the three parts in that order, each running to the next. The table of the
scripts named <primitive>_*.lua goes between the lines

    <!-- ops:begin <primitive> -->
    <!-- ops:end -->

of docs/<primitive>.md, replacing what stood there. Usage, from anywhere:

    python3 scripts/gen-op-docs.py           rewrites the docs
    python3 scripts/gen-op-docs.py --check   changes nothing; exits 1 and
                                             names each doc out of date

A header that does not follow the form, a doc without its region, or a
primitive without a doc is an error (exit 2).
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LUA = os.path.join(ROOT, "adapters", "scripts", "lua")
DOCS = os.path.join(ROOT, "docs")
PARTS = (("KEYS", re.compile(r"KEYS\b[^:]*:")),
         ("ARGV", re.compile(r"ARGV\b[^:]*:")),
         ("Returns", re.compile(r"Returns:")))


class HeaderError(Exception):
    pass


def parse(path):
    """The header of the script at `path`: (name, what, keys, argv,
    returns), each part one line of text."""
    name = os.path.basename(path)[:-len(".lua")]
    lines = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("--"):
                break
            if line.startswith("--#include"):
                continue
            lines.append(line[2:].strip())
    opening = "%s.lua -- " % name
    if not lines or not lines[0].startswith(opening):
        raise HeaderError("%s: the header does not open with \"-- %s\""
                          % (path, opening))
    lines[0] = lines[0][len(opening):]
    parts = [[]]
    for line in lines:
        nxt = len(parts) - 1
        if nxt < len(PARTS) and PARTS[nxt][1].match(line):
            parts.append([])
        parts[-1].append(line)
    if len(parts) != len(PARTS) + 1:
        raise HeaderError("%s: the header lacks a \"-- %s\" line after the "
                          "parts before it" % (path, PARTS[len(parts) - 1][0]))
    text = [" ".join(p) for p in parts]
    return (name, ) + tuple(text)


def cell(text):
    """`text` as a Markdown table cell: a "|" would end the cell, a "<"
    open an HTML tag ("<token>") and a "*" or "_" an emphasis."""
    for c, e in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"),
                 ("|", "\\|"), ("*", "\\*"), ("_", "\\_")):
        text = text.replace(c, e)
    return text


def table(headers):
    rows = ["| Script | What it does | KEYS | ARGV | Returns |",
            "|---|---|---|---|---|"]
    for name, what, keys, argv, returns in headers:
        # The part names open their cells: the column says them.
        keys = re.sub(r"^KEYS:\s*", "", keys)
        argv = re.sub(r"^ARGV:\s*", "", argv)
        returns = re.sub(r"^Returns:\s*", "", returns)
        rows.append("| `%s` | %s | %s | %s | %s |" %
                    (name, cell(what), cell(keys), cell(argv), cell(returns)))
    return "\n".join(rows) + "\n"


def render(doc, prim, body):
    """`doc` with its region of `prim` holding `body`."""
    begin = "<!-- ops:begin %s -->\n" % prim
    end = "<!-- ops:end -->\n"
    at = doc.find(begin)
    stop = doc.find(end, at + len(begin)) if at >= 0 else -1
    if at < 0 or stop < 0:
        return None
    note = ("<!-- Written by scripts/gen-op-docs.py from the headers of "
            "adapters/scripts/lua/%s_*.lua; edit those. -->\n" % prim)
    return doc[:at + len(begin)] + note + body + doc[stop:]


def main(argv):
    check = argv[1:] == ["--check"]
    if argv[1:] and not check:
        sys.stderr.write("usage: gen-op-docs.py [--check]\n")
        return 2
    by_prim = {}
    try:
        for path in sorted(glob.glob(os.path.join(LUA, "*.lua"))):
            header = parse(path)
            if "_" in header[0]:
                by_prim.setdefault(header[0].split("_")[0], []).append(header)
    except HeaderError as e:
        sys.stderr.write("gen-op-docs.py: %s\n" % e)
        return 2
    stale = []
    for prim, headers in sorted(by_prim.items()):
        path = os.path.join(DOCS, prim + ".md")
        if not os.path.exists(path):
            sys.stderr.write("gen-op-docs.py: no docs/%s.md for the %s_*.lua "
                             "scripts\n" % (prim, prim))
            return 2
        with open(path, encoding="utf-8") as f:
            doc = f.read()
        new = render(doc, prim, table(headers))
        if new is None:
            sys.stderr.write("gen-op-docs.py: docs/%s.md has no region "
                             "<!-- ops:begin %s --> ... <!-- ops:end -->\n"
                             % (prim, prim))
            return 2
        if new != doc:
            stale.append("docs/%s.md" % prim)
            if not check:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(new)
    if check and stale:
        for doc in stale:
            sys.stderr.write("gen-op-docs.py: %s is out of date with its "
                             "scripts' headers: run python3 "
                             "scripts/gen-op-docs.py\n" % doc)
        return 1
    for doc in stale:
        print("wrote %s" % doc)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
