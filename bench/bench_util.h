// Shared machinery of the benchmarks (nf_bench and its cases): batches filled from a port, CPU
// timing over whole batches on N threads, GPU timing (end to end through the GPU stage, and
// kernel-only on device-resident batches), the bit-for-bit GPU-vs-CPU comparison, and the
// markdown table + JSON rows every benchmark prints.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "chain/batch_shape.h"
#include "config/config.h"
#include "core/batch.h"
#include "core/clock.h"
#include "worker_pool.h"

namespace gpunfv::bench {

using Batches = std::vector<std::unique_ptr<Batch>>;

Batches make_batches(uint32_t n, const BatchShape& shape, MemoryKind kind);

// Fills batches from the port in order; returns packets generated (stops at `limit`).
uint64_t fill(Port& port, Batches& bs, uint64_t limit);
// The leading batches that hold packets after fill().
size_t used_batches(const Batches& bs);
// Sum of the frame lengths of batches [0, used).
uint64_t frame_bytes(const Batches& bs, size_t used);

void copy_batch(const Batch& from, Batch& to);
// Batches [0, used), on `threads` threads (memory bandwidth: large frames copy faster on several).
void copy_batches(const Batches& from, Batches& to, size_t used, unsigned threads = 1);

// Numbers the packets of batches [0, used) next_seq, next_seq + 1, ... in BatchView::seq, as the
// executor's ingress does: NFs with ordered steps (IPsec) run them in that order on the CPU
// backend. Each CPU run of a benchmark takes fresh numbers (they only ever grow).
void number_packets(Batches& bs, size_t used, uint64_t& next_seq);

// NFs whose output depends on what they processed before (IPsec: per-SA sequence numbers) start
// again from their initial state, so every run over the same batches writes the same bytes.
void reset_stateful_nfs(RuntimeConfig& rc, Backend backend);

// Replaces the chain's generator port by one with frames of `size` bytes (its other keys as in
// the configuration); the NFs and their tables are kept. Throws ConfigError.
void set_generator_size(RuntimeConfig& rc, uint32_t size);

// Batches per round: at most the configuration's batches, enough for `packets`, within
// `max_bytes` of slots, and a multiple of `threads` when more than that (so no thread idles
// at the end of a round waiting for a last few batches).
uint32_t round_batches(const RuntimeConfig& rc, const BatchShape& shape, uint64_t packets,
                       unsigned threads, size_t max_bytes);

// Runs work(i) (or work(i, thread)) for batches 0..n_batches-1 on `threads` threads, each
// taking the next batch; returns the seconds taken. On the process's worker pool when one was
// started with at least `threads` workers (threads started and pinned once), else on threads
// started for this call.
template <typename Work>
double run_batches(size_t n_batches, unsigned threads, const Work& work) {
  auto call = [&](size_t i, unsigned t) {
    if constexpr (std::is_invocable_v<const Work&, size_t, unsigned>)
      work(i, t);
    else
      work(i);
  };
  if (WorkerPool* pool = WorkerPool::shared(); pool && threads <= pool->size() && !WorkerPool::in_worker())
    return pool->run(n_batches, threads, call);
  std::atomic<size_t> next{0};
  uint64_t t0 = monotonic_ns();
  std::vector<std::thread> ts;
  for (unsigned t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      for (size_t i; (i = next.fetch_add(1)) < n_batches;) {
        if constexpr (std::is_invocable_v<const Work&, size_t, unsigned>)
          work(i, t);
        else
          work(i);
      }
    });
  for (auto& t : ts) t.join();
  return (monotonic_ns() - t0) / 1e9;
}

// The CPU backend (run_chain_cpu) over batches [0, n) of `bs` on `threads` threads.
double run_cpu(const RuntimeConfig& rc, Batches& bs, size_t n, unsigned threads);

// Compared results: how many, how many differ, the first difference.
struct Check {
  uint64_t compared = 0, mismatches = 0;
  std::string first;
  void add(const Check& o);
  std::string text() const;  // "0 of 1000"
  nlohmann::json json() const;
};

