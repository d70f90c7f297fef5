#include "gui/views/pareto_chart.hpp"

#include <algorithm>
#include <cmath>

#include <QApplication>
#include <QLegendMarker>
#include <QMouseEvent>
#include <QLineSeries>
#include <QScatterSeries>
#include <QLogValueAxis>
#include <QValueAxis>

#include "gui/views/format.hpp"

namespace cs::gui {

ParetoChart::ParetoChart(QWidget* parent)
    : SweepChart(tr("Cost vs time to train, layout sweep (click a point to load it)"), parent) {
  setRubberBand(QChartView::RectangleRubberBand);
}

void ParetoChart::set_log_axes(bool on) {
  if (on == log_) return;
  log_ = on;
  show_points(std::shared_ptr<const SweepResult>(sweep_));
}

void ParetoChart::connect_series(QScatterSeries* s) {
  connect(s, &QScatterSeries::hovered, this, [this](const QPointF& v, bool on) {
    const int i = nearest(v);
    if (!on || i < 0) return;  // the tip stays while the mouse stays near (show_staying_tip)
    const sim::SweepPoint& p = sweep_->points[static_cast<std::size_t>(i)];
    const sim::Report& r = p.report;
    show_staying_tip(*this, QStringLiteral("%1\nstep %2, MFU %3\n%4, %5%6")
                                .arg(QString::fromStdString(point_label(p)), format_seconds(r.step_time_s),
                                     format_percent(r.mfu), format_days(r.cost.days_to_train),
                                     format_usd(r.cost.usd_to_train), p.fits() ? QString() : tr("\ndoes not fit in memory")));
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
    auto axis = [&](double a) { return log_ ? std::log10(std::max(a, 1e-300)) : a; };
    const double dx = (axis(cost.days_to_train) - axis(v.x())) / x_span_,
                 dy = (axis(cost.usd_to_train / y_scale_) - axis(v.y())) / y_span_;
    const double d = dx * dx + dy * dy;
    if (d < best_d) best_d = d, best = static_cast<int>(i);
  }
  return best_d < 0.05 * 0.05 ? best : -1;
}

int ParetoChart::point_at(QPoint viewport_pos) const {
  if (!sweep_ || !anchor_) return -1;
  int best = -1;
  double best_d = static_cast<double>(kClickRadius) * kClickRadius;
  for (std::size_t i = 0; i < sweep_->points.size(); ++i) {
    const sim::SweepPoint& p = sweep_->points[i];
    if (!p.simulated()) continue;
    const QPointF value(p.report.cost.days_to_train, p.report.cost.usd_to_train / y_scale_);
    const QPointF at = mapFromScene(chart()->mapToScene(chart()->mapToPosition(value, anchor_)));
    const QPointF d = at - QPointF(viewport_pos);
    const double d2 = d.x() * d.x() + d.y() * d.y();
    if (d2 <= best_d) best_d = d2, best = static_cast<int>(i);
  }
  return best;
}

void ParetoChart::mousePressEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton) return SweepChart::mousePressEvent(e);
  press_ = e->position().toPoint();  // a click until it moves: the rubber band gets it only then
  e->accept();
}

void ParetoChart::mouseMoveEvent(QMouseEvent* e) {
  if (press_ && (e->buttons() & Qt::LeftButton) &&
      (e->position().toPoint() - *press_).manhattanLength() >= QApplication::startDragDistance()) {
    const QPointF origin(*press_);
    press_.reset();
    QMouseEvent down(QEvent::MouseButtonPress, origin, mapToGlobal(origin), Qt::LeftButton, Qt::LeftButton,
                     e->modifiers(), e->pointingDevice());
    SweepChart::mousePressEvent(&down);  // the band starts where the button went down
  }
  SweepChart::mouseMoveEvent(e);
}

void ParetoChart::mouseReleaseEvent(QMouseEvent* e) {
  if (!press_ || e->button() != Qt::LeftButton) return SweepChart::mouseReleaseEvent(e);
  press_.reset();
  e->accept();
  const int i = point_at(e->position().toPoint());
  if (i >= 0) emit point_clicked(sweep_->points[static_cast<std::size_t>(i)]);
}

