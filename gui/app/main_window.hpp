#pragma once
// The what-if explorer's window: knobs on the left, headline numbers on top, charts and the step's
// timeline in tabs. Every knob edit becomes a `--set` override on the scenario document, is validated
// by the library (an invalid combination shows the library's message in red and leaves the last good
// result on screen), and a valid one is simulated on a worker thread; a newer edit supersedes an older
// one, so the window never waits on the simulator.
#include <memory>
#include <optional>
#include <vector>

#include <QMainWindow>
#include <QTimer>

#include "gui/app/scenario_document.hpp"
#include "gui/app/sim_outcome.hpp"
#include "gui/app/sweep_plan.hpp"

class QLabel;
class QProgressBar;
class QTabWidget;
class QTableWidget;
class QAction;

namespace cs::gui {

class BreakdownChart;
class GoodputView;
class HeadlinePanel;
class KnobPanel;
class LinkChart;
class MemoryChart;
class ParetoChart;
class ScalingChart;
class SimRunner;
class SweepRunner;
class TimelineView;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Headless use (screenshots, tests): no dialogs, no recovery file.
  void set_headless(bool on) { headless_ = on; }
  // Loads a scenario file (no questions asked); false with the library's message on bad input.
  bool open_file(const QString& path, QString* error = nullptr);
  void load_document(ScenarioDocument doc);
  // Applies `--set path=value` overrides as if typed into knobs; false with the message.
  bool apply_overrides(const QStringList& assignments, QString* error = nullptr);
  // "overview", "timeline" or "sweep" ("scaling", "cost" are the sweep view too); false if unknown.
  bool set_view(const QString& name);
  // Spins the event loop until the pending simulation (and the sweep, when its view is shown) is done.
  bool wait_until_idle(int timeout_ms);

  const ScenarioDocument& document() const { return doc_; }
  const sim::Report* current_report() const { return current_ ? &current_->report : nullptr; }
  std::shared_ptr<const SweepResult> sweep_result() const { return sweep_; }
  QString validation_message() const;  // empty when the knobs are valid
  HeadlinePanel* headline() const { return headline_; }
  KnobPanel* knobs() const { return knobs_; }
  TimelineView* timeline() const { return timeline_; }
  ParetoChart* pareto() const { return pareto_; }
  QTableWidget* sweep_table() const { return sweep_table_; }
  BreakdownChart* breakdown() const { return breakdown_; }
  GoodputView* goodput() const { return goodput_; }

  void pin_baseline();
  void clear_baseline();
  // Applies the point's layout (layout_of) to the document, as if typed into the knobs.
  void load_sweep_point(const sim::SweepPoint& p);
  // Recovery file of unsaved edits (autosaved while dirty, removed on save or discard).
  static QString recovery_path();
  bool restore_recovery();

 signals:
  void result_shown(quint64 generation);
  void validation_failed(const QString& message);
  void sweep_shown();

 protected:
  void closeEvent(QCloseEvent* e) override;

 private:
  void build_ui();
  void build_actions();
  void on_knob(const QString& path, const QString& json_value);
  void revalidate();
  void show_outcome(quint64 generation, std::shared_ptr<const SimOutcome> outcome);
  void show_error(const QString& message);
  void refresh_charts();
  void maybe_run_sweep();
  void show_sweep(std::shared_ptr<const SweepResult> result);
  void update_busy();
  void update_title();
  void autosave();
  bool confirm_discard();  // asks to save a dirty document; false to cancel
  bool save();
  bool save_as();
  bool save_to(const std::string& path);  // save() and save_as(): write, drop the recovery copy
  void open_dialog();
  void export_png();
  void export_csv();

  ScenarioDocument doc_;
  bool headless_ = false;
  bool valid_ = false;
  QString error_;
  std::shared_ptr<const SimOutcome> current_;
  std::shared_ptr<const SimOutcome> baseline_;
  std::shared_ptr<const SweepResult> sweep_;
  bool sweep_stale_ = true;
  bool sweep_running_ = false;

  SimRunner* runner_ = nullptr;
  SweepRunner* sweeper_ = nullptr;
  QTimer validate_timer_;
  QTimer autosave_timer_;

  KnobPanel* knobs_ = nullptr;
  HeadlinePanel* headline_ = nullptr;
  QLabel* message_ = nullptr;
  QLabel* baseline_label_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  BreakdownChart* breakdown_ = nullptr;
  GoodputView* goodput_ = nullptr;
  MemoryChart* memory_ = nullptr;
  LinkChart* links_ = nullptr;
  TimelineView* overview_timeline_ = nullptr;
  TimelineView* timeline_ = nullptr;
  ScalingChart* scaling_ = nullptr;
  ParetoChart* pareto_ = nullptr;
  QTableWidget* sweep_table_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  QString last_status_;
  QWidget* sweep_tab_ = nullptr;
};

}  // namespace cs::gui
