# servewise — developer entry points. `make demo` and `make test` work on a fresh machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
ENGINE_VENV := .venv-engine

.PHONY: demo test test-fast venv test-deps engine system-deps lint typecheck fixtures bench bench-images clean

$(BIN)/servewise: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $@

venv: $(BIN)/servewise

## The main job on embedded sample builds: the seed's story, offline, in seconds.
demo: venv
	@bash scripts/demo.sh $(BIN)/servewise

$(VENV)/.test-deps: pyproject.toml $(BIN)/servewise
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

test-deps: $(VENV)/.test-deps

## Debian packages the tests use (the OCI registry).
system-deps:
	@bash scripts/system_deps.sh

## The CPU engine environment shared by every engine test.
engine:
	@bash scripts/make_engine.sh $(ENGINE_VENV)

lint: test-deps
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/mypy

## Lint and types first (fast), then everything the tests need, then the whole suite.
test: lint system-deps engine
	$(BIN)/pytest

## The inner loop: every test that needs no engine, registry or network and is not slow
## (tests/slow.txt), in under 2 minutes on 2 cores. Needs `make test-deps` once.
FAST := not engine and not registry and not online and not slow and not hostile_heavy
test-fast:
	$(BIN)/pytest -q -m "$(FAST)"

## Rebuild the committed CUDA fixtures with nvcc (not needed for tests).
fixtures:
	bash scripts/build_cuda_fixtures.sh

## Every benchmark but the image one (bench-images); the client benchmark runs `vllm bench serve`.
bench: test-deps engine
	$(BIN)/python benchmarks/gate_speed.py
	$(BIN)/python benchmarks/identity_speed.py
	$(BIN)/python benchmarks/diagnose_speed.py
	$(BIN)/python benchmarks/plan_speed.py
	$(BIN)/python benchmarks/bench_http_clients.py
	$(BIN)/python benchmarks/bench_client_speed.py
	$(BIN)/python benchmarks/search_speed.py

## Images in a local registry against skopeo (needs Debian's skopeo).
bench-images: test-deps system-deps
	$(BIN)/python benchmarks/image_speed.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .mypy_cache
