// GEMM sweep with cuBLASLt: the shapes transformer layers produce plus squares, in bf16, fp16, tf32,
// fp32 and (on GPUs with fp8 tensor cores, compute capability 8.9+) fp8 e4m3.
//
// C[m,n] = A[m,k] B[k,n], FLOPs 2mnk. cuBLASLt is column-major; every dtype runs in the "TN" layout fp8
// requires (A stored k x m and transposed, B stored k x n, C m x n), so all dtypes use the same kernels'
// layout. The algorithm is cuBLASLt's first heuristic choice with a 64 MiB workspace, as frameworks get
// it. Inputs: random non-zero values, rotated over three buffers when they are small enough that the
// 50 MB L2 could otherwise keep them resident between timed runs.
#include <cublasLt.h>

#include <set>
#include <tuple>

#include "bench.hpp"

namespace csbench {

namespace {

#define CSB_LT(call) CSB_CALL((call), #call, CUBLAS_STATUS_SUCCESS, cublasLtGetStatusString)

enum class Dt { bf16, fp16, tf32, fp32, fp8 };

const char* dt_name(Dt d) {
  switch (d) {
    case Dt::bf16: return "bfloat16";
    case Dt::fp16: return "float16";
    case Dt::tf32: return "tf32";
    case Dt::fp32: return "float32";
    case Dt::fp8: return "fp8_e4m3";
  }
  return "?";
}

struct Types {
  cudaDataType_t ab, cd;
  cublasComputeType_t compute;
  ElemType ab_elem, cd_elem;
};

Types types_of(Dt d) {
  switch (d) {
    case Dt::bf16: return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, ElemType::bf16, ElemType::bf16};
    case Dt::fp16: return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, ElemType::f16, ElemType::f16};
    case Dt::tf32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, ElemType::f32, ElemType::f32};
    case Dt::fp32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, ElemType::f32, ElemType::f32};
    case Dt::fp8: return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, ElemType::fp8e4m3, ElemType::bf16};
  }
  return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, ElemType::bf16, ElemType::bf16};
}

struct Lt {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = std::size_t(64) << 20;
  cudaStream_t stream = nullptr;
};

struct GemmResult {
  bool ok = false;
  Sample sample;
  std::string why;  // when !ok
};

GemmResult time_gemm(Lt& lt, std::int64_t m, std::int64_t n, std::int64_t k, Dt dt, const TimingOptions& timing) {
  const Types t = types_of(dt);
  const std::size_t a_elems = std::size_t(m) * std::size_t(k), b_elems = std::size_t(k) * std::size_t(n);
  const std::size_t c_elems = std::size_t(m) * std::size_t(n);
  const std::size_t ab_bytes = (a_elems + b_elems) * elem_size(t.ab_elem);
  const int sets = ab_bytes * 3 < (std::size_t(1) << 30) ? 3 : 1;

  std::vector<void*> a(sets), b(sets);
  void* c = nullptr;
  for (int i = 0; i < sets; ++i) {
    CSB_CUDA(cudaMalloc(&a[i], a_elems * elem_size(t.ab_elem)));
    CSB_CUDA(cudaMalloc(&b[i], b_elems * elem_size(t.ab_elem)));
    fill_random(a[i], a_elems, t.ab_elem, 11u + i, 1.0f, lt.stream);
    fill_random(b[i], b_elems, t.ab_elem, 23u + i, 1.0f, lt.stream);
  }
  CSB_CUDA(cudaMalloc(&c, c_elems * elem_size(t.cd_elem)));

  cublasLtMatmulDesc_t desc;
  CSB_LT(cublasLtMatmulDescCreate(&desc, t.compute, CUDA_R_32F));
  const cublasOperation_t op_t = CUBLAS_OP_T, op_n = CUBLAS_OP_N;
  CSB_LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_t, sizeof op_t));
  CSB_LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_n, sizeof op_n));
  cublasLtMatrixLayout_t la, lb, lc;
  CSB_LT(cublasLtMatrixLayoutCreate(&la, t.ab, std::uint64_t(k), std::uint64_t(m), k));
  CSB_LT(cublasLtMatrixLayoutCreate(&lb, t.ab, std::uint64_t(k), std::uint64_t(n), k));
  CSB_LT(cublasLtMatrixLayoutCreate(&lc, t.cd, std::uint64_t(m), std::uint64_t(n), m));
  cublasLtMatmulPreference_t pref;
  CSB_LT(cublasLtMatmulPreferenceCreate(&pref));
  CSB_LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &lt.workspace_bytes,
                                              sizeof lt.workspace_bytes));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt.handle, desc, la, lb, lc, lc, pref, 1, &heuristic, &found);

  GemmResult result;
  if (hs != CUBLAS_STATUS_SUCCESS || found == 0) {
    result.why = std::string("no cuBLASLt algorithm (") + cublasLtGetStatusString(hs) + ")";
  } else {
    const float alpha = 1.0f, beta = 0.0f;
    int turn = 0;
    result.sample = time_on_stream(lt.stream, timing, 1, [&] {
      const int s = turn++ % sets;
      CSB_LT(cublasLtMatmul(lt.handle, desc, &alpha, a[s], la, b[s], lb, &beta, c, lc, c, lc, &heuristic.algo,
                            lt.workspace, lt.workspace_bytes, lt.stream));
    });
    result.ok = true;
  }
  CSB_LT(cublasLtMatmulPreferenceDestroy(pref));
  CSB_LT(cublasLtMatrixLayoutDestroy(la));
  CSB_LT(cublasLtMatrixLayoutDestroy(lb));
  CSB_LT(cublasLtMatrixLayoutDestroy(lc));
  CSB_LT(cublasLtMatmulDescDestroy(desc));
  CSB_CUDA(cudaStreamSynchronize(lt.stream));
  for (int i = 0; i < sets; ++i) {
    CSB_CUDA(cudaFree(a[i]));
    CSB_CUDA(cudaFree(b[i]));
  }
  CSB_CUDA(cudaFree(c));
  return result;
}

