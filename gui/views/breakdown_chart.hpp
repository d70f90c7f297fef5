#pragma once
// Step-time breakdown as a stacked bar: compute, exposed communication by kind (TP/CP/EP/DP/PP, the
// report's exposed_comm_s_by_kind), pipeline bubble, other; the pinned baseline is drawn beside the
// current result (A/B compare).
#include <memory>

#include <QChartView>

#include "gui/app/sim_outcome.hpp"

namespace cs::gui {

class BreakdownChart : public QChartView {
  Q_OBJECT
 public:
  explicit BreakdownChart(QWidget* parent = nullptr);
  void show_outcomes(const std::shared_ptr<const SimOutcome>& current, const std::shared_ptr<const SimOutcome>& baseline);
};

}  // namespace cs::gui
