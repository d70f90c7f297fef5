#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

#include "models/compute/compute_model.hpp"

using namespace cs::models;

namespace {

const GpuSpec& gpu(const char* name) {
  const GpuSpec* g = find_gpu(name);
  REQUIRE(g != nullptr);
  return *g;
}

Op gemm_op(std::int64_t m, std::int64_t n, std::int64_t k, Dtype d = Dtype::bf16) {
  Op op;
  op.kind = OpKind::gemm;
  op.dtype = d;
  op.gemm = {m, n, k};
  op.flops = 2.0 * double(m) * double(n) * double(k);
  op.bytes = 0;  // math term only unless a test says otherwise
  return op;
}

Op mem_op(MemOpKind kind, double bytes) {
  Op op;
  op.kind = OpKind::memory_bound;
  op.mem_kind = kind;
  op.bytes = bytes;
  return op;
}

// Causal SDPA forward FLOPs, the convention of compute_model.hpp: 2*b*hq*s^2*d.
double causal_fwd_flops(const AttentionShape& a) {
  return 2.0 * double(a.batch) * double(a.heads_q) * double(a.seq_q) * double(a.seq_kv) *
         double(a.head_dim);
}

double launch_s() { return default_compute_profile().launch_overhead_us * 1e-6; }

// The best efficiency measured points hold for a pass (the backward's from forward and forward+backward).
double best_measured(const std::vector<AttentionPoint>& points, bool bwd) {
  double best = 0;
  for (const auto& pt : points)
    best = std::max(best, bwd ? 2.5 / (3.5 / pt.fwdbwd_efficiency - 1.0 / pt.fwd_efficiency) : pt.fwd_efficiency);
  return best;
}

}  // namespace

TEST_CASE("compute: the default profile is the H200 reference, every efficiency a fraction", "[models]") {
  const ComputeProfile& p = default_compute_profile();
  CHECK(p.sm_count == 132);
  CHECK(p.gemm.size() == 150);  // the bf16 rows of the sweep
  CHECK(p.attention.size() == 7);
  CHECK(p.memory_bound.size() == 12);
  // launch overhead: the d2d copy's zero-size intercept (scripts/derive_compute_defaults.py)
  CHECK(p.launch_overhead_us == Approx(8.17).margin(0.05));
  CHECK(p.fp8_gemm_speedup_efficiency == Approx(0.931).margin(0.002));
  for (const auto& g : p.gemm) CHECK((g.efficiency > 0 && g.efficiency <= 0.95));
  for (const auto& a : p.attention) CHECK((a.fwd_efficiency > 0 && a.fwdbwd_efficiency <= 0.95));
  for (const auto& m : p.memory_bound) CHECK((m.efficiency > 0 && m.efficiency <= 0.95));
}

TEST_CASE("compute: measured H200 GEMMs reproduce their measured times", "[models]") {
  // Straight from calibrate/measurements/h200-reference.json (gemm, bfloat16, each shape measured once).
  // The profile stores e = 2mnk / ((t - L) * 989e12), and op_time_s = L + 2mnk / (e * 989e12) = t.
  const GpuSpec& h200 = gpu("H200");
  struct Case { std::int64_t m, n, k; double ms; };
  for (Case c : {Case{2048, 28672, 4096, 0.7456960082054138}, Case{8192, 28672, 4096, 2.596959948539734},
                 Case{4096, 4096, 4096, 0.20527999848127365}, Case{512, 512, 512, 0.0416640006005764}}) {
    INFO(c.m << "x" << c.n << "x" << c.k);
    CHECK(op_time_s(gemm_op(c.m, c.n, c.k), h200, default_compute_profile()) ==
          Approx(c.ms * 1e-3).epsilon(0.03));
  }
}

TEST_CASE("compute: GEMM efficiency grows with size", "[models]") {
  // Measured: 512^3 ~1%, 1024^3 ~7%, 2048^3 ~50%, 4096^3 ~70%, 8192^3 ~70% of bf16 peak.
  const GpuSpec& h200 = gpu("H200");
  const auto& p = default_compute_profile();
  auto e = [&](std::int64_t s) { return gemm_efficiency({s, s, s}, h200, p); };
  CHECK(e(8192) > e(512));
  CHECK(e(4096) > e(1024));
  CHECK(e(2048) > e(1024));
  CHECK(e(1024) > e(512));
  // between measured cubes the interpolation stays between its neighbours' range
  CHECK(e(3000) > e(1024));
  CHECK(e(3000) < 0.95);
}

