#pragma once
// The two kinds of chart the window shows, each a QChartView styled once at construction and redrawn
// from scratch on every new result: an OutcomeChart draws one simulation (and the pinned baseline beside
// it, A/B), a SweepChart draws a layout sweep. Both empty the chart first, and draw only when there is
// a result: the drawing never sees a null one.
//
// The step-time breakdown and the memory chart are stacked A/B bar charts, drawn by stacked_bars: a bar
// per result, bottom to top the baseline (when one is pinned) and the current one, each made of the same
// parts (compute, exposed communication...; weights, grads...).
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include <QChartView>
#include <QColor>

#include "gui/app/sim_outcome.hpp"
#include "gui/app/sweep_plan.hpp"

class QHorizontalStackedBarSeries;

namespace cs::gui {

// The results of an A/B chart, bottom to top: "baseline" (when one is pinned), then "current".
using AbRows = std::vector<std::pair<QString, const sim::Report*>>;
AbRows ab_rows(const SimOutcome& current, const SimOutcome* baseline);

struct StackedPart {
  QString name;
  QColor color;
  std::function<double(const sim::Report&)> value;
};
// Adds to `c` a bar per row made of `parts` (bottom to top; a part that is zero on every row is left out
// when `drop_empty`) and the rows' names as the axis on the left; returns the series, for a value axis.
QHorizontalStackedBarSeries* stacked_bars(QChart& c, const AbRows& rows, const std::vector<StackedPart>& parts,
                                          bool drop_empty);

class OutcomeChart : public QChartView {
  Q_OBJECT
 public:
  using Draw = std::function<void(QChart& c, const SimOutcome& current, const SimOutcome* baseline)>;
  OutcomeChart(const QString& title, Qt::Alignment legend, Draw draw, QWidget* parent = nullptr);
  void show_outcomes(const std::shared_ptr<const SimOutcome>& current, const std::shared_ptr<const SimOutcome>& baseline);

 private:
  Draw draw_;
};

class SweepChart : public QChartView {
  Q_OBJECT
 public:
  void show_points(const std::shared_ptr<const SweepResult>& sweep);

 protected:
  SweepChart(const QString& title, QWidget* parent);
  std::shared_ptr<const SweepResult> sweep_;  // the sweep on screen; null before the first

 private:
  virtual void draw(QChart& c, const SweepResult& sweep) = 0;
};

}  // namespace cs::gui
