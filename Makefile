# The two set-up commands (README): `make demo` and `make test`. Both install any missing Debian 12
# packages, configure a Release build in build/ and build it.
SHELL := /bin/bash
BUILD ?= build
JOBS ?= $(shell nproc)
# Extra CMake options for the first configure, e.g. CMAKE_ARGS=-DCLUSTERSIM_WERROR=ON (CI).
CMAKE_ARGS ?=
NVCC := $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
REQUIRED_PARTS := -DCLUSTERSIM_GUI=ON -DCLUSTERSIM_PYTHON=ON \
                  -DCLUSTERSIM_CUDA=$(if $(NVCC),ON,OFF)
DEMO_SCENARIO ?= scenarios/llama3-70b-h100x64-ndr400.json
# Debian 12 packages the build needs. Every optional part whose packages are installed here is configured
# as required (CLUSTERSIM_GUI=ON, CLUSTERSIM_PYTHON=ON for Debian's python3, CLUSTERSIM_CUDA=ON where nvcc
# is installed), so a missing package fails the build with CMake's message instead of
# silently dropping the part. Qt6Charts' CMake config needs Qt6OpenGL's, which is in libqt6opengl6-dev.
PACKAGES := cmake ninja-build g++ libboost-graph-dev libboost-program-options-dev libeigen3-dev \
            nlohmann-json3-dev catch2 qt6-base-dev qt6-charts-dev libqt6opengl6-dev libgl1-mesa-dev \
            fonts-dejavu-core pybind11-dev python3-dev python3-pytest python3-matplotlib python3-pandas \
            slurm-wlm munge

.PHONY: demo test build deps configure clean sanitize bench deb fresh-check fuzz

demo: build
	./$(BUILD)/clustersim run $(DEMO_SCENARIO)
	@./scripts/built-parts.sh $(BUILD)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

configure: deps
	@if [ ! -f $(BUILD)/CMakeCache.txt ]; then \
	  cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(REQUIRED_PARTS) $(CMAKE_ARGS); \
	elif ! grep -q '^CMAKE_BUILD_TYPE:STRING=Release$$' $(BUILD)/CMakeCache.txt; then \
	  echo "$(BUILD) was configured as another build type; reconfiguring it as Release"; \
	  cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(REQUIRED_PARTS) $(CMAKE_ARGS); \
	fi

deps:
	@./scripts/install-deps.sh $(PACKAGES)

# ASan + UBSan build of everything, and the test suite under it (CTEST_ARGS selects, e.g. -LE slow).
CTEST_ARGS ?=
sanitize: deps
	cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCLUSTERSIM_SANITIZE=ON -DCLUSTERSIM_GUI=OFF \
	  -DCLUSTERSIM_PYTHON=OFF -DCLUSTERSIM_CUDA=OFF $(CMAKE_ARGS)
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# libFuzzer harnesses (tests/fuzz), built with clang in build-fuzz; each runs FUZZ_SECONDS (default 600)
# and prints its executions per second and total.
FUZZ_SECONDS ?= 600
fuzz: deps
	@./scripts/install-deps.sh clang libclang-rt-14-dev
	cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
	  -DCLUSTERSIM_FUZZ=ON -DCLUSTERSIM_TESTS=OFF -DCLUSTERSIM_GUI=OFF -DCLUSTERSIM_CUDA=OFF -DCLUSTERSIM_PYTHON=OFF
	cmake --build build-fuzz -j $(JOBS) --target fuzz_scenario fuzz_nccl_tests_log fuzz_topology_file fuzz_calibration_profile \
	  fuzz_sweep_part fuzz_python_core
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh build-fuzz

# The benchmarks' figures (bench/, binaries in $(BUILD)/): engine events/s and wall time per step, flow-network
# flows/s, mirrored against unmirrored (every rank) on the 405B / 16,384-GPU scenario, sweep layouts/s (a 40-layout sample of the 70B search; without --limit the whole search, minutes)
# and the GUI's event-loop gaps while it simulates and sweeps. Each runs as it is, one after another.
bench: build
	./$(BUILD)/clustersim-engine-bench
	./$(BUILD)/clustersim-flow-bench
	@# The unmirrored 16k-GPU runs take tens of minutes and ~9 GiB: only with BENCH_FULL=1.
	./$(BUILD)/clustersim-symmetry-bench $(if $(BENCH_FULL),,--mirrored-only)
	./$(BUILD)/clustersim-sweep-bench --limit 40
	@if [ -x ./$(BUILD)/clustersim-gui-bench ]; then \
	  echo "QT_QPA_PLATFORM=offscreen ./$(BUILD)/clustersim-gui-bench"; \
	  QT_QPA_PLATFORM=offscreen ./$(BUILD)/clustersim-gui-bench; \
	else \
	  echo "clustersim-gui-bench: not built ($(BUILD) is configured without the GUI)"; \
	fi

# The Debian package (CPack): build/package/clustersim_<version>_<arch>.deb.
deb: build
	@./scripts/install-deps.sh dpkg-dev file
	cd $(BUILD) && cpack -G DEB

# The README's set-up in a fresh Debian 12 root (debootstrap + chroot; needs root): scripts/fresh-check.sh.
fresh-check:
	./scripts/fresh-check.sh

clean:
	rm -rf $(BUILD) build-asan build-fuzz
