// Memory shared with NF processes (nf/nf_process/): one anonymous shared file (memfd), mapped in
// the Manager and in every NF process, so that a batch allocated from it is the same bytes in
// both and an NF process works on the Manager's batches in place. The Manager reserves a large
// virtual size once; pages are backed only where batches are allocated.
//
// Errors: creating or mapping the file throws std::system_error; an allocation past the
// reserve throws std::bad_alloc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>

namespace gpunfv {

class SharedArena {
 public:
  // The Manager's arena, made on first use.
  static SharedArena& instance();

  // `bytes` rounded up to whole pages. Thread-safe. Never freed: batches live for the run.
  void* allocate(size_t bytes);

  int fd() const { return fd_; }
  size_t size() const { return size_; }
  uint8_t* base() const { return base_; }
  bool contains(const void* p) const {
    return p >= base_ && static_cast<const uint8_t*>(p) < base_ + size_;
  }
  uint64_t offset_of(const void* p) const { return static_cast<const uint8_t*>(p) - base_; }

  // An NF process: the Manager's arena from the file it inherited as `fd`.
  static uint8_t* map(int fd, size_t size);

  static constexpr size_t kReserveBytes = size_t(64) << 30;

 private:
  SharedArena();
  int fd_ = -1;
  size_t size_ = 0;
  uint8_t* base_ = nullptr;
  std::mutex m_;
  size_t used_ = 0;
};

}  // namespace gpunfv
