#!/usr/bin/env python3
"""Lists the C functions longer than a limit (issue 12: none in src/ over 200 lines).

Usage: tools/long_functions.py [--max N] [--all] [DIR|FILE ...]   (default: src/, 200)

A function's length counts the lines from its name to its closing brace, both included. The
scan reads C as text: comments, strings, character literals and preprocessor lines are skipped,
and a function is a `{` at file level whose declarator ends in `)`. Prints `LINES NAME FILE:LINE`
per function over the limit, longest first, and exits 1 when there is one (0 otherwise), so
CTest can run it. --all lists every function with its length.
"""
import argparse
import os
import re
import sys

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def strip(text):
    """The text with comments, strings, char literals and preprocessor lines blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            # a preprocessor line, with its continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        if c == "\n":
            out.append(c)
            line_start = True
            i += 1
            continue
        if c in " \t\r\f\v":
            out.append(c)
            i += 1
            continue
        line_start = False
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else " " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    """Yields (name, first line, last line) of each function defined in the C file at path."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = strip(f.read())
    depth = 0
    line = 1
    last_end = 0  # offset just past the last `;`, `}` or `{` seen at file level
    start = None  # (name, line) of the function being read
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c == "{":
            if depth == 0:
                head = text[last_end:i].rstrip()
                if head.endswith(")"):
                    # the name is the identifier before the `(` that opens the parameter list
                    lvl, k = 0, len(head) - 1
                    while k >= 0:
                        if head[k] == ")":
                            lvl += 1
                        elif head[k] == "(":
                            lvl -= 1
                            if lvl == 0:
                                break
                        k -= 1
                    m = list(IDENT.finditer(head[:k]))
                    if m:
                        name = m[-1].group(0)
                        name_line = line - text[last_end + m[-1].start():i].count("\n")
                        start = (name, name_line)
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                if start:
                    yield start[0], start[1], line
                start = None
                last_end = i + 1
            depth = max(depth, 0)
        elif c == ";" and depth == 0:
            last_end = i + 1


def c_files(paths):
    for p in paths:
        if os.path.isfile(p):
            yield p
            continue
        for root, dirs, files in os.walk(p):
            dirs.sort()
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    yield os.path.join(root, f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max", type=int, default=200, help="the longest a function may be (lines)")
    ap.add_argument("--all", action="store_true", help="list every function")
    ap.add_argument("paths", nargs="*")
    a = ap.parse_args()
    paths = a.paths or [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")]
    rows = []
    for path in c_files(paths):
        for name, first, last in functions(path):
            rows.append((last - first + 1, name, os.path.relpath(path), first))
    rows.sort(key=lambda r: (-r[0], r[2], r[3]))
    over = [r for r in rows if r[0] > a.max]
    try:
        for n, name, path, first in rows if a.all else over:
            print(f"{n:5d} {name} {path}:{first}")
    except BrokenPipeError:  # `| head`
        sys.stderr.close()
        return 1 if over else 0
    if over:
        print(f"{len(over)} function(s) over {a.max} lines", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
