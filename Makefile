# Thin wrapper over CMake. `make test` and `make bench` need nothing typed
# before them on a fresh Debian machine: scripts/deps.sh installs what is
# missing (as root) or says exactly what to install.
BUILD   ?= build
JOBS    ?= 2
CMAKE_FLAGS ?=

.PHONY: all build test bench format format-check deps-build deps-bench clean

all: build

deps-build:
	@scripts/deps.sh build

deps-bench:
	@scripts/deps.sh bench

$(BUILD)/CMakeCache.txt: | deps-build
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: deps-build $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

bench: deps-bench build
	scripts/bench.sh $(BUILD)

format-check: build
	cmake --build $(BUILD) --target format-check

format: build
	cmake --build $(BUILD) --target format

clean:
	rm -rf $(BUILD) build-*
