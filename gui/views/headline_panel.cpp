#include "gui/views/headline_panel.hpp"

#include <QGridLayout>
#include <QLabel>

#include "gui/views/format.hpp"
#include "sim/base/units.hpp"

namespace cs::gui {

namespace {

// "+12.3 %" relative change, or empty without a baseline. `lower_is_better` colours the text.
QString delta(double now, double base, bool lower_is_better) {
  if (base == 0 || now == base) return {};
  const double rel = (now - base) / base;
  const bool good = lower_is_better ? rel < 0 : rel > 0;
  return QStringLiteral("<span style='color:%1'>%2%3 %</span>")
      .arg(good ? "#2e7d32" : "#c01c28")
      .arg(rel > 0 ? "+" : "")
      .arg(rel * 100, 0, 'f', 1);
}

}  // namespace

HeadlinePanel::HeadlinePanel(QWidget* parent) : QWidget(parent) {
  auto* grid = new QGridLayout(this);
  grid->setContentsMargins(6, 2, 6, 2);
  grid->setHorizontalSpacing(18);
  grid->setVerticalSpacing(0);
  add("step_time", tr("Step time"), 0);
  add("tokens_per_s", tr("Tokens / s"), 1);
  add("mfu", tr("MFU"), 2);
  add("memory", tr("Memory / GPU"), 3);
  add("usd_per_step", tr("$ / step"), 4);
  add("days_to_train", tr("Time to train"), 5);
  add("usd_to_train", tr("$ to train"), 6);
}

void HeadlinePanel::add(const QString& key, const QString& title, int column) {
  auto* grid = static_cast<QGridLayout*>(layout());
  auto* t = new QLabel(title, this);
  t->setStyleSheet("color:#555; font-size:9pt;");
  auto* v = new QLabel(QStringLiteral("–"), this);
  v->setObjectName("headline." + key);
  v->setStyleSheet("font-size:15pt; font-weight:600;");
  v->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* d = new QLabel(this);
  d->setTextFormat(Qt::RichText);
  d->setStyleSheet("font-size:9pt;");
  grid->addWidget(t, 0, column);
  grid->addWidget(v, 1, column);
  grid->addWidget(d, 2, column);
  values_.insert(key, v);
  deltas_.insert(key, d);
}

void HeadlinePanel::set(const QString& key, const QString& value, const QString& d, bool bad) {
  QLabel* v = values_.value(key);
  v->setText(value);
  v->setStyleSheet(QStringLiteral("font-size:15pt; font-weight:600; color:%1;").arg(bad ? "#c01c28" : "#111"));
  deltas_.value(key)->setText(d);
}

QString HeadlinePanel::step_time_text(const sim::Report& r) { return format_seconds(r.step_time_s); }

void HeadlinePanel::show_report(const sim::Report& r, const std::optional<sim::Report>& b) {
  auto dl = [&](double now, double base, bool lower) { return b ? delta(now, base, lower) : QString(); };
  set("step_time", step_time_text(r), dl(r.step_time_s, b ? b->step_time_s : 0, true));
  set("tokens_per_s", format_rate(r.tokens_per_s), dl(r.tokens_per_s, b ? b->tokens_per_s : 0, false));
  set("mfu", format_percent(r.mfu), dl(r.mfu, b ? b->mfu : 0, false));
  const double used = r.memory.total_bytes();
  set("memory",
      QStringLiteral("%1 / %2%3")
          .arg(QString::number(used / kGiB, 'f', 1), format_gib(r.memory_capacity_bytes),
               r.fits_in_memory ? QString() : tr("  DOES NOT FIT")),
      dl(used, b ? b->memory.total_bytes() : 0, true), !r.fits_in_memory);
  set("usd_per_step", format_usd(r.cost.usd_per_step), dl(r.cost.usd_per_step, b ? b->cost.usd_per_step : 0, true));
  set("days_to_train", r.tokens_to_train > 0 ? format_days(r.cost.days_to_train) : tr("(no tokens_to_train)"),
      dl(r.cost.days_to_train, b ? b->cost.days_to_train : 0, true));
  set("usd_to_train", r.tokens_to_train > 0 ? format_usd(r.cost.usd_to_train) : QStringLiteral("–"),
      dl(r.cost.usd_to_train, b ? b->cost.usd_to_train : 0, true));
}

QString HeadlinePanel::text(const QString& key) const {
  const QLabel* l = values_.value(key);
  return l ? l->text() : QString();
}

}  // namespace cs::gui