TEST_CASE("compute: wave quantization, one tile more than the SMs costs a second wave", "[models]") {
  // H200: 132 SMs, 128x128 tiles. m = 128, n = 128*132 -> 132 tiles, one full wave (q = 1);
  // n = 128*133 -> 133 tiles, two waves, q = 133/264. The two shapes are 0.75% apart in n, so the
  // interpolated intrinsic efficiency is the same to well under 1%, and the efficiency ratio is the
  // quantization ratio 133/264 = 0.504: per FLOP the 133-tile GEMM is ~2x slower.
  const GpuSpec& h200 = gpu("H200");
  const auto& p = default_compute_profile();
  const double e132 = gemm_efficiency({128, 128 * 132, 4096}, h200, p);
  const double e133 = gemm_efficiency({128, 128 * 133, 4096}, h200, p);
  CHECK(e133 / e132 == Approx(133.0 / 264.0).epsilon(0.01));
  const double t132 = op_time_s(gemm_op(128, 128 * 132, 4096), h200, p) - launch_s();
  const double t133 = op_time_s(gemm_op(128, 128 * 133, 4096), h200, p) - launch_s();
  CHECK(t133 / (133.0) > 1.9 * t132 / 132.0);  // per FLOP (FLOPs proportional to tiles)
}

TEST_CASE("compute: a big GEMM carries from H200 to A100 by the ratio of peaks, ceilings and SM rates", "[models]") {
  // m = 128*66, n = 128*54: 66*54 = 3564 tiles = 27 waves of 132 (H200) = 33 waves of 108 (A100), so
  // both GPUs see q = 1 and the H200's efficiency e_H is the intrinsic one. compute_model.hpp carries
  // it with the ceilings (0.803 -> 0.859, gpu_catalog.cpp) and the ratio of bf16 rates per SM,
  // r = (312 / 108) / (989 / 132) = 0.3856: e_A = 0.859 / (1 + (0.803 / e_H - 1) r). Math time then
  // scales by (989 / 312) x (e_H / e_A).
  const auto& p = default_compute_profile();
  const Op op = gemm_op(128 * 66, 128 * 54, 8192);
  const double e_h = gemm_efficiency(op.gemm, gpu("H200"), p);
  const double r = (312.0 / 108.0) / (989.0 / 132.0);
  const double e_a = 0.859 / (1.0 + (0.803 / e_h - 1.0) * r);
  CHECK(gemm_efficiency(op.gemm, gpu("A100-80GB"), p) == Approx(e_a).epsilon(1e-9));
  const double th = op_time_s(op, gpu("H200"), p) - launch_s();
  const double ta = op_time_s(op, gpu("A100-80GB"), p) - launch_s();
  CHECK(ta / th == Approx(989.0 / 312.0 * e_h / e_a).epsilon(0.001));
  // The A100 gains more than the ceiling ratio alone (0.859 / 0.803) wherever the H200 is below its
  // ceiling, and never passes its own ceiling.
  CHECK(e_a > e_h * 0.859 / 0.803);
  CHECK(e_a < 0.859);
}

