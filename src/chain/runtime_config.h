// What the runtime runs: ports, NFs, chains, forwards and settings. config/ builds and validates
// it from a YAML file (config/config.h); the runtime reads it and parses nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chain/chain_graph.h"
#include "chain/forward_spec.h"
#include "core/text_file.h"
#include "io/port.h"
#include "nf/network_function.h"

namespace gpunfv {

struct Chain {
  std::string name;                     // "from->to" unless named
  uint16_t from = 0;                    // ingress port id
  std::vector<uint16_t> path;           // node -> NF index, in list (topological) order
  ChainGraph graph;                     // branches and routing table
  ChainView view;                       // what the switch reads
  uint16_t to = kNoPort;                // egress for packets whose NFs chose none
  bool backpressure = false;            // Simmer's slow-down / fasten-up between nodes
  double qt = 2.8;                      // queue threshold, in batches of the node's batch size
  double latency_bound_us = 1000;       // rx-to-tx p99 the chain must keep (report: held or not)
  uint32_t batch_deadline_us = 250;     // a partial batch leaves ingress once its first frame is this old

  // Replaces the chain with a straight path through `nfs` (tests, benchmarks).
  void set_path(const std::vector<uint16_t>& nfs) {
    graph = linear_chain_graph(nfs);
    path = nfs;
    view = graph.view();
  }
};

// settings.metrics: the Prometheus endpoint (telemetry/metrics_server.h).
struct MetricsSettings {
  std::string host;     // "": no endpoint
  int port = 0;         // 0: one the system picks (the startup line names it)
  double linger_s = 0;  // after the run, serve the final figures this long (a signal ends it)
  bool enabled() const { return !host.empty(); }
};

struct Settings {
  uint32_t batch_size = 2048;           // packets per batch
  uint32_t batches = 64;                // batches in the pool (allocated once)
  uint32_t slot_bytes = 0;              // 0: from the ports' largest frame
  uint32_t workers = 0;                 // CPU backend worker threads; 0: all cores but two
  uint32_t cpu_workers_per_nf = 0;      // >0: that many threads per stage instead of a pool
  uint32_t gpu_in_flight = 4;           // GPU backend: batches on each stage's stream at once
  std::string gpu_pipeline = "staged";  // GPU backend: staged (a host stage per NF) | fused
  uint32_t gpu_zero_copy_packets = 0;   // fused, persistent: issued batches up to this many run in pinned memory
  uint32_t gpu_persistent_packets = 1024;  // persistent: batches up to this many go to the persistent kernel
  bool gpu_graphs = false;              // fused: each batch's chain as one CUDA graph launch
  uint32_t gpu_issue_threads = 1;       // fused: host threads issuing each chain's batches
  uint32_t batch_deadline_us = 0;       // every chain's batching deadline; 0: a quarter of its bound
  uint32_t queue_batches = 0;           // batches an NF's input queue holds; 0: no bound
  std::string scheduler = "unco";       // GPU sharing: temporal | fair | unco | gnet
  uint32_t gpu_sms = 0;                 // SMs the chains may use (0: the whole GPU)
  uint32_t nf_process_timeout_ms = 30000;  // an NF process that answers nothing this long is hung
  std::string model_file;               // gnet: performance model (gpunfv profile's output)
  double latency_bound_us = 1000;       // every chain's bound unless it names its own; gnet's L
  double sched_p = 0.1;                 // gnet: throughput step P per round
  double sched_c_us = 20;               // gnet: overhead C per launch
  bool sched_fold_remainder = true;     // gnet: SMs below a partition step join the limiting NF
  uint32_t ingress_threads = 0;         // per chain, at most this many rx threads; 0: one per rx queue
  bool ingress_adapt = false;           // a chain's rx queues on as few of its rx threads as keep up
  uint32_t egress_threads = 0;          // at most this many egress threads in all; 0: no cap
  uint32_t egress_threads_per_chain = 0;  // threads sharing a chain's egress; 0: 2 on 8+ cores, else 1
  uint32_t max_input_file_mb = kDefaultMaxInputFileMb;      // per route/rule file, decompressed (core/text_file.h)
  uint32_t max_pool_memory_percent = 50;  // the batch pool's share of physical memory, at most
  MetricsSettings metrics;
  std::string control;                  // control socket path (Unix stream socket); empty: none
};

struct RuntimeConfig {
  std::string file;
  std::vector<std::unique_ptr<Port>> ports;       // index = port id
  std::vector<std::unique_ptr<NetworkFunction>> nfs;
  std::vector<Chain> chains;
  std::vector<ForwardSpec> forwards;              // `forward:` (chain/forward_spec.h)
  Settings settings;
  bool nf_processes = false;  // some NF runs in an NF process: batches in shared memory
};

}  // namespace gpunfv
