#pragma once
// The what-if explorer's window: knobs on the left, headline numbers on top, charts and the step's
// timeline in tabs. Every knob edit becomes a `--set` override on the scenario document, is validated
// by the library (an invalid combination shows the library's message in red, marks the knob it names
// and greys the results, which are then the last valid ones), and a valid one is checked against the
// simulator's budget (sim/step/step_budget: a scenario too big to simulate is refused before it starts,
// with the message on screen) and simulated on a worker thread; a newer edit cancels an older one.
//
// A multi-job scenario shows every job in a table (its step with the others, alone, the slowdown), the
// headline and charts of the selected job, and the knobs of that job (KnobPanel's job selector).
//
// Desktop habits: undo/redo over every edit (Edit menu), recent files, reload from disk, a raw JSON
// editor for keys the panel does not show (validated live), Cancel for a simulation and a sweep, Save As
// on Ctrl+Shift+S, exports that carry the scenario name, headline and knobs and say what they wrote.
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <QMainWindow>
#include <QTimer>

#include "gui/app/scenario_document.hpp"
#include "gui/app/sim_outcome.hpp"
#include "gui/app/sweep_plan.hpp"
#include "topologies/cluster.hpp"

class QLabel;
class QMenu;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QDockWidget;
class QTabWidget;
class QTableWidget;
class QAction;
class QScrollArea;
class QLockFile;

namespace cs::gui {

struct OrphanedDraft;
class GoodputView;
class HeadlinePanel;
class KnobPanel;
class LinkChart;
class OutcomeChart;
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
  // Loads a scenario file (no questions asked); false with the library's message when it cannot be read.
  // A file that reads but does not validate is loaded, with its message and no result on screen.
  bool open_file(const QString& path, QString* error = nullptr);
  void load_document(ScenarioDocument doc);
  // Reads the document's file again (its unsaved edits are dropped); false with the message.
  bool reload(QString* error = nullptr);
  // Applies `--set path=value` overrides as if typed into knobs; false with the message.
  bool apply_overrides(const QStringList& assignments, QString* error = nullptr);
  // Replaces the document by this JSON text (the raw editor's Apply); false with the parse error.
  bool apply_raw_json(const QString& text, QString* error = nullptr);
  // "overview", "timeline" or "sweep" ("scaling", "cost" are the sweep view too); false if unknown.
  bool set_view(const QString& name);
  // Spins the event loop until the pending simulation (and the sweep, when its view is shown) is done.
  bool wait_until_idle(int timeout_ms);

  const ScenarioDocument& document() const { return doc_; }
  // The result on screen (the selected job's report for a multi-job scenario); nullptr when none.
  const sim::Report* current_report() const;
  std::shared_ptr<const SimOutcome> current_outcome() const { return current_; }
  std::shared_ptr<const SweepResult> sweep_result() const { return sweep_; }
  bool results_stale() const { return stale_; }
  bool simulating() const;

  // The panels around the tabs: the headline, the knobs (in their scroll area), the raw JSON dock.
  HeadlinePanel* headline() const { return headline_; }
  KnobPanel* knobs() const { return knobs_; }
  QScrollArea* knob_scroll() const { return knob_scroll_; }
  QPlainTextEdit* raw_editor() const { return raw_; }
  QLabel* raw_status() const { return raw_status_; }
  QString validation_message() const;  // empty when the knobs are valid

  // The tabs' views, charts and tables.
  TimelineView* timeline() const { return timeline_; }
  OutcomeChart* breakdown() const { return breakdown_; }
  LinkChart* links() const { return links_; }
  QTableWidget* jobs_table() const { return jobs_table_; }
  ScalingChart* scaling() const { return scaling_; }
  ParetoChart* pareto() const { return pareto_; }
  QTableWidget* sweep_table() const { return sweep_table_; }
  GoodputView* goodput() const { return goodput_; }

  // Multi-job: the job shown (0-based), as the knob panel's selector does; -1 for one job.
  void select_job(int job);
  int selected_job() const;

  void pin_baseline();
  void clear_baseline();
  // Applies the point's layout (layout_of) to the document, as if typed into the knobs.
  void load_sweep_point(const sim::SweepPoint& p);
  // Stops the running simulation and sweep (the results on screen stay, greyed, as the last valid ones).
  void cancel();
  bool undo();
  bool redo();

  // The `clustersim run FILE --set ...` command that simulates the document as shown (gui/app/cli_command.hpp);
  // empty with why when there is no file to name (untitled, or the file could not be read).
  QString cli_command(QString* why = nullptr) const;
  void copy_cli_command();  // Edit → Copy as CLI command: onto the clipboard, the status bar says what

  // Exports without dialogs (the menu's actions ask for the path, then call these); false with why.
  bool export_csv_to(const QString& path, QString* error = nullptr);
  bool export_sweep_csv_to(const QString& path, QString* error = nullptr);
  bool export_png_to(const QString& path, QString* error = nullptr);

