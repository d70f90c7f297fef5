#pragma once
// Memory per GPU (the peak pipeline stage) stacked by kind, with the GPU's capacity as a line; the
// pinned baseline beside the current result.
#include "gui/views/result_chart.hpp"

namespace cs::gui {

class MemoryChart : public OutcomeChart {
  Q_OBJECT
 public:
  explicit MemoryChart(QWidget* parent = nullptr);

 private:
  void draw(QChart& c, const SimOutcome& current, const SimOutcome* baseline) override;
};

}  // namespace cs::gui