TEST_CASE("compute: carrying a GEMM efficiency between GPUs, closed forms", "[models]") {
  // e_t = c_t / (1 + (c_p / e_p - 1) r): r = 1 is the ceiling ratio; e_p at the ceiling carries to the
  // target's ceiling for every r; r -> 0 (per-tile overheads vanish) reaches the ceiling; a faster SM
  // (r > 1) loses more of it, monotonically.
  for (double e : {0.2, 0.5, 0.7, 0.803}) {
    INFO("e_p = " << e);
    CHECK(gemm_efficiency_carried(e, 0.803, 0.859, 1.0) == Approx(e * 0.859 / 0.803).epsilon(1e-12));
    CHECK(gemm_efficiency_carried(e, 0.803, 0.859, 1e-9) == Approx(0.859).epsilon(1e-6));
    CHECK(gemm_efficiency_carried(e, 0.803, 0.776, 2.0) <= gemm_efficiency_carried(e, 0.803, 0.776, 1.5));
  }
  for (double r : {0.3, 1.0, 2.0}) CHECK(gemm_efficiency_carried(0.803, 0.803, 0.859, r) == Approx(0.859).epsilon(1e-12));
  // Half the ceiling with r = 0.5: 1 / (1 + 1 x 0.5) = 2/3 of the target's ceiling.
  CHECK(gemm_efficiency_carried(0.4015, 0.803, 0.9, 0.5) == Approx(0.6).epsilon(1e-12));
  // The catalog: H100 and H200 share the SM rate (r = 1); the A100's SM is 0.386x, the B200's 2.03x.
  const auto& p = default_compute_profile();
  CHECK(tensor_rate_ratio(gpu("H100-SXM"), p) == Approx(1.0).epsilon(1e-12));
  CHECK(tensor_rate_ratio(gpu("A100-80GB"), p) == Approx((312.0 / 108) / (989.0 / 132)).epsilon(1e-12));
  CHECK(tensor_rate_ratio(gpu("B200"), p) == Approx((2250.0 / 148) / (989.0 / 132)).epsilon(1e-3));
  ComputeProfile unknown = p;
  unknown.peak_tflops_bf16 = 0;
  CHECK(tensor_rate_ratio(gpu("A100-80GB"), unknown) == 1.0);
}

TEST_CASE("compute: shapes far outside the sweep get low but positive efficiency", "[models]") {
  const GpuSpec& h200 = gpu("H200");
  const auto& p = default_compute_profile();
  double best = 0;
  for (const auto& g : p.gemm) best = std::max(best, g.efficiency);
  const double big = gemm_efficiency({4096, 4096, 4096}, h200, p);
  for (std::int64_t m : {1, 16, 64}) {
    INFO("m = " << m);
    const double e = gemm_efficiency({m, 4096, 4096}, h200, p);
    CHECK(e > 0);
    CHECK(e < big / 2);
  }
  for (std::int64_t k : {1, 16, 64}) {
    INFO("k = " << k);
    const double e = gemm_efficiency({4096, 4096, k}, h200, p);
    CHECK(e > 0);
    CHECK(e < big / 2);
  }
  for (GemmShape s : {GemmShape{1, 1, 1}, GemmShape{65536, 65536, 65536}, GemmShape{1, 131072, 64},
                      GemmShape{131072, 7, 3}}) {
    for (const auto& n : gpu_names()) {
      // Never above the best measured point, carried to that GPU by the ratio of the ceilings.
      const GpuSpec& g = *find_gpu(n);
      const double cap = g.matmul_ceiling_fraction > 0 ? best * g.matmul_ceiling_fraction / p.matmul_ceiling_fraction : best;
      const double e = gemm_efficiency(s, g, p);
      CHECK(e > 0);
      CHECK(e <= cap * (1 + 1e-12));
    }
  }
  // A GEMV (m = 1) is bound by its weight bytes: 4096x4096 bf16 = 32 MiB at the copy efficiency.
  Op gemv = gemm_op(1, 4096, 4096);
  gemv.bytes = 2.0 * (4096.0 * 4096 + 4096 + 4096);
  const double t = op_time_s(gemv, h200, p);
  const double bw = memory_bound_efficiency(MemOpKind::copy, gemv.bytes, p) * 4.8e12;
  CHECK(t == Approx(launch_s() + gemv.bytes / bw).epsilon(1e-9));
}

TEST_CASE("compute: leave-one-out over the H200 GEMM sweep", "[models]") {
  // Predict each measured bf16 GEMM from the table without it; the measured time is L + F/(e P) by
  // construction of the table. Required by calibration validation: MAPE < 8%. Strict variant also
  // removes the repeated measurements of the same shape.
  const GpuSpec& h200 = gpu("H200");
  const ComputeProfile& full = default_compute_profile();
  const double peak = 989e12, L = launch_s();
  for (bool strict : {false, true}) {
    double sum = 0;
    for (std::size_t i = 0; i < full.gemm.size(); ++i) {
      const GemmPoint& x = full.gemm[i];
      ComputeProfile loo = full;
      loo.gemm.clear();
      for (std::size_t j = 0; j < full.gemm.size(); ++j) {
        const GemmPoint& y = full.gemm[j];
        const bool same_shape = y.m == x.m && y.n == x.n && y.k == x.k;
        if (j != i && !(strict && same_shape)) loo.gemm.push_back(y);
      }
      const double flops = 2.0 * double(x.m) * double(x.n) * double(x.k);
      const double measured = L + flops / (x.efficiency * peak);
      const double predicted = op_time_s(gemm_op(x.m, x.n, x.k), h200, loo);
      sum += std::abs(predicted - measured) / measured;
    }
    const double mape = sum / double(full.gemm.size());
    INFO("strict = " << strict << ", MAPE = " << mape);
    CHECK(mape < 0.08);
  }
}

