// `gpunfv profile`: G-NET's nBench (NSDI'18, section 5.2). For each NF of a configuration and
// each packet size it measures
//   - kernel time: the NF's process_gpu on the packets it gets in the first chain (the NFs
//     before it run first, on the CPU: NIDS after IPsec scans ESP packets; an NF in no chain
//     gets the classified generator packets at position 0), on the stream of an
//     SM partition of N SMs (default: the smallest green context, 8 SMs on an H100) for a batch
//     of B x N packets, B the per-SM batch; CUDA events around process_gpu, median of repeats.
//     Per SM: G-NET observed that the time stays the same when N SMs each get B packets
//     (section 5.1), so the sample (B, time) is taken as ONE SM's time for a batch of B; the
//     profile runs on N SMs because green contexts come no smaller.
//   - transfer time: one host-to-device plus one device-to-host copy of the batch's device
//     prefix (BatchLayout::device_prefix_bytes) of B x N packets from pinned memory, as the
//     GPU stage moves a batch; sample (B x N, time).
// and fits L_k = k1*B + b1 and L_m = k2*B + b2 (perf_model.h).
//
// Traffic: the first chain's ingress port, which must be a generator; its `size:` is replaced by
// each profiled size and its `rate:` by 0 (packets for a batch are made before timing).
//
// Errors: ConfigError (bad configuration, an ingress port that is not a generator, bad option
// values); GpuError (no device, CUDA failures).
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "chain/runtime_config.h"
#include "core/batch.h"
#include "sched/allocator.h"
#include "sched/perf_model.h"

namespace CLI {
class App;
}

namespace gpunfv {

struct ProfileOptions {
  std::string config;
  std::vector<uint32_t> sizes{64, 128, 256, 512, 1024, 1518};  // frame bytes
  std::vector<uint32_t> batches{64, 128, 256, 512, 1024, 2048, 4096};  // packets per SM
  std::string out;        // JSON model file; empty: none
  int sms = 0;            // partition size; 0: the smallest the device allows
  int repeats = 21;       // timed runs per point (median)
  bool green = true;      // false: the block-cap fallback even where green contexts exist
};

// Adds `profile`'s options and flags to `sub`, bound to `o` (checked by CLI11 at parse time).
void add_profile_options(CLI::App& sub, ProfileOptions& o);
// Checks what CLI11 cannot: sizes 64..9216, batches > 0, at least two of each distinct.
// Throws ConfigError naming the option.
void validate_profile_options(const ProfileOptions& o);

// A port making frames of `size` bytes as fast as asked: the configuration's traffic at one
// profiled size (config/config.h's sized_generator builds it).
using SizedPortOf = std::function<std::unique_ptr<Port>(uint32_t size)>;
// Appends frames from `port` until `b` holds `n` (or the port ends); returns b.count().
uint32_t fill_batch(Port& port, Batch& b, uint32_t n);

// The table `gpunfv profile` prints: per NF, a row per size with k1, b1, k2, b2, R^2 and the
// largest relative error of both fits.
std::string profile_table(const ModelStore& store);

// The scheduler's view of chain `c`: one node per NF in path order, each feeding the next
// (share 1), with the model `store` holds for `device` at `packet_bytes` (interpolated between
// measured sizes). Empty when an NF of the chain has no model there.
std::vector<SchedNode> chain_sched_nodes(const RuntimeConfig& rc, const Chain& c,
                                         const ModelStore& store, const std::string& device,
                                         uint32_t packet_bytes);

// What each scheduler policy allocates to the first chain of `rc` (a line: each NF feeds the
// next) at each of `sizes`, from the models `store` holds for `device`: a table per size.
// Sizes without a model for every NF of the chain are left out.
std::string allocation_table(const RuntimeConfig& rc, const ModelStore& store,
                             const std::string& device, const GpuBudget& budget,
                             const SchedParams& params, const std::vector<uint32_t>& sizes);

struct ProfileResult {
  ModelStore models;
  std::string device;
  GpuBudget budget{0, 1, 1};  // the device's SMs in the units partitions come in
  std::string allocations;     // allocation_table for the configuration's first chain
};

#if GPUNFV_HAVE_CUDA
// Runs the measurements (profiler.cu) on the NFs of `rc` (loaded from o.config), with traffic
// from `sized_port`; `log` gets progress lines (may be null).
ProfileResult run_profile(const ProfileOptions& o, RuntimeConfig& rc, const SizedPortOf& sized_port,
                          std::FILE* log);
#endif

}  // namespace gpunfv
