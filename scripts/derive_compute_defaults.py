#!/usr/bin/env python3
"""Derive models/compute/compute_defaults.cpp from calibrate/measurements/h200-reference.json (stdlib only).

usage: scripts/derive_compute_defaults.py [REFERENCE_JSON] [OUTPUT_CPP] [ATTENTION_BACKENDS_JSON]
defaults: calibrate/measurements/h200-reference.json, models/compute/compute_defaults.cpp and
calibrate/measurements/h200-attention-backends-2026-11-30.json, relative to the repo.

FlashAttention-2's own curve comes from the FLASH_ATTENTION rows of the attention-backends file
(scripts/attention_backends.py; calibrate/fit/compute_fit.hpp says why and how, this does the same).

Every measured time t is turned into an achieved fraction of the H200 datasheet peak after removing the
per-kernel launch overhead L that the compute model adds back (models/compute/compute_model.hpp):

    efficiency = work / ((t - L) * peak)

so that op_time_s reproduces each measured time exactly at the measured point.
"""
import heapq
import itertools
import json
import math
import os
import statistics
import sys

H200_BF16_TFLOPS = 989.0  # dense, NVIDIA H200 datasheet (1,979 with sparsity); = GpuSpec H200
H200_FP8_TFLOPS = 1979.0  # dense
H200_HBM_GBPS = 4800.0    # 4.8 TB/s, NVIDIA H200 datasheet
MAX_EFFICIENCY = 0.95

# Flash-attention kernel facts the attention model takes as given (models/compute/compute_model.hpp): query rows
# per CTA, resident CTAs per SM and launch order within a (batch, head), forward and backward.
ATTENTION_BLOCK_Q = 128
ATTENTION_FWD = {"ctas_per_sm": 2, "heavy_first": True}
ATTENTION_BWD = {"ctas_per_sm": 1, "heavy_first": False}
# Search range and grid of the per-CTA fixed cost c (KV tokens); then golden-section refinement.
HALF_KV_MAX = 16384.0
HALF_KV_STEP = 16.0
GOLDEN_ITERATIONS = 100
# Host floor of the forward+backward microbenchmark (compute_model.hpp): grid 0..HOST_FLOOR_MAX_S in
# HOST_FLOOR_STEP_S, with c on a grid of HALF_KV_COARSE_STEP, then golden refinement of each.
HOST_FLOOR_MAX_S = 1e-3
HOST_FLOOR_STEP_S = 10e-6
HALF_KV_COARSE_STEP = 64.0

# memory_bound "op" names in the reference file -> MemOpKind
MEM_KIND = {"rms_norm": "norm", "swiglu": "activation", "add": "elementwise",
            "adamw_fused_fp32": "optimizer"}


def launch_overhead_s(ref):
    """Zero-size intercept of the size sweeps of memory-bound kernels.

    For each kind measured at two or more sizes (and the device-to-device copy), the straight line
    t = a + bytes / bw through its two smallest sizes has intercept a: the part of the time that does
    not scale with bytes. The smallest intercept over the kinds is taken (the copy's, ~8 us): every
    kernel pays at least that, and a larger value would make the smallest copy run faster than the HBM
    peak. (The smallest GEMMs, 512^3 and 1024^3, both take ~40 us whatever their work: that floor is
    PyTorch eager's host issue rate, not a per-kernel GPU cost, and is left inside their efficiencies.)
    """
    sweeps = {}
    for r in ref["memory_bound"]:
        sweeps.setdefault(r["op"], []).append((r["bytes"], r["ms"] * 1e-3))
    sweeps["d2d_copy"] = [(r["bytes"], r["ms"] * 1e-3) for r in ref["d2d_copy"]]
    intercepts = {}
    for name, pts in sorted(sweeps.items()):
        pts.sort()
        if len(pts) < 2:
            continue
        (b1, t1), (b2, t2) = pts[0], pts[1]
        intercepts[name] = t1 - b1 * (t2 - t1) / (b2 - b1)
    return min(intercepts.values()), intercepts


