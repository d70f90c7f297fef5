#pragma once
// The two kinds of chart the window shows, each a QChartView styled once at construction and redrawn
// from scratch on every new result: an OutcomeChart draws one simulation (and the pinned baseline beside
// it, A/B), a SweepChart draws a layout sweep. Both empty the chart first, and draw only when there is
// a result: a subclass implements draw() and never sees a null one.
#include <memory>
#include <utility>
#include <vector>

#include <QChartView>

#include "gui/app/sim_outcome.hpp"
#include "gui/app/sweep_plan.hpp"

class QBarSet;

namespace cs::gui {

class OutcomeChart : public QChartView {
  Q_OBJECT
 public:
  void show_outcomes(const std::shared_ptr<const SimOutcome>& current, const std::shared_ptr<const SimOutcome>& baseline);

 protected:
  OutcomeChart(const QString& title, Qt::Alignment legend, QWidget* parent);
  // A bar chart's rows, bottom to top: "baseline" (when one is pinned), then "current".
  static std::vector<std::pair<QString, const sim::Report*>> rows(const SimOutcome& current, const SimOutcome* baseline);
  // One part of a stacked bar, in `color` with a darker edge.
  static QBarSet* stacked_part(const QString& name, const QColor& color);

 private:
  virtual void draw(QChart& c, const SimOutcome& current, const SimOutcome* baseline) = 0;
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
