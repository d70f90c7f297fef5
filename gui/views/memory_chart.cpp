#include "gui/views/memory_chart.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QHorizontalStackedBarSeries>
#include <QLineSeries>
#include <QPen>
#include <QValueAxis>

#include "gui/views/format.hpp"
#include "sim/base/units.hpp"

namespace cs::gui {

MemoryChart::MemoryChart(QWidget* parent)
    : OutcomeChart(tr("Memory per GPU (GiB, peak stage) vs capacity"), Qt::AlignRight, parent) {}

void MemoryChart::draw(QChart& chart, const SimOutcome& current, const SimOutcome* baseline) {
  QChart* c = &chart;
  const auto bars = rows(current, baseline);

  auto* series = new QHorizontalStackedBarSeries;
  auto add = [&](const QString& name, QColor color, double models::MemoryBreakdown::*field) {
    auto* set = stacked_part(name, color);
    for (const auto& b : bars) *set << b.second->memory.*field / kGiB;
    series->append(set);
  };
  add(tr("weights"), QColor(0x3b, 0x6e, 0xc4), &models::MemoryBreakdown::weights_bytes);
  add(tr("grads"), QColor(0x7f, 0xa7, 0xe0), &models::MemoryBreakdown::grads_bytes);
  add(tr("optimizer"), QColor(0x6c, 0x3f, 0xa8), &models::MemoryBreakdown::optimizer_bytes);
  add(tr("activations"), QColor(0xe6, 0x8a, 0x1a), &models::MemoryBreakdown::activations_bytes);
  add(tr("buffers"), QColor(0x2e, 0x9e, 0x5b), &models::MemoryBreakdown::buffers_bytes);
  add(tr("reserved"), QColor(0xb0, 0xb0, 0xb0), &models::MemoryBreakdown::reserved_bytes);
  series->setBarWidth(0.6);
  c->addSeries(series);

  auto* cats = new QBarCategoryAxis;
  for (const auto& b : bars)
    cats->append(b.first);
  c->addAxis(cats, Qt::AlignLeft);
  series->attachAxis(cats);

  const double capacity = current.report.memory_capacity_bytes / kGiB;
  c->setTitle(tr("Memory per GPU: %1 of %2 GiB%3 (peak stage)")
                  .arg(current.report.memory.total_bytes() / kGiB, 0, 'f', 1)
                  .arg(capacity, 0, 'f', 0)
                  .arg(current.report.fits_in_memory ? QString() : tr(", DOES NOT FIT")));
  double max = capacity;
  for (const auto& b : bars) max = std::max(max, b.second->memory.total_bytes() / kGiB);
  auto* values = new QValueAxis;
  values->setTitleText(tr("GiB"));
  values->setRange(0, max * 1.08);
  values->setLabelFormat("%.0f");
  values->applyNiceNumbers();
  c->addAxis(values, Qt::AlignBottom);
  series->attachAxis(values);

  // The capacity line, on a hidden vertical axis spanning the category band.
  auto* cap = new QLineSeries;
  cap->setName(tr("capacity"));
  QPen pen(kErrorColor);
  pen.setWidth(2);
  pen.setStyle(Qt::DashLine);
  cap->setPen(pen);
  const double n = static_cast<double>(bars.size());
  cap->append(capacity, -0.5);
  cap->append(capacity, n - 0.5);
  c->addSeries(cap);
  auto* band = new QValueAxis;
  band->setRange(-0.5, n - 0.5);
  band->setVisible(false);
  c->addAxis(band, Qt::AlignRight);
  cap->attachAxis(values);
  cap->attachAxis(band);
}

}  // namespace cs::gui
