#include "gui/views/pareto_chart.hpp"

#include <algorithm>
#include <cmath>

#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QToolTip>
#include <QValueAxis>

#include "gui/views/format.hpp"

namespace cs::gui {

ParetoChart::ParetoChart(QWidget* parent) : QChartView(new QChart, parent) {
  style_chart(*this, tr("Cost vs time to train, layout sweep (click a point to load it)"), Qt::AlignBottom, QSize(320, 240));
}

void ParetoChart::connect_series(QScatterSeries* s) {
  connect(s, &QScatterSeries::clicked, this, [this](const QPointF& v) {
    const int i = nearest(v);
    if (i >= 0) emit point_clicked(sweep_->points[static_cast<std::size_t>(i)]);
  });
  connect(s, &QScatterSeries::hovered, this, [this](const QPointF& v, bool on) {
    const int i = nearest(v);
    if (!on || i < 0) return QToolTip::hideText();
    const sim::SweepPoint& p = sweep_->points[static_cast<std::size_t>(i)];
    const sim::Report& r = p.report;
    QToolTip::showText(QCursor::pos(),
                       QStringLiteral("%1\nstep %2, MFU %3\n%4, %5%6")
                           .arg(QString::fromStdString(point_label(p)), format_seconds(r.step_time_s), format_percent(r.mfu),
                                format_days(r.cost.days_to_train), format_usd(r.cost.usd_to_train),
                                p.fits() ? QString() : tr("\ndoes not fit in memory")),
                       this);
  });
}

int ParetoChart::nearest(QPointF v) const {
  if (!sweep_) return -1;
  int best = -1;
  double best_d = 1e300;
  for (std::size_t i = 0; i < sweep_->points.size(); ++i) {
    const sim::SweepPoint& p = sweep_->points[i];
    if (!p.simulated()) continue;
    const auto& cost = p.report.cost;
    const double dx = (cost.days_to_train - v.x()) / x_span_, dy = (cost.usd_to_train / y_scale_ - v.y()) / y_span_;
    const double d = dx * dx + dy * dy;
    if (d < best_d) best_d = d, best = static_cast<int>(i);
  }
  return best_d < 0.05 * 0.05 ? best : -1;
}

void ParetoChart::show_points(const std::shared_ptr<const SweepResult>& sweep) {
  QChart* c = chart();
  clear_chart(*c);
  sweep_ = sweep;
  if (!sweep) return;
  const bool per_billion_tokens = sweep->plan.per_billion_tokens;
  const auto& points = sweep->points;

  auto scatter = [&](const QString& name, QColor color, double size, QScatterSeries::MarkerShape shape) {
    auto* s = new QScatterSeries;
    s->setName(name);
    s->setColor(color);
    s->setBorderColor(color.darker(140));
    s->setMarkerSize(size);
    s->setMarkerShape(shape);
    return s;
  };
  auto* no_fit = scatter(tr("does not fit memory"), QColor(0xc8, 0xc8, 0xc8), 8, QScatterSeries::MarkerShapeRectangle);
  auto* fits = scatter(tr("fits"), QColor(0x7f, 0xa7, 0xe0), 10, QScatterSeries::MarkerShapeCircle);
  auto* front = scatter(tr("Pareto front"), QColor(0xe6, 0x8a, 0x1a), 13, QScatterSeries::MarkerShapeCircle);
  auto* current = scatter(tr("current layout"), QColor(0xc0, 0x1c, 0x28), 18, QScatterSeries::MarkerShapeStar);
  auto* line = new QLineSeries;
  line->setName(tr("front"));
  line->setColor(QColor(0xe6, 0x8a, 0x1a));
  std::vector<QPointF> front_pts;
  double usd_max = 0;
  std::size_t shown = 0;
  for (const sim::SweepPoint& p : points)
    if (p.simulated()) usd_max = std::max(usd_max, p.report.cost.usd_to_train), ++shown;
  const bool millions = usd_max >= 1e6;
  y_scale_ = millions ? 1e6 : 1;
  double xmin = 1e300, xmax = 0, ymin = 1e300, ymax = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const sim::SweepPoint& p = points[i];
    if (!p.simulated()) continue;
    const QPointF pt(p.report.cost.days_to_train, p.report.cost.usd_to_train / y_scale_);
    const bool on_front = sweep->on_front(i);
    (on_front ? front : p.fits() ? fits : no_fit)->append(pt);
    if (on_front) front_pts.push_back(pt);
    if (sweep->is_current(i)) current->append(pt);
    xmin = std::min(xmin, pt.x()), xmax = std::max(xmax, pt.x());
    ymin = std::min(ymin, pt.y()), ymax = std::max(ymax, pt.y());
  }
  if (xmax <= 0) {
    c->setTitle(tr("Cost vs time: no valid layout in the sweep"));
    return;
  }
  c->setTitle(tr("Cost vs time to train, %1 layouts (click a point to load it)").arg(shown));
  std::sort(front_pts.begin(), front_pts.end(), [](QPointF a, QPointF b) { return a.x() < b.x(); });
  for (QPointF p : front_pts) line->append(p);
  for (QAbstractSeries* s : std::initializer_list<QAbstractSeries*>{line, no_fit, fits, front, current}) c->addSeries(s);

  // Clip the axes to the fitting points when the non-fitting ones are far off (a TP1 PP1 70B on 512
  // GPUs would squash everything else into a corner).
  const double pad_x = (xmax - xmin) * 0.08 + xmax * 0.01, pad_y = (ymax - ymin) * 0.08 + ymax * 0.01;
  auto* x = new QValueAxis;
  x->setTitleText(per_billion_tokens ? tr("days per 1B tokens") : tr("days to train"));
  x->setRange(std::max(0.0, xmin - pad_x), xmax + pad_x);
  x->setLabelFormat(xmax < 10 ? "%.2f" : "%.0f");
  auto* y = new QValueAxis;
  y->setTitleText(per_billion_tokens ? (millions ? tr("$M per 1B tokens") : tr("$ per 1B tokens"))
                                     : (millions ? tr("$M to train") : tr("$ to train")));
  y->setRange(std::max(0.0, ymin - pad_y), ymax + pad_y);
  y->setLabelFormat(ymax < 10 ? "%.2f" : "%.0f");
  x->applyNiceNumbers();
  y->applyNiceNumbers();
  x_span_ = std::max(1e-12, x->max() - x->min());
  y_span_ = std::max(1e-12, y->max() - y->min());
  c->addAxis(x, Qt::AlignBottom);
  c->addAxis(y, Qt::AlignLeft);
  for (QAbstractSeries* s : c->series()) s->attachAxis(x), s->attachAxis(y);
  for (QScatterSeries* s : {no_fit, fits, front, current}) connect_series(s);
  c->legend()->markers(line).first()->setVisible(false);
}

}  // namespace cs::gui
