# syntax=docker/dockerfile:1
# archcrypt: one image per platform (linux/amd64, linux/arm64, linux/ppc64le, linux/s390x),
# published as one manifest list:
#
#   docker buildx bake                          # docker-bake.hcl: all four platforms
#   docker buildx build --platform linux/amd64,linux/arm64,linux/ppc64le,linux/s390x -t IMAGE .
#
# The builder stage always runs on the build machine (BUILDPLATFORM) and cross-compiles for
# TARGETARCH: the C library with Debian's cross gcc (never -march=native: the runtime
# dispatcher picks the kernel on each node), the cffi extension against the target's Python
# headers (native/build_ffi.py's recipe, the one pip install and the tests use), the
# target's manylinux wheels fetched with pip --platform, and those PyPI has no wheel of for
# the target (httptools, uvloop) cross-built from their sdists. The runtime stage only
# COPYs, so a four-platform build needs no emulation.

ARG PYTHON_VERSION=3.11
# The runtime base; any Debian-family image with python3 on PATH (the official slim image
# exists for all four platforms).
ARG BASE_IMAGE=python:${PYTHON_VERSION}-slim-bookworm
# A Debian bookworm image with python3 and apt, for the build machine's platform.
ARG BUILDER_IMAGE=python:${PYTHON_VERSION}-slim-bookworm

FROM --platform=$BUILDPLATFORM ${BUILDER_IMAGE} AS builder
ARG TARGETARCH
ARG PYTHON_VERSION
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY scripts/cross-build.sh scripts/
RUN scripts/cross-build.sh toolchain
COPY scripts/target-requirements.py scripts/cross-wheels.py scripts/
COPY pyproject.toml ./
RUN scripts/cross-build.sh deps /opt/archcrypt/site
COPY native/ native/
COPY service/ service/
RUN scripts/cross-build.sh native /opt/archcrypt/site

# --platform=$TARGETPLATFORM is the default; spelled out because buildah before 1.30 carries
# the builder's --platform over to later stages.
# hadolint ignore=DL3065
FROM --platform=$TARGETPLATFORM ${BASE_IMAGE} AS runtime
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG SOURCE=https://github.com/archcrypt/archcrypt
LABEL org.opencontainers.image.title="archcrypt" \
      org.opencontainers.image.description="Symmetric crypto over HTTP on C kernels chosen at run time for the CPU" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=builder /opt/archcrypt /opt/archcrypt
# The packages live outside the interpreter's prefix (the official image's python is in
# /usr/local, Debian's in /usr); the .pyc are precompiled, nothing is written at run time.
# Auth on: every operation needs a bearer token; the store (token hashes, never tokens) is
# mounted at ARCHCRYPT_TOKENS_FILE, and without it the service refuses to start.
# hadolint ignore=DL3064
ENV PYTHONPATH=/opt/archcrypt/site \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp \
    ARCHCRYPT_HOST=0.0.0.0 \
    ARCHCRYPT_PORT=8000 \
    ARCHCRYPT_AUTH=required \
    ARCHCRYPT_TOKENS_FILE=/etc/archcrypt/tokens/tokens.json
# Numeric, so Kubernetes' runAsNonRoot can verify it; no passwd entry is needed.
USER 10001:10001
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s --retries=3 \
    CMD ["python3", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/livez' % os.environ.get('ARCHCRYPT_PORT', '8000'), timeout=2)"]
# One uvicorn process per container; scale with replicas.
ENTRYPOINT ["python3", "-m", "archcrypt"]
CMD ["serve"]
