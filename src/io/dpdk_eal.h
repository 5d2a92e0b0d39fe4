// DPDK's EAL, started once per process for every part of gpunfv that uses DPDK (the `dpdk`
// port, a gpuring port's real NIC). Built with the DPDK ports (GPUNFV_HAVE_DPDK_PORT); callers
// use it only in such builds.
//
// init_dpdk_eal_once: initialises EAL from `node`'s `eal:` list (default: --in-memory) the first
// time; later callers may repeat the same list or leave it out, any other list is an error
// (rte_eal_init cannot run twice). rte_eal_init pins the calling thread to one core; the
// caller's affinity is restored right after, so threads started later are not all pinned to
// that core. Throws ConfigError naming `node` (or its eal:) when EAL refuses to start.
#pragma once

#include "core/config_node.h"

namespace gpunfv {

void init_dpdk_eal_once(const ConfigNode& node);

}  // namespace gpunfv