TEST_CASE("compute: fp8 GEMMs are faster where the GPU has fp8, identical where not", "[models]") {
  const auto& p = default_compute_profile();
  const Op bf = gemm_op(8192, 8192, 8192, Dtype::bf16);
  const Op f8 = gemm_op(8192, 8192, 8192, Dtype::fp8);
  for (const char* name : {"H100-SXM", "H200", "B200", "L40S"}) {
    INFO(name);
    const GpuSpec& g = gpu(name);
    // math time ratio = (fp8 peak / bf16 peak) * fp8_gemm_speedup_efficiency = ~2 * 0.931
    const double ratio = (op_time_s(bf, g, p) - launch_s()) / (op_time_s(f8, g, p) - launch_s());
    CHECK(ratio == Approx(g.peak_tflops_fp8 / g.peak_tflops_bf16 * p.fp8_gemm_speedup_efficiency)
                       .epsilon(1e-9));
    CHECK(ratio > 1.5);
  }
  for (const char* name : {"A100-40GB", "A100-80GB"}) {
    INFO(name);
    CHECK(op_time_s(f8, gpu(name), p) == op_time_s(bf, gpu(name), p));
  }
}

TEST_CASE("compute: fp32 and tf32 GEMMs run against their own peaks", "[models]") {
  // Same shape efficiency, different peak: t - L scales by peak_bf16 / peak_dtype.
  const GpuSpec& h200 = gpu("H200");
  const auto& p = default_compute_profile();
  const double tb = op_time_s(gemm_op(8192, 8192, 8192), h200, p) - launch_s();
  const double t32 = op_time_s(gemm_op(8192, 8192, 8192, Dtype::fp32), h200, p) - launch_s();
  const double tt = op_time_s(gemm_op(8192, 8192, 8192, Dtype::tf32), h200, p) - launch_s();
  const double tf16 = op_time_s(gemm_op(8192, 8192, 8192, Dtype::fp16), h200, p) - launch_s();
  CHECK(t32 / tb == Approx(989.0 / 67.0));
  CHECK(tt / tb == Approx(989.0 / 494.5));
  CHECK(tf16 == tb);
}

TEST_CASE("compute: memory-bound op time is L + bytes / (efficiency * HBM bandwidth)", "[models]") {
  const GpuSpec& h200 = gpu("H200");
  const auto& p = default_compute_profile();
  // rms_norm measured at 64 MiB (e0) and 512 MiB (e1); 200 MB interpolates linearly in ln(bytes).
  double e0 = 0, e1 = 0;
  for (const auto& m : p.memory_bound) {
    if (m.kind == MemOpKind::norm && m.bytes == 67108864.0) e0 = m.efficiency;
    if (m.kind == MemOpKind::norm && m.bytes == 536870912.0) e1 = m.efficiency;
  }
  REQUIRE(e0 > 0);
  REQUIRE(e1 > 0);
  const double bytes = 200e6;
  const double e = e0 + (e1 - e0) * std::log(bytes / 67108864.0) / std::log(8.0);
  CHECK(memory_bound_efficiency(MemOpKind::norm, bytes, p) == Approx(e).epsilon(1e-12));
  CHECK(op_time_s(mem_op(MemOpKind::norm, bytes), h200, p) ==
        Approx(launch_s() + bytes / (e * 4.8e12)).epsilon(1e-12));
  // The same kernel on the A100-80GB: same fraction of a 2.039 TB/s peak.
  CHECK(op_time_s(mem_op(MemOpKind::norm, bytes), gpu("A100-80GB"), p) ==
        Approx(launch_s() + bytes / (e * 2.039e12)).epsilon(1e-12));
  // Measured: the 768 MiB add took 0.19713599979877472 ms on the H200.
  CHECK(op_time_s(mem_op(MemOpKind::elementwise, 805306368.0), h200, p) ==
        Approx(0.19713599979877472e-3).epsilon(0.001));
  // Measured: the fused AdamW over 256M fp32 params (7 GiB moved) took 2.227407932281494 ms.
  Op adam;
  adam.kind = OpKind::optimizer;
  adam.bytes = 7516192768.0;
  CHECK(op_time_s(adam, h200, p) == Approx(2.227407932281494e-3).epsilon(0.001));
  // A tiny kernel is launch bound.
  CHECK(op_time_s(mem_op(MemOpKind::elementwise, 4096), h200, p) == Approx(launch_s()).epsilon(0.01));
  // Kinds without a measurement take their analogue.
  CHECK(memory_bound_efficiency(MemOpKind::softmax, bytes, p) ==
        memory_bound_efficiency(MemOpKind::norm, bytes, p));
  CHECK(memory_bound_efficiency(MemOpKind::cross_entropy, bytes, p) ==
        memory_bound_efficiency(MemOpKind::norm, bytes, p));
  CHECK(memory_bound_efficiency(MemOpKind::embedding, bytes, p) ==
        memory_bound_efficiency(MemOpKind::elementwise, bytes, p));
  // Beyond the largest point the curve is flat.
  CHECK(memory_bound_efficiency(MemOpKind::copy, 64e9, p) ==
        memory_bound_efficiency(MemOpKind::copy, 8589934592.0, p));
}

