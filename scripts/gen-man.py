#!/usr/bin/env python3
# gen-man.py -- writes the section 3 man pages of the public headers from
# their comments: one page per header (man/fleet_<header>.3; fleet.h gives
# man/fleet_version.3, as man/fleet.3 is the hand-written overview) holding
# every declaration with the comment above it, and one link page per public
# function (man/links/<function>.3, a ".so" of its header's page), so that
# `man fleet_queue_enqueue` opens fleet_queue(3) there.
#
#   python3 scripts/gen-man.py          rewrite the pages
#   python3 scripts/gen-man.py --check  exit 1, naming the stale pages, when
#                                       a page differs from what the headers
#                                       give (tests/CMakeLists.txt: man-pages)
#
# The pages are committed (building needs no python3); the date and version
# in their title line come from cmake/packaging.cmake (FLEET_RELEASE_DATE)
# and include/fleet.h, so that the same headers always give the same bytes.
# Python 3 standard library only.

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE = os.path.join(ROOT, "include")
MAN = os.path.join(ROOT, "man")
LINKS = os.path.join(MAN, "links")
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep",
          "Oct", "Nov", "Dec"]


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def release():
    """The version (include/fleet.h) and release date (packaging.cmake)."""
    version = re.search(r'#define FLEET_VERSION_STRING "([^"]+)"',
                        read(os.path.join(INCLUDE, "fleet.h"))).group(1)
    m = re.search(r'FLEET_RELEASE_DATE "\w+, (\d+) (\w+) (\d+)',
                  read(os.path.join(ROOT, "cmake", "packaging.cmake")))
    day, month, year = int(m.group(1)), m.group(2), int(m.group(3))
    date = "%04d-%02d-%02d" % (year, MONTHS.index(month) + 1, day)
    return version, date


def headers():
    """(include path, page name) of every public header."""
    out = [("fleet.h", "fleet_version")]
    for name in sorted(os.listdir(os.path.join(INCLUDE, "fleet"))):
        if name.endswith(".h"):
            out.append(("fleet/" + name, "fleet_" + name[:-2]))
    return out


# ---- Reading a header ------------------------------------------------------

def comment_lines(block):
    """The text lines of a /* ... */ comment, without the markers."""
    body = block.strip()
    assert body.startswith("/*") and body.endswith("*/")
    body = body[2:-2]
    lines = body.split("\n")
    out = []
    for i, line in enumerate(lines):
        if i > 0:
            line = re.sub(r"^\s*\* ?", "", line, count=1)
        else:
            line = line[1:] if line.startswith(" ") else line
        out.append(line.rstrip())
    while out and not out[-1].strip():
        out.pop()
    while out and not out[0].strip():
        out.pop(0)
    return out


def strip_comments(line, in_comment):
    """The code of a line without its comments, strings and character
    constants, and whether a comment is still open at its end."""
    out = ""
    i = 0
    while i < len(line):
        if in_comment:
            end = line.find("*/", i)
            if end < 0:
                return out, True
            in_comment = False
            i = end + 2
        elif line.startswith("/*", i):
            in_comment = True
            i += 2
        elif line[i] in "\"'":
            m = re.match(r"(\"(\\.|[^\"\\])*\"|'(\\.|[^'\\])*')", line[i:])
            i += len(m.group(0)) if m else 1
        else:
            out += line[i]
            i += 1
    return out, in_comment


def items(text):
    """The header as a list of (comment lines, code lines): a comment with
    the declarations that follow it up to the next blank line or comment
    (code may be empty: a comment of its own), or code without a comment.
    The file's own header comment, the include guard, the includes and the
    C++ guards are left out."""
    lines = text.split("\n")
    i, n = 0, len(lines)
    out = []
    skip = re.compile(r'^(#ifndef FLEET_(\w+_)?H$|#define FLEET_(\w+_)?H$|#endif /\* '
                      r'FLEET|#include |#ifdef __cplusplus|#endif$|extern '
                      r'"C" \{|\}$)')
    comments_seen = 0
    heading = False
    while i < n:
        line = lines[i]
        if not line.strip() or skip.match(line):
            i += 1
            continue
        comment = []
        if line.lstrip().startswith("/*"):
            start = i
            while "*/" not in lines[i]:
                i += 1
            comment = comment_lines("\n".join(lines[start:i + 1]))
            i += 1
            comments_seen += 1
            if comments_seen <= 2 and not out and (
                    comment[0].startswith("SPDX") or " -- " in comment[0]):
                continue
        code = []
        depth = 0
        in_comment = False
        while i < n:
            line = lines[i]
            cont = code and code[-1].endswith("\\")
            if depth == 0 and not cont and (not line.strip() or
                               line.lstrip().startswith("/*") or
                               skip.match(line)):
                break
            code.append(line.rstrip())
            bare, in_comment = strip_comments(line, in_comment)
            depth += bare.count("{") - bare.count("}")
            i += 1
        if comment and all(re.fullmatch(r"-+", l.strip()) for l in comment):
            heading = True
            continue
        m = re.fullmatch(r"-+ (.*?) -+", comment[0]) if comment else None
        if m and len(comment) == 1 and not code:
            out.append(("heading", m.group(1)))
        elif heading and len(comment) == 1 and not code:
            out.append(("heading", comment[0].strip()))
        else:
            out.append((comment, code))
        heading = False
    return out


