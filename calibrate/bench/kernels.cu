// Device kernels of clustersim-bench: random fill and the memory-bound kernels whose achieved bandwidth
// the compute model's memory-bound tables hold (bytes counted as read + written once, as the reference
// file does: add 3 x 2 B per element, swiglu 3 x 2 B, rms_norm 2 x 2 B, fused AdamW fp32 7 x 4 B).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "common.hpp"

namespace csbench {

namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ unsigned hash32(unsigned x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// N(0, scale^2) by Box-Muller over a counter hash: the bit statistics of real weights and activations,
// whose exponents vary. (The first harness run drew +-[0.5, 1), where every value shares one exponent; the
// tensor cores then toggle fewer bits, draw less power and hold a higher clock, and GEMMs came out up to
// 45% faster than PyTorch's on randn.) Exact zeros have probability ~0, so no kernel takes a zero shortcut.
__device__ __forceinline__ float random_value(std::size_t i, unsigned seed, float scale) {
  const unsigned h1 = hash32(static_cast<unsigned>(i) ^ hash32(static_cast<unsigned>(i >> 32) + seed * 0x9e3779b9U));
  const unsigned h2 = hash32(h1 ^ 0x68bc21ebU);
  const float u1 = (float(h1 >> 8) + 1.0f) / 16777217.0f;  // (0, 1]
  const float u2 = float(h2 >> 8) / 16777216.0f;           // [0, 1)
  return sqrtf(-2.0f * __logf(u1)) * __cosf(6.2831853f * u2) * scale;
}

template <class T>
__global__ void fill_kernel(T* p, std::size_t n, unsigned seed, float scale) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = T(random_value(i, seed, scale));
}

unsigned grid_for(std::size_t n) {
  const std::size_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65535u * 16u ? (blocks == 0 ? 1 : blocks) : 65535u * 16u);
}

// The memory-bound kernels move 16 bytes per access (8 bf16 / 4 fp32 per thread and step), as the fused
// kernels of Transformer Engine and apex do: with 2-byte accesses an H200 reaches only about half its HBM
// rate (measured 2026-11-30: a scalar add ran at 1.97 TB/s where PyTorch's vectorized one ran at 4.09).
// A scalar loop takes the tail when n is not a multiple of the vector width.
constexpr int kVec = 8;  // bf16 per 16-byte access
struct alignas(16) Bf16x8 {
  __nv_bfloat16 v[kVec];
};
struct alignas(16) F32x4 {
  float v[4];
};

__device__ __forceinline__ std::size_t thread_index() { return blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; }
__device__ __forceinline__ std::size_t thread_stride() { return std::size_t(gridDim.x) * blockDim.x; }

// out = op(a, b) elementwise over n bf16 (computed in fp32): 16-byte loads and stores over the whole
// vectors, then the tail of n % kVec one by one.
template <class Op>
__global__ void elementwise_kernel(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* out, std::size_t n, Op op) {
  const std::size_t nv = n / kVec;
  for (std::size_t i = thread_index(); i < nv; i += thread_stride()) {
    const Bf16x8 x = reinterpret_cast<const Bf16x8*>(a)[i], y = reinterpret_cast<const Bf16x8*>(b)[i];
    Bf16x8 r;
#pragma unroll
    for (int k = 0; k < kVec; ++k) r.v[k] = __float2bfloat16(op(__bfloat162float(x.v[k]), __bfloat162float(y.v[k])));
    reinterpret_cast<Bf16x8*>(out)[i] = r;
  }
  for (std::size_t i = nv * kVec + thread_index(); i < n; i += thread_stride())
    out[i] = __float2bfloat16(op(__bfloat162float(a[i]), __bfloat162float(b[i])));
}

struct Add {  // the residual add
  __device__ float operator()(float x, float y) const { return x + y; }
};
struct SiluTimes {  // SwiGLU: silu(gate) * up
  __device__ float operator()(float g, float u) const { return g / (1.0f + __expf(-g)) * u; }
};

