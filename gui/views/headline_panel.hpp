#pragma once
// The headline numbers across the top: step time, tokens/s, MFU, memory per GPU against capacity,
// $/step, days and $ to train; each with its change against the pinned baseline when there is one.
// Each value label is named "headline.<key>" so tests read exactly what the user sees. A multi-job
// scenario adds the shown job's slowdown (its step with the other jobs over its step alone).
// Stale (the knobs are invalid, or a newer simulation is running): every value is greyed, so an old
// number never looks current. Colours come from the palette, so a dark system palette stays readable.
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
  void clear();                            // no result: every value "–"
  void set_stale(bool stale);
  bool stale() const { return stale_; }
  // Every value as "title: value" lines (exports).
  QStringList lines() const;

  static QString step_time_text(const sim::Report& r);  // what "headline.step_time" shows

 private:
  void add(const QString& key, const QString& title, int column);
  void set(const QString& key, const QString& value, const QString& delta, bool bad = false);
  void restyle(const QString& key);
  void show_column(const QString& key, bool on);
  QHash<QString, QLabel*> values_;
  QHash<QString, QLabel*> deltas_;
  QHash<QString, QLabel*> titles_;
  QStringList keys_;
  QHash<QString, bool> bad_;
  bool stale_ = false;
};

}  // namespace cs::gui
