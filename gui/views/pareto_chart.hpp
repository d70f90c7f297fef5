#pragma once
// Cost vs time of the layout sweep: each point a layout (nodes, TP, PP), time and dollars to train;
// the Pareto front (no other fitting layout is both faster and cheaper) joined and highlighted; layouts
// that do not fit in memory greyed. Clicking a point emits its overrides so the window loads it.
#include <memory>
#include <vector>

#include <QChartView>

#include "gui/app/sweep.hpp"

class QScatterSeries;

namespace cs::gui {

class ParetoChart : public QChartView {
  Q_OBJECT
 public:
  explicit ParetoChart(QWidget* parent = nullptr);
  void show_points(const std::shared_ptr<const std::vector<SweepPoint>>& points, bool per_billion_tokens);
  // Index of the point nearest to a value-space position, or -1.
  int nearest(QPointF value) const;

 signals:
  void point_clicked(const cs::gui::SweepPoint& point);

 private:
  void connect_series(QScatterSeries* s);
  std::shared_ptr<const std::vector<SweepPoint>> points_;
  double x_span_ = 1, y_span_ = 1;
  double y_scale_ = 1;  // dollars per unit of the y axis
};

}  // namespace cs::gui