void write_sample(Json& j, const Sample& s) {
  j.field("ms", s.median_s * 1e3);
  j.field("min_ms", s.min_s * 1e3);
  j.field("max_ms", s.max_s * 1e3);
}

bool fits(std::int64_t m, std::int64_t n, std::int64_t k, Dt dt) {
  // Leave room: A + B + C (three A/B sets only when small) under ~60% of free memory.
  std::size_t free_b = 0, total_b = 0;
  CSB_CUDA(cudaMemGetInfo(&free_b, &total_b));
  const Types t = types_of(dt);
  const double need = double(m * k + k * n) * double(elem_size(t.ab_elem)) + double(m * n) * double(elem_size(t.cd_elem));
  return need < 0.6 * double(free_b);
}

}  // namespace

std::vector<GemmShape> transformer_gemm_shapes(bool quick) {
  struct Preset {
    const char* name;
    std::int64_t h, heads, kv_heads, head_dim, ffn;
    bool gated;
  };
  const std::vector<Preset> presets = quick ? std::vector<Preset>{{"llama3-8b", 4096, 32, 8, 128, 14336, true},
                                                                  {"llama3-70b", 8192, 64, 8, 128, 28672, true}}
                                            : std::vector<Preset>{{"llama3-8b", 4096, 32, 8, 128, 14336, true},
                                                                  {"llama3-70b", 8192, 64, 8, 128, 28672, true},
                                                                  {"gpt3-175b", 12288, 96, 96, 128, 49152, false}};
  const std::vector<std::int64_t> tps = quick ? std::vector<std::int64_t>{1, 8} : std::vector<std::int64_t>{1, 2, 4, 8};
  const std::vector<std::int64_t> tokens =
      quick ? std::vector<std::int64_t>{4096} : std::vector<std::int64_t>{1024, 4096, 16384, 32768};
  std::vector<GemmShape> out;
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> seen;
  auto add = [&](std::int64_t m, std::int64_t n, std::int64_t k, const std::string& origin) {
    if (m <= 0 || n <= 0 || k <= 0) return;
    if (seen.insert({m, n, k}).second) out.push_back({m, n, k, origin});
  };
  for (std::int64_t s = 256; s <= (quick ? 8192 : 16384); s *= 2) add(s, s, s, "square");
  for (const auto& p : presets) {
    for (auto tp : tps) {
      for (auto T : tokens) {
        struct G {
          const char* name;
          std::int64_t n, k;
        };
        const G gemms[] = {{"qkv", (p.heads + 2 * p.kv_heads) * p.head_dim / tp, p.h},
                           {"proj", p.h, p.heads * p.head_dim / tp},
                           {"fc1", p.ffn * (p.gated ? 2 : 1) / tp, p.h},
                           {"fc2", p.h, p.ffn / tp}};
        for (const auto& g : gemms) {
          const std::string tag = std::string(p.name) + " tp" + std::to_string(tp) + " T" + std::to_string(T) + " " + g.name;
          add(T, g.n, g.k, tag + " fwd");
          add(T, g.k, g.n, tag + " dgrad");
          add(g.k, g.n, T, tag + " wgrad");
        }
      }
    }
  }
  return out;
}

