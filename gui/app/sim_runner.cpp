#include "gui/app/sim_runner.hpp"

#include "gui/views/goodput_view.hpp"

#include <chrono>

#include <QMetaObject>
#include <QtConcurrent/QtConcurrentRun>

#include "gui/app/cpu_state.hpp"

namespace cs::gui {

SimRunner::SimRunner(QObject* parent) : QObject(parent) { pool_.setMaxThreadCount(2); }

SimRunner::~SimRunner() {
  ++latest_;  // whatever is queued becomes stale and is skipped
  pool_.clear();
  pool_.waitForDone();
}

quint64 SimRunner::submit(sim::Scenario scenario) {
  const quint64 generation = ++latest_;
  ++running_;
  emit started(generation);
  auto job = [this, generation, s = std::move(scenario)]() {
    std::shared_ptr<const SimOutcome> outcome;
    QString error;
    if (latest_.load() == generation) {
      prepare_worker_thread();
      try {
        const auto t0 = std::chrono::steady_clock::now();
        const sim::SimulationResult result = sim::simulate(s);
        auto o = std::make_shared<SimOutcome>(make_outcome(result));
        if (!s.multi_job() && (s.run.resilience || s.run.data_pipeline)) {
          sim::goodput::RunOptions whole;
          if (s.run.resilience) whole.runs = kGuiMonteCarloRuns;  // seed 1, as clustersim run --runs N
          o->run = sim::goodput::analyse_run(s, result, whole);
        }
        o->wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        outcome = std::move(o);
      } catch (const std::exception& e) {
        error = QString::fromStdString(e.what());
      }
    }
    QMetaObject::invokeMethod(this, [this, generation, outcome = std::move(outcome), error]() {
      --running_;  // before the signals, so their receivers see busy() as it now is
      if (generation == latest_.load()) {
        if (outcome) emit finished(generation, outcome);
        else if (!error.isEmpty()) emit failed(generation, error);
      }
      if (running_ == 0) emit idle();
    }, Qt::QueuedConnection);
  };
  (void)QtConcurrent::run(&pool_, std::move(job));
  return generation;
}

}  // namespace cs::gui
