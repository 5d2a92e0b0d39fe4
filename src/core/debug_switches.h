// Debug and measurement switches: every GPUNFV_* environment variable gpunfv reads is read here
// and nowhere else, and docs/configuration.md ("Environment and debug switches") has the table.
// None is needed in normal use; each changes what a run does so that one cost can be measured
// or one path forced.
//
// Errors: ConfigError naming the variable for a value it does not take (a switch takes 1 or 0,
// or is unset or empty; a number must be a number in range), so a mistyped switch is never
// silently ignored.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpunfv {

struct DebugSwitches {
  bool skip_collect = false;       // GPUNFV_DEBUG_SKIP_COLLECT
  bool full_download = false;      // GPUNFV_DEBUG_FULL_DOWNLOAD
  bool upload_prefix = false;      // GPUNFV_DEBUG_UPLOAD_PREFIX
  bool counts_by_copy = false;     // GPUNFV_DEBUG_COUNTS_BY_COPY
  bool switch_kernels = false;     // GPUNFV_DEBUG_SWITCH_KERNELS
  bool close_while_issuing = false;  // GPUNFV_DEBUG_CLOSE_WHILE_ISSUING
  uint64_t replan_ms = 0;          // GPUNFV_DEBUG_REPLAN_MS (0: re-plans only as measured rates ask)
  bool flow = false;               // GPUNFV_DEBUG_FLOW
  uint32_t step_times = 0;         // GPUNFV_DEBUG_STEP_TIMES (0: none timed)
  uint32_t nids_lanes = 0;         // GPUNFV_NIDS_LANES: 4, 8, 16 or 32 (0: the NF's choice)
  uint32_t nids_chunk = 0;         // GPUNFV_NIDS_CHUNK: 8, 16, 32 or 64 bytes (0: by batch size)
  uint32_t ipsec_lanes = 0;        // GPUNFV_IPSEC_LANES: 1, 2, 4 or 8 (0: the NF's choice)
  bool no_green_contexts = false;  // GPUNFV_NO_GREEN_CONTEXTS
  std::string python;              // GPUNFV_PYTHON (empty: the HTML report's default Python)
};

// Reads the environment now, on every call (a test sets a variable between runs).
DebugSwitches debug_switches();

// Every variable debug_switches() reads, with what it does (one line each, as documented).
struct DebugSwitchDoc {
  std::string_view name;
  std::string_view effect;
};
const std::vector<DebugSwitchDoc>& debug_switch_docs();

}  // namespace gpunfv
