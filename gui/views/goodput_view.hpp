#pragma once
// The whole run (docs/goodput.md) beside the step: goodput, the effective days and dollars, the time
// lost by cause (rework since the last checkpoint, restarts, checkpoint stalls, input stalls) and the
// days-to-train distribution of the Monte Carlo. Empty, with a hint, for a scenario without resilience or
// data_pipeline sections.
#include <optional>

#include <QChartView>
#include <QLabel>
#include <QWidget>

#include "sim/goodput/goodput.hpp"

namespace cs::gui {

// How many runs the GUI's Monte Carlo draws (seed 1): enough for stable p10/p90, a few ms.
inline constexpr int kGuiMonteCarloRuns = 400;

class GoodputView : public QWidget {
  Q_OBJECT
 public:
  explicit GoodputView(QWidget* parent = nullptr);
  // `run` is the current result's whole run; nullopt: the scenario has no whole-run section.
  void show_run(const std::optional<sim::goodput::RunReport>& run);
  const QLabel* summary() const { return summary_; }
  const QChartView* lost_chart() const { return lost_; }
  const QChartView* days_chart() const { return days_; }

 private:
  QLabel* summary_;
  QChartView* lost_;
  QChartView* days_;
};

}  // namespace cs::gui
