# The two commands of the README: `make run` and `make test`.
BUILD ?= build
CMAKE_FLAGS ?=
RUN_DIR ?= runs/profiler-run-$(shell date +%Y%m%d-%H%M%S)

.PHONY: all deps build run test bench fuzz clean

all: build

deps:
	@sh scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j2

run: build
	@mkdir -p $(dir $(RUN_DIR))
	./$(BUILD)/bin/profile_cpu --html $(RUN_DIR)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j2

# Benchmarks (with their PyTorch/libtorch peers when installed: scripts/deps.sh --bench).
bench: build
	@cmake --build $(BUILD) --target bench_peers -j2
	./$(BUILD)/bin/bench_forward

# The trace reader's fuzzers: FUZZ_SECONDS of libFuzzer each (clang, ASan, UBSan),
# starting from the corpus in tests/fixtures/fuzz; new finds go to build-fuzz/corpus*.
# fuzz_reader takes any bytes; fuzz_pftrace takes .pftrace packets after a valid head.
# Both check the round trip: written as .pftrace and JSON, read back the same.
FUZZ_SECONDS ?= 60
fuzz: deps
	@sh scripts/deps.sh --fuzz
	@cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPPROF_FUZZ=ON >/dev/null
	@cmake --build build-fuzz --target fuzz_reader fuzz_pftrace -j2
	@mkdir -p build-fuzz/corpus build-fuzz/corpus-pftrace
	./build-fuzz/bin/fuzz_reader -max_total_time=$(FUZZ_SECONDS) -max_len=16384 -timeout=10 \
	    -rss_limit_mb=2048 build-fuzz/corpus tests/fixtures/fuzz
	./build-fuzz/bin/fuzz_pftrace -max_total_time=$(FUZZ_SECONDS) -max_len=16384 -timeout=10 \
	    -rss_limit_mb=2048 build-fuzz/corpus-pftrace tests/fixtures/fuzz

clean:
	rm -rf $(BUILD)
