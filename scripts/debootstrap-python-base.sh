#!/usr/bin/env bash
# A local stand-in for the official python:3.11-slim-bookworm image, made from Debian's
# archive (no registry is reachable here): a bookworm minbase tree with python3 (3.11).
#
#   scripts/debootstrap-python-base.sh ARCH DIR      ARCH: amd64 | arm64 | ppc64le | s390x
#
# The host's arch gets a full debootstrap (second stage run in a chroot, so dpkg and apt
# work: the Dockerfile's builder stage runs apt-get in it). A foreign arch gets a
# --foreign first stage with every downloaded .deb unpacked: no maintainer scripts run
# and no binfmt_misc is needed; such a tree is only used as a runtime base, where the
# Dockerfile only COPYs. Idempotent: DIR.complete marks a finished tree.
set -euo pipefail

arch=${1:?usage: $0 ARCH DIR}
dir=${2:?usage: $0 ARCH DIR}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=bookworm

case $arch in
    amd64) deb_arch=amd64 ;;
    arm64) deb_arch=arm64 ;;
    ppc64le) deb_arch=ppc64el ;;
    s390x) deb_arch=s390x ;;
    *) echo "unknown arch $arch" >&2; exit 2 ;;
esac

if [[ -f $dir.complete ]]; then
    exit 0
fi
[[ $(id -u) -eq 0 ]] || { echo "$0: debootstrap needs root" >&2; exit 1; }
rm -rf "$dir" "$dir.complete"
mkdir -p "$dir"

host_arch=$(dpkg --print-architecture)
if [[ $deb_arch == "$host_arch" ]]; then
    debootstrap --variant=minbase --include=python3 "$suite" "$dir" "$mirror" >"$dir.log" 2>&1 \
        || { tail -20 "$dir.log" >&2; exit 1; }
else
    debootstrap --arch="$deb_arch" --foreign --variant=minbase --include=python3 \
        "$suite" "$dir" "$mirror" >"$dir.log" 2>&1 || { tail -20 "$dir.log" >&2; exit 1; }
    for deb in "$dir"/var/cache/apt/archives/*.deb; do
        dpkg-deb --fsys-tarfile "$deb" | tar -x --keep-directory-symlink -C "$dir"
    done
    # base-passwd's postinst never ran: install its master files as the real ones
    cp "$dir/usr/share/base-passwd/passwd.master" "$dir/etc/passwd"
    cp "$dir/usr/share/base-passwd/group.master" "$dir/etc/group"
    # ppc64el ships an absolute ld64.so symlink, which would point into the host
    for link in "$dir"/usr/lib64/ld64.so.*; do
        [[ -L $link ]] || continue
        target=$(readlink "$link")
        [[ $target == /* ]] && ln -sfn "../..$target" "$link"
    done
    rm -rf "$dir/debootstrap"
    # the first stage links proc to the host's /proc; a container runtime mounts its own
    if [[ -L $dir/proc ]]; then rm "$dir/proc"; mkdir -m 0555 "$dir/proc"; fi
fi
echo "deb $mirror $suite main" >"$dir/etc/apt/sources.list"
# as in Debian's official container images: no fsync per file, no .deb kept, no recommends
echo force-unsafe-io >"$dir/etc/dpkg/dpkg.cfg.d/docker-apt-speedup"
printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$dir/etc/apt/apt.conf.d/docker-no-recommends"
# slim: what the official -slim images also leave out
rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/* \
    "$dir"/usr/share/doc/* "$dir"/usr/share/man/* "$dir"/usr/share/info/* \
    "$dir"/usr/share/locale/* "$dir"/var/log/*.log
touch "$dir.complete"
