#include "gui/app/sweep_runner.hpp"

#include <QMetaObject>
#include <QtConcurrent/QtConcurrentRun>

#include "gui/app/cpu_state.hpp"

namespace cs::gui {

SweepRunner::SweepRunner(QObject* parent) : QObject(parent) {
  // Leave a core to the main simulation and the UI.
  pool_.setMaxThreadCount(std::max(1, QThread::idealThreadCount() - 1));
}

SweepRunner::~SweepRunner() {
  ++latest_;
  pool_.clear();
  pool_.waitForDone();
}

quint64 SweepRunner::run(nlohmann::json doc, std::string file) {
  const quint64 generation = ++latest_;
  ++running_;
  auto points = std::make_shared<std::vector<SweepPoint>>(plan_sweep(doc));
  auto next = std::make_shared<std::atomic<std::size_t>>(0);
  auto done = std::make_shared<std::atomic<int>>(0);
  const int workers = std::max(1, std::min(pool_.maxThreadCount(), static_cast<int>(points->size())));
  auto remaining = std::make_shared<std::atomic<int>>(workers);
  auto shared_doc = std::make_shared<const nlohmann::json>(std::move(doc));
  const int total = static_cast<int>(points->size());
  for (int w = 0; w < workers; ++w) {
    (void)QtConcurrent::run(&pool_, [=, this]() {
      for (std::size_t i = (*next)++; i < points->size() && latest_.load() == generation; i = (*next)++) {
        prepare_worker_thread();
        run_sweep_point(*shared_doc, file, (*points)[i]);
        const int d = ++*done;
        QMetaObject::invokeMethod(this, [this, generation, d, total]() {
          if (generation == latest_.load()) emit progress(generation, d, total);
        }, Qt::QueuedConnection);
      }
      if (--*remaining != 0) return;  // the last worker out delivers
      QMetaObject::invokeMethod(this, [this, generation, points]() {
        if (generation == latest_.load()) {
          mark_pareto(*points);
          emit finished(generation, points);
        }
        if (--running_ == 0) emit idle();
      }, Qt::QueuedConnection);
    });
  }
  return generation;
}

}  // namespace cs::gui
