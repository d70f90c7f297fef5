#pragma once
// Memory per GPU (the peak pipeline stage) stacked by kind, with the GPU's capacity as a line; the
// pinned baseline beside the current result.
#include <memory>

#include <QChartView>

#include "gui/app/sim_outcome.hpp"

namespace cs::gui {

class MemoryChart : public QChartView {
  Q_OBJECT
 public:
  explicit MemoryChart(QWidget* parent = nullptr);
  void show_outcomes(const std::shared_ptr<const SimOutcome>& current, const std::shared_ptr<const SimOutcome>& baseline);
};

}  // namespace cs::gui
