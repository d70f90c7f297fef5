#pragma once
// Step-time breakdown as a stacked bar: compute, exposed communication by kind (TP/CP/EP/DP/PP, the
// report's exposed_comm_s_by_kind), pipeline bubble, other; the pinned baseline is drawn beside the
// current result (A/B compare).
#include "gui/views/result_chart.hpp"

namespace cs::gui {

OutcomeChart* new_breakdown_chart(QWidget* parent = nullptr);

}  // namespace cs::gui
