#pragma once
// Utilization of the GPU (compute busy) and of each link level over the step: bytes each GPU sends per
// step over the level's per-GPU line rate times the step time, as the report computes it.
#include <memory>

#include <QChartView>

#include "gui/app/sim_outcome.hpp"

namespace cs::gui {

class LinkChart : public QChartView {
  Q_OBJECT
 public:
  explicit LinkChart(QWidget* parent = nullptr);
  void show_outcome(const std::shared_ptr<const SimOutcome>& current, const std::shared_ptr<const SimOutcome>& baseline);
  const QStringList& details() const { return full_; }  // each bar's full name and numbers (its tooltip)

 private:
  QStringList full_;
};

}  // namespace cs::gui
