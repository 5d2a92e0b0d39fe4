// A chain configuration loaded from YAML: ports, NFs, chains and settings, all validated.
// Errors: load_runtime_config throws ConfigError naming the file and line.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chain/forward_config.h"
#include "io/port.h"
#include "nf/network_function.h"

namespace gpunfv {

struct Chain {
  std::string name;                     // "from->to" unless named
  uint16_t from = 0;                    // ingress port id
  std::vector<uint16_t> path;           // NF indices, in order
  uint16_t to = kNoPort;                // egress for packets whose NFs chose none
};

struct Settings {
  uint32_t batch_size = 2048;           // packets per batch
  uint32_t batches = 64;                // batches in the pool (allocated once)
  uint32_t slot_bytes = 0;              // 0: from the ports' largest frame
  uint32_t workers = 0;                 // CPU backend worker threads; 0: all cores but two
  uint32_t gpu_in_flight = 8;           // GPU backend: batches in flight
  uint32_t batch_timeout_us = 100;      // a partial batch is sent after this idle time
};

struct RuntimeConfig {
  std::string file;
  std::vector<std::unique_ptr<Port>> ports;       // index = port id
  std::vector<std::unique_ptr<NetworkFunction>> nfs;
  std::vector<Chain> chains;
  std::vector<ForwardSpec> forwards;              // `forward:` (chain/forward_config.h)
  Settings settings;
};

RuntimeConfig load_runtime_config(const std::string& path);

}  // namespace gpunfv