// Compares everything egress and later NFs read, bit for bit: bytes, length, verdict, position
// (next_nf), egress port, headers, flow hash and the per-packet results record (every NF's
// slice). Returns the packets that differ; the first one described in *first.
uint64_t count_mismatches(const Batch& a, const Batch& b, std::string* first);
// The same over batches [0, used) of both sets, on `threads` threads.
Check compare_batches(const Batches& a, const Batches& b, size_t used, unsigned threads);

struct Row {
  Row() = default;
  explicit Row(std::string p, bool lookup = false) : path(std::move(p)), lookup_only(lookup) {}
  std::string path;
  bool lookup_only = false;  // counts lookups, not packets through the chain: no Gbit/s
  uint64_t packets = 0;
  double seconds = 0;
  bool checked = false;      // `check` applies to this row
  Check check{};
  std::string note{};        // the mismatches column of a row without a check (e.g. "reference")
  double mpps() const { return seconds > 0 ? packets / seconds / 1e6 : 0; }
};

// A markdown table: | [size] | path | Mpps | Gbit/s | ratio vs `base` | [mismatches] |.
struct Columns {
  std::string base;       // header of the ratio column
  bool size = false;      // a frame-size column first
  bool check = false;     // a mismatches column last
  size_t path_width = 40;
};
void print_header(const Columns& c);
// Gbit/s = Mpps x mean frame bytes x 8; the ratio is mpps / base_mpps.
void print_row(const Columns& c, const Row& r, double mean_frame, double base_mpps,
               const std::string& size = {});
nlohmann::json row_json(const Row& r, double mean_frame, double base_mpps);

// Warns on stderr when this process may run on fewer CPUs than `threads`.
void warn_if_few_cpus(const char* program, unsigned threads);

// Whether this build has the CUDA backend and a device is present.
bool gpu_present();

// The GPU backend over host batches: end to end through the GPU stage (copy in, chain, copy
// out, several batches in flight), and kernel-only over copies already in device memory.
class GpuBench {
 public:
  GpuBench(const RuntimeConfig& rc, const BatchShape& shape, uint32_t batches);
  ~GpuBench();
  GpuBench(const GpuBench&) = delete;
  GpuBench& operator=(const GpuBench&) = delete;

  // Submits batches [0, used) to the GPU stage and waits for all; returns the seconds taken.
  double end_to_end(Batches& bs, size_t used);
  // Copies in[0, used) to device memory (untimed), launches the chain over each (one of 8
  // streams per batch) and returns the seconds between events around the launches. With `out`,
  // copies the device batches back into it afterwards (untimed).
  double kernel_only(const Batches& in, size_t used, Batches* out = nullptr);

  // Kernel-only timing over many batches in flight: upload() keeps a pristine device copy of
  // in[0, used) and room for `copies` working copies of it; each kernel_pass(k) restores k
  // working copies from the pristine one (untimed, device to device), launches the chain over
  // all k x used batches (round robin over the streams) and returns the seconds between events
  // around the launches. download() copies the first working copy back into out[0, used).
  void upload(const Batches& in, size_t used, uint32_t copies);
  double kernel_pass(uint32_t copies);
  void download(Batches& out, size_t used);
  uint32_t kernel_copies() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Command line of the Google Benchmark drivers over a chain configuration (collect_bench,
// egress_bench): --config=PATH (default `config`), --batch=N (0: the configuration's), and what
// `extra` accepts (it is given each other argument and returns whether it took it). The rest,
// argv[0] first, is for benchmark::Initialize. A bad number throws std::invalid_argument.
struct ChainBenchArgs {
  std::string config;
  uint32_t batch_size = 0;
  std::vector<char*> rest;
};
ChainBenchArgs parse_chain_bench_args(int argc, char** argv, std::string config,
                                      const std::function<bool(const std::string&)>& extra = {});

}  // namespace gpunfv::bench
