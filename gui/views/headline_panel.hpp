#pragma once
// The headline numbers across the top: step time, tokens/s, MFU, memory per GPU against capacity,
// $/step, days and $ to train; each with its change against the pinned baseline when there is one.
// Each value label is named "headline.<key>" so tests read exactly what the user sees.
#include <optional>

#include <QHash>
#include <QWidget>

#include "sim/report/report.hpp"

class QLabel;

namespace cs::gui {

class HeadlinePanel : public QWidget {
  Q_OBJECT
 public:
  explicit HeadlinePanel(QWidget* parent = nullptr);
  void show_report(const sim::Report& r, const std::optional<sim::Report>& baseline);
  QString text(const QString& key) const;  // a value as displayed

  static QString step_time_text(const sim::Report& r);  // what "headline.step_time" shows

 private:
  void add(const QString& key, const QString& title, int column);
  void set(const QString& key, const QString& value, const QString& delta, bool bad = false);
  QHash<QString, QLabel*> values_;
  QHash<QString, QLabel*> deltas_;
};

}  // namespace cs::gui
