#!/usr/bin/env python3
"""How much a GEMM's input values change its speed on this GPU (writes JSON).

bf16 C = A @ B for a few square sizes with A, B drawn three ways: torch.randn (varying exponents, like
real tensors), uniform +-[0.5, 1) (one shared exponent: the harness's first fill), and zeros. Timing:
CUDA events around 20 back-to-back products after 5 warm-ups, median of 5 such runs.
usage: gemm_fill_effect.py OUT.json
"""
import json, os, statistics, sys, time
import torch

def fills(n):
    g = torch.Generator(device="cuda").manual_seed(0)
    r = torch.randn(n, n, device="cuda", dtype=torch.bfloat16, generator=g)
    u = (torch.rand(n, n, device="cuda", generator=g) * 0.5 + 0.5) * torch.where(
        torch.rand(n, n, device="cuda", generator=g) < 0.5, -1.0, 1.0)
    return {"randn": r, "uniform_pm_half_one": u.to(torch.bfloat16), "zeros": torch.zeros_like(r)}

def time_mm(a, b, reps=20):
    for _ in range(5):
        a @ b
    torch.cuda.synchronize()
    runs = []
    for _ in range(5):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(reps):
            a @ b
        e.record(); torch.cuda.synchronize()
        runs.append(s.elapsed_time(e) / reps)
    return statistics.median(runs)

rows = []
for n in (4096, 8192, 16384):
    f = fills(n)
    for name, a in f.items():
        ms = time_mm(a, a.t().contiguous())
        rows.append({"n": n, "fill": name, "ms": ms, "tflops": 2 * n**3 / ms / 1e9})
        print(rows[-1], flush=True)
    del f
    torch.cuda.empty_cache()
doc = {"format": "clustersim-gemm-fill-effect", "version": 1, "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
       "device": torch.cuda.get_device_name(0), "torch": torch.__version__, "note": __doc__.strip().splitlines()[0], "rows": rows}
tmp = sys.argv[1] + ".tmp"
json.dump(doc, open(tmp, "w"), indent=1)
os.replace(tmp, sys.argv[1])
