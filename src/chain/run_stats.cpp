#include "chain/run_stats.h"

namespace gpunfv {

uint64_t RunStats::total_rx() const {
  uint64_t t = 0;
  for (const auto& p : ports) t += p->rx_packets.load();
  return t;
}

uint64_t RunStats::total_tx() const {
  uint64_t t = 0;
  for (const auto& p : ports) t += p->tx_packets.load();
  return t;
}

uint64_t RunStats::total_dropped() const {
  uint64_t t = 0;
  for (const auto& p : ports) t += p->dropped.total();
  return t;
}

std::string RunStats::accounting_errors() const {
  std::string err;
  for (const auto& p : ports) {
    uint64_t rx = p->rx_packets, fwd = p->forwarded, drop = p->dropped.total();
    if (rx != fwd + drop)
      err += "port " + p->name + ": rx " + std::to_string(rx) + " != forwarded " +
             std::to_string(fwd) + " + dropped " + std::to_string(drop) + "\n";
  }
  for (const auto& n : nfs)
    if (n.in != n.out + n.drops.total())
      err += "nf " + n.name + ": in " + std::to_string(n.in) + " != out " + std::to_string(n.out) +
             " + drops " + std::to_string(n.drops.total()) + "\n";
  if (total_rx() != total_tx() + total_dropped())
    err += "total: rx " + std::to_string(total_rx()) + " != tx " + std::to_string(total_tx()) +
           " + dropped " + std::to_string(total_dropped()) + "\n";
  return err;
}

}  // namespace gpunfv
