#!/usr/bin/env bash
# Everything bench/insn/run.py needs for one architecture, installed or built once
# (idempotent, quick when done):
#
#   bench/insn/setup.sh [ARCH]        ARCH: ppc64le (the default); an arch of run.py's ARCHES
#
#   - Debian packages: qemu-user (the dynamic build: it accepts -plugin; it installs beside
#     qemu-user-static, whose qemu-user-binfmt it provides), libglib2.0-dev and pkg-config
#     for the plugin, golang-go and golang-golang-x-crypto-dev for the Go peer, the arch's
#     cross compiler;
#   - the instruction-count TCG plugin, tests/plugin/insn.c of the qemu source package that
#     matches the installed qemu-user (a deb-src entry is added for `apt-get source`);
#   - a Debian tree of that arch with the peers' libraries and headers (libgcrypt20-dev,
#     libssl-dev, libsodium-dev), by scripts/foreign-tree.sh.
# Not part of the test suite. Needs root for apt-get.
set -euo pipefail
cd "$(dirname "$0")/../.."

arch=${1:-ppc64le}
case $arch in
    ppc64le) debian=ppc64el triple=powerpc64le-linux-gnu ;;
    arm64) debian=arm64 triple=aarch64-linux-gnu ;;
    s390x) debian=s390x triple=s390x-linux-gnu ;;
    *) echo "usage: $0 [ppc64le|arm64|s390x]" >&2; exit 2 ;;
esac

OUT=${OUT:-build/bench/insn}
mkdir -p "$OUT"
say() { printf 'bench/insn setup: %s\n' "$*" >&2; }

packages=(qemu-user libglib2.0-dev pkg-config gcc golang-go golang-golang-x-crypto-dev
          "gcc-$triple" "libc6-dev-$debian-cross" debootstrap xz-utils dpkg-dev)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    [[ $(id -u) -eq 0 ]] || { say "missing ${missing[*]}; run as root to install them"; exit 1; }
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ---- the plugin, from the qemu source package of the installed qemu-user -------------
plugin=$OUT/libinsn.so
version=$(dpkg-query -W -f='${source:Version}' qemu-user)  # the source version (no +bN binNMU suffix)
stamp=$OUT/libinsn.version
if [[ ! -f $plugin || ! -f $stamp || $(cat "$stamp") != "$version" ]]; then
    src=$OUT/qemu-src
    mkdir -p "$src"
    if ! ls "$src"/qemu_*.orig.tar.* >/dev/null 2>&1; then
        if ! apt-cache showsrc qemu 2>/dev/null | grep -q "^Version: $version\$"; then
            list=/etc/apt/sources.list.d/archcrypt-deb-src.sources
            [[ $(id -u) -eq 0 ]] || { say "no deb-src entry for qemu $version; run as root"; exit 1; }
            say "adding deb-src entries ($list) for apt-get source qemu"
            cat >"$list" <<'EOF'
# Added by archcrypt bench/insn/setup.sh: source packages (qemu's TCG plugin sources).
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
            apt-get update -qq
        fi
        say "apt-get source --download-only qemu=$version"
        (cd "$src" && apt-get source --download-only -qq "qemu=$version" 2>&1 | grep -v "unsandboxed" >&2 || true)
    fi
    orig=$(ls "$src"/qemu_*.orig.tar.*)
    # Only the two files the plugin needs: tests/plugin/insn.c and the plugin API header
    # (Debian's patches leave both alone).
    tar -xf "$orig" -C "$src" --wildcards '*/tests/plugin/insn.c' '*/include/qemu/qemu-plugin.h'
    top=$(ls -d "$src"/qemu-*/ | head -n 1)
    # shellcheck disable=SC2046
    gcc -shared -fPIC -O2 $(pkg-config --cflags glib-2.0) -I "$top/include/qemu" \
        "$top/tests/plugin/insn.c" -o "$plugin" $(pkg-config --libs glib-2.0)
    echo "$version" >"$stamp"
    say "built $plugin from qemu $version"
fi

# ---- the arch's tree with the C peers -----------------------------------------------
scripts/foreign-tree.sh "$debian" "$OUT/$debian" libgcrypt20-dev libssl-dev libsodium-dev
say "ready"