def title(text):
    """The file's header comment, after " -- ", as one line."""
    m = re.search(r"/\* fleet(?:/\w+)?\.h -- (.*?)\*/", text, re.S)
    lines = [re.sub(r"^\s*\* ?", "", l).strip() for l in
             m.group(1).split("\n")]
    para = []
    for l in lines:
        if not l:
            break
        para.append(l)
    return " ".join(para).rstrip(". ")


def intro(text):
    """Paragraphs of the file's header comment after its first one."""
    m = re.search(r"/\* fleet(?:/\w+)?\.h -- (.*?)\*/", text, re.S)
    lines = comment_lines("/* " + m.group(1) + "*/")
    while lines and lines[0].strip():
        lines.pop(0)
    return lines


def function_names(code):
    """The public functions a block of code declares."""
    joined = " ".join(code)
    return re.findall(r"FLEET_EXTERN\b[^;]*?\b(fleet_\w+)\s*\(", joined)


def split_args(args):
    """The top-level comma-separated parts of a parameter list."""
    parts, depth, cur = [], 0, ""
    for ch in args:
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        depth += {"(": 1, ")": -1}.get(ch, 0)
        cur += ch
    parts.append(cur.strip())
    return parts


def wrap_prototype(decl, width=68):
    """One function declaration laid out as clang-format would at `width`
    columns: the parameters after the opening parenthesis, or on the lines
    below it, indented by four, when the name is long."""
    if len(decl) <= width:
        return [decl]
    m = re.match(r"^(.*?(?:\bfleet_\w+|\(\*fleet_\w+\))\()(.*)(\);)$", decl)
    head, args, tail = m.group(1), m.group(2), m.group(3)
    parts = split_args(args)
    out = []
    indent = len(head) if len(head) <= width // 2 else 4
    line = head if indent == len(head) else None
    if line is None:
        out.append(head)
        line = " " * indent
    for k, part in enumerate(parts):
        piece = part + ("," if k + 1 < len(parts) else tail)
        fresh = not line.strip() or line == head
        if fresh or len(line) + 1 + len(piece) <= width:
            line = line + ("" if fresh else " ") + piece
        else:
            out.append(line)
            line = " " * indent + piece
    out.append(line)
    return out


def prototype(code):
    """A declaration as shown: FLEET_EXTERN dropped and each function laid
    out again without it; other declarations as written, macro
    continuations closed up."""
    if not function_names(code):
        return [re.sub(r"\s+\\$", " \\\\", l) for l in code]
    out = []
    joined = re.sub(r"\s+", " ", " ".join(code).replace("FLEET_EXTERN ", ""))
    joined = joined.replace("( ", "(")
    for decl in re.findall(r"[^;]+;", joined):
        out += wrap_prototype(decl.strip())
    return out


# ---- Writing roff ---------------------------------------------------------

def esc(s):
    """Text escaped for roff."""
    return s.replace("\\", "\\e").replace("-", "\\-")


def inline(s):
    """Prose escaped, `names` in italics, a line never starting with a
    control character."""
    s = esc(s)
    s = re.sub(r"`([^`]+)`", r"\\fI\1\\fR", s)
    if s.startswith(".") or s.startswith("'"):
        s = "\\&" + s
    return s


def code_block(lines, out):
    out.append(".PP")
    out.append(".nf")
    out.append(".RS 4")
    for line in lines:
        line = esc(line)
        if line.startswith(".") or line.startswith("'"):
            line = "\\&" + line
        out.append("\\fB" + line + "\\fR" if line.strip() else "")
    out.append(".RE")
    out.append(".fi")


