#!/usr/bin/env bash
# One device call: build the harness on the GPU machine, run it, time SDPA's attention kernels.
# Everything lands in $OUT (the device tool's return folder); see calibrate/bench/README.md.
set -uo pipefail
: "${OUT:?set OUT to the folder for the results}"
exec > >(tee "$OUT/log.txt") 2>&1
date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
export NCCL_HOME=$(python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null || echo /usr)
export LD_LIBRARY_PATH="$NCCL_HOME/lib:${LD_LIBRARY_PATH:-}"
if [ -z "${SKIP_ATTENTION:-}" ]; then timeout 90 python3 scripts/attention_backends.py "$OUT/h200-attention-backends.json"; echo "attention rc=$?"; fi
timeout 60 python3 scripts/gemm_fill_effect.py "$OUT/h200-gemm-fill-effect.json"; echo "fill effect rc=$?"
cmake -S calibrate/bench -B /tmp/bb -G Ninja -DCLUSTERSIM_CUDA=ON -DCLUSTERSIM_CUDA_ARCHITECTURES=90 >/tmp/cfg.log 2>&1 \
  && cmake --build /tmp/bb 2>&1 | tail -3 || { tail -20 /tmp/cfg.log; exit 1; }
date -u
timeout "${FULL_S:-270}" /tmp/bb/clustersim-bench --out "$OUT/h200-bench-full.json"; rc=$?; echo "full rc=$rc"
if [ $rc -ne 0 ]; then timeout 100 /tmp/bb/clustersim-bench --quick --out "$OUT/h200-bench-quick.json"; echo "quick rc=$?"; fi
date -u
