#include "peers/eal.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_version.h>

#include <sched.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

namespace gpunfv {

namespace {

// Virtual memory EAL reserves (without hugepages it is touched only as used): each rte_lpm
// takes 64 MiB of tbl24, 8 B per rule and 1 KiB per tbl8 group; an rte_acl context of a 10k
// ClassBench set a few MiB to a few hundred MiB. This holds several tables at once.
constexpr const char* kEalMemoryMb = "1024";

struct EalState {
  std::once_flag once;
  std::string args;
  std::string error;  // empty when the EAL is up
  int error_errno = 0;
};

EalState& eal_state() {
  static EalState s;
  return s;
}

void init_eal(EalState& s) {
  cpu_set_t saved;
  CPU_ZERO(&saved);
  if (sched_getaffinity(0, sizeof saved, &saved) != 0) {
    s.error = std::string("sched_getaffinity: ") + std::strerror(errno);
    s.error_errno = errno;
    return;
  }
  // The one lcore: the first CPU this thread may run on (CPU 0 may be outside a cpuset).
  int first_cpu = 0;
  while (first_cpu < CPU_SETSIZE && !CPU_ISSET(first_cpu, &saved)) ++first_cpu;
  if (first_cpu == CPU_SETSIZE) first_cpu = 0;

  std::vector<std::string> args = {"gpunfv-dpdk-peer",
                                   "--no-huge",      // anonymous memory, no hugetlbfs
                                   "--no-pci",       // no device scan
                                   "--no-telemetry", // no telemetry socket and thread
                                   "--no-shconf",    // no shared config files (--in-memory
                                                     // does the same but refuses --no-huge)
                                   "-m", kEalMemoryMb,
                                   // lets rte_acl use its AVX-512 classify methods where the
                                   // CPU has them (the EAL's default limit is 256 bits)
                                   "--force-max-simd-bitwidth=512",
                                   "-l", std::to_string(first_cpu),
                                   "--log-level=lib.eal:error"};
  for (const std::string& a : args) {
    if (!s.args.empty()) s.args += ' ';
    s.args += a;
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int rc = rte_eal_init(int(args.size()), argv.data());
  int init_errno = rte_errno;
  // rte_eal_init pinned this thread to the lcore's CPU; put the affinity back (also after a
  // failure, which may come after the pinning).
  bool restored = sched_setaffinity(0, sizeof saved, &saved) == 0;
  // EALREADY: a gpunfv dpdk port (src/io/dpdk_port.cpp) brought the EAL up in this process.
  if (rc < 0 && init_errno == EALREADY) {
    s.args += " (not used: the EAL was already up in this process)";
    rc = 0;
  }
  if (rc < 0) {
    s.error = "DPDK EAL initialisation failed: " + dpdk_errno_text(init_errno) + "; EAL arguments: " +
              s.args;
    s.error_errno = init_errno;
  } else if (!restored) {
    s.error = std::string("DPDK EAL: cannot restore the CPU affinity after rte_eal_init: ") +
              std::strerror(errno);
    s.error_errno = errno;
  }
}

}  // namespace

std::string dpdk_errno_text(int e) {
  return std::string(rte_strerror(e)) + " (rte_errno " + std::to_string(e) + ")";
}

void ensure_dpdk_eal() {
  EalState& s = eal_state();
  std::call_once(s.once, [&] { init_eal(s); });
  if (!s.error.empty()) throw DpdkError(s.error, s.error_errno);
}

std::string dpdk_eal_args() {
  EalState& s = eal_state();
  return s.args;
}

std::string dpdk_version() { return rte_version(); }

}  // namespace gpunfv
