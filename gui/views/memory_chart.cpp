#include "gui/views/memory_chart.hpp"

#include <algorithm>

#include <QCoreApplication>
#include <QHorizontalStackedBarSeries>
#include <QLineSeries>
#include <QPen>
#include <QValueAxis>

#include "gui/views/format.hpp"
#include "sim/base/units.hpp"

namespace cs::gui {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("cs::gui::MemoryChart", text); }

// A part of the memory bar: one field of the report's MemoryBreakdown, in GiB.
StackedPart gib_part(const char* name, QColor color, double models::MemoryBreakdown::*field) {
  return {tr(name), color, [field](const sim::Report& r) { return r.memory.*field / kGiB; }};
}

void draw_memory(QChart& chart, const SimOutcome& current, const SimOutcome* baseline) {
  QChart* c = &chart;
  const AbRows bars = ab_rows(current, baseline);
  QHorizontalStackedBarSeries* series =
      stacked_bars(chart, bars,
                   {gib_part("weights", QColor(0x3b, 0x6e, 0xc4), &models::MemoryBreakdown::weights_bytes),
                    gib_part("grads", QColor(0x7f, 0xa7, 0xe0), &models::MemoryBreakdown::grads_bytes),
                    gib_part("optimizer", QColor(0x6c, 0x3f, 0xa8), &models::MemoryBreakdown::optimizer_bytes),
                    gib_part("activations", QColor(0xe6, 0x8a, 0x1a), &models::MemoryBreakdown::activations_bytes),
                    gib_part("buffers", QColor(0x2e, 0x9e, 0x5b), &models::MemoryBreakdown::buffers_bytes),
                    gib_part("reserved", QColor(0xb0, 0xb0, 0xb0), &models::MemoryBreakdown::reserved_bytes)},
                   false);

  const double capacity = current.report.memory_capacity_bytes / kGiB;
  // The peak stage is named in the window's warning when it does not fit: the title stays short enough not
  // to be elided in a third of a 1366 px window.
  c->setTitle(tr("Memory per GPU: %1 of %2 GiB%3")
                  .arg(current.report.memory.total_bytes() / kGiB, 0, 'f', 1)
                  .arg(capacity, 0, 'f', 0)
                  .arg(current.report.fits_in_memory ? tr(" (peak stage)") : tr(", DOES NOT FIT")));
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

}  // namespace

OutcomeChart* new_memory_chart(QWidget* parent) {
  return new OutcomeChart(tr("Memory per GPU (GiB, peak stage) vs capacity"), Qt::AlignRight, draw_memory, parent);
}

}  // namespace cs::gui
