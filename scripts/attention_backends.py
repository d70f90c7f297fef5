#!/usr/bin/env python3
"""Times PyTorch SDPA's attention kernels one by one on the local GPU and writes JSON.

Why: clustersim models FlashAttention-2 as the calibrated attention kernel times
GpuSpec::mma_sync_fraction (2/3 on Hopper: FA2 issues mma.sync, which reaches about 2/3 of the
wgmma tensor peak). PyTorch's FLASH_ATTENTION backend is FA2; CUDNN_ATTENTION is cuDNN's Hopper
kernel. Timing both on the same shapes measures that ratio instead of taking it from a paper.
The additive-bias rows (EFFICIENT with a float mask, ALiBi-like) show what a kernel that must
read a bias costs, for models (MPT) whose attention carried one.

Timing: CUDA events, 3 warm-ups, median of 10; causal; bf16; random inputs.
FLOPs: fwd = 2*b*hq*s^2*d (causal half of 4*b*hq*s^2*d); fwd+bwd = 3.5x that (bwd = 2.5x fwd).
usage: attention_backends.py OUT.json
"""
import json, statistics, sys, time
import torch

from cuda_timing import event_times_ms  # scripts/ is on sys.path when run as scripts/NAME.py
from torch.nn.attention import SDPBackend, sdpa_kernel
import torch.nn.functional as F

def timed(fn, reps=10, warm=3):
    ts = event_times_ms(fn, reps, warm)
    return statistics.median(ts), min(ts), max(ts)

def run(backend, b, h, s, d, bias):
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    g = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
    mask = None
    if bias:  # ALiBi: slope_h * (j - i), causal as -inf above the diagonal
        slopes = torch.tensor([2 ** (-8 * (i + 1) / h) for i in range(h)], device="cuda")
        pos = torch.arange(s, device="cuda")
        rel = (pos[None, :] - pos[:, None]).float()
        mask = (slopes[:, None, None] * rel[None]).masked_fill(rel[None] > 0, float("-inf"))
        mask = mask.to(torch.bfloat16)[None]
    kw = dict(attn_mask=mask) if bias else dict(is_causal=True)
    with sdpa_kernel([backend]):
        fwd = lambda: F.scaled_dot_product_attention(q, k, v, **kw)
        def fb():
            o = F.scaled_dot_product_attention(q, k, v, **kw)
            o.backward(g)
        f = timed(fwd)
        fb_t = timed(fb)
    flops = 2.0 * b * h * s * s * d
    return {"backend": backend.name, "b": b, "hq": h, "hkv": h, "seq": s, "d": d, "alibi_bias": bias,
            "fwd_ms": f[0], "fwd_min_ms": f[1], "fwd_max_ms": f[2],
            "fwdbwd_ms": fb_t[0], "fwdbwd_min_ms": fb_t[1], "fwdbwd_max_ms": fb_t[2],
            "fwd_tflops": flops / f[0] / 1e9, "fwdbwd_tflops": 3.5 * flops / fb_t[0] / 1e9}

def main():
    out = sys.argv[1]
    rows, errors = [], []
    t0 = time.time()
    shapes = [(8, 32, 2048, 128), (4, 32, 4096, 128), (2, 32, 8192, 128), (1, 32, 16384, 128), (4, 16, 4096, 64)]
    for backend in (SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION):
        for (b, h, s, d) in shapes:
            try:
                rows.append(run(backend, b, h, s, d, False))
            except Exception as e:  # a backend that refuses a shape is recorded, not fatal
                errors.append({"backend": backend.name, "shape": [b, h, s, d], "error": str(e)[:300]})
            print(backend.name, b, h, s, d, f"{time.time()-t0:.1f}s", flush=True)
    for (b, h, s, d) in [(4, 32, 2048, 128), (2, 32, 4096, 128), (1, 32, 8192, 128)]:
        for backend in (SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH):
            try:
                rows.append(run(backend, b, h, s, d, True))
            except Exception as e:
                errors.append({"backend": backend.name, "shape": [b, h, s, d], "alibi_bias": True, "error": str(e)[:300]})
            print("bias", backend.name, b, h, s, d, f"{time.time()-t0:.1f}s", flush=True)
            torch.cuda.empty_cache()
    doc = {"format": "clustersim-attention-backends", "version": 1,
           "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "device": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
           "cudnn": torch.backends.cudnn.version(),
           "note": __doc__.strip().splitlines()[0], "rows": rows, "errors": errors}
    tmp = out + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(doc, fh, indent=1)
    import os; os.replace(tmp, out)

if __name__ == "__main__":
    main()