TEST_CASE("compute: attention dispatch balance, worked by hand", "[models]") {
  // 1 head, seq 512 in blocks of 128: 4 causal CTAs doing 1, 2, 3, 4 KV blocks; 1 SM with 2 slots.
  const AttentionShape one_head{1, 1, 1, 512, 512, 128, true};
  // Lightest first: A takes 1, B takes 2; A frees at 1 and takes 3 (ends 4); B frees at 2 and takes 4
  // (ends 6). Makespan 6, work 10: balance 10 / (2 * 6).
  CHECK(attention_dispatch_balance(one_head, 1, 2, 128, false) == Approx(10.0 / 12.0).epsilon(1e-12));
  // Heaviest first: A 4, B 3; B frees at 3 and takes 2 (ends 5), A frees at 4 and takes 1 (ends 5).
  CHECK(attention_dispatch_balance(one_head, 1, 2, 128, true) == Approx(1.0).epsilon(1e-12));
  // Non-causal: 4 equal CTAs on 3 slots run in 2 waves: 4 / (3 * 2).
  AttentionShape full = one_head;
  full.causal = false;
  CHECK(attention_dispatch_balance(full, 3, 1, 128, false) == Approx(4.0 / 6.0).epsilon(1e-12));
  // One slot: nothing idles.
  CHECK(attention_dispatch_balance(one_head, 1, 1, 128, false) == Approx(1.0).epsilon(1e-12));
  // Many (batch, head) groups fill the slots evenly: past the exact-replay range (64 CTAs per slot,
  // here 2 x 2048 groups x 64 blocks on 264 slots) the balance is near 1 and never above.
  const double big = attention_dispatch_balance({2, 2048, 2048, 8192, 8192, 128, true}, 132, 2, 128, true);
  CHECK(big > 0.99);
  CHECK(big <= 1.0);
  // Mean KV length: half the keys when causal.
  CHECK(attention_mean_kv(one_head) == 256);
  CHECK(attention_mean_kv(full) == 512);
}

