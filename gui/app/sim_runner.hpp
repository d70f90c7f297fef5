#pragma once
// Runs simulations off the UI thread. Each submit() gets the next generation number; a result is
// delivered only if no newer submit() happened meanwhile (stale results are dropped), and a queued job
// that is already stale when a worker picks it up is skipped without simulating. The library's
// simulate() has no global state, so a newer job may start while an older one is still finishing.
#include <atomic>
#include <memory>

#include <QObject>
#include <QString>
#include <QThreadPool>

#include "gui/app/sim_outcome.hpp"
#include "sim/scenario/scenario.hpp"

namespace cs::gui {

class SimRunner : public QObject {
  Q_OBJECT
 public:
  explicit SimRunner(QObject* parent = nullptr);
  ~SimRunner() override;

  quint64 submit(sim::Scenario scenario);
  // Makes every job in flight stale without starting a new one (e.g. the knobs became invalid).
  void supersede() { ++latest_; }
  quint64 latest() const { return latest_; }
  bool busy() const { return running_ > 0; }

 signals:
  void started(quint64 generation);
  void finished(quint64 generation, std::shared_ptr<const cs::gui::SimOutcome> outcome);
  void failed(quint64 generation, QString message);
  void idle();  // no job in flight any more

 private:
  QThreadPool pool_;
  std::atomic<quint64> latest_{0};
  int running_ = 0;  // jobs submitted and not yet delivered (UI thread only)
};

}  // namespace cs::gui
