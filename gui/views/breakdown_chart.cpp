#include "gui/views/breakdown_chart.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QHorizontalStackedBarSeries>
#include <QValueAxis>

#include "gui/views/format.hpp"

namespace cs::gui {

BreakdownChart::BreakdownChart(QWidget* parent)
    : OutcomeChart(tr("Step time breakdown (s, average over simulated ranks)"), Qt::AlignRight, parent) {}

void BreakdownChart::draw(QChart& chart, const SimOutcome& current, const SimOutcome* baseline) {
  QChart* c = &chart;
  const auto bars = rows(current, baseline);

  auto* series = new QHorizontalStackedBarSeries;
  auto add = [&](const QString& name, const QColor& color, auto value) {
    double total = 0;
    for (const auto& b : bars) total += value(*b.second);
    if (total <= 0) return;
    auto* set = stacked_part(name, color);
    for (const auto& b : bars) *set << value(*b.second);
    series->append(set);
  };
  add(tr("compute"), kComputeColor, [](const sim::Report& r) { return r.breakdown.compute_s; });
  for (int k = 0; k < sim::kNumCategories; ++k) {
    const auto cat = static_cast<sim::Category>(k);
    if (!sim::is_comm(cat)) continue;
    add(tr("%1 exposed").arg(category_label(cat).section(' ', 0, 0)), category_color(cat),
        [k](const sim::Report& r) { return r.exposed_comm_s_by_kind[static_cast<std::size_t>(k)]; });
  }
  add(tr("PP bubble"), kBubbleColor, [](const sim::Report& r) { return r.breakdown.pipeline_bubble_s; });
  add(tr("other"), kOtherColor, [](const sim::Report& r) { return r.breakdown.other_s; });
  series->setBarWidth(0.6);
  c->addSeries(series);

  auto* cats = new QBarCategoryAxis;
  for (const auto& b : bars) cats->append(b.first);  // the step time is in the title (a narrow chart elides long labels)
  c->setTitle(baseline ? tr("Step %1 (baseline %2), s per rank").arg(format_seconds(current.report.step_time_s),
                                                                      format_seconds(baseline->report.step_time_s))
                       : tr("Step time %1, s per simulated rank").arg(format_seconds(current.report.step_time_s)));
  c->addAxis(cats, Qt::AlignLeft);
  series->attachAxis(cats);
  auto* values = new QValueAxis;
  values->setTitleText(tr("seconds"));
  values->setLabelFormat("%.2f");
  double max = 0;
  for (const auto& b : bars) max = std::max(max, b.second->step_time_s);
  values->setRange(0, max * 1.05);
  values->applyNiceNumbers();
  c->addAxis(values, Qt::AlignBottom);
  series->attachAxis(values);
}

}  // namespace cs::gui
