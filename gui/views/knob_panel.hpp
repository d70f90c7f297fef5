#pragma once
// The knobs on the left of the window. Each knob is named by the scenario JSON path it edits (its
// objectName, so tests find it with findChild), shows the document's value, and reports an edit as the
// path and the new value in JSON text, which the window applies as a `--set path=value` override.
// The panel never validates: the library does, and the window shows its message.
#include <QHash>
#include <QString>
#include <QWidget>

#include <nlohmann/json.hpp>

#include "sim/scenario/params.hpp"

class QComboBox;
class QFormLayout;
class QLineEdit;

namespace cs::gui {

class KnobPanel : public QWidget {
  Q_OBJECT
 public:
  explicit KnobPanel(QWidget* parent = nullptr);

  // Shows the document's values without emitting edits.
  void show_document(const nlohmann::json& doc);
  // The derived data-parallel size (0: unknown, the layout is invalid).
  void show_derived_dp(int dp);
  // Shows an effective value the document leaves to a default (e.g. the catalog price), without an edit.
  void show_default(const QString& path, double value);
  QWidget* knob(const QString& path) const { return knobs_.value(path); }

 signals:
  void edited(const QString& path, const QString& json_value);

 private:
  static const sim::params::Param& param(const QString& path);
  static QString tip(const sim::params::Param& p);
  // Range (or choices) and tooltip from the parameter table; `scale`: the knob shows value / scale.
  void add_spin(QFormLayout* form, const QString& path, const QString& label);
  void add_double(QFormLayout* form, const QString& path, const QString& label, double step, int decimals, double scale);
  void add_combo(QFormLayout* form, const QString& path, const QString& label);
  void add_check(QFormLayout* form, const QString& path, const QString& label);
  void emit_combo(const QString& path, QComboBox* box);

  QHash<QString, QWidget*> knobs_;
  QHash<QString, double> scale_;  // double knobs shown in other units (tokens in billions)
  QLineEdit* dp_ = nullptr;
  nlohmann::json custom_gpu_;    // the document's own GPU object, restored when "custom" is picked again
  nlohmann::json custom_model_;  // the document's own hyperparameters
};

}  // namespace cs::gui
