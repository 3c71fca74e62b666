# The two commands of the README: `make run` and `make test`.
BUILD ?= build
CMAKE_FLAGS ?=
RUN_DIR ?= runs/profiler-run-$(shell date +%Y%m%d-%H%M%S)

.PHONY: all deps build run test bench clean

all: build

deps:
	@sh scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j2

run: build
	@mkdir -p $(dir $(RUN_DIR))
	./$(BUILD)/bin/profile_cpu $(RUN_DIR)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j2

# Benchmarks (with their PyTorch/libtorch peers when installed: scripts/deps.sh --bench).
bench: build
	@cmake --build $(BUILD) --target bench_peers -j2
	./$(BUILD)/bin/bench_forward

clean:
	rm -rf $(BUILD)
