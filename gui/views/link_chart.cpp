#include "gui/views/link_chart.hpp"

#include <algorithm>

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QHorizontalBarSeries>
#include <QValueAxis>

#include "gui/views/format.hpp"

namespace cs::gui {

LinkChart::LinkChart(QWidget* parent)
    : OutcomeChart(tr("Utilization over the step, % (hover for bytes)"), Qt::AlignBottom,
                   [this](QChart& c, const SimOutcome& current, const SimOutcome* baseline) { draw(c, current, baseline); },
                   parent) {}

void LinkChart::draw(QChart& chart, const SimOutcome& current, const SimOutcome* baseline) {
  QChart* c = &chart;
  const sim::Report& r = current.report;

  // Short category labels that fit a narrow chart (the full name, the bytes and the line rate are in the
  // bar's tooltip): "scale-up (nvswitch)" -> "nvswitch", "PCIe links (mean of used)" -> "PCIe",
  // "busiest: gpu0 -> nvswitch0@node0" -> in the tooltip of the level above it.
  QStringList names{tr("GPU busy")};
  full_.clear();
  full_ << tr("GPU busy: %1 % of the step computing").arg(r.gpu_busy * 100, 0, 'f', 1);
  for (const auto& l : r.links) {
    QString name = QString::fromStdString(l.name);
    const QString full = name;
    if (name.startsWith("busiest") && full_.size() > 1) {
      // The busiest link of a level goes into the level's tooltip, not a bar of its own: a flow
      // network's levels would otherwise make more categories than a short chart has rows for.
      full_.back() += "\n" + tr("%1: %2 %").arg(full).arg(l.utilization * 100, 0, 'f', 1);
      continue;
    }
    {
      name.replace(" links (mean of used)", "");  // "scale-up", "PCIe", "network": the mean is in the tooltip
      if (const auto open = name.indexOf('('); open >= 0 && name.endsWith(')')) name = name.mid(open + 1).chopped(1);
    }
    // Two links with one label would merge into one category.
    QString unique = name;
    for (int k = 2; names.contains(unique); ++k) unique = QStringLiteral("%1 %2").arg(name).arg(k);
    names << unique;
    const QString bytes = l.bytes_per_gpu >= 1e12 ? QString::number(l.bytes_per_gpu / 1e12, 'f', 1) + " TB"
                                                  : QString::number(l.bytes_per_gpu / 1e9, 'f', l.bytes_per_gpu < 1e10 ? 1 : 0) + " GB";
    full_ << tr("%1: %2 % (%3 sent per GPU per step, line rate %4 GB/s)")
                 .arg(full).arg(l.utilization * 100, 0, 'f', 1).arg(bytes).arg(l.bandwidth_Bps / 1e9, 0, 'f', 0);
  }
  auto values_of = [&](const sim::Report& rep) {
    QList<qreal> v{rep.gpu_busy * 100};
    for (std::size_t i = 0; i < r.links.size(); ++i) {
      if (i > 0 && r.links[i].name.rfind("busiest", 0) == 0) continue;
      v << (i < rep.links.size() ? rep.links[i].utilization * 100 : 0.0);
    }
    return v;
  };
  auto* series = new QHorizontalBarSeries;
  if (baseline) {
    auto* b = new QBarSet(tr("baseline"));
    b->setColor(QColor(0xb0, 0xb0, 0xb0));
    b->append(values_of(baseline->report));
    series->append(b);
  }
  auto* now = new QBarSet(tr("current"));
  now->setColor(QColor(0x2e, 0x9e, 0x5b));
  now->append(values_of(r));
  series->append(now);
  series->setLabelsVisible(true);
  series->setLabelsFormat("@value");
  series->setLabelsPrecision(3);
  series->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
  connect(series, &QHorizontalBarSeries::hovered, this, [this](bool on, int index, QBarSet*) {
    if (!on || index < 0 || index >= full_.size()) return;  // stays while the mouse stays near
    show_staying_tip(*this, full_[index]);
  });
  c->addSeries(series);
  auto* cats = new QBarCategoryAxis;
  cats->append(names);
  // A short chart gives each category a thin row, and Qt elides a label taller than its row to "…":
  // a smaller font for the labels, and no legend unless there is a baseline to tell apart.
  QFont small = cats->labelsFont();
  small.setPointSizeF(std::max(6.0, small.pointSizeF() * 0.85));
  cats->setLabelsFont(small);
  c->legend()->setVisible(baseline != nullptr);
  c->addAxis(cats, Qt::AlignLeft);
  series->attachAxis(cats);
  auto* axis = new QValueAxis;
  axis->setRange(0, 100);
  axis->setLabelFormat("%.0f");
  c->addAxis(axis, Qt::AlignBottom);
  series->attachAxis(axis);
}

}  // namespace cs::gui
