// Page-locked host memory for batches the GPU copies. Without CUDA (or without a device) it
// returns nullptr and the caller uses ordinary memory, so the CPU backend never needs a GPU.
#pragma once

#include <cstddef>

namespace gpunfv {
void* host_alloc_pinned(size_t bytes);
void host_free_pinned(void* p);
}  // namespace gpunfv
