#!/usr/bin/env bash
# The Dockerfile's builder stage: everything for TARGETARCH is made here, on the build
# platform, so the runtime stage of every platform only COPYs (no emulated RUN, no binfmt).
#
#   cross-build.sh toolchain      apt: make, a C compiler for the target (the native gcc or
#                                 Debian's cross gcc), the target's Python headers and its
#                                 _sysconfigdata (unpacked from Debian's packages for it)
#   cross-build.sh deps DEST      pip: the target's wheels (manylinux, --only-binary) of the
#                                 dependencies pyproject.toml selects for that machine; those
#                                 PyPI has no wheel of for it (httptools on s390x, uvloop on
#                                 ppc64le and s390x) cross-built from the sdist first
#                                 (scripts/cross-wheels.py)
#   cross-build.sh native DEST    make -C native lib with the target compiler, then the cffi
#                                 extension by native/build_ffi.py's recipe (the one that
#                                 pip install and the foreign-arch tests use); the archcrypt
#                                 package beside it; .pyc compiled
#
# Environment: TARGETARCH (amd64 | arm64 | ppc64le | s390x; default: the build machine's),
# PYTHON_VERSION (of the runtime image; default: this python3's), ARCHCRYPT_WHEEL_CACHE (a
# directory that keeps cross-built wheels between builds, used when it exists; default
# /var/cache/archcrypt-wheels, e.g. `buildah build -v DIR:/var/cache/archcrypt-wheels`).
# Never -march=native: native/Makefile owns the flags and the runtime dispatcher picks the
# kernel.
set -euo pipefail

build_deb_arch=$(dpkg --print-architecture)
case ${TARGETARCH:-$build_deb_arch} in
    amd64) triple=x86_64-linux-gnu; deb_arch=amd64; machine=x86_64; cross=x86-64 ;;
    arm64) triple=aarch64-linux-gnu; deb_arch=arm64; machine=aarch64; cross=aarch64 ;;
    ppc64le) triple=powerpc64le-linux-gnu; deb_arch=ppc64el; machine=ppc64le; cross=powerpc64le ;;
    s390x) triple=s390x-linux-gnu; deb_arch=s390x; machine=s390x; cross=s390x ;;
    *) echo "cross-build: unsupported TARGETARCH ${TARGETARCH}" >&2; exit 2 ;;
esac
if [[ $deb_arch == "$build_deb_arch" ]]; then
    cc=gcc; ar=ar; cc_packages=(gcc libc6-dev)
else
    cc=$triple-gcc; ar=$triple-ar
    cc_packages=("gcc-$cross-linux-gnu" "libc6-dev-$deb_arch-cross")
fi
python_version=${PYTHON_VERSION:-$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')}
# Target Python headers, unpacked (not installed) from Debian's libpython3.x-dev for the
# target arch: the cffi extension uses the stable ABI (abi3), so they need not match the
# runtime image's exact Python; pyconfig.h is what must be the target's. A wheel cross-built
# from an sdist is not abi3: cross-wheels.py refuses headers of another minor version.
sysroot=/opt/target-python
venv=/opt/build-venv
py=$venv/bin/python

toolchain() {
    export DEBIAN_FRONTEND=noninteractive
    [[ $deb_arch == "$build_deb_arch" ]] || dpkg --add-architecture "$deb_arch"
    apt-get update -qq
    local extra=()
    # Debian's python3 leaves ensurepip to python3-venv; the official image has it built in
    python3 -c 'import ensurepip' 2>/dev/null || extra+=(python3-venv)
    apt-get install -y -qq --no-install-recommends make "${cc_packages[@]}" "${extra[@]}" >/dev/null
    local dev tmp
    dev=$(apt-cache depends "libpython3-dev:$deb_arch" | sed -n 's/^ *Depends: \(libpython3\.[0-9]*-dev\).*/\1/p' | head -n1)
    tmp=$(mktemp -d)
    chmod 0777 "$tmp"  # apt fetches as its unprivileged _apt user
    # libpython3.x-minimal holds the target's _sysconfigdata (EXT_SUFFIX, CC, platform),
    # which a setuptools build reads; only that file is unpacked from it.
    (cd "$tmp" && apt-get download -qq "$dev:$deb_arch" "${dev%-dev}-minimal:$deb_arch")
    mkdir -p "$sysroot"
    dpkg-deb -x "$tmp"/"$dev"_*.deb "$sysroot"
    dpkg-deb --fsys-tarfile "$tmp"/"${dev%-dev}"-minimal_*.deb \
        | tar -x -C "$sysroot" --wildcards "./usr/lib/python3*/_sysconfigdata__$triple.py"
    rm -rf "$tmp" /var/lib/apt/lists/*
    # A venv of the build machine's python: cffi emits the extension's C source, packaging
    # evaluates markers for the target, pip fetches the target's wheels, build runs the
    # sdists' build backends.
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q "cffi>=1.17" "packaging>=23" "build>=1.2"
}

deps() {
    local dest=${1:?deps DEST}
    local platforms=()
    # bookworm has glibc 2.36: every manylinux tag up to it, newest first
    for minor in $(seq 36 -1 17); do platforms+=(--platform "manylinux_2_${minor}_${machine}"); done
    "$py" "$(dirname "$0")/target-requirements.py" --machine "$machine" \
        --python-version "$python_version" pyproject.toml >/tmp/requirements.txt
    cat /tmp/requirements.txt
    # Wheels cross-built here carry the plain linux_<machine> tag; pip takes them from the
    # wheelhouse, everything else from the index.
    platforms+=(--platform "linux_$machine")
    local wheelhouse=/tmp/wheelhouse cache=${ARCHCRYPT_WHEEL_CACHE:-/var/cache/archcrypt-wheels}
    local requirements=()
    mapfile -t requirements </tmp/requirements.txt
    "$py" "$(dirname "$0")/cross-wheels.py" --machine "$machine" --triple "$triple" \
        --python-version "$python_version" --sysroot "$sysroot" --wheelhouse "$wheelhouse" \
        $([[ -d $cache ]] && echo --cache "$cache") "${platforms[@]}" "${requirements[@]}"
    "$py" -m pip install -q --target "$dest" --only-binary=:all: --no-compile \
        --implementation cp --python-version "$python_version" "${platforms[@]}" \
        --find-links "$wheelhouse" -r /tmp/requirements.txt
    rm -rf "$dest/bin" "$wheelhouse"  # console scripts name the build machine's interpreter
}

native() {
    local dest=${1:?native DEST}
    make -s -C native -j"$(nproc)" CC="$cc" AR="$ar" lib
    local lib
    lib=$(make -s --no-print-directory -C native CC="$cc" print-lib)
    rm -rf "$dest/archcrypt"
    cp -r service/archcrypt "$dest/archcrypt"
    find "$dest/archcrypt" -name '_native.*' -delete
    local pyinc
    pyinc=$(find "$sysroot/usr/include" -maxdepth 1 -name 'python3.*' | head -n1)
    # The one recipe (native/build_ffi.py), as pip install and tests/cross build it;
    # Debian's multiarch pyconfig.h is found after the cross toolchain's own headers.
    "$py" native/build_ffi.py --cc "$cc" --library "$lib" --python-include "$pyinc" \
        --system-include "$sysroot/usr/include" --output "$dest/archcrypt/_native.abi3.so"
    # unchecked-hash: never revalidated against the sources, never rewritten (read-only root)
    "$py" -m compileall -q -j0 --invalidation-mode unchecked-hash "$dest"
}

cmd=${1:?usage: $0 toolchain | deps DEST | native DEST}
shift
"$cmd" "$@"
