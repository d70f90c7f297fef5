#pragma once
// Runs the GUI's sweep (gui/app/sweep_plan.hpp) through sim/explore off the UI thread: one job on the
// runner's own pool calls sim::run_points, whose workers (all cores but one, at the lower priority of
// prepare_worker_thread) evaluate the points; then sim::pareto_front. The same generation rule as
// SimRunner: a newer run() cancels the older one (sim/explore stops it between points) and its result is
// dropped. Progress is reported point by point.
#include <atomic>
#include <memory>
#include <string>

#include <QObject>
#include <QThreadPool>

#include <nlohmann/json.hpp>

#include "gui/app/sweep_plan.hpp"

namespace cs::gui {

class SweepRunner : public QObject {
  Q_OBJECT
 public:
  explicit SweepRunner(QObject* parent = nullptr);
  ~SweepRunner() override;

  quint64 run(nlohmann::json doc, std::string file);
  void cancel();
  bool busy() const { return running_ > 0; }

 signals:
  void progress(quint64 generation, int done, int total);
  void finished(quint64 generation, std::shared_ptr<const cs::gui::SweepResult> result);
  void idle();

 private:
  QThreadPool pool_;
  std::atomic<quint64> latest_{0};
  std::shared_ptr<std::atomic<bool>> cancel_;  // the latest run's
  int running_ = 0;
};

}  // namespace cs::gui