def dispatch_balance(groups, seq_q, sm_count, ctas_per_sm, heavy_first, block_q=ATTENTION_BLOCK_Q):
    """Causal CTAs of `groups` (batch, head) pairs replayed greedily over the CTA slots.

    Query block i of nb = ceil(seq_q / block_q) meets i KV blocks; each CTA, in launch order, starts
    on the slot that frees first. balance = total work / (slots * makespan). The same replay as
    models/compute/compute_model.cpp (exact below 64 CTAs per slot, which every measured shape is).
    """
    nb = -(-seq_q // block_q)
    slots = sm_count * ctas_per_sm
    if groups * nb > 64 * slots:
        sys.exit("attention shape beyond the exact replay range; extend dispatch_balance")
    pattern = list(range(nb, 0, -1)) if heavy_first else list(range(1, nb + 1))
    free_at = [0] * min(slots, groups * nb)
    makespan = 0
    for _ in range(groups):
        for w in pattern:
            end = heapq.heappop(free_at) + w
            heapq.heappush(free_at, end)
            makespan = max(makespan, end)
    return groups * sum(pattern) / (slots * makespan)


def fit_attention_pass(points):
    """(e_max, c) minimising sum (ln t_model - ln t)^2 with t_model = W / (e_max * kv / (kv + c)).

    points: (kv, W, t) with W the time at full efficiency and balance folded in (work / (peak *
    balance)) and t the measured kernel time without launch overhead. For a fixed c the best ln e_max
    is the mean residual, so the fit is a 1-D search over c in [0, HALF_KV_MAX]: a grid of step
    HALF_KV_STEP, then golden-section refinement within one step of the best grid point.
    calibrate/fit/compute_fit.cpp does exactly the same.
    """
    def cost(c):
        r = [math.log(t) - math.log(w) + math.log(kv / (kv + c)) for kv, w, t in points]
        m = sum(r) / len(r)
        return sum((x - m) ** 2 for x in r), math.exp(-m)

    best_c, best_s = 0.0, cost(0.0)[0]
    n = int(HALF_KV_MAX / HALF_KV_STEP)
    for i in range(1, n + 1):
        c = i * HALF_KV_STEP
        sc = cost(c)[0]
        if sc < best_s:
            best_c, best_s = c, sc
    lo, hi = max(0.0, best_c - HALF_KV_STEP), min(HALF_KV_MAX, best_c + HALF_KV_STEP)
    g = (math.sqrt(5) - 1) / 2
    for _ in range(GOLDEN_ITERATIONS):
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
        if cost(a)[0] < cost(b)[0]:
            hi = b
        else:
            lo = a
    c = 0.5 * (lo + hi)
    if cost(best_c)[0] <= cost(c)[0]:
        c = best_c
    return cost(c)[1], c


def golden_min(f, lo, hi):
    g = (math.sqrt(5) - 1) / 2
    for _ in range(GOLDEN_ITERATIONS):
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
        if f(a) < f(b):
            hi = b
        else:
            lo = a
    return 0.5 * (lo + hi)


def fit_backward_with_host_floor(points, launch_s, fixed_floor_s=None):
    """(e_max, c, T) minimising sum (ln o_model - ln o)^2 over the observed backward times.

    points: (kv, W, fwd_s, fb_s): W as in fit_attention_pass, fwd_s and fb_s the measured forward and
    forward+backward times. The backward op starts at max(fwd_s, T) (T: the host has issued it), so
    o = fb_s - fwd_s - L is modelled as W / (e_max kv / (kv + c)) + max(0, T - fwd_s). For fixed (c, T)
    ln e_max comes from Gauss-Newton started at the gap-free closed form; (c, T) from a grid (c step
    HALF_KV_COARSE_STEP, T step HOST_FLOOR_STEP_S, smallest T on ties), then golden section on c
    within a step and on T within a step. calibrate/fit/compute_fit.cpp does exactly the same.
    fixed_floor_s holds T instead of fitting it (the FlashAttention-2 rows).
    """
    def solve(c, t_host):
        a, o, gap = [], [], []
        for kv, w, fwd_s, fb_s in points:
            a.append(w * (kv + c) / kv)
            o.append(fb_s - fwd_s - launch_s)
            gap.append(max(0.0, t_host - fwd_s))
        if any(oi - gi <= 0 for oi, gi in zip(o, gap)):
            return float("inf"), 0.0
        u = sum(math.log(ai / (oi - gi)) for ai, oi, gi in zip(a, o, gap)) / len(a)  # ln e_max
        for _ in range(4):
            num = den = 0.0
            for ai, oi, gi in zip(a, o, gap):
                k = ai * math.exp(-u)
                q = k / (k + gi)
                r = math.log(k + gi) - math.log(oi)
                num += r * q
                den += q * q
            u += num / den
        cost = sum((math.log(ai * math.exp(-u) + gi) - math.log(oi)) ** 2 for ai, oi, gi in zip(a, o, gap))
        return cost, math.exp(u)

    best = (float("inf"), 0.0, 0.0)
    n_t = 0 if fixed_floor_s is not None else int(round(HOST_FLOOR_MAX_S / HOST_FLOOR_STEP_S))
    n_c = int(HALF_KV_MAX / HALF_KV_COARSE_STEP)
    for i in range(n_t + 1):
        t_host = fixed_floor_s if fixed_floor_s is not None else i * HOST_FLOOR_STEP_S
        for j in range(n_c + 1):
            c = j * HALF_KV_COARSE_STEP
            cost = solve(c, t_host)[0]
            if cost < best[0]:
                best = (cost, c, t_host)
    _, c, t_host = best
    c_ref = golden_min(lambda x: solve(x, t_host)[0], max(0.0, c - HALF_KV_COARSE_STEP),
                       min(HALF_KV_MAX, c + HALF_KV_COARSE_STEP))
    if solve(c_ref, t_host)[0] < solve(c, t_host)[0]:
        c = c_ref
    if fixed_floor_s is None:
        t_ref = golden_min(lambda x: solve(c, x)[0], max(0.0, t_host - HOST_FLOOR_STEP_S),
                           min(HOST_FLOOR_MAX_S, t_host + HOST_FLOOR_STEP_S))
        if solve(c, t_ref)[0] < solve(c, t_host)[0]:
            t_host = t_ref
    return solve(c, t_host)[1], c, t_host


def efficiency(work, t, launch_s, peak):
    e = work / ((t - launch_s) * peak)
    if not 0 < e <= MAX_EFFICIENCY:
        sys.exit(f"derived efficiency {e:.3f} out of (0, {MAX_EFFICIENCY}]")
    return e


def attention_kernel(rows, launch_s, peak, sms, fixed_floor_s):
    """One attention kernel's table and model: the rows at its most measured head_dim (the model has no
    head_dim term), efficiencies per row, (e_max, c) per pass and the backward's host floor T (held at
    fixed_floor_s when given). calibrate/fit/compute_fit.cpp does the same.
    """
    per_d = {}
    for r in rows:
        per_d[r["d"]] = per_d.get(r["d"], 0) + 1
    fit_d = max(per_d, key=lambda d: (per_d[d], d))
    rows = [r for r in rows if r["d"] == fit_d]
    table, fwd_pts, bwd_pts = [], [], []
    for r in rows:
        F = 2.0 * r["b"] * r["hq"] * r["seq"] ** 2 * r["d"]  # causal half of 4*b*hq*s^2*d
        groups = r["b"] * r["hq"]
        bal_f = dispatch_balance(groups, r["seq"], sms, **ATTENTION_FWD)
        bal_b = dispatch_balance(groups, r["seq"], sms, **ATTENTION_BWD)
        fwd_pts.append((r["seq"] / 2, F / (peak * bal_f), r["fwd_ms"] * 1e-3 - launch_s))
        bwd_pts.append((r["seq"] / 2, 2.5 * F / (peak * bal_b), r["fwd_ms"] * 1e-3, r["fwdbwd_ms"] * 1e-3))
        e_fwd = efficiency(F, r["fwd_ms"] * 1e-3, launch_s, peak)
        # forward + backward: 3.5x the forward FLOPs, two kernels (two launch overheads)
        e_fb = efficiency(3.5 * F, r["fwdbwd_ms"] * 1e-3 - launch_s, launch_s, peak)
        table.append((r["b"], r["hq"], r["hkv"], r["seq"], r["d"], e_fwd, e_fb))
    att_fwd = fit_attention_pass(fwd_pts)
    e_b, c_b, host_floor = fit_backward_with_host_floor(bwd_pts, launch_s, fixed_floor_s)
    return table, att_fwd, (e_b, c_b), host_floor


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(here)
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(repo, "calibrate", "measurements",
                                                              "h200-reference.json")
    dst = sys.argv[2] if len(sys.argv) > 2 else os.path.join(repo, "models", "compute", "compute_defaults.cpp")
    with open(src) as f:
        ref = json.load(f)

    L, intercepts = launch_overhead_s(ref)
    peak = H200_BF16_TFLOPS * 1e12
    hbm = H200_HBM_GBPS * 1e9

    gemm = []
    for r in ref["gemm"]:
        if r["dtype"] != "bfloat16":  # fp32/tf32/fp16 rows: other peaks; the table is bf16 only
            continue
        m, n, k = r["m"], r["n"], r["k"]
        sweep = r["layer"].split("_")[0] if "layer" in r else "square"  # h4096_tp1_qkv: the h4096 layer shapes
        gemm.append((sweep, m, n, k, efficiency(2.0 * m * n * k, r["ms"] * 1e-3, L, peak)))

    sms = int(ref["sm_count"])
    attention, att_fwd, att_bwd, host_floor = attention_kernel(ref["attention"], L, peak, sms, None)
    backends = sys.argv[3] if len(sys.argv) > 3 else os.path.join(
        repo, "calibrate", "measurements", "h200-attention-backends-2026-11-30.json")
    with open(backends) as f:
        flash_rows = [r for r in json.load(f)["rows"] if r["backend"] == "FLASH_ATTENTION" and not r["alibi_bias"]]
    flash2, fa2_fwd, fa2_bwd, _ = attention_kernel(flash_rows, L, peak, sms, host_floor)

    mem = []
    for r in ref["memory_bound"]:
        mem.append((MEM_KIND[r["op"]], float(r["bytes"]),
                    efficiency(r["bytes"], r["ms"] * 1e-3, L, hbm)))
    for r in ref["d2d_copy"]:
        mem.append(("copy", float(r["bytes"]), efficiency(r["bytes"], r["ms"] * 1e-3, L, hbm)))
    mem.sort(key=lambda x: (x[0], x[1]))

    # (achieved fp8 / fp8 peak) / (achieved bf16 / bf16 peak), mean over the same-shape pairs
    ratios = []
    for r in ref["fp8_gemm"]:
        f = 2.0 * r["m"] * r["n"] * r["k"]
        e8 = f / ((r["fp8_ms"] * 1e-3 - L) * H200_FP8_TFLOPS * 1e12)
        e16 = f / ((r["bf16_ms"] * 1e-3 - L) * peak)
        ratios.append(e8 / e16)
    fp8_ratio = statistics.fmean(ratios)

    out = []
    w = out.append
    w("// generated by scripts/derive_compute_defaults.py from calibrate/measurements/h200-reference.json and")
    w(f"// calibrate/measurements/{os.path.basename(backends)} (FlashAttention-2);")
    w("// do not edit. Regenerate: python3 scripts/derive_compute_defaults.py")
    w("//")
    w(f"// Source: {ref['device']}, {ref['sm_count']} SMs, torch {ref['torch']}, CUDA {ref['cuda']}, "
      f"measured {ref['when']}.")
    w(f"// Peaks used: bf16 {H200_BF16_TFLOPS:g} TFLOP/s, fp8 {H200_FP8_TFLOPS:g} TFLOP/s, HBM "
      f"{H200_HBM_GBPS:g} GB/s (NVIDIA H200 datasheet, dense).")
    w("// Every efficiency = work / ((measured_time - launch_overhead) * peak), so the model reproduces the")
    w("// measured times at the measured points.")
    w("// launch_overhead: smallest zero-size intercept of the memory-bound size sweeps (line through each")
    w("// kind's two smallest sizes); intercepts in us: " +
      ", ".join(f"{k} {v * 1e6:.2f}" for k, v in sorted(intercepts.items())) + ".")
    w("// attention: fwd FLOPs 2*b*hq*s^2*d (causal), fwd+bwd 3.5x that over two kernels.")
    w("// attention model: e = e_max * balance * kv / (kv + c), (e_max, c) least squares in ln(time) over")
    w("// the points (forward on t_fwd - L; backward on t_fwdbwd - max(t_fwd, T) - L jointly with the")
    w("// harness's host floor T, residuals in ln(t_fwdbwd - t_fwd - L)); balance replayed at the")
    w(f"// measured {sms} SMs, block {ATTENTION_BLOCK_Q}, forward {ATTENTION_FWD['ctas_per_sm']} CTAs/SM "
      f"heaviest first, backward {ATTENTION_BWD['ctas_per_sm']} CTA/SM lightest first.")
    w("// fp8_gemm_speedup_efficiency: mean over the fp8/bf16 same-shape pairs of")
    w("// (fp8 achieved / fp8 peak) / (bf16 achieved / bf16 peak); pairs: " +
      ", ".join(f"{x:.3f}" for x in ratios) + ".")
    w("#include \"models/compute/compute_model.hpp\"")
    w("")
    w("namespace cs::models {")
    w("")
    w("namespace {")
    w("")
    # One function per table (the GEMM table one per sweep of the reference: square sizes, then each hidden
    # size's transformer layer shapes), make_default_profile the scalars and the fitted models.
    sweeps = [s for s, _ in itertools.groupby(g[0] for g in gemm)]
    assert len(sweeps) == len(set(sweeps)), "a sweep's GEMM rows are contiguous in the reference"
    gemm_function = {s: "add_square_gemm_points" if s == "square" else f"add_{s}_layer_gemm_points" for s in sweeps}
    for s in sweeps:
        what = "square sizes" if s == "square" else f"transformer layer shapes at hidden size {s[1:]} (qkv, proj, fc1, fc2 per TP)"
        w(f"// {{m, n, k, efficiency vs bf16 peak}}: the reference's {what}")
        w(f"void {gemm_function[s]}(std::vector<GemmPoint>& gemm) {{")
        w("  gemm.insert(gemm.end(), {")
        for sweep, m, n, k, e in gemm:
            if sweep == s:
                w(f"      {{{m}, {n}, {k}, {e:.6f}}},")
        w("  });")
        w("}")
        w("")
    w("// {batch, heads_q, heads_kv, seq, head_dim, fwd_efficiency, fwdbwd_efficiency}")
    w("std::vector<AttentionPoint> attention_points() {")
    w("  return {")
    for b, hq, hkv, s, d, ef, efb in attention:
        w(f"      {{{b}, {hq}, {hkv}, {s}, {d}, {ef:.6f}, {efb:.6f}}},")
    w("  };")
    w("}")
    w("")
    w(f"// FlashAttention-2 (SDPA FLASH_ATTENTION, {os.path.basename(backends)}): its own curve,")
    w("// backward under the host floor of make_default_profile; for GPUs with the H200's mma_sync_fraction (2/3).")
    w("Flash2AttentionModel flash2_model() {")
    w("  Flash2AttentionModel fa2;")
    w("  fa2.mma_sync_fraction = 2.0 / 3.0;")
    for name, cfg, (e, c) in (("fwd", ATTENTION_FWD, fa2_fwd), ("bwd", ATTENTION_BWD, fa2_bwd)):
        w(f"  fa2.{name} = {{{e:.6f}, {c:.3f}, {cfg['ctas_per_sm']}, "
          f"{'true' if cfg['heavy_first'] else 'false'}}};  // e_max, half_kv, ctas_per_sm, heavy_first")
    w("  fa2.points = {")
    for b, hq, hkv, s, d, ef, efb in flash2:
        w(f"      {{{b}, {hq}, {hkv}, {s}, {d}, {ef:.6f}, {efb:.6f}}},")
    w("  };")
    w("  return fa2;")
    w("}")
    w("")
    w("// {kind, bytes read + written, efficiency vs HBM peak}: a line per kind, its sizes in order")
    w("std::vector<MemBoundPoint> memory_bound_points() {")
    w("  return {")
    for k in sorted({kind for kind, _, _ in mem}, key=[kind for kind, _, _ in mem].index):
        w("      " + " ".join(f"{{MemOpKind::{kind}, {b:.0f}.0, {e:.6f}}}," for kind, b, e in mem if kind == k))
    w("  };")
    w("}")
    w("")
    w("ComputeProfile make_default_profile() {")
    w("  ComputeProfile p;")
    w(f"  p.source = \"default: {ref['device']} reference measurements (calibrate/measurements/h200-reference.json)\";")
    w(f"  p.sm_count = {int(ref['sm_count'])};")
    w("  p.matmul_ceiling_fraction = find_gpu(\"H200\")->matmul_ceiling_fraction;  // the measured GPU's")
    w("  p.peak_tflops_bf16 = find_gpu(\"H200\")->peak_tflops_bf16;")
    w(f"  p.launch_overhead_us = {L * 1e6:.4f};")
    w(f"  p.fp8_gemm_speedup_efficiency = {fp8_ratio:.6f};")
    for s in sweeps:
        w(f"  {gemm_function[s]}(p.gemm);")
    w(f"  p.attention_block_q = {ATTENTION_BLOCK_Q};")
    for name, cfg, (e, c) in (("fwd", ATTENTION_FWD, att_fwd), ("bwd", ATTENTION_BWD, att_bwd)):
        w(f"  p.attention_{name} = {{{e:.6f}, {c:.3f}, {cfg['ctas_per_sm']}, "
          f"{'true' if cfg['heavy_first'] else 'false'}}};  // e_max, half_kv, ctas_per_sm, heavy_first")
    w(f"  p.attention_host_floor_us = {host_floor * 1e6:.3f};  // forward+backward harness, validation only")
    w("  p.attention = attention_points();")
    w("  p.attention_flash2 = flash2_model();")
    w("  p.memory_bound = memory_bound_points();")
    w("  return p;")
    w("}")
    w("")
    w("}  // namespace")
    w("")
    w("const ComputeProfile& default_compute_profile() {")
    w("  static const ComputeProfile profile = make_default_profile();  // immutable after first use")
    w("  return profile;")
    w("}")
    w("")
    w("}  // namespace cs::models")
    text = "\n".join(out) + "\n"
    tmp = dst + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, dst)
    print(f"wrote {dst}: {len(gemm)} gemm, {len(attention)} attention, {len(mem)} memory-bound points, "
          f"launch {L * 1e6:.2f} us, fp8 ratio {fp8_ratio:.3f}, attention fwd e_max {att_fwd[0]:.4f} "
          f"c {att_fwd[1]:.1f}, bwd e_max {att_bwd[0]:.4f} c {att_bwd[1]:.1f} host floor {host_floor * 1e6:.1f} us; "
          f"flash2 fwd e_max {fa2_fwd[0]:.4f} c {fa2_fwd[1]:.1f}, bwd e_max {fa2_bwd[0]:.4f} c {fa2_bwd[1]:.1f}")


if __name__ == "__main__":
    main()
