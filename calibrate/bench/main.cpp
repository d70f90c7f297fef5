// clustersim-bench: measures one machine (GEMMs, HBM, host links, memory-bound kernels, NCCL collectives)
// and writes everything into one JSON file that `clustersim calibrate fit` and `clustersim validate`
// read. See README.md in this folder for the commands and the output format.
#include <cublasLt.h>
#include <nccl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

#include "bench.hpp"

#ifdef CLUSTERSIM_BENCH_MPI
#include <mpi.h>
#endif

namespace {

void usage(std::FILE* out) {
  std::fputs(
      "usage: clustersim-bench [--out FILE] [--quick] [--no-gemm] [--no-memory] [--no-nccl]\n"
      "                        [--warmup N] [--repeats N] [--nccl-max-bytes BYTES] [--device I]\n\n"
      "Measures GEMMs (cuBLASLt), HBM / host copies, memory-bound kernels on GPU --device, and NCCL\n"
      "collectives over all local GPUs (or one GPU per MPI rank when built with MPI and launched by mpirun),\n"
      "then writes one JSON file (default clustersim-bench.json). --quick runs a reduced sweep.\n",
      out);
}

bool parse(int argc, char** argv, csbench::Config& cfg) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&](const char* what) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "clustersim-bench: %s needs %s\n", a.c_str(), what);
        std::exit(2);
      }
      return argv[++i];
    };
    auto positive = [&](const char* text) {
      char* end = nullptr;
      const long long v = std::strtoll(text, &end, 10);
      if (*end != '\0' || v <= 0) {
        std::fprintf(stderr, "clustersim-bench: %s: expected a positive integer, got \"%s\"\n", a.c_str(), text);
        std::exit(2);
      }
      return v;
    };
    if (a == "--help" || a == "-h") {
      usage(stdout);
      std::exit(0);
    } else if (a == "--out" || a == "-o") cfg.out = next("a file name");
    else if (a == "--quick") cfg.quick = true;
    else if (a == "--no-gemm") cfg.gemm = false;
    else if (a == "--no-memory") cfg.memory = false;
    else if (a == "--no-nccl") cfg.nccl = false;
    else if (a == "--warmup") cfg.timing.warmup = static_cast<int>(positive(next("a count")));
    else if (a == "--repeats") cfg.timing.repeats = static_cast<int>(positive(next("a count")));
    else if (a == "--nccl-max-bytes") cfg.nccl_max_bytes = positive(next("a size in bytes"));
    else if (a == "--device") cfg.device = static_cast<int>(std::strtol(next("a GPU index"), nullptr, 10));
    else {
      std::fprintf(stderr, "clustersim-bench: unknown option \"%s\" (see --help)\n", a.c_str());
      return false;
    }
  }
  return true;
}

