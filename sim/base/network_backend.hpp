#pragma once
// Which network model runs the collectives: `simulation.network` in a scenario, `--network` of
// `clustersim collective`. sim/network/make_network.hpp builds the backend.
#include "sim/base/name_table.hpp"

namespace cs::sim {

enum class NetworkBackend {
  analytical,  // closed-form alpha-beta per collective, no contention
  flow,        // routed flows sharing links max-min fairly
};

inline constexpr std::array<Named<NetworkBackend>, 2> kNetworkBackendNames{{
    {NetworkBackend::analytical, "analytical"},
    {NetworkBackend::flow, "flow"},
}};

constexpr std::string_view to_string(NetworkBackend b) { return name_of(kNetworkBackendNames, b); }

}  // namespace cs::sim
