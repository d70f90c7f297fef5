#!/usr/bin/env python3
"""A scaling curve and a step breakdown with clustersim, pandas and matplotlib.

    PYTHONPATH=build/python python3 examples/scaling_and_breakdown.py [OUT_DIR]

writes OUT_DIR/scaling.png (tokens/s and MFU of Llama-2 13B on 8..64 A100 nodes over HDR InfiniBand) and
OUT_DIR/breakdown.png (where the step's time goes at each size). OUT_DIR defaults to docs/.
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files, no display
import matplotlib.pyplot as plt
import pandas as pd

import clustersim

here = os.path.dirname(os.path.abspath(__file__))
scenario = os.path.join(here, "..", "scenarios", "llama2-13b-a100x64-hdr200.json")
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "docs")
os.makedirs(out, exist_ok=True)

# Weak scaling at a fixed per-replica batch: data parallelism grows with the node count.
nodes = [1, 2, 4, 8]
rows = []
for n in nodes:
    r = clustersim.run(scenario, set={"cluster.nodes": n, "training.global_batch_size": 32 * n})
    rows.append({"gpus": r["cluster"]["num_gpus"], "tokens_per_s": r["tokens_per_s"], "mfu": r["mfu"],
                 **{k: v for k, v in r["breakdown_s"].items()}, "step_time_s": r["step_time_s"]})
df = pd.DataFrame(rows)
print(df.to_string(index=False))

fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(df.gpus, df.tokens_per_s / 1e3, "o-", label="simulated")
ideal = df.tokens_per_s.iloc[0] / df.gpus.iloc[0] * df.gpus / 1e3
ax.plot(df.gpus, ideal, "--", color="grey", label="linear")
ax.set_xscale("log", base=2)
ax.set_yscale("log")
ax.set_xlabel("GPUs (A100 80 GB, HDR 200 Gb/s)")
ax.set_ylabel("thousand tokens / s")
ax.set_title("Llama-2 13B: weak scaling")
for g, t, m in zip(df.gpus, df.tokens_per_s / 1e3, df.mfu):
    ax.annotate(f"MFU {m:.0%}", (g, t), textcoords="offset points", xytext=(4, -12), fontsize=8)
ax.legend()
fig.tight_layout()
fig.savefig(os.path.join(out, "scaling.png"), dpi=110)

fig, ax = plt.subplots(figsize=(6, 4))
parts = ["compute", "exposed_comm", "pipeline_bubble", "other"]
bottom = [0.0] * len(df)
for p in parts:
    ax.bar([str(g) for g in df.gpus], df[p], bottom=bottom, label=p.replace("_", " "))
    bottom = [b + v for b, v in zip(bottom, df[p])]
ax.set_xlabel("GPUs")
ax.set_ylabel("seconds per step")
ax.set_title("Where the step goes")
ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=4, fontsize=8)
fig.tight_layout()
fig.savefig(os.path.join(out, "breakdown.png"), dpi=110)
print("wrote", os.path.join(out, "scaling.png"), "and", os.path.join(out, "breakdown.png"))
