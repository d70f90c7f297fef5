#pragma once
// Shared pieces of clustersim-bench: return-code checks, CUDA-event timing, a tiny JSON writer.
//
// Timing discipline (every measurement in the harness): inputs filled with random values on the
// device (normal, randn-like); `warmup` untimed runs; then `repeats` timed samples, each a pair of CUDA events around
// `iters` back-to-back launches on one stream, divided by `iters`; the reported time is the median sample
// (min and max are kept too). Every CUDA, cuBLAS and NCCL call's status is checked; a failure aborts the
// run with the call, file, line and the library's error string (a harness that carries on after an error
// writes numbers that are not measurements).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace csbench {

[[noreturn]] inline void die(const char* what, const char* call, const char* file, int line) {
  std::fprintf(stderr, "clustersim-bench: %s:%d: %s failed: %s\n", file, line, call, what);
  std::exit(1);
}

// Runs a library call (`text` its source); a status other than `ok` ends the run with describe(status).
#define CSB_CALL(call, text, ok, describe)                                                   \
  do {                                                                                      \
    const auto csb_status = (call);                                                         \
    if (csb_status != (ok)) ::csbench::die(describe(csb_status), text, __FILE__, __LINE__); \
  } while (0)
#define CSB_CUDA(call) CSB_CALL((call), #call, cudaSuccess, cudaGetErrorString)

struct Sample {
  double median_s = 0, min_s = 0, max_s = 0;
  int warmup = 0, repeats = 0, iters = 0;
};

struct TimingOptions {
  int warmup = 3;
  int repeats = 9;
};

// Times `launch()` (which enqueues work on `stream`) as described above.
template <class Launch>
Sample time_on_stream(cudaStream_t stream, const TimingOptions& opt, int iters, Launch&& launch) {
  cudaEvent_t start, stop;
  CSB_CUDA(cudaEventCreate(&start));
  CSB_CUDA(cudaEventCreate(&stop));
  for (int i = 0; i < opt.warmup; ++i) launch();
  CSB_CUDA(cudaStreamSynchronize(stream));
  std::vector<double> samples;
  for (int r = 0; r < opt.repeats; ++r) {
    CSB_CUDA(cudaEventRecord(start, stream));
    for (int i = 0; i < iters; ++i) launch();
    CSB_CUDA(cudaEventRecord(stop, stream));
    CSB_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CSB_CUDA(cudaEventElapsedTime(&ms, start, stop));
    samples.push_back(double(ms) * 1e-3 / iters);
  }
  CSB_CUDA(cudaEventDestroy(start));
  CSB_CUDA(cudaEventDestroy(stop));
  std::sort(samples.begin(), samples.end());
  Sample s;
  s.median_s = samples[samples.size() / 2];
  s.min_s = samples.front();
  s.max_s = samples.back();
  s.warmup = opt.warmup;
  s.repeats = opt.repeats;
  s.iters = iters;
  return s;
}

// Minimal streaming JSON writer: objects and arrays with comma handling, escaped strings, numbers with
// 17 significant digits (round-trip exact). No third-party header: the GPU machine has none.
class Json {
 public:
  explicit Json(std::FILE* out) : out_(out) {}
  void begin_object() { value_prefix(); std::fputc('{', out_); first_.push_back(true); }
  void end_object() { first_.pop_back(); std::fputc('}', out_); }
  void begin_array() { value_prefix(); std::fputc('[', out_); first_.push_back(true); }
  void end_array() { first_.pop_back(); std::fputs("]\n", out_); }
  void key(const char* k) {
    comma();
    string_literal(k);
    std::fputc(':', out_);
    after_key_ = true;
  }
  void value(const std::string& s) { value_prefix(); string_literal(s.c_str()); }
  void value(const char* s) { value_prefix(); string_literal(s); }
  void value(double x) { value_prefix(); std::fprintf(out_, "%.17g", x); }
  void value(long long x) { value_prefix(); std::fprintf(out_, "%lld", x); }
  void value(int x) { value(static_cast<long long>(x)); }
  void value(bool b) { value_prefix(); std::fputs(b ? "true" : "false", out_); }
  template <class T>
  void field(const char* k, const T& v) {
    key(k);
    value(v);
  }

 private:
  void comma() {
    if (!first_.empty()) {
      if (!first_.back()) std::fputc(',', out_);
      first_.back() = false;
    }
  }
  void value_prefix() {
    if (after_key_) after_key_ = false;
    else comma();
  }
  void string_literal(const char* s) {
    std::fputc('"', out_);
    for (; *s; ++s) {
      const unsigned char c = static_cast<unsigned char>(*s);
      if (c == '"' || c == '\\') std::fprintf(out_, "\\%c", c);
      else if (c < 0x20) std::fprintf(out_, "\\u%04x", c);
      else std::fputc(c, out_);
    }
    std::fputc('"', out_);
  }
  std::FILE* out_;
  std::vector<bool> first_;
  bool after_key_ = false;
};

// Random fill, normal with standard deviation `scale` (randn-like bit statistics), on the device (kernels.cu).
enum class ElemType { f32, f16, bf16, fp8e4m3 };
std::size_t elem_size(ElemType t);
void fill_random(void* ptr, std::size_t count, ElemType type, unsigned seed, float scale, cudaStream_t stream);

// Memory-bound kernels (kernels.cu); n elements each.
void launch_add_bf16(const void* a, const void* b, void* out, std::size_t n, cudaStream_t s);
void launch_swiglu_bf16(const void* gate, const void* up, void* out, std::size_t n, cudaStream_t s);
void launch_rms_norm_bf16(const void* in, void* out, std::size_t rows, std::size_t cols, cudaStream_t s);
void launch_adamw_fp32(float* p, const float* g, float* m, float* v, std::size_t n, float lr, int step, cudaStream_t s);
// SM clock seen by a busy kernel: cycles counted by clock64() over event-timed seconds, MHz.
double measure_sm_clock_mhz(cudaStream_t s);

}  // namespace csbench
