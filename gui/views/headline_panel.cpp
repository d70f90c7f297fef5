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
  grid->setHorizontalSpacing(12);
  grid->setVerticalSpacing(0);
  add("step_time", tr("Step time"), 0);
  add("tokens_per_s", tr("Tokens / s"), 1);
  add("mfu", tr("MFU"), 2);
  add("memory", tr("Memory / GPU"), 3);
  add("usd_per_step", tr("$ / step"), 4);
  add("days_to_train", tr("Time to train"), 5);
  add("usd_to_train", tr("$ to train"), 6);
  add("slowdown", tr("Slowdown"), 7);
  titles_.value("slowdown")->setToolTip(tr("the job's step with the other jobs on the shared fabric over its step alone"));
  show_column("slowdown", false);
}

void HeadlinePanel::show_column(const QString& key, bool on) {
  values_.value(key)->setVisible(on);
  deltas_.value(key)->setVisible(on);
  titles_.value(key)->setVisible(on);
}

void HeadlinePanel::restyle(const QString& key) {
  // Bad values in red, stale ones in the palette's disabled text colour, the rest in its text colour.
  const QPalette& pal = palette();
  const QColor c = stale_ ? pal.color(QPalette::Disabled, QPalette::WindowText)
                          : bad_.value(key) ? QColor(0xc0, 0x1c, 0x28) : pal.color(QPalette::WindowText);
  values_.value(key)->setStyleSheet(QStringLiteral("font-size:13pt; font-weight:600; color:%1;").arg(c.name()));
}

void HeadlinePanel::set_stale(bool stale) {
  stale_ = stale;
  for (const QString& k : keys_) restyle(k);
}

void HeadlinePanel::clear() {
  for (const QString& k : keys_) {
    values_.value(k)->setText(QStringLiteral("–"));
    deltas_.value(k)->clear();
    bad_[k] = false;
    restyle(k);
  }
  show_column("slowdown", false);
}

QStringList HeadlinePanel::lines() const {
  QStringList out;
  for (const QString& k : keys_)
    if (!values_.value(k)->isHidden()) out << titles_.value(k)->text() + ": " + values_.value(k)->text();
  return out;
}

void HeadlinePanel::add(const QString& key, const QString& title, int column) {
  auto* grid = static_cast<QGridLayout*>(layout());
  auto* t = new QLabel(title, this);
  t->setStyleSheet("font-size:9pt;");
  t->setForegroundRole(QPalette::PlaceholderText);
  auto* v = new QLabel(QStringLiteral("–"), this);
  v->setObjectName("headline." + key);
  v->setStyleSheet("font-size:13pt; font-weight:600;");
  v->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* d = new QLabel(this);
  d->setTextFormat(Qt::RichText);
  d->setStyleSheet("font-size:9pt;");
  grid->addWidget(t, 0, column);
  grid->addWidget(v, 1, column);
  grid->addWidget(d, 2, column);
  values_.insert(key, v);
  deltas_.insert(key, d);
  titles_.insert(key, t);
  keys_ << key;
}

void HeadlinePanel::set(const QString& key, const QString& value, const QString& d, bool bad) {
  QLabel* v = values_.value(key);
  v->setText(value);
  bad_[key] = bad;
  restyle(key);
  deltas_.value(key)->setText(d);
}

QString HeadlinePanel::step_time_text(const sim::Report& r) { return format_seconds(r.step_time_s); }

void HeadlinePanel::show_report(const sim::Report& r, const std::optional<sim::Report>& b) {
  auto dl = [&](double now, double base, bool lower) { return b ? delta(now, base, lower) : QString(); };
  // The error band (sim/report/error_band.hpp): where the real step is expected to lie, from the
  // validation residuals of comparable published runs; flagged when the scenario is outside them.
  const sim::ErrorBand& band = r.step_time_band;
  QString band_line, band_tip;
  if (band.available) {
    band_line = tr("band %1 – %2").arg(format_seconds(band.step_time_low_s), format_seconds(band.step_time_high_s));
    band_tip = tr("Error band: %1").arg(QString::fromStdString(sim::band_text(band)));
  }
  if (band.out_of_domain) {
    band_line += QStringLiteral(" <span style='color:#c01c28'>%1</span>").arg(tr("not validated"));
    for (const std::string& why : band.out_of_domain_reasons) band_tip += "\n" + tr("outside: %1").arg(QString::fromStdString(why));
  }
  const QString step_delta = dl(r.step_time_s, b ? b->step_time_s : 0, true);
  set("step_time", step_time_text(r), step_delta.isEmpty() ? band_line : band_line.isEmpty() ? step_delta : step_delta + " · " + band_line);
  values_.value("step_time")->setToolTip(band_tip);
  deltas_.value("step_time")->setToolTip(band_tip);
  set("tokens_per_s", format_rate(r.tokens_per_s), dl(r.tokens_per_s, b ? b->tokens_per_s : 0, false));
  set("mfu", format_percent(r.mfu), dl(r.mfu, b ? b->mfu : 0, false));
  const double used = r.memory.total_bytes();
  // "does not fit" goes under the value, beside its change, not after it: the value row sets the panel's
  // width, which must leave the window within a 1366 px screen (the 405B scenario is 0.7 GiB over).
  const QString mem_delta = dl(used, b ? b->memory.total_bytes() : 0, true);
  const QString no_fit = QStringLiteral("<span style='color:#c01c28; font-weight:600'>%1</span>").arg(tr("DOES NOT FIT"));
  set("memory", QStringLiteral("%1 / %2").arg(QString::number(used / kGiB, 'f', 1), format_gib(r.memory_capacity_bytes)),
      r.fits_in_memory ? mem_delta : mem_delta.isEmpty() ? no_fit : mem_delta + " · " + no_fit, !r.fits_in_memory);
  set("usd_per_step", format_usd(r.cost.usd_per_step), dl(r.cost.usd_per_step, b ? b->cost.usd_per_step : 0, true));
  values_.value("days_to_train")->setToolTip(r.tokens_to_train > 0 ? QString() : tr("the scenario sets no training.tokens_to_train"));
  set("days_to_train", r.tokens_to_train > 0 ? format_days(r.cost.days_to_train) : QStringLiteral("–"),
      dl(r.cost.days_to_train, b ? b->cost.days_to_train : 0, true));
  set("usd_to_train", r.tokens_to_train > 0 ? format_usd(r.cost.usd_to_train) : QStringLiteral("–"),
      dl(r.cost.usd_to_train, b ? b->cost.usd_to_train : 0, true));
  const bool multi = !r.job.empty();
  show_column("slowdown", multi);
  if (multi)
    set("slowdown", QStringLiteral("%1×").arg(r.slowdown, 0, 'f', 3),
        tr("alone %1").arg(format_seconds(r.step_time_alone_s)), r.slowdown > 1.0005);
}

QString HeadlinePanel::text(const QString& key) const {
  const QLabel* l = values_.value(key);
  return l ? l->text() : QString();
}

}  // namespace cs::gui
