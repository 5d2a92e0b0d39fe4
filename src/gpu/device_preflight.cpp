#include "gpu/device_preflight.h"

#include <fmt/format.h>

namespace gpunfv {

std::string PreflightReport::line() const {
  return fmt::format("{} kernels loaded, local memory <= {} B/thread, stack limit {} B", kernels,
                     max_local_bytes, stack_limit);
}

}  // namespace gpunfv
