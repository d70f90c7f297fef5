#pragma once
// Cost vs time of the layout sweep: each point a layout (nodes, TP, PP) at its report's days and dollars
// to train (per billion tokens when the scenario sets no tokens_to_train); sim::pareto_front's points
// (no other fitting layout is both faster and cheaper) joined and highlighted; layouts that do not fit
// in memory greyed. Clicking a point emits it so the window loads its layout. Points that crowd a corner
// on linear axes spread out on log axes (set_log_axes, the View menu); dragging a rectangle zooms into
// it, a right click zooms out.
//
// Click or drag: QChartView's rubber band takes every left press inside the plot area (qchartview.cpp,
// Qt 6.4: mousePressEvent shows the band and accepts the event, so the scatter series never sees the
// press and a click "zoomed" into a rectangle of a few pixels). So a left press is held back here: a
// release within QApplication::startDragDistance() of it is a click, which loads the drawn point under
// it (point_at, in pixels); a move beyond that distance hands the press, at its own position, to the
// rubber band, which then zooms as before.
#include <optional>

#include <QPoint>

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
  // Index (into SweepResult::points) of the drawn point nearest to a viewport position, within
  // kClickRadius pixels of its centre, or -1: what a click there loads.
  int point_at(QPoint viewport_pos) const;
  static constexpr int kClickRadius = 9;  // the front's marker is 13 px across: its edge, and a little more

 signals:
  void point_clicked(const cs::sim::SweepPoint& point);

 private:
  void draw(QChart& c, const SweepResult& sweep) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void connect_series(QScatterSeries* s);
  double x_span_ = 1, y_span_ = 1;
  double y_scale_ = 1;  // dollars per unit of the y axis
  bool log_ = false;
  QAbstractSeries* anchor_ = nullptr;  // a series on the chart's axes (value to pixel), null when none drawn
  std::optional<QPoint> press_;        // a left press that is not (yet) a drag
};

}  // namespace cs::gui
