#pragma once
// Runs simulations off the UI thread. Each submit() gets the next generation number; a result is
// delivered only if no newer submit() happened meanwhile (stale results are dropped).
//
// Cancelling: every job carries its own flag, polled by the simulation (sim/engine/cancel.hpp) while it
// builds the step and while it executes it. A newer submit(), supersede() (the knobs became invalid)
// and cancel() (the user's Cancel) set the flags of every job in flight, so an old, huge simulation
// stops within milliseconds, frees what it built, and never holds a worker the newer edit needs. The
// destructor does the same before waiting, so quitting never waits on a simulation.
#include <atomic>
#include <memory>
#include <vector>

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
  // Makes every job in flight stale and stops it, without starting a new one.
  void supersede();
  // The user's Cancel: supersede(), and `cancelled` is emitted once the jobs have stopped.
  void cancel();
  quint64 latest() const { return latest_; }
  bool busy() const { return running_ > 0; }

 signals:
  void started(quint64 generation);
  void finished(quint64 generation, std::shared_ptr<const cs::gui::SimOutcome> outcome);
  void failed(quint64 generation, QString message);
  void cancelled();  // after cancel(): nothing is running any more
  void idle();       // no job in flight any more

 private:
  QThreadPool pool_;
  std::atomic<quint64> latest_{0};
  std::vector<std::shared_ptr<std::atomic<bool>>> flags_;  // the jobs in flight (UI thread only)
  int running_ = 0;  // jobs submitted and not yet delivered (UI thread only)
  bool cancel_requested_ = false;
};

}  // namespace cs::gui
