#include "core/shared_arena.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <new>
#include <system_error>

namespace gpunfv {

namespace {
[[noreturn]] void fail(const char* what) { throw std::system_error(errno, std::generic_category(), what); }
}  // namespace

SharedArena& SharedArena::instance() {
  static SharedArena arena;
  return arena;
}

SharedArena::SharedArena() {
  fd_ = memfd_create("gpunfv-batches", MFD_CLOEXEC);
  if (fd_ < 0) fail("memfd_create (batches shared with NF processes)");
  if (ftruncate(fd_, off_t(kReserveBytes)) != 0) fail("ftruncate (batches shared with NF processes)");
  size_ = kReserveBytes;
  base_ = map(fd_, size_);
}

uint8_t* SharedArena::map(int fd, size_t size) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  if (p == MAP_FAILED) fail("mmap (batches shared with NF processes)");
  return static_cast<uint8_t*>(p);
}

void* SharedArena::allocate(size_t bytes) {
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  bytes = (bytes + page - 1) / page * page;
  std::lock_guard<std::mutex> lk(m_);
  if (bytes > size_ - used_) throw std::bad_alloc();
  void* p = base_ + used_;
  used_ += bytes;
  return p;
}

}  // namespace gpunfv
