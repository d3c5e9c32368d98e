# Kiln — top-level entry points. Each target installs what it needs (idempotently), configures,
# builds and runs. Works as root on a fresh Debian 12 machine.
BUILD ?= build
LLVM_PREFIX ?= /usr/lib/llvm-22
APT_PACKAGES := libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools libzstd-dev ninja-build \
                ccache cmake g++ libgtest-dev nlohmann-json3-dev
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps configure build demo python check docs clean format

all: build

# Install only what is missing, so repeated runs cost nothing.
deps:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

$(BUILD)/build.ninja: CMakeLists.txt
	cmake -G Ninja -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release \
	  -DMLIR_DIR=$(LLVM_PREFIX)/lib/cmake/mlir -DLLVM_DIR=$(LLVM_PREFIX)/lib/cmake/llvm \
	  -DLLVM_EXTERNAL_LIT=$(LLVM_PREFIX)/bin/lit

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD)

# The main job: every IR stage of a causal softcap variant, then its CPU error vs the float64 reference.
demo: build
	$(BUILD)/bin/kiln run examples/causal_softcap.mlir -emit=attn
	$(BUILD)/bin/kiln run examples/causal_softcap.mlir -emit=tile
	$(BUILD)/bin/kiln run examples/causal_softcap.mlir -emit=llvm | head -n 40
	$(BUILD)/bin/kiln run examples/causal_softcap.mlir --backend cpu --batch 2 --heads 4 \
	  --seqlen 200 --head-dim 64 --dtype bf16 --check

# The Python package's tests run in a virtual environment with PyTorch (from PyPI, ~5 GB with
# its CUDA libraries) and the package installed from python/ (pip install ./python).
VENV := $(BUILD)/venv
python: build
	@test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	@$(VENV)/bin/python -c "import torch" 2>/dev/null || $(VENV)/bin/pip install -q torch setuptools
	KILN_BUILD_DIR=$(abspath $(BUILD)) $(VENV)/bin/pip install -q --no-build-isolation --no-deps ./python

# All tests: lit (FileCheck, verifier diagnostics, CPU numerics of every example, the Python
# package) and GoogleTest.
check: build python
	cmake --build $(BUILD) --target check-kiln

# Regenerates the dialect and pass reference from ODS into docs/generated.
docs: configure
	cmake --build $(BUILD) --target mlir-doc
	mkdir -p docs/generated
	cp $(BUILD)/docs/Kiln/*.md docs/generated/

format:
	git ls-files '*.cpp' '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD)
