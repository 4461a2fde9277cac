"""Schema fuzzing: schemathesis against a running server's /openapi.json, every operation,
every phase (examples, coverage, fuzzing, stateful), and every check schemathesis has.

One invocation for the suite and the drill: tests/service/test_security.py runs it with a
few examples per operation against a server with auth on; `make drill` with at least 500.

Two checks judge the request schema rather than the server, and their findings are counted
and reported, not failed (RELIABILITY.md, "What is not covered"):
- negative_data_rejection: a batch is HTTP 200 when its envelope is well formed, each bad
  item answered by its own problem object (README, "Batches"), so a batch with a
  schema-violating item is rightly accepted.
- positive_data_acceptance: the document types keys, nonces and tags as base64 strings but
  not their decoded lengths, nor canonical padding, nor state such as a key's primary
  version, so schema-valid values of the wrong length are rightly refused (422/400).
Every other check must find nothing.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

# Judged against the document's request schemas, which are less precise than the
# validation by design (above): reported, not failed.
REQUEST_SCHEMA_CHECKS = ("negative_data_rejection", "positive_data_acceptance")
# schemathesis' failure codes (`st explain`) of each check, as its reports name them.
CODES = {
    "ST101": "not_a_server_error",
    "ST102": "status_code_conformance",
    "ST103": "content_type_conformance",
    "ST104": "response_headers_conformance",
    "ST105": "response_schema_conformance",
    "ST201": "negative_data_rejection",
    "ST202": "positive_data_acceptance",
    "ST203": "missing_required_header",
    "ST204": "unsupported_method",
    "ST205": "allow_header_conformance",
    "ST301": "use_after_free",
    "ST302": "ensure_resource_availability",
    "ST401": "ignored_auth",
    "ST402": "object_level_authorization",
}


@dataclass
class SchemaResult:
    examples: int
    seconds: float = 0.0
    returncode: int = 0
    operations: int = 0
    test_cases: int = 0
    by_check: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    output: str = ""

    @property
    def failures(self) -> dict[str, int]:
        """Findings of the checks that must find nothing."""
        return {c: n for c, n in self.by_check.items() if c not in REQUEST_SCHEMA_CHECKS}

    @property
    def reported(self) -> dict[str, int]:
        return {c: n for c, n in self.by_check.items() if c in REQUEST_SCHEMA_CHECKS}

    @property
    def ok(self) -> bool:
        return not self.failures and not self.errors and self.operations > 0


def executable() -> str:
    found = shutil.which("schemathesis", path=str(Path(sys.executable).parent))
    if found is None:
        raise FileNotFoundError("schemathesis is a test dependency (pyproject [test])")
    return found


def run(
    base_url: str,
    token: str | None,
    workdir: Path,
    examples: int,
    seed: int = 11,
    timeout: float = 3600,
) -> SchemaResult:
    """Every check, every phase, `examples` per operation and phase; workers 1 (with more,
    CPython 3.11 < 3.11.8 may fail with "AST constructor recursion depth mismatch" in
    schemathesis' own code generation)."""
    workdir.mkdir(parents=True, exist_ok=True)
    junit = workdir / "schemathesis-junit.xml"
    cmd = [
        executable(),
        "run",
        base_url + "/openapi.json",
        "--checks",
        "all",
        "--max-examples",
        str(examples),
        "--seed",
        str(seed),
        "--workers",
        "1",
        "--generation-database",
        "none",
        "--no-color",
        "--continue-on-failure",
        "--report",
        "junit",
        "--report-junit-path",
        str(junit),
        *(["-H", f"Authorization: Bearer {token}"] if token else []),
    ]
    start = time.monotonic()
    done = subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout, cwd=workdir, check=False
    )
    result = SchemaResult(
        examples,
        seconds=time.monotonic() - start,
        returncode=done.returncode,
        output=done.stdout + done.stderr,
    )
    summary = re.search(r"Tested: (\d+)", done.stdout)
    result.operations = int(summary.group(1)) if summary else 0
    cases = re.search(r"(\d+) generated", done.stdout)
    result.test_cases = int(cases.group(1)) if cases else 0
    for code, count in re.findall(r"❌ (ST\d+) [^:\n]*: (\d+)", done.stdout):
        check = CODES.get(code, code)
        result.by_check[check] = result.by_check.get(check, 0) + int(count)
    result.errors = re.findall(r"🚫 ([^\n]*Error[^\n]*)", done.stdout)
    if junit.exists() and not result.by_check and done.returncode != 0:
        # a failure the summary did not name: read it from the report
        for case in ET.parse(junit).getroot().iter("testcase"):
            for failure in case.iter("failure"):
                result.errors.append(f"{case.get('name')}: {(failure.get('message') or '')[:200]}")
    if done.returncode != 0 and not result.by_check and not result.errors:
        result.errors.append(f"schemathesis exited {done.returncode}")
    return result
