#include "nf/ttl_filter/ttl_filter.h"

namespace gpunfv {

std::unique_ptr<TtlFilter> TtlFilter::from_config(const ConfigNode& node) {
  node.only_keys({"name", "type", "min_ttl"});
  const auto min_ttl = uint8_t(node.int_or("min_ttl", 255, 1, 255));
  return std::make_unique<TtlFilter>(node.str("name"), min_ttl);
}

std::string TtlFilter::describe() const {
  return "ttl_filter " + name() + ": drops IP packets with a TTL or hop limit below " +
         std::to_string(min_ttl_);
}

GPUNFV_PER_PACKET_NF("ttl_filter", TtlFilter);

}  // namespace gpunfv
