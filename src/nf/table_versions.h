// The versions of an NF's live tables (replaced while packets flow, through the control socket
// or SIGHUP) and the packets each version processed: every packet an NF processes is counted
// against the one version its batch ran with, so the report shows that no packet saw two.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace gpunfv {

class TableVersionLog {
 public:
  using Counter = std::shared_ptr<std::atomic<uint64_t>>;

  // Records version `number` (made by `change`, e.g. "start", "routes add 1") and returns the
  // counter its batches add their packets to.
  Counter record(uint64_t number, std::string change, uint64_t entries);
  uint64_t latest() const;
  // [{"version", "change", "entries", "packets"}...], oldest first.
  nlohmann::json json() const;
  // Packets over every version.
  uint64_t packets() const;

 private:
  struct Record {
    uint64_t number;
    std::string change;
    uint64_t entries;
    Counter packets;
  };
  mutable std::mutex m_;
  std::vector<Record> records_;
};

}  // namespace gpunfv