std::string utc_now() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string version_string(int v) {
  // CUDA encodes 1000*major + 10*minor.
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace

int main(int argc, char** argv) {
  int mpi_rank = 0, mpi_size = 1;
#ifdef CLUSTERSIM_BENCH_MPI
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
#endif
  csbench::Config cfg;
  if (!parse(argc, argv, cfg)) return 2;
  int gpus = 0;
  CSB_CUDA(cudaGetDeviceCount(&gpus));
  if (cfg.device < 0 || cfg.device >= gpus) {
    std::fprintf(stderr, "clustersim-bench: --device %d: this machine has %d GPU(s)\n", cfg.device, gpus);
    return 2;
  }
  CSB_CUDA(cudaSetDevice(cfg.device));
  cudaDeviceProp prop{};
  CSB_CUDA(cudaGetDeviceProperties(&prop, cfg.device));
  int driver = 0, runtime = 0, nccl_version = 0, sm_clock_khz = 0, mem_clock_khz = 0, cc_major = 0, cc_minor = 0;
  CSB_CUDA(cudaDriverGetVersion(&driver));
  CSB_CUDA(cudaRuntimeGetVersion(&runtime));
  if (ncclGetVersion(&nccl_version) != ncclSuccess) nccl_version = 0;
  CSB_CUDA(cudaDeviceGetAttribute(&sm_clock_khz, cudaDevAttrClockRate, cfg.device));
  CSB_CUDA(cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, cfg.device));
  CSB_CUDA(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, cfg.device));
  CSB_CUDA(cudaDeviceGetAttribute(&cc_minor, cudaDevAttrComputeCapabilityMinor, cfg.device));
  char host[256] = {};
  gethostname(host, sizeof host - 1);

  const std::string tmp = cfg.out + ".tmp";
  std::FILE* out = mpi_rank == 0 ? std::fopen(tmp.c_str(), "w") : nullptr;
  if (mpi_rank == 0 && !out) {
    std::fprintf(stderr, "clustersim-bench: cannot write %s: %s\n", tmp.c_str(), std::strerror(errno));
    return 2;
  }
  // Ranks other than 0 write nothing; their Json goes to /dev/null.
  std::FILE* sink = out ? out : std::fopen("/dev/null", "w");
  csbench::Json json(sink);
  cudaStream_t s;
  CSB_CUDA(cudaStreamCreate(&s));
  const double clock_before = csbench::measure_sm_clock_mhz(s);

  json.begin_object();
  json.field("format", "clustersim-bench");
  json.field("version", 1);
  json.field("when", utc_now());
  json.field("host", host);
  json.field("device", std::string(prop.name));
  json.field("gpu_count", gpus);
  json.field("compute_capability", std::to_string(cc_major) + "." + std::to_string(cc_minor));
  json.field("sm_count", prop.multiProcessorCount);
  json.field("hbm_bytes", static_cast<long long>(prop.totalGlobalMem));
  json.field("driver_cuda", version_string(driver));
  json.field("cuda_runtime", version_string(runtime));
  json.field("cublasLt", static_cast<long long>(cublasLtGetVersion()));
  json.field("nccl_version", std::to_string(nccl_version / 10000) + "." + std::to_string((nccl_version / 100) % 100) + "." +
                         std::to_string(nccl_version % 100));
  json.field("mpi_ranks", mpi_size);
  json.key("clocks");
  json.begin_object();
  json.field("sm_max_mhz", sm_clock_khz / 1000.0);
  json.field("memory_max_mhz", mem_clock_khz / 1000.0);
  json.field("sm_seen_mhz_start", clock_before);
  json.end_object();
  json.key("timing");
  json.begin_object();
  json.field("method", "CUDA events around each call on one stream (NCCL: around `iters` calls on every rank's stream, "
                       "slowest rank); median of repeats after warm-up; inputs random normal (randn-like)");
  json.field("warmup", cfg.timing.warmup);
  json.field("repeats", cfg.timing.repeats);
  json.field("quick", cfg.quick);
  json.end_object();
  json.field("note", "gemm: C[m,n] = A[m,k] B[k,n] via cuBLASLt (TN layout, first heuristic algorithm, 64 MiB workspace), "
                     "tflops = 2mnk/time; fp8_gemm: e4m3 x e4m3 -> bf16 beside bf16 of the same shape; memory_bound and "
                     "d2d_copy: bytes = read + write; nccl: nccl-tests sizes and busbw factors, float, out-of-place");

  if (mpi_rank == 0 && cfg.gemm) csbench::run_gemm_sweep(json, cfg);
  if (mpi_rank == 0 && cfg.memory) csbench::run_memory_sweep(json, cfg);
  if (cfg.nccl) csbench::run_nccl_sweep(json, cfg, mpi_rank, mpi_size);

  CSB_CUDA(cudaSetDevice(cfg.device));
  json.key("clocks_end");
  json.begin_object();
  json.field("sm_seen_mhz_end", csbench::measure_sm_clock_mhz(s));
  json.end_object();
  json.end_object();
  CSB_CUDA(cudaStreamDestroy(s));
  if (out) {
    std::fputc('\n', out);
    if (std::fclose(out) != 0 || std::rename(tmp.c_str(), cfg.out.c_str()) != 0) {
      std::fprintf(stderr, "clustersim-bench: cannot write %s: %s\n", cfg.out.c_str(), std::strerror(errno));
      return 2;
    }
    std::fprintf(stderr, "clustersim-bench: wrote %s\n", cfg.out.c_str());
  } else {
    std::fclose(sink);
  }
#ifdef CLUSTERSIM_BENCH_MPI
  MPI_Finalize();
#endif
  return 0;
}
