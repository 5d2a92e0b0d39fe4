// Names the calling thread, so `top -H`, /proc/PID/task/*/comm and debuggers show which part of
// the pipeline each thread is (ingress, a GPU stage, egress...). Linux keeps 15 characters; a
// longer name is cut, never an error.
#pragma once

#include <pthread.h>
#include <sys/prctl.h>

#include <string>

namespace gpunfv {

inline void set_thread_name(const std::string& name) {
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
}

// For a thread whose idle loop sleeps a few microseconds between polls: Linux lets a sleep run
// up to the thread's timer slack past its end, 50 us by default, which turned every 5 us poll
// of the pipeline's stage threads into 55 us of latency per hop at low load. 1 us here.
inline void use_fine_timer_slack() { prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); }

}  // namespace gpunfv
