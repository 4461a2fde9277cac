"""native/tools/check-style.py, the C half of `make lint`: the tree passes, and each rule
it states catches a file that breaks it (so the lint cannot pass by checking nothing)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CHECK = Path(__file__).resolve().parents[2] / "native" / "tools" / "check-style.py"

GOOD_KERNEL = (
    "/* ChaCha20, AVX2: 8 blocks per iteration, one word per ymm (RFC 8439 2.3). */\n"
    '#ifndef __AVX2__\n#error "chacha20/avx2.c needs -mavx2"\n#endif\n'
)


def run(root: Path, *files: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHECK), "--root", str(root), *(str(root / f) for f in files)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_tree_passes() -> None:
    result = subprocess.run(
        [sys.executable, str(CHECK)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


def test_a_clean_kernel_and_header_pass(tmp_path: Path) -> None:
    (tmp_path / "src" / "chacha20").mkdir(parents=True)
    (tmp_path / "src" / "chacha20" / "avx2.c").write_text(GOOD_KERNEL)
    (tmp_path / "src" / "chacha20" / "x.h").write_text(
        "/* A header. */\n#ifndef ARCHCRYPT_X_H\n#define ARCHCRYPT_X_H\n#endif\n"
    )
    result = run(tmp_path, "src/chacha20/avx2.c", "src/chacha20/x.h")
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("name", "text", "rule"),
    [
        ("src/chacha20/avx2.c", GOOD_KERNEL + "int x;\t/* */\n", "tab"),
        ("src/chacha20/avx2.c", GOOD_KERNEL + "int x; \n", "trailing blank"),
        ("src/chacha20/avx2.c", GOOD_KERNEL + "int x;\n\n", "exactly one newline"),
        ("src/chacha20/avx2.c", GOOD_KERNEL + "int x; // no\n", "// comment"),
        ("src/chacha20/avx2.c", GOOD_KERNEL + "int x;" + " " * 130 + "/* */\n", "columns"),
        ("src/chacha20/avx2.c", GOOD_KERNEL.replace("#error", "#warning"), "never #errors"),
        ("src/chacha20/avx2.c", "/* ChaCha20. */\n" + GOOD_KERNEL, "first line says"),
        ("src/chacha20/x.h", "/* A header. */\nint x;\n", "include guard"),
        ("src/chacha20/x.c", "int x;\n", "open with a comment"),
        ("src/chacha20/x.c", "/* \xff */\n", "not UTF-8"),
    ],
)
def test_each_rule_catches_its_breach(tmp_path: Path, name: str, text: str, rule: str) -> None:
    path = tmp_path / name
    path.parent.mkdir(parents=True)
    path.write_bytes(text.encode("latin-1"))
    result = run(tmp_path, name)
    assert result.returncode == 1
    assert rule in result.stderr, result.stderr


def test_strings_and_comments_are_not_code(tmp_path: Path) -> None:
    path = tmp_path / "src" / "chacha20" / "x.c"
    path.parent.mkdir(parents=True)
    path.write_text('/* A file. */\nconst char *u = "http://x"; /* see http://y */\n')
    result = run(tmp_path, "src/chacha20/x.c")
    assert result.returncode == 0, result.stderr
