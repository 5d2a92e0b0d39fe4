// Work recorded into a CUDA graph (stream capture) is launched after the code that recorded it
// returned: an NF's process_gpu() notes the stream it launched on and releases its table pin,
// but under capture nothing is on that stream yet. Code that waits for an NF's launches before
// it rewrites or frees what they read (a route update, retired firewall tables) therefore
// first waits for every recording under way to be launched: the recorder holds this gate
// shared from the start of a capture until its graph is on the stream (or dropped); the waiter
// takes it exclusively around its stream synchronizations. That also keeps those
// synchronizations off streams while they capture, where CUDA refuses them.
#pragma once

#include <shared_mutex>

namespace gpunfv {

inline std::shared_mutex& graph_launch_gate() {
  static std::shared_mutex gate;
  return gate;
}

}  // namespace gpunfv
