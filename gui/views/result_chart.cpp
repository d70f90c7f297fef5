#include "gui/views/result_chart.hpp"

#include <QBarSet>

#include "gui/views/format.hpp"

namespace cs::gui {

namespace {
const QSize kOutcomeChartMinimum(240, 180);
const QSize kSweepChartMinimum(260, 220);
}  // namespace

OutcomeChart::OutcomeChart(const QString& title, Qt::Alignment legend, QWidget* parent) : QChartView(new QChart, parent) {
  style_chart(*this, title, legend, kOutcomeChartMinimum);
}

void OutcomeChart::show_outcomes(const std::shared_ptr<const SimOutcome>& current,
                                 const std::shared_ptr<const SimOutcome>& baseline) {
  clear_chart(*chart());
  if (current) draw(*chart(), *current, baseline.get());
}

std::vector<std::pair<QString, const sim::Report*>> OutcomeChart::rows(const SimOutcome& current, const SimOutcome* baseline) {
  std::vector<std::pair<QString, const sim::Report*>> out;
  if (baseline) out.push_back({tr("baseline"), &baseline->report});
  out.push_back({tr("current"), &current.report});
  return out;
}

QBarSet* OutcomeChart::stacked_part(const QString& name, const QColor& color) {
  auto* set = new QBarSet(name);
  set->setColor(color);
  set->setBorderColor(color.darker(120));
  return set;
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