// One block per row: sum of squares (16-byte loads, warp shuffles, then across warps), then scale. The
// second read of the row comes from L1/L2 (a row of 8192 bf16 is 16 KiB), so HBM sees it once.
__global__ void rms_norm_kernel(const __nv_bfloat16* in, __nv_bfloat16* out, std::size_t cols) {
  __shared__ float warp_sums[kThreads / 32];
  __shared__ float inv_rms;
  const __nv_bfloat16* row = in + blockIdx.x * cols;
  __nv_bfloat16* orow = out + blockIdx.x * cols;
  const bool vec = cols % kVec == 0;  // rows start 16-byte aligned only then
  float s = 0;
  if (vec) {
    for (std::size_t j = threadIdx.x; j < cols / kVec; j += blockDim.x) {
      const Bf16x8 x = reinterpret_cast<const Bf16x8*>(row)[j];
#pragma unroll
      for (int k = 0; k < kVec; ++k) s += __bfloat162float(x.v[k]) * __bfloat162float(x.v[k]);
    }
  } else {
    for (std::size_t j = threadIdx.x; j < cols; j += blockDim.x) s += __bfloat162float(row[j]) * __bfloat162float(row[j]);
  }
  for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0;
    for (int w = 0; w < kThreads / 32; ++w) t += warp_sums[w];
    inv_rms = rsqrtf(t / float(cols) + 1e-6f);
  }
  __syncthreads();
  const float inv = inv_rms;
  if (vec) {
    for (std::size_t j = threadIdx.x; j < cols / kVec; j += blockDim.x) {
      const Bf16x8 x = reinterpret_cast<const Bf16x8*>(row)[j];
      Bf16x8 r;
#pragma unroll
      for (int k = 0; k < kVec; ++k) r.v[k] = __float2bfloat16(__bfloat162float(x.v[k]) * inv);
      reinterpret_cast<Bf16x8*>(orow)[j] = r;
    }
  } else {
    for (std::size_t j = threadIdx.x; j < cols; j += blockDim.x) orow[j] = __float2bfloat16(__bfloat162float(row[j]) * inv);
  }
}

struct AdamW {
  float lr, bc1, bc2;
  __device__ __forceinline__ void operator()(float& p, float g, float& m, float& v) const {
    constexpr float b1 = 0.9f, b2 = 0.95f, eps = 1e-8f, wd = 0.1f;
    m = b1 * m + (1 - b1) * g;
    v = b2 * v + (1 - b2) * g * g;
    // |v|: the random initial second moments may be negative; real ones never are.
    p = p * (1 - lr * wd) - lr * (m / bc1) / (sqrtf(fabsf(v) / bc2) + eps);
  }
};

__global__ void adamw_kernel(float* p, const float* g, float* m, float* v, std::size_t n, AdamW step) {
  const std::size_t nv = n / 4;
  for (std::size_t i = thread_index(); i < nv; i += thread_stride()) {
    F32x4 pp = reinterpret_cast<F32x4*>(p)[i], mm = reinterpret_cast<F32x4*>(m)[i], vv = reinterpret_cast<F32x4*>(v)[i];
    const F32x4 gg = reinterpret_cast<const F32x4*>(g)[i];
#pragma unroll
    for (int k = 0; k < 4; ++k) step(pp.v[k], gg.v[k], mm.v[k], vv.v[k]);
    reinterpret_cast<F32x4*>(p)[i] = pp;
    reinterpret_cast<F32x4*>(m)[i] = mm;
    reinterpret_cast<F32x4*>(v)[i] = vv;
  }
  for (std::size_t i = nv * 4 + thread_index(); i < n; i += thread_stride()) step(p[i], g[i], m[i], v[i]);
}

__global__ void spin_kernel(long long cycles, long long* sink) {
  const long long start = clock64();
  long long now = start;
  while (now - start < cycles) now = clock64();
  if (threadIdx.x == 0) sink[blockIdx.x] = now - start;
}

}  // namespace

std::size_t elem_size(ElemType t) {
  switch (t) {
    case ElemType::f32: return 4;
    case ElemType::f16:
    case ElemType::bf16: return 2;
    case ElemType::fp8e4m3: return 1;
  }
  return 4;
}

