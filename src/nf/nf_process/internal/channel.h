// The NF process's side of its calls on the Manager (internal/manager_calls.h): they go over the
// socket whose request the calling thread is serving.
#pragma once

#include <string>

namespace gpunfv::nf_process {

// From now on the process's GPU calls go to the Manager (GPU backend). Once, before its NFs
// prepare. A build without CUDA throws std::runtime_error.
void send_gpu_calls_to_manager();

// From now on its NFs' drop reasons get their codes from the Manager (core/drop_reason.h), so
// a verdict means the same in both processes. Once, before its NFs are built.
void take_drop_codes_from_manager();

// The calling thread's GPU calls go over `fd` (-1: none; a call then throws std::logic_error).
void bind_channel(int fd);

// The calls the calling thread made that wait for its next message (GPU calls); taken, they
// are gone.
std::string take_pending_calls();

}  // namespace gpunfv::nf_process
