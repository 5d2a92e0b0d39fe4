// Configuration loading: a YAML file to the RuntimeConfig the runtime runs (chain/runtime_config.h).
// The file's format is docs/configuration.md.
// Errors: every function throws ConfigError naming the file and line (and the key) at fault;
// NFs and ports report their own errors the same way.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chain/runtime_config.h"
#include "io/port.h"

namespace gpunfv {

// Loads, builds (ports, NFs) and validates the configuration at `path`.
RuntimeConfig load_runtime_config(const std::string& path);

// The NFs of `path` whose entries say `process: NAME`, in their order, as the NF process NAME
// builds them (nf/nf_process/nf_process.h).
std::vector<std::unique_ptr<NetworkFunction>> load_nf_process_nfs(const std::string& path,
                                                                   const std::string& process);

// A generator port like the first chain's ingress port of `rc`, making frames of `size` bytes
// as fast as asked (`gpunfv profile`). Throws ConfigError when that port is not a generator.
std::unique_ptr<Port> sized_generator(const RuntimeConfig& rc, uint32_t size);

// The NF types this build knows, for error messages and --help.
std::string known_nf_types();

}  // namespace gpunfv
