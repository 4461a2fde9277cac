# The README's verbs. Each is a thin wrapper; native/Makefile owns compile flags.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: setup run test test-native test-service test-cross selftest bench bench-md lint clean

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

# archcrypt vs OpenSSL, libsodium, libgcrypt (C) and pyca/cryptography, hashlib (Python),
# side by side in one run (~4 min; installs the peers' -dev packages when root).
# bench-md also rewrites BENCHMARKS.md. Per-row tables without peers: `make -C native
# bench-run`, `archcrypt bench`.
bench: setup
	PY=$(PY) BENCH_COMMAND='make bench' scripts/bench-peers.sh

bench-md: setup
	PY=$(PY) BENCH_COMMAND='make bench-md' scripts/bench-peers.sh --write BENCHMARKS.md

# ppc64le instructions per byte under qemu (POWER8/9/10): archcrypt against Debian's ppc64el
# libgcrypt, OpenSSL, libsodium and Go's x/crypto; rewrites that section of BENCHMARKS.md
# (~20 min; installs qemu-user, golang and the plugin's sources when root). Not a test.
.PHONY: bench-insn
bench-insn:
	bench/insn/setup.sh
	python3 bench/insn/run.py --write BENCHMARKS.md

lint: setup
	$(PY) -m ruff check service tests native/build_ffi.py
	$(PY) -m mypy

clean:
	$(MAKE) -C native clean
	rm -rf build *.egg-info service/*.egg-info
