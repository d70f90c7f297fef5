#include "gui/views/scaling_chart.hpp"

#include <algorithm>
#include <cmath>

#include <QLineSeries>
#include <QLogValueAxis>
#include <QValueAxis>

#include "gui/views/format.hpp"

namespace cs::gui {

ScalingChart::ScalingChart(QWidget* parent) : SweepChart(tr("Scaling vs GPUs (same layout and global batch)"), parent) {}

void ScalingChart::draw(QChart& chart, const SweepResult& sweep) {
  QChart* c = &chart;
  std::vector<const sim::Report*> pts;  // fewest GPUs first (the plan's order)
  for (std::size_t i : sweep.plan.scaling)
    if (i < sweep.points.size() && sweep.points[i].simulated()) pts.push_back(&sweep.points[i].report);
  if (pts.empty()) {
    c->setTitle(tr("Scaling: no valid point (see the knobs' message)"));
    return;
  }
  c->setTitle(tr("Scaling vs GPUs (same layout and global batch)"));
  double peak = 0;
  for (const sim::Report* p : pts) peak = std::max(peak, p->tokens_per_s);
  const bool mega = peak >= 2e6;
  const double unit = mega ? 1e6 : 1e3;
  auto* tput = new QLineSeries;
  tput->setName(mega ? tr("M tokens/s") : tr("k tokens/s"));
  tput->setPointsVisible(true);
  tput->setPointLabelsVisible(true);
  tput->setPointLabelsFormat("@yPoint");
  tput->setColor(QColor(0x3b, 0x6e, 0xc4));
  auto* eff = new QLineSeries;
  eff->setName(tr("scaling efficiency (%)"));
  eff->setPointsVisible(true);
  eff->setColor(QColor(0xe6, 0x8a, 0x1a));
  const double base = pts.front()->tokens_per_s / pts.front()->num_gpus;
  double max_tput = 0;
  for (const sim::Report* p : pts) {
    tput->append(p->num_gpus, std::round(p->tokens_per_s / unit * 10) / 10);
    eff->append(p->num_gpus, p->tokens_per_s / p->num_gpus / base * 100);
    max_tput = std::max(max_tput, p->tokens_per_s / unit);
  }
  c->addSeries(tput);
  c->addSeries(eff);
  auto* x = new QLogValueAxis;
  x->setBase(2);
  x->setLabelFormat("%d");
  x->setTitleText(tr("GPUs"));
  x->setRange(pts.front()->num_gpus / 1.4, pts.back()->num_gpus * 1.4);
  c->addAxis(x, Qt::AlignBottom);
  auto* y = new QValueAxis;
  y->setTitleText(mega ? tr("M tokens/s") : tr("k tokens/s"));
  y->setRange(0, max_tput * 1.15);
  y->applyNiceNumbers();
  c->addAxis(y, Qt::AlignLeft);
  auto* y2 = new QValueAxis;
  y2->setTitleText(tr("efficiency %"));
  y2->setRange(0, 120);
  y2->setLabelFormat("%.0f");
  c->addAxis(y2, Qt::AlignRight);
  tput->attachAxis(x);
  tput->attachAxis(y);
  eff->attachAxis(x);
  eff->attachAxis(y2);
}

}  // namespace cs::gui
