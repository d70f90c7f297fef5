#pragma once
// The knobs on the left of the window. Each knob is named by the scenario JSON path it edits (its
// objectName, so tests find it with findChild), shows the document's value, and reports an edit as the
// path and the new value in JSON text, which the window applies as a `--set path=value` override.
// The panel never validates: the library does, and the window shows its message.
//
// Multi-job scenarios ("jobs": [...]): a Job selector picks which job the model, parallelism and batch
// knobs show and edit; their edits then go to jobs.<i>.training.* and jobs.<i>.model (the knob keeps
// its objectName, the path it emits carries the job). The cluster knobs are the cluster's, shared.
//
// Desktop habits: the wheel changes a knob only when it has keyboard focus (a wheel over an unfocused
// knob scrolls the panel instead); the arrows of the sizes that must divide one another (TP, PP, CP,
// EP, nodes, GPUs per node, batch sizes, sequence length) step through powers of two, while any value
// can still be typed; every tooltip gives the key, its valid values or range, its unit and its default
// from the parameter table.
#include <QHash>
#include <QSpinBox>
#include <QString>
#include <QWidget>

#include <nlohmann/json.hpp>

#include "sim/scenario/params.hpp"

class QComboBox;
class QTabBar;
class QFormLayout;
class QLineEdit;

namespace cs::gui {

// A spin box whose arrows (and Up/Down, PageUp/PageDown, a focused wheel) move through powers of two
// when `ladder` is on; typing any value in range still works.
class LadderSpinBox : public QSpinBox {
  Q_OBJECT
 public:
  explicit LadderSpinBox(QWidget* parent = nullptr) : QSpinBox(parent) {}
  void set_ladder(bool on) { ladder_ = on; }
  bool ladder() const { return ladder_; }
  void stepBy(int steps) override;

 private:
  bool ladder_ = false;
};

class KnobPanel : public QWidget {
  Q_OBJECT
 public:
  explicit KnobPanel(QWidget* parent = nullptr);

  // Shows the document's values without emitting edits (the selected job's, for a multi-job document).
  void show_document(const nlohmann::json& doc);
  // The derived data-parallel size (0: unknown, the layout is invalid).
  void show_derived_dp(int dp);
  // Shows an effective value the document leaves to a default (e.g. the catalog price), without an edit.
  // (a check box: value != 0).
  void show_default(const QString& path, double value);
  // Greys out a knob the scenario cannot use (e.g. the CPU sockets on NVSwitch nodes), without an edit.
  void set_knob_enabled(const QString& path, bool enabled);
  QWidget* knob(const QString& path) const { return knobs_.value(path); }
  // Multi-job: the job the per-job knobs edit (0-based); -1 for a single-job document.
  int job() const { return job_; }
  void set_job(int job);
  // The document path a knob edits: "training.x" -> "jobs.1.training.x" when job 1 is selected.
  QString doc_path(const QString& knob_path) const;
  // Marks in red the knobs whose path the message names (empty: none).
  void highlight(const QString& message);
  QStringList highlighted() const;
  // Whether the size knobs' arrows step through powers of two (on by default).
  void set_ladder(bool on);

 signals:
  void edited(const QString& path, const QString& json_value);
  void job_selected(int job);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  static const sim::params::Param& param(const QString& path);
  static QString tip(const sim::params::Param& p, bool ladder);
  void emit_edit(const QString& knob_path, const QString& json_value);
  // Range (or choices) and tooltip from the parameter table; `scale`: the knob shows value / scale.
  void add_spin(QFormLayout* form, const QString& path, const QString& label, bool ladder);
  void add_double(QFormLayout* form, const QString& path, const QString& label, double step, int decimals, double scale);
  void add_combo(QFormLayout* form, const QString& path, const QString& label);
  void add_check(QFormLayout* form, const QString& path, const QString& label);
  void add_text(QFormLayout* form, const QString& path, const QString& label);
  void emit_combo(const QString& path, QComboBox* box);
  void guard(QWidget* w);

  QHash<QString, QWidget*> knobs_;
  QHash<QString, double> scale_;  // double knobs shown in other units (tokens in billions)
  QLineEdit* dp_ = nullptr;
  QTabBar* jobs_ = nullptr;  // the job selector: one tab per job
  QWidget* jobs_label_ = nullptr;
  int job_ = -1;
  nlohmann::json doc_;           // the document last shown
  nlohmann::json custom_gpu_;    // the document's own GPU object, restored when "custom" is picked again
  nlohmann::json custom_model_;  // the document's own hyperparameters
};

}  // namespace cs::gui
