#pragma once
// Scaling curve from the sweep: throughput (tokens/s) and scaling efficiency against the GPU count,
// same layout and global batch (strong scaling); the points are SweepPlan::scaling, their numbers the
// reports sim/explore computed.
#include "gui/views/result_chart.hpp"

namespace cs::gui {

class ScalingChart : public SweepChart {
  Q_OBJECT
 public:
  explicit ScalingChart(QWidget* parent = nullptr);

 private:
  void draw(QChart& c, const SweepResult& sweep) override;
};

}  // namespace cs::gui
