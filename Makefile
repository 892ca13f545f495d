# Two set-up commands: `make run` and `make test`. Both bootstrap .venv idempotently from the
# locked set in constraints.txt: the stamp file records the hash of pyproject.toml and
# constraints.txt, so an unchanged project skips pip. `make lock` refreshes the lock.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml constraints.txt | sha1sum | cut -c1-12)
LOCK_VENV := .venv-lock

.PHONY: run install uninstall test lint tmux chromium lock bench diagrams screenshots clean

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

# `make run` opens the app on a scratch copy of this project, never on the clone itself: the
# offline demo (and a real model) write files. ARGS="--workspace DIR" picks another folder.
RUN_WORKSPACE ?= $(or $(TMPDIR),/tmp)/tui-agent-try
run: $(STAMP)
	@mkdir -p "$(RUN_WORKSPACE)" && cp -R README.md pyproject.toml .gitignore tui_agent "$(RUN_WORKSPACE)/"
	$(BIN)/tui-agent --workspace "$(RUN_WORKSPACE)" $(ARGS)

# `tui-agent` on PATH for everyday use, the way pipx does it: its own venv (the tested set from
# constraints.txt, the package itself not editable) under $(PREFIX)/share and a link in
# $(PREFIX)/bin. Run it again to update after a pull; `make uninstall` removes both.
PREFIX ?= $(HOME)/.local
INSTALL_VENV := $(PREFIX)/share/tui-agent/venv
install:
	rm -rf "$(INSTALL_VENV)"
	$(PYTHON) -m venv "$(INSTALL_VENV)"
	"$(INSTALL_VENV)/bin/python" -m pip install -q --upgrade pip
	"$(INSTALL_VENV)/bin/python" -m pip install -q -c constraints.txt .
	mkdir -p "$(PREFIX)/bin"
	ln -sf "$(INSTALL_VENV)/bin/tui-agent" "$(PREFIX)/bin/tui-agent"
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; \
	  *) echo "Add $(PREFIX)/bin to PATH to run tui-agent from any folder." ;; esac

uninstall:
	rm -rf "$(PREFIX)/share/tui-agent" "$(PREFIX)/bin/tui-agent"

lint: $(STAMP)
	$(BIN)/ruff check tui_agent tests benchmarks scripts
	$(BIN)/mypy --strict tui_agent scripts/check_fences.py
	$(BIN)/lint-imports
	$(BIN)/python scripts/check_fences.py

# The suite starts the agent as a process hundreds of times: its bytecode is compiled once here,
# since a shell with PYTHONDONTWRITEBYTECODE set would otherwise compile every module each time.
test: lint tmux chromium
	$(BIN)/python -m compileall -q -j0 tui_agent
	$(BIN)/pytest -n auto --maxprocesses 4 --dist loadgroup

# The terminal hang-up test drives the app in tmux, which a fresh Debian machine lacks: install
# it when it is missing and apt-get can (as root); otherwise that test says it was skipped.
tmux:
	@command -v tmux >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
	  && apt-get update -qq && apt-get install -y -qq --no-install-recommends tmux >/dev/null; } \
	  || echo "tmux is not installed: tests/e2e/test_terminal_hangup.py will be skipped"

# The browser test of `tui-agent serve` drives the machine's Chromium (Playwright never downloads
# a browser here): installed like tmux, else tests/serve/test_browser.py says it was skipped.
chromium:
	@test -x /usr/bin/chromium || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
	  && apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; } \
	  || echo "chromium is not installed: tests/serve/test_browser.py will be skipped"

bench: $(STAMP)
	$(BIN)/python benchmarks/kernel.py
	$(BIN)/python benchmarks/providers.py
	$(BIN)/python benchmarks/cache.py
	$(BIN)/python benchmarks/tools.py
	$(BIN)/python benchmarks/sandbox.py
	$(BIN)/python benchmarks/loop.py
	$(BIN)/python benchmarks/ui.py
	$(BIN)/python benchmarks/startup.py
	$(BIN)/python benchmarks/long_day.py

diagrams: $(STAMP)
	$(BIN)/python -m tui_agent.kernel.diagrams docs/machines
	$(BIN)/python -m tests.support.architecture

screenshots: $(STAMP)
	$(BIN)/python tests/ui/make_screenshots.py screenshots
	TUI_AGENT_SERVE_SCREENSHOT=screenshots/serve-browser.png $(BIN)/pytest -q \
	  tests/serve/test_browser.py

clean:
	rm -rf $(VENV) $(LOCK_VENV)
