#pragma once
// Interim sweep for the GUI's scaling curve and cost-vs-time view, until the library's sim/explore/sweep.hpp
// exists: every point is the scenario document plus a few `--set` overrides, validated and simulated
// through the same front door as the main view (parse_scenario, simulate). Swap this file for the
// library sweep when it lands; sweep_runner.cpp only calls the three functions below.
//
// Scaling curve (strong scaling): cluster.nodes at 1/4, 1/2, 1, 2 and 4 times the scenario's, same
// layout and global batch. Efficiency = (tokens/s per GPU) / (tokens/s per GPU of the smallest point
// that ran).
// Cost vs time: nodes at 1/2, 1 and 2 times, tensor parallel 1..gpus_per_node (powers of two), pipeline
// parallel 1, 2, 4, 8, 16; combinations the library rejects are left out with its message. The Pareto
// front is taken over the points that fit in memory: no other fitting point is both faster and cheaper.
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cs::gui {

struct SweepPoint {
  std::vector<std::string> overrides;  // what makes this point from the document
  bool scaling = false;                // part of the scaling curve
  bool layout = false;                 // on the cost-vs-time plot (every planned point is)
  bool valid = false;                  // validated and simulated
  std::string error;                   // the library's message when not valid
  int gpus = 0, nodes = 0, tp = 1, pp = 1, dp = 1;
  bool fits = false;
  double step_time_s = 0, tokens_per_s = 0, mfu = 0;
  double days_to_train = 0, usd_to_train = 0;  // for tokens_to_train, or per 1e9 tokens when it is 0
  bool pareto = false;
  bool current = false;                // the document's own layout
};

std::vector<SweepPoint> plan_sweep(const nlohmann::json& doc);
// Validates and simulates one point (fills valid/error/results). Never throws.
void run_sweep_point(const nlohmann::json& doc, const std::string& file, SweepPoint& point);
// Marks the Pareto front among valid, fitting layout points.
void mark_pareto(std::vector<SweepPoint>& points);
// A short label: "8 nodes TP4 PP2 DP8".
std::string point_label(const SweepPoint& p);

}  // namespace cs::gui
