# Every target creates the virtual environment first if it is missing.
PYTHON ?= $(shell command -v python3.11 || command -v python3 || command -v python)
VENV := .venv
# (Windows keeps a virtual environment's programs in Scripts/)
ifeq ($(OS),Windows_NT)
VBIN := Scripts
else
VBIN := bin
endif
BIN := $(VENV)/$(VBIN)
STAMP := $(VENV)/.installed

.PHONY: run test bench build test-binary clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/catalogue serve --open $(ARGS)

test: $(STAMP)
	@sh scripts/ensure_chromium.sh
	@sh scripts/ensure_gdal.sh
	$(BIN)/python -m pytest -n auto --dist loadfile $(ARGS)

bench: $(STAMP)
	command -v wrk >/dev/null || (apt-get update -qq && apt-get install -y -qq wrk)
	$(BIN)/python -m bench $(ARGS)

# The single executable, built from an environment holding the runtime dependencies only (and
# PyInstaller), so that nothing of the tests or the development tools gets into it.
BUILD_VENV := .venv-build
BUILD_STAMP := $(BUILD_VENV)/.installed

$(BUILD_STAMP): pyproject.toml
	test -x $(BUILD_VENV)/$(VBIN)/python || $(PYTHON) -m venv $(BUILD_VENV)
	$(BUILD_VENV)/$(VBIN)/python -m pip install --quiet --upgrade pip
	$(BUILD_VENV)/$(VBIN)/python -m pip install --quiet '.[build]'
	touch $(BUILD_STAMP)

build: $(BUILD_STAMP)
	$(BUILD_VENV)/$(VBIN)/python -m pip install --quiet --no-deps --force-reinstall .
	$(BUILD_VENV)/$(VBIN)/pyinstaller --noconfirm --log-level WARN --distpath dist --workpath build/pyinstaller \
		packaging/catalogue.spec

# Builds the executable, checks it (every format uploads, WMS, the home page in Chromium, stops
# and kills leave nothing behind), then prints its size and its first and warm start times.
test-binary: build $(STAMP)
	@sh scripts/ensure_chromium.sh
	$(BIN)/python -m pytest tests/packaging $(ARGS)
	$(BIN)/python -m bench --only binary

clean:
	rm -rf $(VENV) $(BUILD_VENV) build dist *.egg-info
