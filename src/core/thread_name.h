// Names the calling thread, so `top -H`, /proc/PID/task/*/comm and debuggers show which part of
// the pipeline each thread is (ingress, a GPU stage, egress...). Linux keeps 15 characters; a
// longer name is cut, never an error.
#pragma once

#include <pthread.h>

#include <string>

namespace gpunfv {

inline void set_thread_name(const std::string& name) {
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
}

}  // namespace gpunfv
