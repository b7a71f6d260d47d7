# The two commands a newcomer runs: `make run` and `make test`. Both do their
# own set-up: Debian packages, the Docker engine, the Python venv, Kafka jars
# from Maven Central and the node image.
SHELL := /bin/bash
PY := .venv/bin/python
VENV_STAMP := .venv/.installed
NEMESIS ?= partition-leader
TIME_LIMIT ?= 60

.PHONY: run test unit integration lint bench clean setup debs docker image

setup: debs docker $(VENV_STAMP) image

debs:
	@bash compose/ensure-debs.sh

docker: debs
	@bash compose/ensure-docker.sh

$(VENV_STAMP): pyproject.toml
	@echo "installing the Python package and its dependencies into .venv"
	@test -x $(PY) || python3 -m venv .venv
	@( $(PY) -m pip install -q --upgrade pip && $(PY) -m pip install -q -e '.[dev]' ) \
	  >.venv/pip.log 2>&1 || { tail -n 20 .venv/pip.log; exit 1; }
	@touch $@

image: docker $(VENV_STAMP)
	@$(PY) -m harness cluster image

# The main job: a test of the store under test with a nemesis; prints the verdict and
# where the report is. Exit code: 0 valid, 1 invalid, 2 unknown (Jepsen's).
run: setup
	@$(PY) -m harness run --nemesis $(NEMESIS) --time-limit $(TIME_LIMIT) $(ARGS)

lint: $(VENV_STAMP)
	@$(PY) -m ruff check .
	@$(PY) -m mypy

unit: $(VENV_STAMP)
	@$(PY) -m pytest -q tests/unit

integration: setup
	@$(PY) -m pytest -q -m integration tests/integration
	@bash compose/check-no-leftovers.sh

test: setup lint
	@$(PY) -m pytest -q tests
	@bash compose/check-no-leftovers.sh

bench: setup
	@bash bench/run-all.sh

clean:
	-@test -x $(PY) && $(PY) -m harness cluster down --all
	rm -rf .venv compose/lib .mypy_cache .ruff_cache .pytest_cache .hypothesis
