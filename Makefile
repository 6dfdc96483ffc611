# Thin wrapper over CMake. `make test` and `make bench` need nothing typed
# before them on a fresh Debian machine: they run scripts/deps.sh, which
# installs what is missing (as root) or says exactly what to install.
# `make build` (and plain `make`, `make format`, `make format-check`) never
# installs anything: it only checks (scripts/deps.sh check) and names what
# is missing.
BUILD   ?= build
JOBS    ?= 2
CMAKE_FLAGS ?=
# The scripts/deps.sh mode run before building: check (report only); test
# and bench run the build with build and bench (install when root).
DEPS    ?= check

.PHONY: all build test bench fuzz format format-check deps deps-build deps-bench clean

all: build

deps:
	@scripts/deps.sh $(DEPS)

deps-build:
	@scripts/deps.sh build

deps-bench:
	@scripts/deps.sh bench

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

test:
	@$(MAKE) --no-print-directory build DEPS=build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

bench:
	@$(MAKE) --no-print-directory build DEPS=bench
	scripts/bench.sh $(BUILD)

# libFuzzer targets (tests/fuzz/README.md): each runs FUZZ_SECONDS (10 min),
# built with clang in build-fuzz/ (a CMake project of its own).
FUZZ_SECONDS ?= 600
fuzz:
	tests/fuzz/run.sh $(FUZZ_SECONDS) build-fuzz

# The whole suite on other architectures under qemu-user
# (scripts/test-cross.sh, docs/TESTING.md "Other architectures"): each in
# build-cross-<arch>/; installs the cross compilers and qemu first when run
# as root, or names them (scripts/deps.sh cross).
CROSS_ARCHS ?= aarch64 armhf s390x i686
.PHONY: test-cross
test-cross:
	@scripts/deps.sh cross
	scripts/test-cross.sh $(CROSS_ARCHS)

# The heaps' own tests on emulated Cortex-M boards (scripts/test-firmware.sh,
# docs/FIRMWARE.md): Cortex-M3, M4F, M33 and M0 under qemu-system-arm, in
# build-firmware/; installs the Arm compiler, picolibc and qemu first when
# run as root, or names them (scripts/deps.sh firmware).
FIRMWARE_BOARDS ?= an385 an386 an505 microbit
.PHONY: test-firmware
test-firmware:
	@scripts/deps.sh firmware
	scripts/test-firmware.sh -j $(JOBS) $(FIRMWARE_BOARDS)

format-check: build
	cmake --build $(BUILD) --target format-check

format: build
	cmake --build $(BUILD) --target format

clean:
	rm -rf $(BUILD) build-*
