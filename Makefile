# The two commands a newcomer runs: `make run` and `make test`. Both do their
# own set-up: Debian packages, the Docker engine, the Python venv, Kafka jars
# from Maven Central and the node image. PYTHON names the interpreter the venv is
# made with (3.11 or newer; compose/ensure-debs.sh says so at once when it is older).
SHELL := /bin/bash
PYTHON ?= python3
PY := .venv/bin/python
VENV_STAMP := .venv/.installed
NEMESIS ?= partition-leader
TIME_LIMIT ?= 60

.PHONY: run test unit integration lint bench bench-guard hunt-guard clean setup debs docker image nightly \
  java-client

setup: debs docker $(VENV_STAMP) image

debs:
	@PYTHON=$(PYTHON) bash compose/ensure-debs.sh

docker: debs
	@bash compose/ensure-docker.sh

$(VENV_STAMP): pyproject.toml
	@PYTHON=$(PYTHON) bash compose/check-python.sh
	@echo "installing the Python package and its dependencies into .venv"
	@test -x $(PY) || $(PYTHON) -m venv .venv
	@( $(PY) -m pip install -q --upgrade pip && $(PY) -m pip install -q -e '.[dev]' ) \
	  >.venv/pip.log 2>&1 || { tail -n 20 .venv/pip.log; exit 1; }
	@touch $@

image: docker $(VENV_STAMP)
	@$(PY) -m harness cluster image

# The Java client's driver (`harness run --txn --client java`), built with javac against the
# fetched kafka-clients jars into build/java-client/; a run also builds it on first use.
java-client: debs $(VENV_STAMP)
	@$(PY) -c 'from workloads.java_driver import ensure_driver; ensure_driver()'

# The main job: a test of the store under test with a nemesis; prints the verdict and
# where the report is. Exit code: 0 valid, 1 invalid, 2 unknown (Jepsen's). The run
# removes its cluster on every path, a failed or interrupted `cluster up` included.
run: setup
	@$(PY) -m harness run --nemesis $(NEMESIS) --time-limit $(TIME_LIMIT) $(ARGS)

# The nightly matrix: the Kafka releases of NIGHTLY_VERSIONS (any from 3.9.1 to 4.4.0) x workload x
# nemesis x Kafka config x store, NIGHTLY_RUNS runs each (NIGHTLY_TIME s of workload),
# NIGHTLY_JOBS at once, then `analyze` over the results, then the known-bug hunts that
# found their bug (hunt-guard), then the benchmark guard (bench-guard) once the clusters
# are gone. An invalid run is what the matrix is for, so only analyze and the guards
# decide the target's exit code (all run either way).
NIGHTLY_VERSIONS ?= 3.9.1 4.4.0
NIGHTLY_WORKLOADS ?= kv register
NIGHTLY_NEMESES ?= partition-leader kill-leader pause-leader
NIGHTLY_CONFIGS ?= safe unsafe
NIGHTLY_STORES ?= linearizable local-read
NIGHTLY_RUNS ?= 2
NIGHTLY_TIME ?= 30
NIGHTLY_JOBS ?= 1
NIGHTLY_RESULTS ?= results
# The known-bug hunts that found their bug (bench/hunt.py): each runs again on the release
# and seeds that found it, and fails the nightly if it no longer does.
NIGHTLY_HUNTS ?= KAFKA-17754 KAFKA-20785 KAFKA-20742
nightly: setup
	@$(PY) -m harness matrix --kafka $(NIGHTLY_VERSIONS) --workloads $(NIGHTLY_WORKLOADS) \
	  --nemeses $(NIGHTLY_NEMESES) --configs $(NIGHTLY_CONFIGS) --stores $(NIGHTLY_STORES) \
	  --runs $(NIGHTLY_RUNS) --time-limit $(NIGHTLY_TIME) --jobs $(NIGHTLY_JOBS) \
	  --results $(NIGHTLY_RESULTS) -- $(ARGS) || echo "nightly: matrix exit $$?"
	@rc=0; $(PY) -m harness analyze $(NIGHTLY_RESULTS) || rc=$$?; \
	$(MAKE) --no-print-directory hunt-guard || rc=$$?; \
	$(MAKE) --no-print-directory bench-guard || rc=$$?; \
	exit $$rc

# Each known bug a hunt found, found again (bench/hunt.py --guard).
hunt-guard: setup
	@rc=0; for bug in $(NIGHTLY_HUNTS); do \
	  $(PY) bench/hunt.py $$bug --guard --out $(NIGHTLY_RESULTS)/hunt-$$bug || rc=1; \
	done; exit $$rc

lint: $(VENV_STAMP)
	@$(PY) -m ruff check .
	@$(PY) -m ruff format --check --quiet .
	@$(PY) -m mypy
	@$(dir $(PY))lint-imports --no-cache --no-logo

# The unit tests in two processes (pytest-xdist): they need no Docker and share nothing,
# and the suite is CPU-bound. The integration tests run in two processes as well, a test
# file to each (--dist loadfile: a file's tests share its clusters and fixtures): most of
# their time is spent waiting on clusters to start, elect and heal, so two at once took
# 13 min where one took 20.
UNIT_JOBS ?= 2
INTEGRATION_JOBS ?= 2
INTEGRATION = -n $(INTEGRATION_JOBS) --dist loadfile

unit: $(VENV_STAMP)
	@$(PY) -m pytest -q -n $(UNIT_JOBS) tests/unit
	@bash compose/build-faultfs.sh test
	@bash compose/build-faultproxy.sh test

integration: setup
	@$(PY) -m pytest -q $(INTEGRATION) -m integration tests/integration
	@bash compose/check-no-leftovers.sh

# Every suite runs even when one fails; the target fails if any did. The Go tools' own
# tests come last: faultfs's (the page cache against a model, and the layer on this
# host's FUSE) and faultproxy's (holds, cuts and delays against a fake broker).
test: setup lint
	@rc=0; \
	$(PY) -m pytest -q $(INTEGRATION) --durations=15 tests/integration || rc=$$?; \
	$(PY) -m pytest -q -n $(UNIT_JOBS) --durations=10 tests/unit || rc=$$?; \
	bash compose/build-faultfs.sh test || rc=$$?; \
	bash compose/build-faultproxy.sh test || rc=$$?; \
	bash compose/check-no-leftovers.sh || rc=$$?; \
	exit $$rc

bench: setup
	@bash bench/run-all.sh

# Porcupine beside `harness check` on the same files (bench/bench_porcupine.py builds
# bench/porcupine/ with Go, which `debs` installs): fails when ours/Porcupine's on a corpus,
# or our start-up over Python's, is worse than bench/guard.json allows.
bench-guard: debs $(VENV_STAMP)
	@$(PY) bench/bench_porcupine.py --guard

# Removes this checkout's clusters only (labelled with its path): the Docker engine
# may be shared, and `cluster down --all` would remove everyone's.
clean:
	-@test -x $(PY) && $(PY) -m harness cluster down --checkout
	rm -rf .venv compose/lib .mypy_cache .ruff_cache .pytest_cache .hypothesis
