#!/usr/bin/env bash
# archcrypt against the libraries a user would pick instead, in one run on this machine:
# C (every runnable archcrypt row vs OpenSSL 3, libsodium, libgcrypt from Debian's
# packages) and Python (the archcrypt.crypto facade vs pyca/cryptography and hashlib).
#
#   bench/run.sh                  print the tables (make bench)
#   bench/run.sh --write FILE     also rewrite FILE, e.g. BENCHMARKS.md (make bench-md)
#   bench/run.sh --quick          shorter cells, for trying the harness (numbers noisier)
#
# The programs: bench/c/peers.c (built by native/Makefile as bench-peers) and
# bench/python/peers.py, each with its language's one workload table (bench/c/workloads.h,
# operations() in peers.py); bench/report.py writes the file.
#
# Installs the peers' -dev packages when run as root and they are missing. Takes about
# four minutes; progress goes to stderr. Expects the virtualenv of scripts/setup.sh
# (PY overrides the interpreter).
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PY:-.venv/bin/python}
WRITE=""
C_ARGS=()
PY_ARGS=()
COMMAND=${BENCH_COMMAND:-"bench/run.sh $*"}
while (($#)); do
    case "$1" in
        --write) WRITE=${2:?--write needs a file}; shift 2 ;;
        --quick) C_ARGS+=(--cell-time 0.5); PY_ARGS+=(--cell-time 0.5); shift ;;
        *) echo "usage: $0 [--write FILE] [--quick]" >&2; exit 2 ;;
    esac
done

step() { printf '\n==> %s\n' "$*" >&2; }

# ---- the peers' development packages ----------------------------------------------------
packages=(libssl-dev libsodium-dev libgcrypt20-dev pkg-config)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
        step "installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
        echo "bench/run.sh: missing ${missing[*]}; as root: apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
fi
if [[ ! -x $PY ]]; then
    echo "bench/run.sh: no $PY; run scripts/setup.sh (or make setup) first, or set PY" >&2
    exit 1
fi

# ---- build: whatever kernels the tree has by now ----------------------------------------
step "building native/ (lib, bench-peers)"
make -s -C native lib bench-peers
lib=$(make --no-print-directory -s -C native print-lib)
bin=$(dirname "$lib")/bench-peers
# The Python extension links its own copy of the static library: rebuild it when older.
ext=$(ls -t service/archcrypt/_native*.so 2>/dev/null | head -n1 || true)
if [[ -z $ext || $lib -nt $ext ]]; then
    step "rebuilding the Python extension against the new library"
    "$PY" native/build_ffi.py >/dev/null
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
t0=$SECONDS

# ---- run ---------------------------------------------------------------------------------
step "C: every runnable archcrypt row vs OpenSSL, libsodium, libgcrypt (about 2 minutes)"
status=0
"$bin" --csv "$tmp/c.csv" "${C_ARGS[@]}" >"$tmp/c.md" || status=$?
if ((status != 0 && status != 3)); then
    echo "bench/run.sh: $bin failed ($status)" >&2
    exit "$status"
fi
step "Python: archcrypt.crypto vs pyca/cryptography and hashlib (about 1 minute)"
"$PY" bench/python/peers.py --csv "$tmp/py.csv" "${PY_ARGS[@]}" >"$tmp/py.md"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
elapsed=$((SECONDS - t0))

# ---- output ------------------------------------------------------------------------------
printf '\n## C: archcrypt vs OpenSSL, libsodium, libgcrypt\n\n'
cat "$tmp/c.md"
printf '\n## Python: archcrypt.crypto vs pyca/cryptography and hashlib\n\n'
cat "$tmp/py.md"
if ((status == 3)); then
    echo "bench/run.sh: some implementation produced a WRONG OUTPUT (see the tables); not writing ${WRITE:-anything}" >&2
    exit 3
fi
if [[ -n $WRITE ]]; then
    "$PY" bench/report.py --out "$WRITE" --command "$COMMAND" \
        --c-md "$tmp/c.md" --c-csv "$tmp/c.csv" --py-md "$tmp/py.md" --py-csv "$tmp/py.csv" \
        --started "$started" --elapsed "$elapsed" --load-before "$load_before" \
        --load-after "$load_after" --bench-binary "$bin"
    step "wrote $WRITE"
fi
step "done in ${elapsed}s"
