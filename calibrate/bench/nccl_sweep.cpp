// NCCL sweep: all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, send_recv over sizes 8 B ..
// max (doubling), in nccl-tests' conventions so the output can be compared with nccl-tests logs line by
// line (shared/ECOSYSTEM.md 1.4):
//   size S in bytes of float elements; all_reduce / broadcast: count = S/4 per rank; all_gather: S is the
//   gathered array (each rank sends S/n); reduce_scatter: S is the input array (each rank receives S/n);
//   all_to_all: each rank sends S in all, S/n to every peer (grouped ncclSend/ncclRecv, as nccl-tests);
//   send_recv: every rank sends S to rank+1 and receives S from rank-1.
//   busbw = S / t * factor, factor 2(n-1)/n (all_reduce), (n-1)/n (all_gather, reduce_scatter,
//   all_to_all), 1 (broadcast, send_recv).
// Timing: out-of-place; `warmup` untimed calls; then `repeats` samples, each CUDA events on every rank's
// stream around `iters` calls (20 up to 64 MiB, then fewer) -- the sample is the slowest rank's time per
// call -- and the median sample is reported. One process drives all local GPUs (ncclCommInitAll, a
// group call per collective); under MPI (CLUSTERSIM_BENCH_MPI) every rank drives one GPU and rank 0
// takes the maximum over ranks.
#include <nccl.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "bench.hpp"

#ifdef CLUSTERSIM_BENCH_MPI
#include <mpi.h>
#endif

