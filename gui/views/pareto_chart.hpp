#pragma once
// Cost vs time of the layout sweep: each point a layout (nodes, TP, PP) at its report's days and dollars
// to train (per billion tokens when the scenario sets no tokens_to_train); sim::pareto_front's points
// (no other fitting layout is both faster and cheaper) joined and highlighted; layouts that do not fit
// in memory greyed. Clicking a point emits it so the window loads its layout. Points that crowd a corner
// on linear axes spread out on log axes (set_log_axes, the View menu); dragging a rectangle zooms into
// it, a right click zooms out.
#include "gui/views/result_chart.hpp"

class QScatterSeries;

namespace cs::gui {

class ParetoChart : public SweepChart {
  Q_OBJECT
 public:
  explicit ParetoChart(QWidget* parent = nullptr);
  // Index (into SweepResult::points) of the point nearest to a value-space position, or -1.
  int nearest(QPointF value) const;
  void set_log_axes(bool on);
  bool log_axes() const { return log_; }

 signals:
  void point_clicked(const cs::sim::SweepPoint& point);

 private:
  void draw(QChart& c, const SweepResult& sweep) override;
  void connect_series(QScatterSeries* s);
  double x_span_ = 1, y_span_ = 1;
  double y_scale_ = 1;  // dollars per unit of the y axis
  bool log_ = false;
};

}  // namespace cs::gui
