#include "gui/app/sim_runner.hpp"

#include "gui/views/goodput_view.hpp"

#include <chrono>

#include <QMetaObject>
#include <QtConcurrent/QtConcurrentRun>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "gui/app/cpu_state.hpp"
#include "sim/engine/cancel.hpp"
#include "sim/simulation.hpp"

namespace cs::gui {

SimRunner::SimRunner(QObject* parent) : QObject(parent) { pool_.setMaxThreadCount(2); }

SimRunner::~SimRunner() {
  supersede();  // whatever runs stops at its next poll; whatever is queued is skipped
  pool_.clear();
  pool_.waitForDone();
}

void SimRunner::supersede() {
  ++latest_;
  for (const auto& f : flags_) f->store(true);
}

void SimRunner::cancel() {
  supersede();
  if (running_ == 0) {
    emit cancelled();
    return;
  }
  cancel_requested_ = true;
}

quint64 SimRunner::submit(sim::Scenario scenario) {
  supersede();
  const quint64 generation = latest_.load();
  auto flag = std::make_shared<std::atomic<bool>>(false);
  flags_.push_back(flag);
  ++running_;
  emit started(generation);
  auto job = [this, generation, flag, s = std::move(scenario)]() {
    std::shared_ptr<const SimOutcome> outcome;
    QString error;
    bool stopped = false;
    if (!flag->load()) {
      prepare_worker_thread();
      try {
        const auto t0 = std::chrono::steady_clock::now();
        const sim::CancelScope scope(flag.get());  // the timeline's extraction is cancellable too
        const sim::SimulationResult result = sim::simulate(s, flag.get());
        auto o = std::make_shared<SimOutcome>(make_outcome(result));
        if (!s.multi_job() && (s.run.resilience || s.run.data_pipeline)) {
          sim::goodput::RunOptions whole;
          if (s.run.resilience) whole.runs = kGuiMonteCarloRuns;  // seed 1, as clustersim run --runs N
          o->run = sim::goodput::analyse_run(s, result, whole);
        }
        o->wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        outcome = std::move(o);
      } catch (const sim::Cancelled&) {
        stopped = true;
      } catch (const std::exception& e) {
        error = QString::fromStdString(e.what());
      }
    }
    QMetaObject::invokeMethod(this, [this, generation, flag, outcome = std::move(outcome), error]() {
      --running_;  // before the signals, so their receivers see busy() as it now is
      std::erase(flags_, flag);
      if (generation == latest_.load()) {
        if (outcome) emit finished(generation, outcome);
        else if (!error.isEmpty()) emit failed(generation, error);
      }
      if (running_ == 0) {
        if (cancel_requested_) {
          cancel_requested_ = false;
          emit cancelled();
        }
        emit idle();
      }
    }, Qt::QueuedConnection);
#if defined(__GLIBC__)
    if (stopped) malloc_trim(0);  // hand the cancelled step's memory back to the system now (after the UI knows)
#endif
    (void)stopped;
  };
  (void)QtConcurrent::run(&pool_, std::move(job));
  return generation;
}

}  // namespace cs::gui
