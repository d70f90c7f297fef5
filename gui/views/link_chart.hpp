#pragma once
// Utilization of the GPU (compute busy) and of each link level over the step: bytes each GPU sends per
// step over the level's per-GPU line rate times the step time, as the report computes it.
#include <QStringList>

#include "gui/views/result_chart.hpp"

namespace cs::gui {

class LinkChart : public OutcomeChart {
  Q_OBJECT
 public:
  explicit LinkChart(QWidget* parent = nullptr);
  const QStringList& details() const { return full_; }  // each bar's full name and numbers (its tooltip)

 private:
  void draw(QChart& c, const SimOutcome& current, const SimOutcome* baseline);
  QStringList full_;
};

}  // namespace cs::gui