namespace csbench {

namespace {

#define CSB_NCCL(call) CSB_CALL((call), #call, ncclSuccess, ncclGetErrorString)

enum class Coll { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, send_recv };
constexpr Coll kColls[] = {Coll::all_reduce, Coll::all_gather, Coll::reduce_scatter,
                           Coll::all_to_all, Coll::broadcast,  Coll::send_recv};

const char* name_of(Coll c) {
  switch (c) {
    case Coll::all_reduce: return "all_reduce";
    case Coll::all_gather: return "all_gather";
    case Coll::reduce_scatter: return "reduce_scatter";
    case Coll::all_to_all: return "all_to_all";
    case Coll::broadcast: return "broadcast";
    case Coll::send_recv: return "send_recv";
  }
  return "?";
}

double factor_of(Coll c, int n) {
  switch (c) {
    case Coll::all_reduce: return 2.0 * (n - 1) / n;
    case Coll::all_gather:
    case Coll::reduce_scatter:
    case Coll::all_to_all: return double(n - 1) / n;
    case Coll::broadcast:
    case Coll::send_recv: return 1.0;
  }
  return 1.0;
}

// Bytes S rounded down so every rank's share is whole floats.
std::size_t round_size(Coll c, std::size_t s, int n) {
  const std::size_t unit = (c == Coll::all_gather || c == Coll::reduce_scatter || c == Coll::all_to_all) ? 4 * std::size_t(n) : 4;
  return s / unit * unit;
}

struct Rank {
  int device = 0;
  int rank = 0;  // global rank
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  void* send = nullptr;
  void* recv = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
};

// Enqueues one collective of S bytes on one rank (inside a group for several local ranks).
void enqueue(Coll c, Rank& r, std::size_t s, int n) {
  const std::size_t count = s / 4;
  switch (c) {
    case Coll::all_reduce:
      CSB_NCCL(ncclAllReduce(r.send, r.recv, count, ncclFloat, ncclSum, r.comm, r.stream));
      break;
    case Coll::all_gather:
      CSB_NCCL(ncclAllGather(r.send, r.recv, count / n, ncclFloat, r.comm, r.stream));
      break;
    case Coll::reduce_scatter:
      CSB_NCCL(ncclReduceScatter(r.send, r.recv, count / n, ncclFloat, ncclSum, r.comm, r.stream));
      break;
    case Coll::all_to_all: {
      const std::size_t chunk = count / n;
      CSB_NCCL(ncclGroupStart());
      for (int p = 0; p < n; ++p) {
        CSB_NCCL(ncclSend(static_cast<char*>(r.send) + p * chunk * 4, chunk, ncclFloat, p, r.comm, r.stream));
        CSB_NCCL(ncclRecv(static_cast<char*>(r.recv) + p * chunk * 4, chunk, ncclFloat, p, r.comm, r.stream));
      }
      CSB_NCCL(ncclGroupEnd());
      break;
    }
    case Coll::broadcast:
      CSB_NCCL(ncclBroadcast(r.send, r.recv, count, ncclFloat, 0, r.comm, r.stream));
      break;
    case Coll::send_recv:
      CSB_NCCL(ncclGroupStart());
      CSB_NCCL(ncclSend(r.send, count, ncclFloat, (r.rank + 1) % n, r.comm, r.stream));
      CSB_NCCL(ncclRecv(r.recv, count, ncclFloat, (r.rank + n - 1) % n, r.comm, r.stream));
      CSB_NCCL(ncclGroupEnd());
      break;
  }
}

}  // namespace

void run_nccl_sweep(Json& json, const Config& cfg, int mpi_rank, int mpi_size) {
  int local_gpus = 0;
  CSB_CUDA(cudaGetDeviceCount(&local_gpus));
  std::vector<Rank> ranks;
  int n = 0;
  int nodes = 1;
  if (mpi_size > 1) {
#ifdef CLUSTERSIM_BENCH_MPI
    // One GPU per MPI rank: the rank's index among the ranks of its host.
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, mpi_rank, MPI_INFO_NULL, &local);
    int local_rank = 0;
    MPI_Comm_rank(local, &local_rank);
    MPI_Comm_free(&local);
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    std::vector<char> hosts(std::size_t(256) * mpi_size);
    MPI_Allgather(host, 256, MPI_CHAR, hosts.data(), 256, MPI_CHAR, MPI_COMM_WORLD);
    std::set<std::string> distinct;
    for (int i = 0; i < mpi_size; ++i) distinct.insert(std::string(&hosts[std::size_t(256) * i]));
    nodes = static_cast<int>(distinct.size());
    ncclUniqueId id;
    if (mpi_rank == 0) CSB_NCCL(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    Rank r;
    r.device = local_rank % local_gpus;
    r.rank = mpi_rank;
    CSB_CUDA(cudaSetDevice(r.device));
    CSB_NCCL(ncclCommInitRank(&r.comm, mpi_size, id, mpi_rank));
    ranks.push_back(r);
    n = mpi_size;
#else
    (void)mpi_rank;
#endif
  } else {
    n = local_gpus;
    if (n >= 2) {
      std::vector<ncclComm_t> comms(n);
      std::vector<int> devs(n);
      for (int i = 0; i < n; ++i) devs[i] = i;
      CSB_NCCL(ncclCommInitAll(comms.data(), n, devs.data()));
      for (int i = 0; i < n; ++i) {
        Rank r;
        r.device = i;
        r.rank = i;
        r.comm = comms[i];
        ranks.push_back(r);
      }
    }
  }
  const bool writer = mpi_rank == 0;
  if (writer) {
    json.field("nccl_ranks", n);
    json.field("nccl_nodes", nodes);
  }
  if (n < 2) {
    if (writer) {
      json.field("nccl_note", "one GPU: collectives need two or more ranks; no NCCL points measured");
      json.key("nccl");
      json.begin_array();
      json.end_array();
    }
    return;
  }

  // Buffers at the largest size that fits: send and receive S each per rank.
  std::size_t max_bytes = static_cast<std::size_t>(cfg.nccl_max_bytes);
  for (auto& r : ranks) {
    CSB_CUDA(cudaSetDevice(r.device));
    std::size_t free_b = 0, total_b = 0;
    CSB_CUDA(cudaMemGetInfo(&free_b, &total_b));
    while (max_bytes > 8 && 2.0 * double(max_bytes) > 0.7 * double(free_b)) max_bytes /= 2;
  }
#ifdef CLUSTERSIM_BENCH_MPI
  if (mpi_size > 1) {
    unsigned long long mb = max_bytes;
    MPI_Allreduce(MPI_IN_PLACE, &mb, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    max_bytes = mb;
  }
#endif
  for (auto& r : ranks) {
    CSB_CUDA(cudaSetDevice(r.device));
    CSB_CUDA(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
    CSB_CUDA(cudaMalloc(&r.send, max_bytes));
    CSB_CUDA(cudaMalloc(&r.recv, max_bytes));
    fill_random(r.send, max_bytes / 4, ElemType::f32, 100u + unsigned(r.rank), 1.0f, r.stream);
    fill_random(r.recv, max_bytes / 4, ElemType::f32, 200u + unsigned(r.rank), 1.0f, r.stream);
    CSB_CUDA(cudaEventCreate(&r.start));
    CSB_CUDA(cudaEventCreate(&r.stop));
    CSB_CUDA(cudaStreamSynchronize(r.stream));
  }

  auto call = [&](Coll c, std::size_t s) {
    if (ranks.size() == 1) {
      enqueue(c, ranks[0], s, n);
      return;
    }
    CSB_NCCL(ncclGroupStart());
    for (auto& r : ranks) enqueue(c, r, s, n);
    CSB_NCCL(ncclGroupEnd());
  };
  auto sync_all = [&] {
    for (auto& r : ranks) {
      CSB_CUDA(cudaSetDevice(r.device));
      CSB_CUDA(cudaStreamSynchronize(r.stream));
    }
  };

  if (writer) {
    json.key("nccl");
    json.begin_array();
  }
  for (Coll c : kColls) {
    for (std::size_t raw = 8; raw <= max_bytes; raw *= 2) {
      const std::size_t s = round_size(c, raw, n);
      if (s == 0) continue;
      const int iters = s <= (std::size_t(64) << 20) ? 20 : 5;
      for (int w = 0; w < cfg.timing.warmup; ++w) call(c, s);
      sync_all();
      std::vector<double> samples;
      for (int rep = 0; rep < cfg.timing.repeats; ++rep) {
        for (auto& r : ranks) {
          CSB_CUDA(cudaSetDevice(r.device));
          CSB_CUDA(cudaEventRecord(r.start, r.stream));
        }
        for (int i = 0; i < iters; ++i) call(c, s);
        double slowest = 0;
        for (auto& r : ranks) {
          CSB_CUDA(cudaSetDevice(r.device));
          CSB_CUDA(cudaEventRecord(r.stop, r.stream));
        }
        for (auto& r : ranks) {
          CSB_CUDA(cudaSetDevice(r.device));
          CSB_CUDA(cudaEventSynchronize(r.stop));
          float ms = 0;
          CSB_CUDA(cudaEventElapsedTime(&ms, r.start, r.stop));
          slowest = std::max(slowest, double(ms) * 1e-3 / iters);
        }
#ifdef CLUSTERSIM_BENCH_MPI
        if (mpi_size > 1) MPI_Allreduce(MPI_IN_PLACE, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
#endif
        samples.push_back(slowest);
      }
      std::sort(samples.begin(), samples.end());
      const double t = samples[samples.size() / 2];
      if (writer) {
        json.begin_object();
        json.field("collective", name_of(c));
        json.field("ranks", n);
        json.field("nodes", nodes);
        json.field("algorithm", "default");
        json.field("bytes", static_cast<long long>(s));
        json.field("dtype", "float");
        json.field("in_place", false);
        json.field("time_us", t * 1e6);
        json.field("min_us", samples.front() * 1e6);
        json.field("max_us", samples.back() * 1e6);
        json.field("iters", iters);
        json.field("algbw_GBps", double(s) / t * 1e-9);
        json.field("busbw_GBps", double(s) / t * 1e-9 * factor_of(c, n));
        json.end_object();
        std::fprintf(stderr, "nccl %-14s %12zu B  %10.2f us\n", name_of(c), s, t * 1e6);
      }
    }
  }
  if (writer) json.end_array();

  for (auto& r : ranks) {
    CSB_CUDA(cudaSetDevice(r.device));
    CSB_CUDA(cudaFree(r.send));
    CSB_CUDA(cudaFree(r.recv));
    CSB_CUDA(cudaEventDestroy(r.start));
    CSB_CUDA(cudaEventDestroy(r.stop));
    CSB_CUDA(cudaStreamDestroy(r.stream));
    CSB_NCCL(ncclCommDestroy(r.comm));
  }
}

}  // namespace csbench
