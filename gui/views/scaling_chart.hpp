#pragma once
// Scaling curve from the sweep: throughput (tokens/s) and scaling efficiency against the GPU count,
// same layout and global batch (strong scaling).
#include <memory>
#include <vector>

#include <QChartView>

#include "gui/app/sweep.hpp"

namespace cs::gui {

class ScalingChart : public QChartView {
  Q_OBJECT
 public:
  explicit ScalingChart(QWidget* parent = nullptr);
  void show_points(const std::shared_ptr<const std::vector<SweepPoint>>& points);
};

}  // namespace cs::gui
