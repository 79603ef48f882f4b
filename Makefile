# Athena — the two commands: `make run` (or `make demo`) and `make test`. Each sets up .venv first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run demo test bench bench-quick flower clean eval eval-facts faults constraints

# $(call install_venv,DIR,PIP_OPTIONS): a venv in DIR with torch's CPU wheel first (so pip never pulls a CUDA
# build), then the project and its test extra. `make` and `make constraints` set up their venvs with it.
define install_venv
	test -x $(1)/bin/python || $(PYTHON) -m venv $(1)
	$(1)/bin/pip install -q --upgrade pip
	$(1)/bin/pip install -q $(2) torch==2.13.0
	$(1)/bin/pip install -q $(2) -e '.[test]'
endef

# Installs at the versions of constraints.txt (what CI last passed with), not whatever the registry has today.
$(STAMP): pyproject.toml Makefile constraints.txt
	$(call install_venv,$(VENV),-c constraints.txt)
	$(BIN)/athena prepare  # the embedding model's ONNX export, once per machine
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/athena run

demo: $(STAMP)
	$(BIN)/athena demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

# The fault suite (issue 12): worker/Redis/API kill runs at 5x the sizes `make test` uses, one JSON line of
# figures per run (ATHENA_FAULTS_SCALE=N to change; ATHENA_FAULTS_RESTART=supervisor lets Stack.supervise restart).
faults: $(STAMP)
	ATHENA_FAULTS_SCALE=$${ATHENA_FAULTS_SCALE:-5} $(BIN)/python -m pytest -q -s -p no:cacheprovider tests/faults

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) .athena

# constraints.txt from the newest releases pyproject.toml allows, resolved in a throwaway venv; run
# `make clean test` on it before committing (CI installs exactly what it lists).
CONSTRAINTS_VENV := .venv-constraints
constraints:
	rm -rf $(CONSTRAINTS_VENV)
	$(call install_venv,$(CONSTRAINTS_VENV),)
	# torch without its local label (+cpu): the same pin then holds for the CPU wheels of every platform
	{ grep '^#' constraints.txt; $(CONSTRAINTS_VENV)/bin/pip freeze --exclude-editable \
	  | sed -E 's/^(torch==[^+]+)\+.*/\1/'; } > constraints.txt.new
	mv constraints.txt.new constraints.txt
	rm -rf $(CONSTRAINTS_VENV)

eval: $(STAMP)
	$(BIN)/athena eval locomo

eval-facts: $(STAMP)
	$(BIN)/athena eval facts

# Flower on the same broker as `make run` (ATHENA_REDIS_URL, or the embedded Redis under ATHENA_DATA_DIR).
# Basic auth: `export FLOWER_BASIC_AUTH=user:password` first; Flower reads it from the environment, so it
# never appears on a command line. Without it, the UI is open on loopback and /api/* answers 401.
flower: $(STAMP)
	$(BIN)/celery -A athena_tasks.app flower --address=127.0.0.1 --port=5555

bench-quick: $(STAMP)
	$(BIN)/python bench/run_all.py --quick
