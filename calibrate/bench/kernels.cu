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

// +-[0.5, 1) * scale: never zero, so no kernel can take a zero shortcut.
__device__ __forceinline__ float random_value(std::size_t i, unsigned seed, float scale) {
  const unsigned h = hash32(static_cast<unsigned>(i) ^ hash32(static_cast<unsigned>(i >> 32) + seed * 0x9e3779b9U));
  const float mag = 0.5f + float(h & 0xffffffU) / float(1 << 25);
  return ((h >> 31) ? -mag : mag) * scale;
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

__global__ void add_kernel(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = __float2bfloat16(__bfloat162float(a[i]) + __bfloat162float(b[i]));
}

__global__ void swiglu_kernel(const __nv_bfloat16* gate, const __nv_bfloat16* up, __nv_bfloat16* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    const float g = __bfloat162float(gate[i]);
    out[i] = __float2bfloat16(g / (1.0f + __expf(-g)) * __bfloat162float(up[i]));
  }
}

// One block per row: sum of squares by a block reduction, then scale.
__global__ void rms_norm_kernel(const __nv_bfloat16* in, __nv_bfloat16* out, std::size_t cols) {
  __shared__ float partial[kThreads];
  const __nv_bfloat16* row = in + blockIdx.x * cols;
  __nv_bfloat16* orow = out + blockIdx.x * cols;
  float s = 0;
  for (std::size_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const float x = __bfloat162float(row[j]);
    s += x * x;
  }
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (int(threadIdx.x) < w) partial[threadIdx.x] += partial[threadIdx.x + w];
    __syncthreads();
  }
  const float inv = rsqrtf(partial[0] / float(cols) + 1e-6f);
  for (std::size_t j = threadIdx.x; j < cols; j += blockDim.x) orow[j] = __float2bfloat16(__bfloat162float(row[j]) * inv);
}

__global__ void adamw_kernel(float* p, const float* g, float* m, float* v, std::size_t n, float lr, float bc1, float bc2) {
  constexpr float b1 = 0.9f, b2 = 0.95f, eps = 1e-8f, wd = 0.1f;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    const float gi = g[i];
    const float mi = b1 * m[i] + (1 - b1) * gi;
    const float vi = b2 * v[i] + (1 - b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    // |v|: the random initial second moments may be negative; real ones never are.
    p[i] = p[i] * (1 - lr * wd) - lr * (mi / bc1) / (sqrtf(fabsf(vi) / bc2) + eps);
  }
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
  add_kernel<<<grid_for(n), kThreads, 0, s>>>(static_cast<const __nv_bfloat16*>(a), static_cast<const __nv_bfloat16*>(b),
                                               static_cast<__nv_bfloat16*>(out), n);
  CSB_CUDA(cudaGetLastError());
}

void launch_swiglu_bf16(const void* gate, const void* up, void* out, std::size_t n, cudaStream_t s) {
  swiglu_kernel<<<grid_for(n), kThreads, 0, s>>>(static_cast<const __nv_bfloat16*>(gate),
                                                  static_cast<const __nv_bfloat16*>(up), static_cast<__nv_bfloat16*>(out), n);
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
  adamw_kernel<<<grid_for(n), kThreads, 0, s>>>(p, g, m, v, n, lr, bc1, bc2);
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
