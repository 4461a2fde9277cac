#!/usr/bin/env python3
"""Print pyproject.toml's runtime dependencies whose markers hold on a target machine.

`pip install --platform X` fetches wheels for X but evaluates environment markers on the
machine that runs pip, so `uvloop; platform_machine in 'x86_64 aarch64'` would still be
asked for on ppc64le and fail (no wheel). This evaluates them for the target instead.

    target-requirements.py --machine ppc64le --python-version 3.11 pyproject.toml
"""

from __future__ import annotations

import argparse
import sys
import tomllib

from packaging.requirements import Requirement


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machine", required=True, help="uname -m of the target")
    parser.add_argument("--python-version", required=True, help="e.g. 3.11")
    parser.add_argument("pyproject")
    args = parser.parse_args()
    with open(args.pyproject, "rb") as handle:
        dependencies = tomllib.load(handle)["project"]["dependencies"]
    environment = {
        "platform_machine": args.machine,
        "platform_system": "Linux",
        "sys_platform": "linux",
        "os_name": "posix",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "python_version": args.python_version,
        "python_full_version": f"{args.python_version}.0",
    }
    for line in dependencies:
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate(environment):
            requirement.marker = None
            sys.stdout.write(f"{requirement}\n")


if __name__ == "__main__":
    main()
