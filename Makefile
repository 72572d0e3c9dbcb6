# Two commands for a newcomer: `make demo` and `make test` (see README.md).
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEMO_OUT ?= demo_out

.PHONY: demo test install system-deps bench clean

$(STAMP): setup.cfg pyproject.toml constraints.txt
	bash scripts/setup_system.sh
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade "pip>=24" wheel "setuptools>=68"
	$(BIN)/python -m pip install -q -c constraints.txt -e ".[all]"
	$(BIN)/python -m pip check
	# MediaPipe's models: the pinned mediapipe==0.10.21 wheel is fetched once with `pip download --no-deps`
	# (never installed), its .tflite files sha256-checked into the weights cache ($$HUGVIS_CACHE_DIR/weights)
	$(BIN)/hugvis weights download mediapipe
	touch $(STAMP)

install: $(STAMP)

system-deps:
	bash scripts/setup_system.sh

demo: $(STAMP)
	$(BIN)/hugvis demo --out $(DEMO_OUT)

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile -q

bench: $(STAMP)
	for b in scripts/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(DEMO_OUT) .pytest_cache