void fill_random(void* ptr, std::size_t count, ElemType type, unsigned seed, float scale, cudaStream_t stream) {
  const unsigned grid = grid_for(count);
  switch (type) {
    case ElemType::f32: fill_kernel<<<grid, kThreads, 0, stream>>>(static_cast<float*>(ptr), count, seed, scale); break;
    case ElemType::f16: fill_kernel<<<grid, kThreads, 0, stream>>>(static_cast<__half*>(ptr), count, seed, scale); break;
    case ElemType::bf16:
      fill_kernel<<<grid, kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(ptr), count, seed, scale);
      break;
    case ElemType::fp8e4m3:
      fill_kernel<<<grid, kThreads, 0, stream>>>(static_cast<__nv_fp8_e4m3*>(ptr), count, seed, scale);
      break;
  }
  CSB_CUDA(cudaGetLastError());
}

void launch_add_bf16(const void* a, const void* b, void* out, std::size_t n, cudaStream_t s) {
  elementwise_kernel<<<grid_for(n / kVec), kThreads, 0, s>>>(static_cast<const __nv_bfloat16*>(a), static_cast<const __nv_bfloat16*>(b),
                                                       static_cast<__nv_bfloat16*>(out), n, Add{});
  CSB_CUDA(cudaGetLastError());
}

void launch_swiglu_bf16(const void* gate, const void* up, void* out, std::size_t n, cudaStream_t s) {
  elementwise_kernel<<<grid_for(n / kVec), kThreads, 0, s>>>(static_cast<const __nv_bfloat16*>(gate),
                                                       static_cast<const __nv_bfloat16*>(up), static_cast<__nv_bfloat16*>(out), n,
                                                       SiluTimes{});
  CSB_CUDA(cudaGetLastError());
}

void launch_rms_norm_bf16(const void* in, void* out, std::size_t rows, std::size_t cols, cudaStream_t s) {
  rms_norm_kernel<<<static_cast<unsigned>(rows), kThreads, 0, s>>>(static_cast<const __nv_bfloat16*>(in),
                                                                    static_cast<__nv_bfloat16*>(out), cols);
  CSB_CUDA(cudaGetLastError());
}

void launch_adamw_fp32(float* p, const float* g, float* m, float* v, std::size_t n, float lr, int step, cudaStream_t s) {
  const float bc1 = 1.0f - powf(0.9f, float(step));
  const float bc2 = 1.0f - powf(0.95f, float(step));
  adamw_kernel<<<grid_for(n / 4), kThreads, 0, s>>>(p, g, m, v, n, AdamW{lr, bc1, bc2});
  CSB_CUDA(cudaGetLastError());
}

double measure_sm_clock_mhz(cudaStream_t s) {
  int sms = 0, dev = 0;
  CSB_CUDA(cudaGetDevice(&dev));
  CSB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  long long* sink = nullptr;
  CSB_CUDA(cudaMalloc(&sink, sizeof(long long) * sms));
  constexpr long long kCycles = 200'000'000;  // ~0.1 s at 2 GHz: long enough that launch cost vanishes
  cudaEvent_t a, b;
  CSB_CUDA(cudaEventCreate(&a));
  CSB_CUDA(cudaEventCreate(&b));
  spin_kernel<<<sms, 32, 0, s>>>(kCycles / 20, sink);  // warm-up
  CSB_CUDA(cudaGetLastError());
  CSB_CUDA(cudaEventRecord(a, s));
  spin_kernel<<<sms, 32, 0, s>>>(kCycles, sink);
  CSB_CUDA(cudaGetLastError());
  CSB_CUDA(cudaEventRecord(b, s));
  CSB_CUDA(cudaEventSynchronize(b));
  float ms = 0;
  CSB_CUDA(cudaEventElapsedTime(&ms, a, b));
  CSB_CUDA(cudaEventDestroy(a));
  CSB_CUDA(cudaEventDestroy(b));
  CSB_CUDA(cudaFree(sink));
  return double(kCycles) / (double(ms) * 1e-3) / 1e6;
}

}  // namespace csbench
