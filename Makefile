# The README's verbs. Each is a thin wrapper; native/Makefile owns compile flags.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: setup run test test-native test-service test-cross selftest bench bench-md lint format clean

# System packages (when root) and the virtualenv with the package installed editable.
setup:
	scripts/setup.sh

run: setup
	$(VENV)/bin/archcrypt serve --host $(HOST) --port $(PORT)

test: setup
	$(PY) -m pytest

test-native test-service test-cross: setup
	$(PY) -m pytest tests/$(subst test-,,$@)

selftest:
	$(MAKE) -C native check

# The benchmarks (one tree, bench/; README "Benchmarks"). archcrypt vs OpenSSL, libsodium,
# libgcrypt (C) and pyca/cryptography, hashlib (Python), side by side in one run (~4 min;
# installs the peers' -dev packages when root). bench-md also rewrites BENCHMARKS.md.
# Per-row tables without peers: `make -C native bench-run`, `archcrypt bench`.
bench: setup
	PY=$(PY) BENCH_COMMAND='make bench' bench/run.sh

bench-md: setup
	PY=$(PY) BENCH_COMMAND='make bench-md' bench/run.sh --write BENCHMARKS.md

# Instructions per byte under qemu (bench/insn): archcrypt against Debian's libgcrypt,
# OpenSSL, libsodium for that arch and Go's x/crypto, on each CPU model that changes a
# dispatch choice; each rewrites its arch's section of BENCHMARKS.md (~20 min each; installs
# qemu-user, golang and the plugin's sources when root). Not a test.
INSN_ARCHES := ppc64le arm64 s390x
.PHONY: bench-insn $(addprefix bench-insn-,$(INSN_ARCHES))
bench-insn: $(addprefix bench-insn-,$(INSN_ARCHES))
$(addprefix bench-insn-,$(INSN_ARCHES)): bench-insn-%:
	bench/insn/setup.sh $*
	python3 bench/insn/run.py --arch $* --write BENCHMARKS.md

# The multi-arch image with buildah (no Docker engine needed): one manifest list for
# linux/amd64, arm64, ppc64le and s390x. BASE_IMAGE/BUILDER_IMAGE override the official
# python slim images (e.g. a local base when no registry is reachable; see README).
IMAGE      ?= localhost/archcrypt:$(shell sed -n 's/^version *= *"\(.*\)"/\1/p' pyproject.toml)
PLATFORMS  ?= linux/amd64,linux/arm64,linux/ppc64le,linux/s390x
IMAGE_ARGS ?=
.PHONY: images test-images
images:
	buildah build --isolation chroot --format docker --build-arg BUILDPLATFORM=linux/amd64 \
	  --build-arg REVISION=$$(git rev-parse HEAD 2>/dev/null || echo unknown) $(IMAGE_ARGS) \
	  --platform $(PLATFORMS) --manifest $(IMAGE) .

# Only the image tests (part of `make test`): build for four platforms from a local
# debootstrapped base, run each platform, lint the Dockerfile, validate deploy/k8s.
test-images: setup
	$(PY) -m pytest tests/images

# What CI runs besides the tests (.ci/run): ruff's lint and format check over every Python
# file, mypy --strict over the package, the C style check (native/tools/check-style.py).
# `make format` applies ruff's formatting.
LINT_PATHS := service tests native bench scripts
lint: setup
	$(PY) -m ruff check $(LINT_PATHS)
	$(PY) -m ruff format --check $(LINT_PATHS)
	$(PY) -m mypy
	$(MAKE) -C native lint

format: setup
	$(PY) -m ruff format $(LINT_PATHS)
	$(PY) -m ruff check --fix $(LINT_PATHS)

clean:
	$(MAKE) -C native clean
	rm -rf build *.egg-info service/*.egg-info

# The HTTP service side by side with a plain FastAPI + pyca/cryptography app
# (bench/service/): both under uvicorn on loopback, one worker then two, answers compared,
# wrk on identical bodies 64 B .. 1 MiB (JSON, octet-stream, batches); rewrites the
# service section of BENCHMARKS.md (~7 min; needs Debian's wrk, which setup installs).
# BENCH_SERVICE_ARGS=--quick for a one-minute trial.
.PHONY: bench-service
BENCH_SERVICE_ARGS ?=
bench-service: setup
	$(PY) bench/service/run.py --write BENCHMARKS.md --command 'make bench-service' $(BENCH_SERVICE_ARGS)

# The reliability drills (RELIABILITY.md): native fuzzing, constant time, schema fuzzing,
# faults, then a 10-minute soak, with progress and the figures as tables (~40 min; the
# suite runs their short forms, tests/drill). drill-md also rewrites RELIABILITY.md's
# figures. DRILL_ARGS e.g. '--quick', 'ct faults', '--fuzz-seconds 600'.
DRILL_ARGS   ?=
SOAK_SECONDS ?= 600
.PHONY: drill drill-md soak
drill: setup
	$(PY) -m tests.drill $(DRILL_ARGS)

drill-md: setup
	$(PY) -m tests.drill --write RELIABILITY.md $(DRILL_ARGS)

soak: setup
	$(PY) -m tests.drill soak --soak-seconds $(SOAK_SECONDS)
