// Whether a CUDA device can be used: false in a build without CUDA, and on a machine whose
// driver reports no device (CI). Clears the CUDA error such a query leaves behind.
#pragma once

namespace gpunfv {
bool cuda_device_available();
}  // namespace gpunfv
