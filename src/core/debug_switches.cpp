#include "core/debug_switches.h"

#include <cstdlib>
#include <string>

#include "core/error.h"

namespace gpunfv {

namespace {

const char* value_of(std::string_view name) { return std::getenv(std::string(name).c_str()); }

// 1: on; unset, empty or 0: off.
bool switch_on(std::string_view name) {
  const char* v = value_of(name);
  if (!v || !*v || std::string_view(v) == "0") return false;
  if (std::string_view(v) == "1") return true;
  throw ConfigError(std::string(name), "takes 1 (on) or 0 (off), not '" + std::string(v) + "'");
}

// A decimal number in [0, max]; unset or empty: 0.
uint64_t number(std::string_view name, uint64_t max) {
  const char* v = value_of(name);
  if (!v || !*v) return 0;
  const std::string text(v);
  if (text.find_first_not_of("0123456789") != std::string::npos || text.size() > 18 ||
      std::stoull(text) > max)
    throw ConfigError(std::string(name), "takes a whole number from 0 to " + std::to_string(max) +
                                             ", not '" + text + "'");
  return std::stoull(text);
}

}  // namespace

const std::vector<DebugSwitchDoc>& debug_switch_docs() {
  static const std::vector<DebugSwitchDoc> docs = {
      {"GPUNFV_DEBUG_SKIP_COLLECT", "runs no NF `collect()` on the host (NF counters stay zero): what host-side collection costs"},
      {"GPUNFV_DEBUG_FULL_DOWNLOAD", "brings every batch back from the GPU whole instead of only what egress reads"},
      {"GPUNFV_DEBUG_UPLOAD_PREFIX", "uploads a host batch's whole device prefix instead of only what ingress wrote"},
      {"GPUNFV_DEBUG_COUNTS_BY_COPY", "per-node packet counts reach the host by a 128-byte copy instead of a kernel writing pinned memory"},
      {"GPUNFV_DEBUG_SWITCH_KERNELS", "the switch after every NF runs as a kernel of its own instead of in the NF's last kernel"},
      {"GPUNFV_DEBUG_CLOSE_WHILE_ISSUING", "`fused` and `persistent`: a due batch leaves ingress while every issuing thread of its chain is busy, instead of filling until one is free"},
      {"GPUNFV_DEBUG_REPLAN_MS", "gnet re-plans every N ms, N up to 3600000 (the test that re-plans under load uses it)"},
      {"GPUNFV_DEBUG_STEP_TIMES", "`fused` and `persistent`: every Nth batch issued whole is timed step by step on the GPU; the report gives the means (`scheduler.fused_step_us`)"},
      {"GPUNFV_DEBUG_FLOW", "CPU backend: prints every chain's queue state to stderr once a second"},
      {"GPUNFV_NIDS_LANES", "NIDS GPU kernel: lanes per packet, 4, 8, 16 or 32 (default 8, more where shared memory is short)"},
      {"GPUNFV_NIDS_CHUNK", "NIDS GPU kernel: the fewest payload bytes a lane scans, 8, 16, 32 or 64 (default 16 for batches up to 1,024 packets, else 32)"},
      {"GPUNFV_IPSEC_LANES", "IPsec outbound GPU kernel: lanes per packet, 1, 2, 4 or 8 (default 8 for batches up to 1,024 packets, else 1)"},
      {"GPUNFV_NO_GREEN_CONTEXTS", "SM partitions without CUDA green contexts: a block-count cap per NF (G-NET's fallback)"},
      {"GPUNFV_PYTHON", "the Python that draws the HTML report's plots (default /usr/bin/python3, where Debian's matplotlib is)"},
  };
  return docs;
}

DebugSwitches debug_switches() {
  DebugSwitches d;
  d.skip_collect = switch_on("GPUNFV_DEBUG_SKIP_COLLECT");
  d.full_download = switch_on("GPUNFV_DEBUG_FULL_DOWNLOAD");
  d.upload_prefix = switch_on("GPUNFV_DEBUG_UPLOAD_PREFIX");
  d.counts_by_copy = switch_on("GPUNFV_DEBUG_COUNTS_BY_COPY");
  d.switch_kernels = switch_on("GPUNFV_DEBUG_SWITCH_KERNELS");
  d.close_while_issuing = switch_on("GPUNFV_DEBUG_CLOSE_WHILE_ISSUING");
  d.replan_ms = number("GPUNFV_DEBUG_REPLAN_MS", 3'600'000);  // an hour at most
  d.flow = switch_on("GPUNFV_DEBUG_FLOW");
  d.step_times = uint32_t(number("GPUNFV_DEBUG_STEP_TIMES", 1'000'000));
  d.nids_lanes = uint32_t(number("GPUNFV_NIDS_LANES", 32));
  if (d.nids_lanes != 0 && d.nids_lanes != 4 && d.nids_lanes != 8 && d.nids_lanes != 16 && d.nids_lanes != 32)
    throw ConfigError("GPUNFV_NIDS_LANES", "takes 4, 8, 16 or 32, not " + std::to_string(d.nids_lanes));
  d.nids_chunk = uint32_t(number("GPUNFV_NIDS_CHUNK", 64));
  if (d.nids_chunk != 0 && d.nids_chunk != 8 && d.nids_chunk != 16 && d.nids_chunk != 32 && d.nids_chunk != 64)
    throw ConfigError("GPUNFV_NIDS_CHUNK", "takes 8, 16, 32 or 64, not " + std::to_string(d.nids_chunk));
  d.ipsec_lanes = uint32_t(number("GPUNFV_IPSEC_LANES", 8));
  if (d.ipsec_lanes != 0 && d.ipsec_lanes != 1 && d.ipsec_lanes != 2 && d.ipsec_lanes != 4 && d.ipsec_lanes != 8)
    throw ConfigError("GPUNFV_IPSEC_LANES", "takes 1, 2, 4 or 8, not " + std::to_string(d.ipsec_lanes));
  d.no_green_contexts = switch_on("GPUNFV_NO_GREEN_CONTEXTS");
  if (const char* p = value_of("GPUNFV_PYTHON"); p && *p) {
    if (*p != '/') throw ConfigError("GPUNFV_PYTHON", "takes an absolute path to a Python, not '" + std::string(p) + "'");
    d.python = p;
  }
  return d;
}

}  // namespace gpunfv
