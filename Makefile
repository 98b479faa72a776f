# Two commands a newcomer needs: `make run` and `make test`. Everything else is a step of those.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
VENV_VLLM_PY := $${VLLM_ENV:-.vllm-env}/bin/python

.PHONY: install run grader test chromium graphviz lint bench bench-grading test-vllm clean

# Find a Python >= 3.12: the PATH first, then pyenv's versions.
FIND_PYTHON = for c in python3.13 python3.12 python3 \
	  $$(ls -d $${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.1[2-9]*/bin/python3 2>/dev/null | sort -rV); do \
	  p=$$(command -v $$c 2>/dev/null) || continue; \
	  $$p -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null && { echo $$p; break; }; \
	done

$(VENV)/.installed: pyproject.toml package.json
	@py=$$($(FIND_PYTHON)); \
	if [ -z "$$py" ]; then \
	  echo "error: Python 3.12 or newer is needed (Django 6.1). Install it, e.g. 'pyenv install 3.12' or 'apt-get install python3.12', then run make again." >&2; \
	  exit 1; \
	fi; \
	echo "Using $$py ($$($$py --version))"; \
	[ -x $(PY) ] || $$py -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	npm ci --no-audit --no-fund --silent || npm install --no-audit --no-fund --silent
	touch $@

install: $(VENV)/.installed

# The first line says which grader is active (config/serve.py finds a `make grader` answering
# at GRADER_BASE_URL, or at http://127.0.0.1:8001/v1 when that is unset); serve.py checks
# again when it starts the worker.
run: install graphviz
	@$(PY) -m config.serve --grader-status
	@$(PY) -m config.serve --check
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) manage.py load_content
	PORT=$(PORT) exec $(PY) -m config.serve

# The grading model: Qwen2.5-7B-Instruct under vLLM's OpenAI server on 127.0.0.1:GRADER_PORT (8001)
# (GPU build with a CUDA device, CPU build otherwise; tools/vllm/grader.py says which and why).
# GRADER_MODEL_PATH serves a local copy of the weights instead of the hub's.
grader:
	@exec python3 tools/vllm/grader.py

# Debian packages the app needs, installed when their command is missing (as root), else one
# line that says how: $(call apt_need,COMMAND,PACKAGE,WHAT NEEDS IT).
define apt_need
	@command -v $(1) >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "Installing Debian's $(2) for $(3)"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) >/dev/null; \
	  else \
	    echo "error: $(3) need $(2): run 'sudo apt-get install -y $(2)', then make again." >&2; \
	    exit 1; \
	  fi; }
endef

# Browser tests drive Debian's Chromium.
chromium:
	$(call apt_need,chromium,chromium,the browser tests)

# Architecture diagrams are laid out by Graphviz's `dot`.
graphviz:
	$(call apt_need,dot,graphviz,architecture diagrams)

# The real-vLLM suite has its own target (it builds a separate Python 3.11 environment).
# Two workers (pytest-xdist; one per core here): the tests of an xdist_group run in one, in
# file order (a module whose module-scoped fixture is costly is one group).
# The 15 slowest tests close every run, so the next cost shows in every CI log.
TEST_WORKERS ?= 2
test: install chromium graphviz
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup --durations=15 --ignore=tests/vllm $(PYTEST_ARGS)

# Serves the tiny model with `make grader` itself (tests/vllm/conftest.py); PYTEST_ARGS go to
# pytest (e.g. PYTEST_ARGS=--durations=0).
test-vllm: install graphviz
	bash tools/vllm/run-tests.sh $(PYTEST_ARGS)

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

bench: install graphviz
	$(PY) -m bench.run

# One {"bench": "grading"} line: the drain under the in-flight cap, and the prefix-cache hit
# rate measured on the real vLLM CPU server (built on first use, as make test-vllm does).
bench-grading: install
	bash tools/vllm/setup.sh && $(VENV_VLLM_PY) tools/vllm/make_tiny_model.py
	$(PY) -m bench.grading --vllm

clean:
	rm -rf $(VENV) node_modules staticfiles db.sqlite3 db.sqlite3-*