TEST_CASE("compute: attention efficiency is e_max * balance * kv / (kv + c)", "[models]") {
  const GpuSpec& h200 = gpu("H200");
  const auto& p = default_compute_profile();
  const AttentionShape a{1, 32, 8, 8192, 8192, 128, true};
  for (bool bwd : {false, true}) {
    const AttentionPassModel& m = bwd ? p.attention_bwd : p.attention_fwd;
    const double bal = attention_dispatch_balance(a, h200.sm_count, m.ctas_per_sm, p.attention_block_q, m.heavy_first);
    // The formula, capped at the best efficiency the table measured for the pass (never extrapolated
    // above a measurement): this shape is the table's longest, where the cap and the formula meet within
    // 4% (the backward's cap, its own measurement, binds: the fit leaves it 3.4% below the formula).
    const double best = best_measured(p.attention, bwd);
    const double formula = m.peak_efficiency * bal * 4096.0 / (4096.0 + m.half_kv);
    CHECK(attention_efficiency(a, bwd, h200, p) == Approx(std::min(formula, best)).epsilon(1e-12));
    CHECK(attention_efficiency(a, bwd, h200, p) == Approx(formula).epsilon(0.04));
  }
  // Fitted on the H200 sweep (scripts/derive_compute_defaults.py): a forward near 72% of peak at
  // long KV; the backward fitted jointly with the harness's host floor (~0.31 ms).
  CHECK(p.attention_fwd.peak_efficiency == Approx(0.7212).margin(1e-3));
  CHECK(p.attention_fwd.half_kv == Approx(462.7).margin(1.0));
  CHECK(p.attention_bwd.peak_efficiency == Approx(0.7182).margin(1e-3));
  CHECK(p.attention_bwd.half_kv == Approx(984.8).margin(1.0));
  CHECK(p.attention_host_floor_us == Approx(311.3).margin(1.0));
  // The SM count is the target GPU's: the same shape on a GPU with fewer SMs balances differently.
  GpuSpec fewer = h200;
  fewer.sm_count = 108;
  CHECK(attention_efficiency(a, false, fewer, p) != attention_efficiency(a, false, h200, p));
  // A context-parallel chunk (s_q = s/cp against all s_kv keys) and GQA work.
  const AttentionShape cp_chunk{1, 32, 8, 2048, 8192, 128, true};
  CHECK(attention_efficiency(cp_chunk, false, h200, p) > 0);
  CHECK(attention_efficiency(cp_chunk, true, h200, p) > 0);
}

TEST_CASE("compute: measured attention is predicted within a few percent", "[models]") {
  // calibrate/measurements/h200-reference.json, attention b=1 hq=32 hkv=8 s=8192 d=128:
  // fwd 0.9774239957332611 ms, fwd+bwd 3.6661438941955566 ms. The fitted model is not an interpolation,
  // so a measured point is not reproduced exactly; at this shape the residuals are about +1% (forward)
  // and 0% (backward).
  const GpuSpec& h200 = gpu("H200");
  const auto& p = default_compute_profile();
  Op fwd;
  fwd.kind = OpKind::attention_fwd;
  fwd.attention = {1, 32, 8, 8192, 8192, 128, true};
  fwd.flops = causal_fwd_flops(fwd.attention);
  Op bwd = fwd;
  bwd.kind = OpKind::attention_bwd;
  bwd.flops = 2.5 * fwd.flops;
  const double tf = op_time_s(fwd, h200, p);
  const double tb = op_time_s(bwd, h200, p);
  CHECK(tf == Approx(0.9774239957332611e-3).epsilon(0.03));
  CHECK(tf + tb == Approx(3.6661438941955566e-3).epsilon(0.03));
  // Longer sequences are more efficient (measured 8192 vs 4096 at 32 heads).
  const double e8k = attention_efficiency({1, 32, 8, 8192, 8192, 128, true}, false, h200, p);
  const double e4k = attention_efficiency({1, 32, 8, 4096, 4096, 128, true}, false, h200, p);
  CHECK(e8k > e4k);
  // Short sequences and few heads fall off, never to zero: one 128-row CTA on 264 slots.
  const double tiny = attention_efficiency({1, 1, 1, 128, 128, 128, true}, true, h200, p);
  CHECK(tiny > 0);
  CHECK(tiny < e4k / 10);
}

TEST_CASE("compute: a profile with empty tables falls back to the default tables", "[models]") {
  ComputeProfile empty;
  empty.launch_overhead_us = default_compute_profile().launch_overhead_us;
  empty.fp8_gemm_speedup_efficiency = default_compute_profile().fp8_gemm_speedup_efficiency;
  const GpuSpec& h200 = gpu("H200");
  const Op op = gemm_op(4096, 4096, 4096);
  CHECK(op_time_s(op, h200, empty) == op_time_s(op, h200, default_compute_profile()));
  CHECK(op_time_s(mem_op(MemOpKind::norm, 1e8), h200, empty) ==
        op_time_s(mem_op(MemOpKind::norm, 1e8), h200, default_compute_profile()));
}

