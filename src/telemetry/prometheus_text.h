// A MetricsSnapshot in the Prometheus text exposition format (version 0.0.4), what the
// metrics endpoint serves at /metrics. Names and units follow Prometheus's conventions:
// counters end in _total, times are in seconds, latency is a histogram (_bucket{le=...},
// _sum, _count). docs/operations.md lists every metric.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chain/metrics_snapshot.h"

namespace gpunfv {

std::string prometheus_text(const MetricsSnapshot& m);

// The histogram's bucket boundaries exposed as `le`, in ns: two per power of two from 1 us to
// 68.7 s (2^k - 1 and 1.5 x 2^k - 1), each the upper bound of a LatencyHistogram bucket, so
// every cumulative count is exact, not interpolated.
const std::vector<uint64_t>& prometheus_latency_bounds_ns();

}  // namespace gpunfv
