# gpunfv: the two commands a user needs are `make demo` and `make test`.
BUILD ?= build
JOBS ?= $(shell nproc)
PYTHON ?= /usr/bin/python3
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

.PHONY: all deps build demo test unit e2e clean

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@mkdir -p out
	@echo "== 10M generated packets through a router holding a full Internet table (901,899 routes)"
	$(BUILD)/gpunfv run examples/router-fulltable.yaml
	@echo
	@echo "== the default chain: a real SIP/RTP capture through the router; captures in out/"
	$(BUILD)/gpunfv run examples/router.yaml --report out/demo-report.json

unit: build
	cd $(BUILD) && ctest --output-on-failure

e2e: build
	GPUNFV_BIN=$(abspath $(BUILD))/gpunfv $(PYTHON) -m pytest -q tests/e2e

test: unit e2e

clean:
	rm -rf $(BUILD) out
