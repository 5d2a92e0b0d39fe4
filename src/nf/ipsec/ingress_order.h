// Runs a step in ingress order on the CPU backend. CPU workers take whole batches concurrently
// (chain/cpu_stage.cpp), so batch 7 may reach an NF before batch 6; a step whose result
// depends on the order of packets (ESP sequence numbers, replay windows) waits here until every
// earlier packet of the same ingress port has been through it.
//
// The order is read from the batch itself: the ingress thread numbers each port's packets
// 0, 1, 2, ... in BatchView::seq and fills batches with consecutive numbers. A range whose
// numbers are not consecutive (a batch built by hand, as some tests do) carries no order and
// runs at once. Every batch takes its turn, also one with no packet for the NF (all dropped
// upstream or sent another way): the framework calls NetworkFunction::skip() for it, which runs
// an empty step here. No deadlock: workers take batches first-in first-out, so the batch a
// worker waits for is held by a worker that waits only for still earlier batches. A wait still
// ends after kMaxWait (and warns once), a safety net for a caller that loses a range.
//
// The GPU backend needs none of this: its ordered kernels run on one stream in launch order
// (see ipsec.cu).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "core/batch.h"

namespace gpunfv::esp {

class IngressOrder {
 public:
  static constexpr std::chrono::seconds kMaxWait{10};

  explicit IngressOrder(std::string owner) : owner_(std::move(owner)) {}

  // Runs `step` on packets [begin, end) of `b` once every packet of b's ingress port numbered
  // below seq[begin] has been through `run` at the same `position`; one step at a time.
  void run(const BatchView& b, uint32_t begin, uint32_t end, uint8_t position,
           const std::function<void()>& step);
  // From now on, a port and position not yet seen start at the first packet seen there (the NF
  // starts mid-run: NetworkFunction::resume_mid_run). Batches that arrive just out of order
  // right then run out of order.
  void resume_mid_run();

 private:
  std::string owner_;
  std::mutex m_;
  std::condition_variable cv_;
  std::map<uint32_t, uint64_t> next_;  // (port << 8 | position) -> next ingress number due
  bool warned_ = false;
  bool mid_run_ = false;
};

}  // namespace gpunfv::esp
