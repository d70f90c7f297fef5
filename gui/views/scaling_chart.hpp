#pragma once
// Scaling curve from the sweep: throughput (tokens/s) and scaling efficiency against the GPU count,
// same layout and global batch (strong scaling); the points are SweepPlan::scaling, their numbers the
// reports sim/explore computed.
#include <memory>

#include <QChartView>

#include "gui/app/sweep_plan.hpp"

namespace cs::gui {

class ScalingChart : public QChartView {
  Q_OBJECT
 public:
  explicit ScalingChart(QWidget* parent = nullptr);
  void show_points(const std::shared_ptr<const SweepResult>& sweep);
};

}  // namespace cs::gui
