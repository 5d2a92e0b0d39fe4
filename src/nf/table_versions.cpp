#include "nf/table_versions.h"

#include <nlohmann/json.hpp>

namespace gpunfv {

TableVersionLog::Counter TableVersionLog::record(uint64_t number, std::string change, uint64_t entries) {
  auto counter = std::make_shared<std::atomic<uint64_t>>(0);
  std::lock_guard<std::mutex> lk(m_);
  records_.push_back(Record{number, std::move(change), entries, counter});
  return counter;
}

uint64_t TableVersionLog::latest() const {
  std::lock_guard<std::mutex> lk(m_);
  return records_.empty() ? 0 : records_.back().number;
}

nlohmann::json TableVersionLog::json() const {
  std::lock_guard<std::mutex> lk(m_);
  nlohmann::json out = nlohmann::json::array();
  for (const Record& r : records_)
    out.push_back({{"version", r.number}, {"change", r.change}, {"entries", r.entries},
                   {"packets", r.packets->load(std::memory_order_relaxed)}});
  return out;
}

uint64_t TableVersionLog::packets() const {
  std::lock_guard<std::mutex> lk(m_);
  uint64_t n = 0;
  for (const Record& r : records_) n += r.packets->load(std::memory_order_relaxed);
  return n;
}

}  // namespace gpunfv
