# gpunfv: the two commands a user needs are `make demo` and `make test`.
BUILD ?= build
JOBS ?= $(shell nproc)
PYTHON ?= /usr/bin/python3
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

.PHONY: all deps build demo test unit e2e clean fuzz fuzz-build

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

# Fuzzing (fuzz/README.md): libFuzzer targets built with clang into $(FUZZ_BUILD), each run for
# FUZZ_SECONDS from its seed corpus (fuzz/corpus/NAME); what they find beyond the seeds goes to
# $(FUZZ_BUILD)/corpus/NAME, crashes to $(FUZZ_BUILD)/artifacts/. FUZZ_TARGETS picks some.
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_CC ?= $(firstword $(shell command -v clang-14 clang 2>/dev/null))
FUZZ_CXX ?= $(firstword $(shell command -v clang++-14 clang++ 2>/dev/null))
FUZZ_TARGETS ?= $(sort $(notdir $(basename $(wildcard fuzz/fuzz_*.cpp))))
FUZZ_FLAGS ?= -timeout=10 -rss_limit_mb=2048

$(FUZZ_BUILD)/CMakeCache.txt:
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=$(FUZZ_CC) -DCMAKE_CXX_COMPILER=$(FUZZ_CXX) \
	  -DGPUNFV_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g" \
	  -DGPUNFV_TESTS=OFF -DGPUNFV_DPDK=OFF -DGPUNFV_DPDK_PORT=OFF -DGPUNFV_AFXDP_PORT=OFF

fuzz-build: $(FUZZ_BUILD)/CMakeCache.txt
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_targets

fuzz: fuzz-build
	@mkdir -p $(FUZZ_BUILD)/artifacts
	@for t in $(FUZZ_TARGETS); do \
	  echo "== $$t: $(FUZZ_SECONDS) s"; mkdir -p $(FUZZ_BUILD)/corpus/$$t; \
	  $(FUZZ_BUILD)/fuzz/$$t $(FUZZ_BUILD)/corpus/$$t fuzz/corpus/$$t $(FUZZ_FLAGS) \
	    -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_BUILD)/artifacts/$$t- || exit 1; \
	done

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD) out
