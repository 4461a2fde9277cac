#!/usr/bin/env python3
"""The C style check (`make -C native lint`, part of the top-level `make lint`).

    python3 tools/check-style.py [--root DIR] [FILE ...]
        (default: every tracked .c and .h of native/; files are named relative to DIR,
        native/ unless given, as src/<alg>/<file>)

archcrypt's C is laid out by hand: kernels align their vector columns and constant tables
the way the algorithm reads, which a reformatter such as clang-format would undo (tried:
it splits every table macro over four lines). So instead of a formatter this checks the
rules the code does keep, each a line of README "Adding an implementation" or
ARCHITECTURE.md, and prints `file:line: rule` for every breach (exit 1):

- text: UTF-8, no tab, no carriage return, no trailing blank, one newline at the end,
  no `//` comment (the code is C11 but its comments are `/* */`), lines of at most 125
  columns after the first (the first is the file's one-line summary, as long as it needs);
- every file opens with a comment saying what it is; a kernel file (src/<alg>/<slug>.c
  for a slug of isa.mk) says it on its first line: what it is, its approach, the spec
  section;
- a kernel whose slug has compiler flags `#error`s when its ISA macro is missing, so that
  a file built without its flags fails loudly instead of compiling to nothing;
- a header carries an include guard `#ifndef ARCHCRYPT_...`, except the headers made to
  be read more than once or by something other than a C compiler (EXEMPT_GUARD).

Stdlib only: it runs before any virtualenv exists.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

NATIVE = Path(__file__).resolve().parents[1]
MAX_COLUMNS = 125  # a 16-byte constant table row with its #define fits

# Headers without an include guard, and why.
EXEMPT_GUARD = {
    "include/archcrypt_api.h": "read verbatim by cffi's cdef, which has no preprocessor",
    "src/camellia/x86_byteslice_batch.h": "a template, included once per vector width",
}
ROWS_HEADER = re.compile(r"src/[a-z0-9_]+/rows\.h$")  # X-macro tables, read per use


def isa_slugs() -> dict[str, str]:
    """slug -> its ISA_FLAGS_<slug> (empty when it has none), from isa.mk."""
    text = (NATIVE / "isa.mk").read_text()
    slugs = {m.group(1): "" for m in re.finditer(r"^ISA_ARCH_(\w+)\s*:?=", text, re.M)}
    for m in re.finditer(r"^ISA_FLAGS_(\w+)\s*:?=[ \t]*(.*)$", text, re.M):
        if m.group(1) in slugs:
            slugs[m.group(1)] = m.group(2).strip()
    return slugs


def check(rel: str, data: bytes, slugs: dict[str, str]) -> list[str]:
    problems: list[str] = []

    def say(line: int, rule: str) -> None:
        problems.append(f"native/{rel}:{line}: {rule}")

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        say(data[: e.start].count(b"\n") + 1, "not UTF-8")
        text = data.decode("utf-8", "replace")
    if not text.endswith("\n") or text.endswith("\n\n"):
        say(text.count("\n") + 1, "the file must end in exactly one newline")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    in_comment = False
    for n, line in enumerate(lines, 1):
        if "\t" in line:
            say(n, "tab (indent with spaces)")
        if "\r" in line:
            say(n, "carriage return")
        if line != line.rstrip():
            say(n, "trailing blank")
        if n > 1 and len(line) > MAX_COLUMNS:
            say(n, f"{len(line)} columns (at most {MAX_COLUMNS} after the first line)")
        code, in_comment = strip_comments_and_strings(line, in_comment)
        if "//" in code:
            say(n, "// comment (use /* */)")

    first = lines[0] if lines else ""
    if not first.startswith("/*"):
        say(1, "the file must open with a comment saying what it is")
    path = Path(rel)
    slug = path.stem
    if path.suffix == ".c" and path.parts[0] == "src" and len(path.parts) == 3 and slug in slugs:
        summary = first.removeprefix("/* ").removesuffix(" */")
        if not first.startswith("/* ") or len(summary.split()) < 6:
            say(1, "a kernel's first line says what it is, its approach, the spec section")
        if slugs[slug] and "#error" not in text:
            say(1, f"kernel {slug} is built with '{slugs[slug]}' but never #errors without them")
    if path.suffix == ".h" and rel not in EXEMPT_GUARD and not ROWS_HEADER.search(rel):
        guard = re.search(r"^#ifndef (ARCHCRYPT_\w+)\n#define \1\b", text, re.M)
        if not guard:
            say(1, "no include guard (#ifndef ARCHCRYPT_..._H / #define ARCHCRYPT_..._H)")
    return problems


def strip_comments_and_strings(line: str, in_comment: bool) -> tuple[str, bool]:
    """The code of one line with /* */ comments and string and character literals removed;
    whether a comment is still open at its end."""
    out = []
    i = 0
    while i < len(line):
        if in_comment:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out), True
            i, in_comment = end + 2, False
        elif line.startswith("/*", i):
            in_comment, i = True, i + 2
        elif line[i] in "\"'":
            quote, i = line[i], i + 1
            while i < len(line) and line[i] != quote:
                i += 2 if line[i] == "\\" else 1
            i += 1
        else:
            out.append(line[i])
            i += 1
    return "".join(out), in_comment


def main(argv: list[str]) -> int:
    root = NATIVE
    if argv[:1] == ["--root"]:
        root, argv = Path(argv[1]).resolve(), argv[2:]
    if argv:
        files = [str(Path(f).resolve().relative_to(root)) for f in argv]
    else:
        listed = subprocess.run(
            ["git", "ls-files", "*.c", "*.h"],
            cwd=NATIVE,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        files = listed.split()
    slugs = isa_slugs()
    problems = [p for f in files for p in check(f, (root / f).read_bytes(), slugs)]
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"check-style: {len(problems)} problem(s) in {len(files)} files", file=sys.stderr)
        return 1
    print(f"check-style: {len(files)} C files ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
