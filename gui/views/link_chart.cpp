#include "gui/views/link_chart.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QHorizontalBarSeries>
#include <QValueAxis>

#include "gui/views/format.hpp"

namespace cs::gui {

LinkChart::LinkChart(QWidget* parent) : QChartView(new QChart, parent) {
  style_chart(*this, tr("Utilization over the step, % (GB sent per GPU per step)"), Qt::AlignBottom, QSize(320, 200));
}

void LinkChart::show_outcome(const std::shared_ptr<const SimOutcome>& current, const std::shared_ptr<const SimOutcome>& baseline) {
  QChart* c = chart();
  clear_chart(*c);
  if (!current) return;
  const sim::Report& r = current->report;

  QStringList names{tr("GPU busy %1%").arg(r.gpu_busy * 100, 0, 'f', 1)};
  for (const auto& l : r.links) {
    // "scale-up (nvswitch)" -> "nvswitch 151 GB": the level's link and the bytes each GPU sends per step.
    QString name = QString::fromStdString(l.name);
    if (const auto open = name.indexOf('('); open >= 0) name = name.mid(open + 1).chopped(1);
    const QString bytes = l.bytes_per_gpu >= 1e12 ? QString::number(l.bytes_per_gpu / 1e12, 'f', 1) + " TB"
                                                  : QString::number(l.bytes_per_gpu / 1e9, 'f', l.bytes_per_gpu < 1e10 ? 1 : 0) + " GB";
    names << QStringLiteral("%1 %2% (%3)").arg(name).arg(l.utilization * 100, 0, 'f', 1).arg(bytes);
  }
  auto values_of = [&](const sim::Report& rep) {
    QList<qreal> v{rep.gpu_busy * 100};
    for (std::size_t i = 0; i < r.links.size(); ++i) v << (i < rep.links.size() ? rep.links[i].utilization * 100 : 0.0);
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
  c->addSeries(series);
  auto* cats = new QBarCategoryAxis;
  cats->append(names);
  c->addAxis(cats, Qt::AlignLeft);
  series->attachAxis(cats);
  auto* axis = new QValueAxis;
  axis->setRange(0, 100);
  axis->setLabelFormat("%.0f");
  c->addAxis(axis, Qt::AlignBottom);
  series->attachAxis(axis);
}

}  // namespace cs::gui
