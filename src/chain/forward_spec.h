// A port-to-port forward as the runtime runs it (P2PNIC): its loop parameters, its router and
// where it runs. config/ fills it from a configuration's `forward:` section, which documents
// each key (config/internal/forward_config.h).
#pragma once

#include <memory>
#include <string>

#include "io/forward/forward_params.h"

namespace gpunfv {

class Router;

// A forward's parameters (io/forward/forward_params.h) and what only this layer knows: its
// router. With a route, `hook` runs the router on each frame (route_hook).
struct ForwardSpec : ForwardParams {
  std::shared_ptr<const Router> route;  // null: no routing
  std::string gpu_variant;  // `variant:` (gpuring -> gpuring only); empty: not given
  bool on_rings = false;    // between two gpuring ports: runs on their rings
};

// The host forward loop's hook for `route`: the router's per-packet logic on one frame in place.
FrameHook route_hook(std::shared_ptr<const Router> route);

}  // namespace gpunfv
