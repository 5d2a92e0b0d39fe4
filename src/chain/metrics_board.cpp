#include "chain/metrics_board.h"

namespace gpunfv {

void MetricsBoard::set_live(Source s) {
  std::lock_guard<std::mutex> lk(m_);
  live_ = std::move(s);
  final_.reset();
}

void MetricsBoard::set_final(MetricsSnapshot m) {
  std::lock_guard<std::mutex> lk(m_);
  live_ = nullptr;
  final_ = std::move(m);
}

void MetricsBoard::clear() {
  std::lock_guard<std::mutex> lk(m_);
  live_ = nullptr;
}

std::optional<MetricsSnapshot> MetricsBoard::current() const {
  // Held while the source reads, so set_final() cannot return during a reading.
  std::lock_guard<std::mutex> lk(m_);
  if (final_) return final_;
  if (live_) return live_();
  return std::nullopt;
}

}  // namespace gpunfv