TEST_CASE("compute: without an FA2 fit, FlashAttention-2 reaches the mma.sync share of the native kernel on Hopper only", "[models]") {
  // op.hpp (AttentionImpl): FA2 is built on mma.sync, which on Hopper tops out at about 2/3 of the tensor
  // peak (FlashAttention-3 paper, sec. 2), while on Ampere it is the native instruction. A profile that
  // measured no FA2 curve of its own gives the same shape exactly 2/3 of the native kernel's efficiency
  // on an H100 and the native efficiency on an A100.
  ComputeProfile p = default_compute_profile();
  p.attention_flash2.reset();
  AttentionShape native{1, 32, 8, 8192, 8192, 128, true};
  AttentionShape fa2 = native;
  fa2.kernel = AttentionImpl::flash2;
  for (bool bwd : {false, true}) {
    const GpuSpec& h100 = gpu("H100-SXM");
    CHECK(attention_efficiency(fa2, bwd, h100, p) == Approx(attention_efficiency(native, bwd, h100, p) * 2.0 / 3.0).epsilon(1e-12));
    const GpuSpec& a100 = gpu("A100-80GB");
    CHECK(attention_efficiency(fa2, bwd, a100, p) == Approx(attention_efficiency(native, bwd, a100, p)).epsilon(1e-12));
  }
}

TEST_CASE("compute: a GEMM table carries to another GPU in the ratio of the matmul ceilings", "[models]") {
  // compute_model.hpp: the default table was measured on an H200 (ceiling 0.803 of peak). A GPU equal to
  // the H200 but for a ceiling 5% higher gets exactly 1.05x the efficiency at every shape below the caps
  // (same SM count: the same wave quantization); an unknown ceiling (0) carries the fraction unscaled.
  const auto& p = default_compute_profile();
  REQUIRE(p.matmul_ceiling_fraction == Approx(gpu("H200").matmul_ceiling_fraction));
  GpuSpec higher = gpu("H200");
  higher.matmul_ceiling_fraction = 0.803 * 1.05;
  GpuSpec unknown = gpu("H200");
  unknown.matmul_ceiling_fraction = 0;
  for (const GemmShape s : {GemmShape{4096, 4096, 4096}, GemmShape{8192, 28672, 4096}, GemmShape{2048, 8192, 1024}}) {
    INFO(s.m << "x" << s.n << "x" << s.k);
    const double base = gemm_efficiency(s, gpu("H200"), p);
    CHECK(gemm_efficiency(s, higher, p) == Approx(1.05 * base).epsilon(1e-12));
    CHECK(gemm_efficiency(s, unknown, p) == Approx(base).epsilon(1e-12));
  }
}

TEST_CASE("compute: FlashAttention v1 runs at half of FlashAttention-2 on the same GPU", "[models]") {
  // compute_model.hpp: Dao (FlashAttention-2, 2023) measures FA2 at about 2x FA1 on A100, forward and
  // backward, from FA1's split-K warps, batch x heads parallelism and extra non-matmul FLOPs. So
  // e(flash1) = 0.5 e(flash2) on every GPU and pass; on an A100 that is half the native kernel.
  const auto& p = default_compute_profile();
  AttentionShape fa1{2, 32, 32, 8192, 8192, 128, true, AttentionImpl::flash1};
  AttentionShape fa2 = fa1, native = fa1;
  fa2.kernel = AttentionImpl::flash2;
  native.kernel = AttentionImpl::native;
  for (bool bwd : {false, true})
    for (const char* name : {"A100-80GB", "H100-SXM"}) {
      const GpuSpec& g = gpu(name);
      CHECK(attention_efficiency(fa1, bwd, g, p) == Approx(0.5 * attention_efficiency(fa2, bwd, g, p)).epsilon(1e-12));
    }
  CHECK(attention_efficiency(fa1, false, gpu("A100-80GB"), p) ==
        Approx(0.5 * attention_efficiency(native, false, gpu("A100-80GB"), p)).epsilon(1e-12));
}

