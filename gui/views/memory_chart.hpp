#pragma once
// Memory per GPU (the peak pipeline stage) stacked by kind, with the GPU's capacity as a line; the
// pinned baseline beside the current result.
#include "gui/views/result_chart.hpp"

namespace cs::gui {

OutcomeChart* new_memory_chart(QWidget* parent = nullptr);

}  // namespace cs::gui
