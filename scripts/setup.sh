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
# local base image. wrk drives `make bench-service`. Only what is missing is installed.
debian_packages=(
    build-essential make
    gcc-aarch64-linux-gnu libc6-dev-arm64-cross
    gcc-powerpc64le-linux-gnu libc6-dev-ppc64el-cross
    gcc-s390x-linux-gnu libc6-dev-s390x-cross
    qemu-user-static
    debootstrap
    prometheus
    buildah podman runc containernetworking-plugins
    wrk
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
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
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
    "$VENV/bin/python" -m pip install -q -e '.[test,bench]'
    touch "$stamp"
else
    # Editable install: Python changes are live; bring the C library and the cffi
    # module (built in place in service/archcrypt) up to date with the sources.
    "$VENV/bin/python" native/build_ffi.py >/dev/null
fi
