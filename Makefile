# Two set-up commands: `make run` and `make test`. Both bootstrap .venv idempotently from the
# locked set in constraints.txt: the stamp file records the hash of pyproject.toml and
# constraints.txt, so an unchanged project skips pip. `make lock` refreshes the lock.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml constraints.txt | sha1sum | cut -c1-12)
LOCK_VENV := .venv-lock

.PHONY: run test lint lock bench diagrams screenshots clean

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@rm -f $(VENV)/.installed-*
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[dev]'
	@touch $@

# The newest versions pyproject.toml allows, installed in a scratch venv and written down.
lock:
	rm -rf $(LOCK_VENV)
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/python -m pip install -q --upgrade pip
	$(LOCK_VENV)/bin/python -m pip install -q -e '.[dev]'
	{ echo "# The tested dependency set; \`make lock\` regenerates it, \`make\` installs from it."; \
	  $(LOCK_VENV)/bin/python -m pip freeze --exclude-editable; } > constraints.txt
	rm -rf $(LOCK_VENV)

run: $(STAMP)
	$(BIN)/tui-agent $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check tui_agent tests benchmarks
	$(BIN)/mypy --strict tui_agent
	$(BIN)/lint-imports

test: lint
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/kernel.py
	$(BIN)/python benchmarks/providers.py
	$(BIN)/python benchmarks/tools.py
	$(BIN)/python benchmarks/sandbox.py
	$(BIN)/python benchmarks/loop.py
	$(BIN)/python benchmarks/ui.py

diagrams: $(STAMP)
	$(BIN)/python -m tui_agent.kernel.diagrams docs/machines

screenshots: $(STAMP)
	$(BIN)/python tests/ui/make_screenshots.py screenshots

clean:
	rm -rf $(VENV) $(LOCK_VENV)