void run_gemm_sweep(Json& json, const Config& cfg) {
  Lt lt;
  CSB_CUDA(cudaSetDevice(cfg.device));
  CSB_CUDA(cudaStreamCreateWithFlags(&lt.stream, cudaStreamNonBlocking));
  CSB_LT(cublasLtCreate(&lt.handle));
  CSB_CUDA(cudaMalloc(&lt.workspace, lt.workspace_bytes));
  int major = 0, minor = 0;
  CSB_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, cfg.device));
  CSB_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, cfg.device));
  const bool has_fp8 = major * 10 + minor >= 89;
  const auto shapes = transformer_gemm_shapes(cfg.quick);

  json.key("gemm");
  json.begin_array();
  auto emit = [&](const GemmShape& s, Dt dt) {
    if (!fits(s.m, s.n, s.k, dt)) return;
    const GemmResult r = time_gemm(lt, s.m, s.n, s.k, dt, cfg.timing);
    json.begin_object();
    json.field("m", static_cast<long long>(s.m));
    json.field("n", static_cast<long long>(s.n));
    json.field("k", static_cast<long long>(s.k));
    json.field("dtype", dt_name(dt));
    json.field("origin", s.origin);
    if (r.ok) {
      write_sample(json, r.sample);
      json.field("tflops", 2.0 * double(s.m) * double(s.n) * double(s.k) / r.sample.median_s * 1e-12);
    } else {
      json.field("error", r.why);
    }
    json.end_object();
    std::fprintf(stderr, "gemm %-8s %6lld x %6lld x %6lld  %s\n", dt_name(dt), (long long)s.m, (long long)s.n,
                 (long long)s.k, r.ok ? "ok" : r.why.c_str());
  };
  for (const auto& s : shapes) emit(s, Dt::bf16);
  for (const auto& s : shapes) {
    if (s.origin != "square" || s.m < 1024) continue;
    emit(s, Dt::fp16);
    emit(s, Dt::tf32);
    if (s.m <= (cfg.quick ? 4096 : 8192)) emit(s, Dt::fp32);
  }
  json.end_array();

  // fp8 beside bf16 of the same shape (the compute model's fp8/bf16 ratio).
  json.key("fp8_gemm");
  json.begin_array();
  if (has_fp8) {
    for (const auto& s : shapes) {
      const bool square = s.origin == "square" && s.m >= 1024;
      const bool layer = s.origin.find("llama3-70b tp8") != std::string::npos && s.origin.find("fwd") != std::string::npos;
      if (!(square || layer) || s.k % 16 != 0 || s.m % 16 != 0 || !fits(s.m, s.n, s.k, Dt::fp8)) continue;
      const GemmResult f8 = time_gemm(lt, s.m, s.n, s.k, Dt::fp8, cfg.timing);
      const GemmResult bf = time_gemm(lt, s.m, s.n, s.k, Dt::bf16, cfg.timing);
      if (!f8.ok || !bf.ok) continue;
      const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
      json.begin_object();
      json.field("m", static_cast<long long>(s.m));
      json.field("n", static_cast<long long>(s.n));
      json.field("k", static_cast<long long>(s.k));
      json.field("origin", s.origin);
      json.field("fp8_ms", f8.sample.median_s * 1e3);
      json.field("fp8_tflops", flops / f8.sample.median_s * 1e-12);
      json.field("bf16_ms", bf.sample.median_s * 1e3);
      json.field("bf16_tflops", flops / bf.sample.median_s * 1e-12);
      json.end_object();
    }
  }
  json.end_array();

  CSB_CUDA(cudaFree(lt.workspace));
  CSB_LT(cublasLtDestroy(lt.handle));
  CSB_CUDA(cudaStreamDestroy(lt.stream));
}

}  // namespace csbench
