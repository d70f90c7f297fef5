#pragma once
// Step-time breakdown as a stacked bar: compute, exposed communication by kind (TP/CP/EP/DP/PP, the
// report's exposed_comm_s_by_kind), pipeline bubble, other; the pinned baseline is drawn beside the
// current result (A/B compare).
#include "gui/views/result_chart.hpp"

namespace cs::gui {

class BreakdownChart : public OutcomeChart {
  Q_OBJECT
 public:
  explicit BreakdownChart(QWidget* parent = nullptr);

 private:
  void draw(QChart& c, const SimOutcome& current, const SimOutcome* baseline) override;
};

}  // namespace cs::gui
