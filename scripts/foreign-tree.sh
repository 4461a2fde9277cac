#!/usr/bin/env bash
# A Debian root file system for a foreign architecture that qemu-user runs without a
# chroot or binfmt_misc: `qemu-<arch>-static -L DIR DIR/usr/bin/python3 ...`.
#
#   scripts/foreign-tree.sh ARCH DIR [EXTRA_PACKAGE...]
#
# ARCH is Debian's name: arm64, ppc64el or s390x (aarch64 and ppc64le are accepted).
# The tree holds python3 with cffi, pytest, hypothesis and cryptography, and the headers
# a cross-compiled cffi extension needs (libpython3-dev: Python.h and the target's
# <triple>/python3.X/pyconfig.h). EXTRA_PACKAGEs are added to the list (e.g. libgcrypt20-dev
# for bench/insn). Idempotent: a stamp file records what was built; a rerun with the same
# arguments does nothing, a different list rebuilds the tree from scratch.
#
# How (shared/CROSS-ARCH.md, "Running Python on a foreign arch"): debootstrap --foreign
# downloads every package and unpacks the Essential ones; the others are unpacked here with
# dpkg-deb | tar (no maintainer scripts run, none are needed to import Python modules).
# Needs debootstrap, dpkg-deb and network access to a Debian mirror (DEBIAN_MIRROR); the
# .debs are cached in DIR.debs (or FOREIGN_DEB_CACHE/ARCH).
set -euo pipefail

usage() {
    echo "usage: $0 arm64|ppc64el|s390x DIR [EXTRA_PACKAGE...]" >&2
    exit 2
}
(($# >= 2)) || usage
arch=$1
dir=$2
shift 2
case $arch in
    arm64 | aarch64) arch=arm64 ;;
    ppc64el | ppc64le) arch=ppc64el ;;
    s390x) ;;
    *) usage ;;
esac

suite=${DEBIAN_SUITE:-bookworm}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
packages=(python3 python3-cffi python3-pytest python3-hypothesis python3-cryptography libpython3-dev "$@")
# Bump when the way the tree is made changes, so old trees are rebuilt.
recipe=2
stamp_text="recipe=$recipe suite=$suite arch=$arch packages=${packages[*]}"

start=$SECONDS
say() { printf 'foreign-tree %s: %s (%ds)\n' "$arch" "$*" $((SECONDS - start)) >&2; }

export PATH="$PATH:/usr/sbin:/sbin"
require() {
    for tool in "$@"; do
        if ! command -v "$tool" >/dev/null 2>&1; then
            echo "foreign-tree: $tool not found (scripts/setup.sh installs debootstrap when run as root)" >&2
            exit 1
        fi
    done
}
require flock

mkdir -p "$(dirname "$dir")"
dir=$(cd "$(dirname "$dir")" && pwd)/$(basename "$dir")
stamp=$dir/.archcrypt-foreign-tree
# Downloaded .debs are kept beside the tree and reused (checksums verified) when it is
# rebuilt. One cache per arch: debootstrap's cache is not safe for concurrent runs.
if [[ -n ${FOREIGN_DEB_CACHE:-} ]]; then
    cache=$FOREIGN_DEB_CACHE/$arch
else
    cache=$dir.debs
fi
mkdir -p "$cache"

# One builder per tree at a time (parallel test runs share build/foreign).
exec 9>"$dir.lock"
flock 9

if [[ -f $stamp && $(cat "$stamp") == "$stamp_text" ]]; then
    say "up to date in $dir"
    exit 0
fi

require debootstrap dpkg-deb tar
if [[ $(id -u) -ne 0 ]]; then
    echo "foreign-tree: debootstrap needs root" >&2
    exit 1
fi

if [[ -e $dir ]]; then
    # Only ever delete what this script made: a partial or outdated debootstrap tree.
    if [[ -d $dir/debootstrap || -f $stamp || -z $(ls -A "$dir") ]]; then
        say "removing the incomplete or outdated tree in $dir"
        rm -rf --one-file-system "$dir"
    else
        echo "foreign-tree: $dir exists and is not a tree made by this script; not touching it" >&2
        exit 1
    fi
fi

include=$(
    IFS=,
    echo "${packages[*]}"
)
say "debootstrap --foreign $suite: downloading ${#packages[@]} packages and their dependencies"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! debootstrap --arch="$arch" --foreign --variant=minbase --include="$include" --cache-dir="$cache" \
    "$suite" "$dir" "$mirror" >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    [[ -f $dir/debootstrap/debootstrap.log ]] && tail -n 30 "$dir/debootstrap/debootstrap.log" >&2
    echo "foreign-tree: debootstrap failed" >&2
    exit 1
fi
say "fetched $(wc -l <"$dir/debootstrap/debpaths") packages; unpacked $(wc -w <"$dir/debootstrap/required") essential ones"

# debootstrap unpacked the packages of debootstrap/required; the rest (debootstrap/base)
# are for its second stage, which needs the target's own dpkg. Unpack them here.
count=0
for package in $(cat "$dir/debootstrap/base"); do
    deb=$(awk -v p="$package" '$1 == p { print $2 }' "$dir/debootstrap/debpaths")
    [[ -n $deb ]] || { echo "foreign-tree: no .deb for $package" >&2; exit 1; }
    dpkg-deb --fsys-tarfile "$dir$deb" | tar -x --keep-directory-symlink -C "$dir"
    count=$((count + 1))
done
say "unpacked $count more packages with dpkg-deb | tar"

# qemu -L resolves the program interpreter inside DIR, but the kernel follows an absolute
# symlink from the host's root: ppc64el's /lib64/ld64.so.2 -> /lib/powerpc64le-linux-gnu/...
# Rewrite absolute links of the loader directories as relative ones.
for libdir in usr/lib usr/lib64 usr/lib32; do
    [[ -d $dir/$libdir ]] || continue
    find "$dir/$libdir" -maxdepth 1 -type l -lname '/*' -print0 |
        while IFS= read -r -d '' link; do
            target=$(readlink "$link")
            ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$dir$target")" "$link"
            say "relative symlink ${link#"$dir"/} -> $(readlink "$link")"
        done
done

python=$(readlink "$dir/usr/bin/python3" || true)   # e.g. python3.11
[[ $python == python3.* ]] || { echo "foreign-tree: no python3 in $dir/usr/bin" >&2; exit 1; }
# Python's site module adds /usr/local/lib/python3.X/dist-packages; qemu -L falls back to
# the host's directory of that name when DIR has none, and would run the host's .pth files.
mkdir -p "$dir/usr/local/lib/$python/dist-packages"

# Debian compiles byte code in maintainer scripts, which did not run. Under emulation a
# cold `import pytest` compiles for ~20 s, so compile here with a host Python of the same
# version when there is one (byte code is architecture-independent).
host_python=""
for candidate in "/usr/bin/$python" "$(command -v "$python" || true)"; do
    if [[ -n $candidate && -x $candidate ]]; then
        host_python=$candidate
        break
    fi
done
if [[ -n $host_python ]]; then
    "$host_python" -m compileall -q -j0 -s "$dir" -p / \
        "$dir/usr/lib/$python" "$dir/usr/lib/python3/dist-packages" >/dev/null 2>&1 || true
    say "byte-compiled the standard library and dist-packages with $host_python"
else
    say "no host $python: modules are byte-compiled on first import under emulation (slow)"
fi

rm -rf "$dir/var/cache/apt/archives/"*.deb
echo "$stamp_text" >"$stamp"
say "ready: $dir ($(du -sh "$dir" | cut -f1)); run: qemu-<arch>-static -L $dir $dir/usr/bin/python3"
