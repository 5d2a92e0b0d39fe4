// The files a configuration names, by role: what the run reads (the configuration itself,
// rx captures, route, rule and model files) and what it writes (tx captures, alert logs).
#pragma once

#include "core/config_node.h"

namespace gpunfv {

// Fails (ConfigError at the writing key's line) when a file the run writes is also one it
// reads, or is written twice: the run would destroy its own input or interleave two outputs.
// Call before any port is built: opening a tx capture truncates it. Only looks at the keys it
// knows and skips malformed parts, which the parsers report.
void check_file_roles(const ConfigNode& root);

}  // namespace gpunfv
