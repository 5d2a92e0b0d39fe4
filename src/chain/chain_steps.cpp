#include "chain/chain_steps.h"

#include "chain/classify.h"
#include "core/chain_switch.h"

namespace gpunfv {

void enter_chain_cpu(const Chain& c, const BatchView& b) {
  for (uint32_t k = 0; k < kMaxChainNodes; ++k) b.node_packets[k] = 0;
  for (uint32_t i = 0; i < b.count; ++i) {
    classify_packet(b, i);
    uint8_t to = enter_chain(c.view, b, i);
    if (to != kChainDone) ++b.node_packets[to];
  }
}

void run_node_cpu(const RuntimeConfig& rc, const Chain& c, const BatchView& b, uint8_t k) {
  const NetworkFunction& nf = *rc.nfs[c.path[k]];
  if (b.node_packets[k] == 0 || nf.quarantined()) {  // no NF work, no survivors
    if (b.node_packets[k] != 0) drop_at_node_cpu(b, k, DropReason::nf_isolation_fault);
    nf.skip(b, k);
    return;
  }
  nf.process(b, 0, b.count, k);
  for (uint32_t i = 0; i < b.count; ++i) {
    uint8_t to = switch_after_node(c.view, b, i, k);
    if (to != kChainDone) ++b.node_packets[to];
  }
}

void drop_at_node_cpu(const BatchView& b, uint8_t k, DropReason reason) {
  for (uint32_t i = 0; i < b.count; ++i) drop_at_node(b, i, k, reason);
  b.node_packets[k] = 0;
}

}  // namespace gpunfv
