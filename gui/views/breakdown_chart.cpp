#include "gui/views/breakdown_chart.hpp"

#include <algorithm>
#include <vector>

#include <QCoreApplication>
#include <QHorizontalStackedBarSeries>
#include <QValueAxis>

#include "gui/views/format.hpp"

namespace cs::gui {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("cs::gui::BreakdownChart", text); }

void draw_breakdown(QChart& chart, const SimOutcome& current, const SimOutcome* baseline) {
  QChart* c = &chart;
  const AbRows bars = ab_rows(current, baseline);
  std::vector<StackedPart> parts{{tr("compute"), kComputeColor, [](const sim::Report& r) { return r.breakdown.compute_s; }}};
  for (int k = 0; k < sim::kNumCategories; ++k) {
    const auto cat = static_cast<sim::Category>(k);
    if (!sim::is_comm(cat)) continue;
    parts.push_back({tr("%1 exposed").arg(category_label(cat).section(' ', 0, 0)), category_color(cat),
                     [k](const sim::Report& r) { return r.exposed_comm_s_by_kind[static_cast<std::size_t>(k)]; }});
  }
  parts.push_back({tr("PP bubble"), kBubbleColor, [](const sim::Report& r) { return r.breakdown.pipeline_bubble_s; }});
  parts.push_back({tr("other"), kOtherColor, [](const sim::Report& r) { return r.breakdown.other_s; }});
  // The rows are "baseline" and "current": the step time is in the title (a narrow chart elides long labels).
  QHorizontalStackedBarSeries* series = stacked_bars(chart, bars, parts, true);
  c->setTitle(baseline ? tr("Step %1 (baseline %2), s per rank").arg(format_seconds(current.report.step_time_s),
                                                                      format_seconds(baseline->report.step_time_s))
                       : tr("Step time %1, s per simulated rank").arg(format_seconds(current.report.step_time_s)));
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

}  // namespace

OutcomeChart* new_breakdown_chart(QWidget* parent) {
  return new OutcomeChart(tr("Step time breakdown (s, average over simulated ranks)"), Qt::AlignRight, draw_breakdown, parent);
}

}  // namespace cs::gui