def prose(lines, out):
    """A comment: paragraphs at blank lines; runs of lines indented by two
    spaces or more (tables, lists, URLs) kept as they are laid out."""
    i, n = 0, len(lines)
    while i < n:
        if not lines[i].strip():
            i += 1
            continue
        out.append(".PP")
        while i < n and lines[i].strip():
            if lines[i].startswith("  "):
                run = []
                while i < n and lines[i].startswith("  "):
                    run.append(lines[i])
                    i += 1
                indent = min(len(l) - len(l.lstrip()) for l in run)
                out.append(".RS 2")
                out.append(".nf")
                for l in run:
                    out.append(inline(l[indent:]) or "\\&")
                out.append(".fi")
                out.append(".RE")
            else:
                out.append(inline(lines[i].strip()))
                i += 1


def page(include, name, version, date, all_pages):
    text = read(os.path.join(INCLUDE, include))
    blocks = items(text)
    decls = [(c, k) for c, k in blocks if c != "heading"]
    funcs = []
    for _, code in decls:
        funcs += [f for f in function_names(code) if f not in funcs]
    out = [
        ".\\\" %s.3 -- generated from include/%s by scripts/gen-man.py;"
        % (name, include),
        ".\\\" edit the header's comments, then run the script.",
        '.TH %s 3 %s "fleet %s" "fleet manual"' % (name.upper(), date,
                                                   version),
        ".nh",
        ".ad l",
        ".SH NAME",
    ]
    names = [name] + [f for f in funcs if f != name]
    out.append(esc(", ".join(names)) + " \\- " + esc(title(text)))
    out.append(".SH SYNOPSIS")
    out.append(".nf")
    out.append(".B #include <%s>" % include)
    out.append(".fi")
    protos = []
    for _, code in decls:
        if function_names(code):
            protos += ([""] if protos else []) + prototype(code)
    if protos:
        code_block(protos, out)
    out.append(".PP")
    out.append("Link with")
    out.append(".BR \"pkg\\-config \\-\\-libs fleet\" .")
    out.append(".SH DESCRIPTION")
    head = intro(text)
    if head:
        prose(head, out)
    out.append(".PP")
    out.append("The declarations of")
    out.append(".I %s" % include)
    out.append("in the order of the header, each with its comment.")
    for comment, code in blocks:
        if comment == "heading":
            out.append(".SS " + inline(code))
            continue
        if code:
            code_block(prototype(code), out)
        if comment:
            if code:
                out.append(".RS 4")
            prose(comment, out)
            if code:
                out.append(".RE")
    out.append(".SH SEE ALSO")
    others = ["fleet"] + [p for p in all_pages if p != name]
    for k, o in enumerate(others):
        out.append(".BR %s (3)%s" % (esc(o), "," if k + 1 < len(others)
                                     else ""))
    return "\n".join(out) + "\n", funcs


def generate():
    """{path relative to the repository: text} of every generated page."""
    version, date = release()
    pages = {}
    hdrs = headers()
    all_pages = [p for _, p in hdrs]
    seen = {}
    for include, name in hdrs:
        text, funcs = page(include, name, version, date, all_pages)
        pages["man/%s.3" % name] = text
        for f in funcs:
            if f == name or f in all_pages:
                continue
            if f in seen:
                sys.exit("gen-man: %s declared in %s and %s" %
                         (f, seen[f], include))
            seen[f] = include
            pages["man/links/%s.3" % f] = ".so man3/%s.3\n" % name
    return pages


def existing():
    """The generated pages now in the tree (relative paths)."""
    out = set()
    for name in os.listdir(MAN):
        path = os.path.join(MAN, name)
        if name.endswith(".3") and name.startswith("fleet_"):
            if "generated from include/" in read(path).split("\n")[0]:
                out.add("man/" + name)
    if os.path.isdir(LINKS):
        out |= {"man/links/" + n for n in os.listdir(LINKS)}
    return out


def main():
    check = sys.argv[1:] == ["--check"]
    if sys.argv[1:] and not check:
        sys.exit("usage: gen-man.py [--check]")
    pages = generate()
    stale = []
    for rel, text in sorted(pages.items()):
        path = os.path.join(ROOT, rel)
        old = read(path) if os.path.exists(path) else None
        if old == text:
            continue
        stale.append(rel)
        if not check:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    extra = sorted(existing() - set(pages))
    for rel in extra:
        stale.append(rel + " (no longer generated)")
        if not check:
            os.remove(os.path.join(ROOT, rel))
    if check and stale:
        print("gen-man: stale man pages (run python3 scripts/gen-man.py):",
              file=sys.stderr)
        for rel in stale:
            print("  " + rel, file=sys.stderr)
        return 1
    if not check:
        print("gen-man: %d pages, %d rewritten" % (len(pages), len(stale)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
