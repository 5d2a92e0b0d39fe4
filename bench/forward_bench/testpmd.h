// dpdk-testpmd in io mode as forward_bench's peer, on net_ring ports of its own process, its
// forwarding lcores pinned to the CPUs our forwards use. Two ways to run it:
// - a process per row (run_testpmd): --tx-first and --stats-period=1, the median of the
//   per-second Tx-pps after start-up (3 s) is the rate;
// - one interactive process for the whole run (TestpmdSession): each row is `start tx_first`,
//   a warm-up, two `show port stats all` around the measured window (Tx-pps "since last show" is
//   the rate), `stop`.
// Either runs on a pseudo-terminal: into a pipe testpmd's output is block-buffered and comes only
// at exit. A row then costs its window, not a process start, so rows of ours and
//   testpmd's alternate within about a second: on hosts whose speed drifts over tens of seconds
//   the rounds' paired ratios are closer in time. `start` drains the rx queue first (testpmd
//   flushes it unless --no-flush-rx), so every row circulates 32 fresh frames, as ours do.
// Rates are Tx-pps scaled by the TSC rate measured / the one DPDK assumes (tsc_rate_ratio).
// Errors: a row whose testpmd gave no rate has mpps 0 and says why in its note.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "forward_bench/row.h"

namespace gpunfv::bench {

// Measured / assumed TSC rate (1 where DPDK is not up), measured once over 200 ms; `text`
// says both rates.
double tsc_rate_ratio(std::string* text = nullptr);

Row run_testpmd(const std::string& testpmd, uint32_t size, double seconds, const std::vector<int>& cpus,
                bool one_port);

class TestpmdProcess;  // testpmd on a pseudo-terminal and its output (testpmd.cpp)

class TestpmdSession {
 public:
  // Starts testpmd interactively (-i) on one port looped onto itself or two ports, lcores as
  // run_testpmd's. A session that failed to start gives rows with mpps 0 and a note.
  TestpmdSession(const std::string& testpmd, const std::vector<int>& cpus, bool one_port);
  ~TestpmdSession();  // quits testpmd (kills it if it does not quit)
  TestpmdSession(const TestpmdSession&) = delete;
  TestpmdSession& operator=(const TestpmdSession&) = delete;

  Row measure(uint32_t size, double seconds);

 private:
  bool one_port_;
  std::unique_ptr<TestpmdProcess> process_;
  uint32_t size_ = 0;  // the frame size last set (set txpkts)
  std::string error_;
};

}  // namespace gpunfv::bench
