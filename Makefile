# Two commands do all the set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# A GPU user may pre-install their CUDA build of torch in $(VENV); any torch >= 2.4 is kept.
TORCH_SPEC ?= torch==2.13.0
STAMP := $(VENV)/.installed
ARGS ?=

.PHONY: install run test lint typecheck pytest proto ext-test clean

install: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q $(TORCH_SPEC)
	$(PY) -m pip install -q -c constraints.txt -e '.[dev]'
	@touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/codedraft daemon $(ARGS)

test: $(STAMP) lint typecheck pytest ext-test

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy

pytest: $(STAMP)
	$(PY) -m pytest -q $(PYTEST_ARGS)

ext-test:
	@if [ -f vscode-extension/package.json ]; then \
		cd vscode-extension && npm ci --no-audit --no-fund && npm run compile && npm run lint && npm test; \
	else echo "vscode-extension: not built yet (issue 9); no extension tests to run"; fi

proto: $(STAMP)
	$(PY) -m inference.protogen

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
