// Page-locked host memory for batches the GPU copies. Without CUDA (or without a device) it
// returns nullptr and the caller uses ordinary memory, so the CPU backend never needs a GPU.
#pragma once

#include <cstddef>

namespace gpunfv {
void* host_alloc_pinned(size_t bytes);
void host_free_pinned(void* p);
// Page-locks memory allocated elsewhere (shared with NF processes) for the run; false without a
// device.
bool host_register_pinned(void* p, size_t bytes);
}  // namespace gpunfv
