# Two set-up commands: `make run` and `make test`. Both bootstrap .venv idempotently:
# the stamp file records the hash of pyproject.toml, so an unchanged project skips pip.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell sha1sum pyproject.toml | cut -c1-12)

.PHONY: run test lint bench diagrams screenshots clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@rm -f $(VENV)/.installed-*
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@touch $@

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
	$(BIN)/python benchmarks/loop.py
	$(BIN)/python benchmarks/ui.py

diagrams: $(STAMP)
	$(BIN)/python -m tui_agent.kernel.diagrams docs/machines

screenshots: $(STAMP)
	$(BIN)/python tests/ui/make_screenshots.py screenshots

clean:
	rm -rf $(VENV)
