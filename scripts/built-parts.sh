#!/usr/bin/env bash
# Lists what a build folder holds, so `make demo` ends by saying which parts a user got.
set -u
b=${1:-build}
part() { if [ -e "$b/$2" ]; then printf '  %-22s %s\n' "$1" "$b/$2"; else printf '  %-22s not built\n' "$1"; fi; }
echo "built in $b:"
part "CLI" clustersim
part "GUI" clustersim-gui
part "Python module" "python/clustersim/__init__.py"
part "CUDA/NCCL harness" clustersim-bench
part "tests" tests/test_sim