TEST_CASE("compute: a measured FA2 curve holds on GPUs with the measured GPU's mma.sync limit", "[models]") {
  // The default profile carries FlashAttention-2 as measured on the H200 (SDPA FLASH_ATTENTION,
  // compute_model.hpp): e = e_max * balance * kv / (kv + c) with its own (e_max, c), capped at its best
  // measured point. At b1 hq32 s16384 (its longest measured shape) the curve is the formula or the cap.
  const auto& p = default_compute_profile();
  REQUIRE(p.attention_flash2);
  const Flash2AttentionModel& m = *p.attention_flash2;
  CHECK(m.mma_sync_fraction == gpu("H200").mma_sync_fraction);
  AttentionShape fa2{1, 32, 32, 16384, 16384, 128, true, AttentionImpl::flash2};
  AttentionShape native = fa2;
  native.kernel = AttentionImpl::native;
  for (bool bwd : {false, true}) {
    const GpuSpec& h100 = gpu("H100-SXM");  // same SM count and mma.sync limit as the H200
    const AttentionPassModel& pass = bwd ? m.bwd : m.fwd;
    const double bal = attention_dispatch_balance(fa2, h100.sm_count, pass.ctas_per_sm, p.attention_block_q, pass.heavy_first);
    const double best = best_measured(m.points, bwd);
    const double formula = pass.peak_efficiency * bal * 8192.0 / (8192.0 + pass.half_kv);
    CHECK(attention_efficiency(fa2, bwd, h100, p) == Approx(std::min(formula, best)).epsilon(1e-12));
    // Measured 0.52-0.58 of cuDNN at d = 128 on the H200: below the 2/3 of the paper constant.
    const double ratio = attention_efficiency(fa2, bwd, h100, p) / attention_efficiency(native, bwd, h100, p);
    CHECK(ratio > 0.45);
    CHECK(ratio < 2.0 / 3.0);
    // On an A100 mma.sync is the full-rate instruction: FA2 is its native kernel, the H200 curve does not carry.
    const GpuSpec& a100 = gpu("A100-80GB");
    CHECK(attention_efficiency(fa2, bwd, a100, p) == Approx(attention_efficiency(native, bwd, a100, p)).epsilon(1e-12));
  }
}

TEST_CASE("compute: a host-issued kernel takes at least the host's issue time, each repeat", "[models]") {
  // Op::host_issued (the essay's "Host-issued kernels"): with the GPU queue empty, kernel i is issued at
  // i h and ends at max(end of kernel i-1, i h) + g. For r kernels all shorter than h the run ends at r h;
  // for kernels all longer than h the host keeps ahead and it ends at h + r g, charged r g (max(g, h) each).
  const GpuSpec& h200 = gpu("H200");
  ComputeProfile p = default_compute_profile();
  p.expert_host_issue_us = 50.0;
  Op small = gemm_op(64, 1024, 1024);  // ~10 us on the H200: issue-bound
  const double g_small = op_time_s(small, h200, p);
  REQUIRE(g_small < 50e-6);
  small.host_issued = true;
  CHECK(op_time_s(small, h200, p) == Approx(50e-6).epsilon(1e-12));
  small.repeat = 8;
  CHECK(op_time_s(small, h200, p) == Approx(8 * 50e-6).epsilon(1e-12));
  Op big = gemm_op(8192, 8192, 8192);  // ~1.3 ms: the host is never behind
  const double g_big = op_time_s(big, h200, p);
  REQUIRE(g_big > 50e-6);
  big.host_issued = true;
  big.repeat = 4;
  CHECK(op_time_s(big, h200, p) == Approx(4 * g_big).epsilon(1e-12));
  // No issue time (a CUDA graph replays the kernels): the GPU time.
  p.expert_host_issue_us = 0;
  small.repeat = 1;
  CHECK(op_time_s(small, h200, p) == Approx(g_small).epsilon(1e-12));
}

TEST_CASE("compute: op_time_key tells apart every field op_time_s reads", "[models]") {
  const Op a = gemm_op(128, 256, 512);
  Op b = a;
  CHECK(op_time_key(a) == op_time_key(b));
  CHECK(OpTimeKeyHash{}(op_time_key(a)) == OpTimeKeyHash{}(op_time_key(b)));
  b.host_issued = true;
  CHECK_FALSE(op_time_key(a) == op_time_key(b));
  b = a;
  b.repeat = 2;
  CHECK_FALSE(op_time_key(a) == op_time_key(b));
  b = a;
  b.bytes = 1;
  CHECK_FALSE(op_time_key(a) == op_time_key(b));
  b = a;
  b.dtype = Dtype::fp8;
  CHECK_FALSE(op_time_key(a) == op_time_key(b));
}
