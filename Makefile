# gpunfv: the two commands a user needs are `make demo` and `make test`.
BUILD ?= build
JOBS ?= $(shell nproc)
PYTHON ?= /usr/bin/python3
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

.PHONY: all deps build demo test unit e2e sanitize asan-build soak clean fuzz fuzz-build

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

# ASan + UBSan build of the CPU backend (no CUDA), only what the tests run: gpunfv and
# gpunfv_tests. `make sanitize` runs the unit tests and the e2e suite on it; any sanitizer report
# fails the run (reports go to $(ASAN_BUILD)/reports/, checked at the end, so a report from a run
# that a test expected to fail is not lost either). Leak suppressions: .ci/lsan.supp.
ASAN_BUILD ?= build-asan
# Clang: its one runtime writes UBSan's reports to log_path too (GCC's separate libubsan prints
# them to stderr only when ASan is linked, where a test that captured its output may drop them).
ASAN_CC ?= clang
ASAN_CXX ?= clang++
SANITIZE_FLAGS ?= -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
ASAN_REPORTS = $(abspath $(ASAN_BUILD))/reports
SANITIZE_ENV = GPUNFV_SANITIZED=1 \
  ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1:log_path=$(ASAN_REPORTS)/asan \
  UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1:log_path=$(ASAN_REPORTS)/ubsan \
  LSAN_OPTIONS=suppressions=$(abspath .ci/lsan.supp):print_suppressions=0

$(ASAN_BUILD)/CMakeCache.txt:
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DGPUNFV_CUDA=OFF \
	  -DCMAKE_C_COMPILER=$(ASAN_CC) -DCMAKE_CXX_COMPILER=$(ASAN_CXX) \
	  -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
	  -DCMAKE_C_FLAGS="$(SANITIZE_FLAGS)" \
	  -DCMAKE_CXX_FLAGS="$(SANITIZE_FLAGS) -Wno-unknown-warning-option" \
	  -DCMAKE_EXE_LINKER_FLAGS="$(SANITIZE_FLAGS)" -DCMAKE_SHARED_LINKER_FLAGS="$(SANITIZE_FLAGS)" \
	  -DCMAKE_MODULE_LINKER_FLAGS="$(SANITIZE_FLAGS)"

asan-build: deps $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j $(JOBS) --target gpunfv gpunfv_tests

sanitize: asan-build
	rm -rf $(ASAN_REPORTS) && mkdir -p $(ASAN_REPORTS)
	status=0; \
	(cd $(ASAN_BUILD) && $(SANITIZE_ENV) ./gpunfv_tests --gtest_brief=1) || status=1; \
	$(SANITIZE_ENV) GPUNFV_BIN=$(abspath $(ASAN_BUILD))/gpunfv $(PYTHON) -m pytest -q tests/e2e || status=1; \
	if [ -n "$$(ls -A $(ASAN_REPORTS))" ]; then \
	  echo "sanitize: sanitizer reports in $(ASAN_REPORTS):"; head -n 60 $(ASAN_REPORTS)/*; status=1; fi; \
	exit $$status

# The firewall -> IPsec -> NIDS -> router chain at twice its capacity, backpressure on, for
# SOAK_S seconds: RSS and descriptors flat, accounting exact (scripts/soak.py, docs/testing.md).
SOAK_S ?= 600
soak: build
	$(PYTHON) scripts/soak.py --bin $(abspath $(BUILD))/gpunfv --duration $(SOAK_S)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) out
