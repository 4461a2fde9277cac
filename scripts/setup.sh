#!/usr/bin/env bash
# Prepare a fresh machine for archcrypt: Debian packages (when running as root),
# a virtualenv in .venv and the package with its test extras. Idempotent and quick
# when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}

# Debian packages: a C toolchain, for the cross-architecture proofs the cross
# compilers and qemu-user (and debootstrap for scripts/foreign-tree.sh, the foreign Python
# trees of tests/cross/test_foreign_python.py), and for the metrics tests a real Prometheus
# (prometheus and promtool; the tests start their own server on loopback). For the image
# tests (tests/images): buildah and podman with runc (no Docker engine), debootstrap for the
# local base image. For the named-key tests a real PostgreSQL (the tests make a throwaway
# cluster with initdb and run it as the postgres user; they need no system cluster).
# wrk drives `make bench-service`; gdb proves which row archcrypt._fast runs
# (tests/native/test_fast_dispatch.py). Only what is missing is installed.
debian_packages=(
    build-essential make
    gcc-aarch64-linux-gnu libc6-dev-arm64-cross
    gcc-powerpc64le-linux-gnu libc6-dev-ppc64el-cross
    gcc-s390x-linux-gnu libc6-dev-s390x-cross
    qemu-user-static
    debootstrap
    prometheus
    postgresql
    buildah podman runc containernetworking-plugins
    wrk
    gdb
    clang libclang-rt-14-dev valgrind
)
missing=()
if command -v dpkg-query >/dev/null 2>&1; then
    for p in "${debian_packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
fi
if ((${#missing[@]})); then
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
        echo "setup: installing Debian packages: ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        # Debian starts the services it installs (PostgreSQL's system cluster, Prometheus);
        # the tests run their own, so keep them from starting (policy-rc.d, exit 101: "action
        # forbidden"), unless a policy is already in place.
        policy=""
        if [[ ! -e /usr/sbin/policy-rc.d ]]; then
            policy=/usr/sbin/policy-rc.d
            trap 'rm -f "$policy"' EXIT
            printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy"
        fi
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
        [[ -z $policy ]] || rm -f "$policy"
        if [[ " ${missing[*]} " == *" postgresql "* ]] && command -v systemctl >/dev/null 2>&1; then
            systemctl disable postgresql.service >/dev/null 2>&1 || true
            echo "setup: the Debian postgresql service is installed but disabled (the tests run their own)"
        fi
        if [[ " ${missing[*]} " == *" prometheus "* ]] && command -v systemctl >/dev/null 2>&1; then
            # The package enables (and under systemd starts) a system-wide Prometheus on :9090;
            # the tests only need the binaries and run their own, so leave no daemon behind.
            if [[ -d /run/systemd/system ]]; then
                systemctl disable --now prometheus.service >/dev/null 2>&1 || true
            else
                systemctl disable prometheus.service >/dev/null 2>&1 || true
            fi
            echo "setup: the Debian prometheus service is installed but disabled (the tests run their own)"
        fi
    else
        echo "setup: missing Debian packages (run as root to install): ${missing[*]}" >&2
        echo "setup: the cross-architecture tests need the compilers and qemu (or ARCHCRYPT_SKIP_CROSS=1);" >&2
        echo "setup: the metrics tests need prometheus (or ARCHCRYPT_SKIP_PROMETHEUS=1)" >&2
        echo "setup: the named-key tests need postgresql (or ARCHCRYPT_SKIP_POSTGRES=1)" >&2
    fi
fi

if [[ ! -x "$VENV/bin/python" ]]; then
    echo "setup: creating $VENV"
    "$PYTHON" -m venv "$VENV"
fi
stamp="$VENV/.archcrypt-installed"
if [[ ! -f "$stamp" || pyproject.toml -nt "$stamp" || setup.py -nt "$stamp" ]]; then
    echo "setup: installing archcrypt and its test dependencies into $VENV"
    "$VENV/bin/python" -m pip install -q --upgrade pip
    "$VENV/bin/python" -m pip install -q -e '.[test,bench,lint]'
    touch "$stamp"
else
    # Editable install: Python changes are live; bring the C library and the cffi
    # module (built in place in service/archcrypt) up to date with the sources.
    "$VENV/bin/python" native/build_ffi.py >/dev/null
fi
