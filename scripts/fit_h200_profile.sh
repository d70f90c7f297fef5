#!/usr/bin/env bash
# Regenerates calibrate/profiles/h200.json from the measurements in calibrate/ (reproducible: same inputs, same
# bytes). Compute: the H200 reference sweep, and the SDPA backends measured on an H200
# (calibrate/measurements: FlashAttention-2's own curve; the forced-cuDNN rows are validated, not fitted,
# calibrate/fit/compute_fit.hpp). Collectives: the H100-SXM sweeps and logs (same NVLink 4 /
# NVSwitch 3 fabric as the H200; one H200 cannot measure multi-GPU NCCL).
# usage: scripts/fit_h200_profile.sh [BUILD_DIR]   (default build; run from anywhere)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-build}"
cd "$here"
"$build/clustersim" calibrate fit \
  calibrate/measurements/h200-reference.json \
  calibrate/measurements/h200-attention-backends-2026-11-30.json \
  calibrate/published/nccl.json \
  calibrate/published/nccl-tests-logs/*.log \
  --gpu H200 --comm-gpu H100-SXM --comm-gpu H200 \
  -o calibrate/profiles/h200.json
