# The README's verbs. Each is a thin wrapper; native/Makefile owns compile flags.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: setup run test test-native test-service test-cross selftest bench lint clean

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

bench: setup
	$(MAKE) -C native bench-run
	$(VENV)/bin/archcrypt bench

lint: setup
	$(PY) -m ruff check service tests native/build_ffi.py
	$(PY) -m mypy

clean:
	$(MAKE) -C native clean
	rm -rf build *.egg-info service/*.egg-info
