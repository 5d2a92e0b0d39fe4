// DPDK's EAL for the peers of bench/peers (rte_lpm, rte_acl): brought up once per process,
// shared by every peer. Like the peers' headers, this one includes no DPDK header.
#pragma once

#include <stdexcept>
#include <string>

namespace gpunfv {

// DPDK's EAL could not be initialised, or a peer's DPDK table could not be created or filled.
// `rte_errno()` is DPDK's error number (EACCES/EPERM: missing privilege), 0 when not from DPDK.
class DpdkError : public std::runtime_error {
 public:
  DpdkError(const std::string& what, int rte_errno_value)
      : std::runtime_error(what), rte_errno_(rte_errno_value) {}
  int rte_errno() const { return rte_errno_; }

 private:
  int rte_errno_;
};

// Initialises DPDK's EAL once per process; later calls return at once (or throw the first
// call's error again: EAL cannot be initialised twice). No hugepages, no devices, no telemetry,
// no shared files (--no-shconf; --in-memory refuses --no-huge), SIMD up to 512 bits (rte_acl's
// AVX-512 methods), one lcore: the first CPU this
// thread may run on. rte_eal_init pins the calling thread to that CPU; this puts the thread's
// CPU affinity back as it was, so threads started later are not all pinned to one core.
// Throws DpdkError.
void ensure_dpdk_eal();

// The EAL arguments ensure_dpdk_eal() uses, and DPDK's version string (for reports).
std::string dpdk_eal_args();
std::string dpdk_version();

// DPDK's text for an rte_errno value, with the number: "Invalid argument (rte_errno 22)".
std::string dpdk_errno_text(int e);

}  // namespace gpunfv