void ParetoChart::draw(QChart& chart, const SweepResult& sweep) {
  QChart* c = &chart;
  anchor_ = nullptr;
  const bool per_billion_tokens = sweep.plan.per_billion_tokens;
  const auto& points = sweep.points;

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
  const bool millions = usd_max >= 1e6, thousands = !millions && usd_max >= 1e4;
  y_scale_ = millions ? 1e6 : thousands ? 1e3 : 1;
  double xmin = 1e300, xmax = 0, ymin = 1e300, ymax = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const sim::SweepPoint& p = points[i];
    if (!p.simulated()) continue;
    const QPointF pt(p.report.cost.days_to_train, p.report.cost.usd_to_train / y_scale_);
    const bool on_front = sweep.on_front(i);
    (on_front ? front : p.fits() ? fits : no_fit)->append(pt);
    if (on_front) front_pts.push_back(pt);
    if (sweep.is_current(i)) current->append(pt);
    xmin = std::min(xmin, pt.x()), xmax = std::max(xmax, pt.x());
    ymin = std::min(ymin, pt.y()), ymax = std::max(ymax, pt.y());
  }
  if (xmax <= 0) {
    c->setTitle(tr("Cost vs time: no valid layout in the sweep"));
    return;
  }
  c->setTitle(tr("Cost vs time, %1 layouts (click one to load it)").arg(shown));
  std::sort(front_pts.begin(), front_pts.end(), [](QPointF a, QPointF b) { return a.x() < b.x(); });
  for (QPointF p : front_pts) line->append(p);
  for (QAbstractSeries* s : std::initializer_list<QAbstractSeries*>{line, no_fit, fits, front, current}) c->addSeries(s);

  const QString x_title = per_billion_tokens ? tr("days per 1B tokens") : tr("days to train");
  const QString unit = millions ? tr("$M") : thousands ? tr("$k") : tr("$");
  const QString y_title = per_billion_tokens ? tr("%1 per 1B tokens").arg(unit) : tr("%1 to train").arg(unit);
  QAbstractAxis* x = nullptr;
  QAbstractAxis* y = nullptr;
  if (log_ && xmin > 0 && ymin > 0) {
    auto log_axis = [](const QString& title, double lo, double hi) {
      auto* a = new QLogValueAxis;
      a->setBase(10);
      a->setTitleText(title);
      a->setRange(lo / 1.15, hi * 1.15);
      a->setLabelFormat(hi < 10 ? "%.3g" : "%.0f");
      a->setMinorTickCount(8);
      return a;
    };
    auto* lx = log_axis(x_title, xmin, xmax);
    auto* ly = log_axis(y_title, ymin, ymax);
    x_span_ = std::max(1e-12, std::log10(lx->max()) - std::log10(lx->min()));
    y_span_ = std::max(1e-12, std::log10(ly->max()) - std::log10(ly->min()));
    x = lx, y = ly;
  } else {
    const double pad_x = (xmax - xmin) * 0.08 + xmax * 0.01, pad_y = (ymax - ymin) * 0.08 + ymax * 0.01;
    auto* vx = new QValueAxis;
    vx->setTitleText(x_title);
    vx->setRange(std::max(0.0, xmin - pad_x), xmax + pad_x);
    vx->setLabelFormat(xmax < 10 ? "%.2f" : "%.0f");
    auto* vy = new QValueAxis;
    vy->setTitleText(y_title);
    vy->setRange(std::max(0.0, ymin - pad_y), ymax + pad_y);
    vy->setLabelFormat(ymax < 10 ? "%.2f" : "%.0f");
    vx->applyNiceNumbers();
    vy->applyNiceNumbers();
    vx->setTickCount(5);
    vy->setTickCount(4);  // a short chart: more labels than rows of text get elided to "…"
    x_span_ = std::max(1e-12, vx->max() - vx->min());
    y_span_ = std::max(1e-12, vy->max() - vy->min());
    x = vx, y = vy;
  }
  c->addAxis(x, Qt::AlignBottom);
  c->addAxis(y, Qt::AlignLeft);
  for (QAbstractSeries* s : c->series()) s->attachAxis(x), s->attachAxis(y);
  for (QScatterSeries* s : {no_fit, fits, front, current}) connect_series(s);
  anchor_ = fits;
  c->legend()->markers(line).first()->setVisible(false);
}

}  // namespace cs::gui