  // This window's draft of unsaved edits (gui/app/drafts.hpp): autosaved while dirty (and removed when the
  // edits are undone back to the file), removed on save or discard; its own file, never another window's.
  QString recovery_path() const;
  // Restores a claimed orphaned draft: the edits come back marked unsaved, and this window takes the draft
  // (its id and lock: its next autosave rewrites that file). False when the draft cannot be read.
  bool restore_recovery(OrphanedDraft& draft);
  void discard_recovery();  // the draft goes (Discard at the close prompt, Save)
  void autosave();
  // Recent files (newest first), kept in QSettings.
  static QStringList recent_files();
  QMenu* recent_menu() const { return recent_menu_; }

 signals:
  void result_shown(quint64 generation);
  void validation_failed(const QString& message);
  void sweep_shown();

 protected:
  void closeEvent(QCloseEvent* e) override;
  void changeEvent(QEvent* e) override;

 private:
  void build_ui();
  void build_actions();
  void on_knob(const QString& path, const QString& json_value);
  void after_edit();
  void revalidate();
  void show_outcome(quint64 generation, std::shared_ptr<const SimOutcome> outcome);
  void show_error(const QString& message);
  // The host and switch knobs: the defaults the validated scenario resolves to, greyed out where unusable.
  void show_host_defaults(const topo::ClusterSpec& cluster);
  void show_result();
  void clear_result();
  void refresh_stale();
  void show_stale_look(bool stale);  // stale: invalid knobs, or the result on screen is not of the latest submission
  void refresh_charts();
  void refresh_jobs();
  void maybe_run_sweep();
  void show_sweep(std::shared_ptr<const SweepResult> result);
  void update_busy();
  void update_title();
  void update_actions();
  void refresh_raw();
  void check_raw();
  bool confirm_discard();  // asks to save a dirty document; false to cancel
  bool save();
  bool save_as();
  bool save_to(const std::string& path);  // save() and save_as(): write, drop the recovery copy
  void open_dialog();
  void add_recent(const QString& path);
  void rebuild_recent_menu();
  void export_png();
  void export_csv();
  void export_sweep_csv();
  // Asks for a CSV path and writes it with `write`; when not `ready`, says why instead (write's message).
  void export_with_dialog(bool ready, const QString& title, const QString& suggested,
                          const std::function<bool(const QString&, QString*)>& write);
  void apply_theme();
  // The outcome as the charts show it: the selected job's report.
  std::shared_ptr<const SimOutcome> shown(const std::shared_ptr<const SimOutcome>& o) const;

  ScenarioDocument doc_;
  bool headless_ = false;
  bool valid_ = false;
  bool stale_ = false;
  quint64 wanted_ = 0;  // the generation of the latest simulation submitted
  quint64 shown_ = 0;   // the generation of the result on screen
  QString error_;
  std::shared_ptr<const SimOutcome> current_;
  std::shared_ptr<const SimOutcome> baseline_;
  std::shared_ptr<const SweepResult> sweep_;
  bool sweep_stale_ = true;
  bool sweep_running_ = false;
  bool raw_user_edited_ = false;
  bool raw_refreshing_ = false;

  SimRunner* runner_ = nullptr;
  SweepRunner* sweeper_ = nullptr;
  QTimer validate_timer_;
  QTimer autosave_timer_;
  QTimer raw_timer_;
  QTimer stale_timer_;  // a quick simulation never flashes the results grey

  KnobPanel* knobs_ = nullptr;
  QScrollArea* knob_scroll_ = nullptr;
  HeadlinePanel* headline_ = nullptr;
  QLabel* message_ = nullptr;
  QLabel* baseline_label_ = nullptr;
  QTableWidget* jobs_table_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  OutcomeChart* breakdown_ = nullptr;
  GoodputView* goodput_ = nullptr;
  OutcomeChart* memory_ = nullptr;
  LinkChart* links_ = nullptr;
  TimelineView* overview_timeline_ = nullptr;
  TimelineView* timeline_ = nullptr;
  ScalingChart* scaling_ = nullptr;
  ParetoChart* pareto_ = nullptr;
  QTableWidget* sweep_table_ = nullptr;
  QLabel* sweep_rejected_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QPushButton* cancel_button_ = nullptr;
  QLabel* status_ = nullptr;
  QString last_status_;
  QWidget* sweep_tab_ = nullptr;
  QDockWidget* raw_dock_ = nullptr;
  QPlainTextEdit* raw_ = nullptr;
  QLabel* raw_status_ = nullptr;
  QPushButton* raw_apply_ = nullptr;
  QAction* undo_ = nullptr;
  QAction* redo_ = nullptr;
  QAction* reload_ = nullptr;
  QAction* log_axes_ = nullptr;
  QMenu* recent_menu_ = nullptr;
  QString draft_id_;                      // this window's draft: drafts_dir()/draft-<id>.json
  std::unique_ptr<QLockFile> draft_lock_;  // held from the first autosave: the draft is not an orphan
};

}  // namespace cs::gui
