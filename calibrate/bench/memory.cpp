// Memory sweeps: device-to-device copy (HBM bandwidth), pinned host<->device (PCIe / C2C), and the
// memory-bound kernels of a transformer step (residual add, SwiGLU, RMSNorm, fused AdamW), in the same
// units as calibrate/measurements/h200-reference.json: "bytes" counts bytes read plus bytes written once.
#include "bench.hpp"

namespace csbench {

namespace {

void write_sample(Json& j, const Sample& s, double bytes) {
  j.field("ms", s.median_s * 1e3);
  j.field("min_ms", s.min_s * 1e3);
  j.field("max_ms", s.max_s * 1e3);
  j.field("GBps", bytes / s.median_s * 1e-9);
}

// Memory a sweep times, freed when it goes out of scope: on the device, or pinned on the host.
class Buffer {
 public:
  enum Where { device, pinned_host };
  Buffer(std::size_t bytes, Where where) : where_(where) {
    if (where_ == device)
      CSB_CUDA(cudaMalloc(&p_, bytes));
    else
      CSB_CUDA(cudaMallocHost(&p_, bytes));
  }
  ~Buffer() {
    if (where_ == device)
      CSB_CUDA(cudaFree(p_));
    else
      CSB_CUDA(cudaFreeHost(p_));
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
  Where where_;
};

bool fits(double bytes) {
  std::size_t free_b = 0, total_b = 0;
  CSB_CUDA(cudaMemGetInfo(&free_b, &total_b));
  return bytes < 0.6 * double(free_b);
}

}  // namespace

void run_memory_sweep(Json& json, const Config& cfg) {
  CSB_CUDA(cudaSetDevice(cfg.device));
  cudaStream_t s;
  CSB_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

  // Device copy: copy size c moves 2c bytes.
  json.key("d2d_copy");
  json.begin_array();
  for (std::size_t c = std::size_t(64) << 20; c <= (std::size_t(cfg.quick ? 1 : 4) << 30); c *= 4) {
    if (!fits(2.0 * double(c))) break;
    const Buffer src(c, Buffer::device), dst(c, Buffer::device);
    fill_random(src.get(), c / 4, ElemType::f32, 3, 1.0f, s);
    const Sample smp = time_on_stream(s, cfg.timing, 1, [&] {
      CSB_CUDA(cudaMemcpyAsync(dst.get(), src.get(), c, cudaMemcpyDeviceToDevice, s));
    });
    json.begin_object();
    json.field("bytes", static_cast<long long>(2 * c));
    write_sample(json, smp, 2.0 * double(c));
    json.end_object();
  }
  json.end_array();

  // Pinned host memory, each direction.
  json.key("pcie");
  json.begin_array();
  for (std::size_t c : {std::size_t(64) << 20, std::size_t(1) << 30}) {
    const Buffer host_buffer(c, Buffer::pinned_host), dev_buffer(c, Buffer::device);
    void* const host = host_buffer.get();
    void* const dev = dev_buffer.get();
    fill_random(dev, c / 4, ElemType::f32, 5, 1.0f, s);
    const Sample d2h = time_on_stream(s, cfg.timing, 1, [&] { CSB_CUDA(cudaMemcpyAsync(host, dev, c, cudaMemcpyDeviceToHost, s)); });
    const Sample h2d = time_on_stream(s, cfg.timing, 1, [&] { CSB_CUDA(cudaMemcpyAsync(dev, host, c, cudaMemcpyHostToDevice, s)); });
    json.begin_object();
    json.field("bytes", static_cast<long long>(c));
    json.field("h2d_ms", h2d.median_s * 1e3);
    json.field("h2d_GBps", double(c) / h2d.median_s * 1e-9);
    json.field("d2h_ms", d2h.median_s * 1e3);
    json.field("d2h_GBps", double(c) / d2h.median_s * 1e-9);
    json.end_object();
  }
  json.end_array();

  json.key("memory_bound");
  json.begin_array();
  const std::vector<std::size_t> sizes = cfg.quick ? std::vector<std::size_t>{std::size_t(16) << 20, std::size_t(128) << 20}
                                                   : std::vector<std::size_t>{std::size_t(4) << 20, std::size_t(16) << 20,
                                                                              std::size_t(64) << 20, std::size_t(128) << 20,
                                                                              std::size_t(512) << 20};
  for (std::size_t n : sizes) {
    if (!fits(3.0 * 2.0 * double(n))) break;
    const Buffer a_buffer(n * 2, Buffer::device), b_buffer(n * 2, Buffer::device), o_buffer(n * 2, Buffer::device);
    void* const a = a_buffer.get();
    void* const b = b_buffer.get();
    void* const o = o_buffer.get();
    fill_random(a, n, ElemType::bf16, 7, 1.0f, s);
    fill_random(b, n, ElemType::bf16, 8, 1.0f, s);
    struct K {
      const char* op;
      double bytes;
    };
    const std::size_t cols = 8192;  // a hidden size; rows = n / cols
    const Sample add = time_on_stream(s, cfg.timing, 1, [&] { launch_add_bf16(a, b, o, n, s); });
    const Sample swi = time_on_stream(s, cfg.timing, 1, [&] { launch_swiglu_bf16(a, b, o, n, s); });
    const Sample rms = time_on_stream(s, cfg.timing, 1, [&] { launch_rms_norm_bf16(a, o, n / cols, cols, s); });
    const std::pair<K, Sample> results[] = {{{"rms_norm", 4.0 * double(n)}, rms},
                                            {{"swiglu", 6.0 * double(n)}, swi},
                                            {{"add", 6.0 * double(n)}, add}};
    for (const auto& [k, smp] : results) {
      json.begin_object();
      json.field("op", k.op);
      json.field("elems", static_cast<long long>(n));
      json.field("bytes", k.bytes);
      write_sample(json, smp, k.bytes);
      json.end_object();
    }
  }
  // Fused AdamW over fp32 params: read p, g, m, v; write p, m, v = 7 x 4 bytes per parameter.
  for (std::size_t n : {std::size_t(64) << 20, std::size_t(256) << 20}) {
    if (!fits(16.0 * double(n))) break;
    float *p = nullptr, *g = nullptr, *m = nullptr, *v = nullptr;
    for (float** x : {&p, &g, &m, &v}) {
      CSB_CUDA(cudaMalloc(x, n * sizeof(float)));
      fill_random(*x, n, ElemType::f32, 9, 0.01f, s);
    }
    int step = 1;
    const Sample smp = time_on_stream(s, cfg.timing, 1, [&] { launch_adamw_fp32(p, g, m, v, n, 1e-4f, step++, s); });
    json.begin_object();
    json.field("op", "adamw_fused_fp32");
    json.field("params", static_cast<long long>(n));
    json.field("bytes", 28.0 * double(n));
    write_sample(json, smp, 28.0 * double(n));
    json.end_object();
    for (float* x : {p, g, m, v}) CSB_CUDA(cudaFree(x));
  }
  json.end_array();
  CSB_CUDA(cudaStreamDestroy(s));
}

}  // namespace csbench
