# Two commands for a fresh machine:
#   make demo   set up, compile the built-in example and print every stage
#   make test   set up and run the test suite (CPU)
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
TORCH_CPU ?= torch==2.13.0

.PHONY: setup browser demo test lab gpu-test clean bundle

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# CPU torch first: a bare `torch` requirement would pull a multi-GB CUDA build.
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q $(TORCH_CPU)
	$(PY) -m pip install -q -e ".[test]"
	touch $@

setup: $(VENV)/.installed

demo: setup
	$(PY) -m explorer demo

# Browser tests drive Debian's chromium through Playwright (which cannot download its own browser here).
browser:
	@command -v chromium >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }

test: setup browser
	$(PY) -m pytest -m "not gpu" tests

lab: setup
	$(VENV)/bin/jupyter lab examples/

# Rebuild widgets/static/explorer.{js,css} from widgets/js (needs node + npm); commit the result.
bundle:
	cd widgets && npm ci --no-audit --no-fund && node build.mjs

gpu-test:
	PYTHONPATH=$(CURDIR) python3 -m pytest -m gpu tests/test_gpu.py tests/test_session_diff.py tests/test_gpu_memory_ir.py

clean:
	rm -rf $(VENV) .pytest_cache
