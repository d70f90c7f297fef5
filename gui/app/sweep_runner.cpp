#include "gui/app/sweep_runner.hpp"

#include <algorithm>
#include <exception>

#include <QMetaObject>
#include <QThread>
#include <QtConcurrent/QtConcurrentRun>

#include "gui/app/cpu_state.hpp"
#include "sim/engine/cancel.hpp"

namespace cs::gui {

SweepRunner::SweepRunner(QObject* parent) : QObject(parent) { pool_.setMaxThreadCount(1); }

SweepRunner::~SweepRunner() {
  cancel();
  pool_.clear();
  pool_.waitForDone();
}

void SweepRunner::cancel() {
  ++latest_;
  if (cancel_) *cancel_ = true;
}

quint64 SweepRunner::run(nlohmann::json doc, std::string file) {
  cancel();
  const quint64 generation = latest_.load();
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  ++running_;
  auto job = [this, generation, stop = cancel_, doc = std::move(doc), file = std::move(file)]() {
    prepare_worker_thread();
    // Cancel stops a point in the middle, not only between points: this thread and every worker of
    // run_points poll the run's flag (sim/engine/cancel.hpp), and the Cancelled a worker throws ends the
    // call. The result is then dropped (its generation is stale).
    const sim::CancelScope scope(stop.get());
    auto result = std::make_shared<SweepResult>();
    result->plan = plan_sweep(doc);
    sim::SweepOptions options;
    // Leave a core to the main simulation and the UI.
    options.threads = std::max(1, QThread::idealThreadCount() - 1);
    options.on_worker_start = [flag = stop.get()] {
      prepare_worker_thread();
      sim::watch_cancel_on_this_thread(flag);  // a worker thread of run_points lives for this run only
    };
    options.cancel = stop.get();
    options.progress = [this, generation](const sim::SweepProgress& p) {
      QMetaObject::invokeMethod(this, [this, generation, done = static_cast<int>(p.done), total = static_cast<int>(p.total)]() {
        if (generation == latest_.load()) emit progress(generation, done, total);
      }, Qt::QueuedConnection);
    };
    try {
      result->points = sim::run_points(doc, file, result->plan.assignments, options);
      result->pareto = sim::pareto_front(result->points);
    } catch (const sim::Cancelled&) {
      result->points.clear();
      result->error = "cancelled";
    } catch (const std::exception& e) {  // a broken simulation, not bad input: the points say that
      result->points.clear();
      result->error = e.what();
    }
    QMetaObject::invokeMethod(this, [this, generation, result = std::shared_ptr<const SweepResult>(std::move(result))]() {
      --running_;  // before the signals, so their receivers see busy() as it now is
      if (generation == latest_.load()) emit finished(generation, result);
      if (running_ == 0) emit idle();
    }, Qt::QueuedConnection);
  };
  (void)QtConcurrent::run(&pool_, std::move(job));
  return generation;
}

}  // namespace cs::gui
