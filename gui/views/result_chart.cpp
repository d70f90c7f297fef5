#include "gui/views/result_chart.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QCoreApplication>
#include <QHorizontalStackedBarSeries>

#include "gui/views/format.hpp"

namespace cs::gui {

namespace {
const QSize kOutcomeChartMinimum(240, 180);
const QSize kSweepChartMinimum(260, 220);
}  // namespace

AbRows ab_rows(const SimOutcome& current, const SimOutcome* baseline) {
  AbRows out;
  if (baseline) out.push_back({QCoreApplication::translate("cs::gui::OutcomeChart", "baseline"), &baseline->report});
  out.push_back({QCoreApplication::translate("cs::gui::OutcomeChart", "current"), &current.report});
  return out;
}

QHorizontalStackedBarSeries* stacked_bars(QChart& c, const AbRows& rows, const std::vector<StackedPart>& parts,
                                          bool drop_empty) {
  auto* series = new QHorizontalStackedBarSeries;
  for (const StackedPart& part : parts) {
    double total = 0;
    for (const auto& row : rows) total += part.value(*row.second);
    if (drop_empty && total <= 0) continue;
    auto* set = new QBarSet(part.name);
    set->setColor(part.color);
    set->setBorderColor(part.color.darker(120));
    for (const auto& row : rows) *set << part.value(*row.second);
    series->append(set);
  }
  series->setBarWidth(0.6);
  c.addSeries(series);
  auto* names = new QBarCategoryAxis;
  for (const auto& row : rows) names->append(row.first);
  c.addAxis(names, Qt::AlignLeft);
  series->attachAxis(names);
  return series;
}

OutcomeChart::OutcomeChart(const QString& title, Qt::Alignment legend, Draw draw, QWidget* parent)
    : QChartView(new QChart, parent), draw_(std::move(draw)) {
  style_chart(*this, title, legend, kOutcomeChartMinimum);
}

void OutcomeChart::show_outcomes(const std::shared_ptr<const SimOutcome>& current,
                                 const std::shared_ptr<const SimOutcome>& baseline) {
  clear_chart(*chart());
  if (current) draw_(*chart(), *current, baseline.get());
}

SweepChart::SweepChart(const QString& title, QWidget* parent) : QChartView(new QChart, parent) {
  style_chart(*this, title, Qt::AlignBottom, kSweepChartMinimum);
}

void SweepChart::show_points(const std::shared_ptr<const SweepResult>& sweep) {
  clear_chart(*chart());
  sweep_ = sweep;
  if (sweep) draw(*chart(), *sweep);
}

}  // namespace cs::gui
