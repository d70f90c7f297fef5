# The two set-up commands (README): `make demo` and `make test`. Both install any missing Debian 12
# packages, configure a Release build in build/ and build it.
SHELL := /bin/bash
BUILD ?= build
JOBS ?= $(shell nproc)
DEMO_SCENARIO ?= scenarios/llama3-70b-h100x64-ndr400.json
# Debian 12 packages the build needs.
PACKAGES := cmake ninja-build g++ libboost-graph-dev libboost-program-options-dev libeigen3-dev \
            nlohmann-json3-dev catch2 qt6-base-dev qt6-charts-dev libgl1-mesa-dev fonts-dejavu-core

.PHONY: demo test build deps configure clean sanitize bench

demo: build
	./$(BUILD)/clustersim run $(DEMO_SCENARIO)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

configure: deps
	@if [ ! -f $(BUILD)/CMakeCache.txt ]; then \
	  cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release; \
	elif ! grep -q '^CMAKE_BUILD_TYPE:STRING=Release$$' $(BUILD)/CMakeCache.txt; then \
	  echo "$(BUILD) was configured as another build type; reconfiguring it as Release"; \
	  cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release; \
	fi

deps:
	@./scripts/install-deps.sh $(PACKAGES)

# ASan + UBSan build of everything, and the whole test suite under it.
sanitize: deps
	cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCLUSTERSIM_SANITIZE=ON
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ctest --output-on-failure -j $(JOBS)

bench: build
	./$(BUILD)/bench/clustersim-engine-bench

clean:
	rm -rf $(BUILD) build-asan
