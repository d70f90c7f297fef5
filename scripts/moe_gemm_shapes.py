#!/usr/bin/env python3
"""Times the GEMMs of a fine-grained MoE layer on the local GPU and writes JSON in the reference format.

gpt-oss-120B on EP8 (128 experts, top-4, hidden 2880, expert width 2880 gated): each rank runs 16 local
experts on ~1024 tokens each per 4096-token micro-batch. Rows: each expert GEMM shape alone (fc1 fwd
1024x5760x2880, fc2 fwd 1024x2880x2880, their dgrad and wgrad), and the 16 experts back to back as
separate matmuls (what a multi-stream / loop GroupedLinear issues) against one GEMM of the summed rows.
Timing: CUDA events, 5 warm-ups, median of 20; randn inputs rotated over 3 buffers; C = A @ B, bf16.
usage: moe_gemm_shapes.py OUT.json
Status: written 2026-11-30 to test whether gpt-oss-120B's expert GEMMs run as fast as the model carries
them (published runs are predicted 26-30% fast); not yet run: the session's device was no longer lent.
"""
import json, os, statistics, sys, time
import torch

from cuda_timing import event_times_ms  # scripts/ is on sys.path when run as scripts/NAME.py

def timed(fn, reps=20, warm=5):
    return statistics.median(event_times_ms(fn, reps, warm))

def gemm_row(m, n, k, origin):
    A = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
    B = [torch.randn(k, n, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
    i = [0]
    def f():
        i[0] = (i[0] + 1) % 3
        return A[i[0]] @ B[i[0]]
    ms = timed(f)
    return {"m": m, "n": n, "k": k, "dtype": "bfloat16", "ms": ms, "tflops": 2 * m * n * k / ms / 1e9, "origin": origin}

def main():
    h, w, tok, experts = 2880, 2880, 1024, 16
    shapes = [(tok, 2 * w, h, "fc1 fwd"), (tok, h, w, "fc2 fwd"), (tok, h, 2 * w, "fc1 dgrad"), (tok, w, h, "fc2 dgrad"),
              (h, 2 * w, tok, "fc1 wgrad"), (w, h, tok, "fc2 wgrad"),
              (tok * experts, 2 * w, h, "fc1 fwd, all experts as one"), (tok * experts, h, w, "fc2 fwd, all experts as one"),
              (1024, 4096, 4096, "control"), (4096, 4096, 4096, "control"), (1024, 6144, 4096, "control"), (8192, 8192, 8192, "control")]
    rows = [gemm_row(m, n, k, o) for (m, n, k, o) in shapes]
    for r in rows: print(r, flush=True)
    # 16 experts as 16 separate matmuls, back to back on one stream.
    A = [torch.randn(tok, h, device="cuda", dtype=torch.bfloat16) for _ in range(experts)]
    W = [torch.randn(h, 2 * w, device="cuda", dtype=torch.bfloat16) for _ in range(experts)]
    loop_ms = timed(lambda: [a @ b for a, b in zip(A, W)])
    grouped = {"experts": experts, "m": tok, "n": 2 * w, "k": h, "loop_ms": loop_ms,
               "loop_tflops": experts * 2 * tok * 2 * w * h / loop_ms / 1e9}
    print(grouped, flush=True)
    doc = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
           "sm_count": torch.cuda.get_device_properties(0).multi_processor_count,
           "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "note": __doc__.strip().splitlines()[0], "gemm": rows, "moe_expert_loop": grouped}
    tmp = sys.argv[1] + ".tmp"
    json.dump(doc, open(tmp, "w"), indent=1)
    os.replace(tmp, sys.argv[1])

if __name__ == "__main__":
    main()
