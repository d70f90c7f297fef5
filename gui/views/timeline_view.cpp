#include "gui/views/timeline_view.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <QHBoxLayout>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>

#include "gui/views/format.hpp"

namespace cs::gui {

namespace {

constexpr int kScrollSteps = 100000;  // horizontal scroll bar resolution over the whole step

// A "nice" tick step (1, 2 or 5 x 10^k) for about `target` ticks over `span`.
double nice_step(double span, int target) {
  const double raw = span / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) return m * mag;
  return 10 * mag;
}

QString time_label(double ps, double step_ps) {
  const double s = ps * 1e-12, step_s = step_ps * 1e-12;
  if (step_s >= 0.1) return QString::number(s, 'f', step_s >= 1 ? 0 : 1) + " s";
  if (step_s >= 1e-4) return QString::number(s * 1e3, 'f', step_s >= 1e-3 ? 0 : 1) + " ms";
  return QString::number(s * 1e6, 'f', step_s >= 1e-6 ? 0 : 2) + " µs";
}

}  // namespace

TimelineView::TimelineView(QWidget* parent) : QAbstractScrollArea(parent) {
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
  setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  viewport()->setMouseTracking(true);
  viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
  setMinimumSize(300, 140);
  setFocusPolicy(Qt::StrongFocus);
  horizontalScrollBar()->setRange(0, 0);
  connect(horizontalScrollBar(), &QScrollBar::valueChanged, this, [this](int v) {
    if (syncing_ || !data_ || data_->makespan <= 0) return;
    const double width = t1_ - t0_;
    t0_ = static_cast<double>(v) / kScrollSteps * static_cast<double>(data_->makespan);
    t1_ = t0_ + width;
    viewport()->update();
  });
}

QWidget* TimelineView::make_legend(QWidget* parent) {
  auto* w = new QWidget(parent);
  auto* row = new QHBoxLayout(w);
  row->setContentsMargins(4, 0, 4, 0);
  row->setSpacing(10);
  for (int k = 0; k < sim::kNumCategories; ++k) {
    const auto c = static_cast<sim::Category>(k);
    auto* l = new QLabel(QStringLiteral("<span style='color:%1'>■</span> %2").arg(category_color(c).name(), category_label(c)), w);
    row->addWidget(l);
  }
  auto* hint = new QLabel(QObject::tr("wheel: zoom · Shift+wheel: rows · drag: pan · double-click or Home: whole step · keys: + − ← →"), w);
  hint->setForegroundRole(QPalette::PlaceholderText);
  hint->setWordWrap(true);
  hint->setMinimumWidth(0);
  hint->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  row->addStretch(1);
  row->addWidget(hint);
  return w;
}

void TimelineView::show_timeline(std::shared_ptr<const TimelineData> timeline) {
  const bool first = !data_;
  const double old_span = data_ ? static_cast<double>(data_->makespan) : 0;
  data_ = std::move(timeline);
  // The label column fits the longest label ("rank 12 (GPU 16383) compute"), within a third of the view.
  int widest = fontMetrics().horizontalAdvance(QStringLiteral("rank 0 (GPU 0) compute"));
  if (data_)
    for (const TimelineRow& row : data_->rows) widest = std::max(widest, fontMetrics().horizontalAdvance(QString::fromStdString(row.label)));
  label_width_ = std::clamp(widest + 12, 120, std::max(120, width() / 3));
  // Keep the zoom when the step length barely changed (knob tweaks), else show the whole step.
  if (first || !data_ || old_span <= 0 || t1_ - t0_ >= old_span * 0.999 ||
      std::abs(static_cast<double>(data_->makespan) - old_span) > 0.5 * old_span)
    reset_zoom();
  update_scrollbars();
  viewport()->update();
}

void TimelineView::reset_zoom() {
  t0_ = 0;
  t1_ = data_ && data_->makespan > 0 ? static_cast<double>(data_->makespan) * 1.01 : 1;
  update_scrollbars();
  viewport()->update();
}

void TimelineView::zoom(double factor, double anchor_fraction) {
  if (!data_ || data_->makespan <= 0) return;
  const double span = static_cast<double>(data_->makespan) * 1.01;
  const double anchor = t0_ + (t1_ - t0_) * anchor_fraction;
  double width = std::clamp((t1_ - t0_) / factor, 1000.0 /* 1 ns */, span);
  t0_ = std::clamp(anchor - width * anchor_fraction, 0.0, span - width);
  t1_ = t0_ + width;
  update_scrollbars();
  viewport()->update();
}

void TimelineView::pan(double fraction) {
  if (!data_ || data_->makespan <= 0) return;
  const double width = t1_ - t0_;
  const double span = static_cast<double>(data_->makespan) * 1.01;
  t0_ = std::clamp(t0_ + fraction * width, 0.0, std::max(0.0, span - width));
  t1_ = t0_ + width;
  update_scrollbars();
  viewport()->update();
}

void TimelineView::keyPressEvent(QKeyEvent* e) {
  switch (e->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal: zoom(1.5); break;
    case Qt::Key_Minus:
    case Qt::Key_Underscore: zoom(1 / 1.5); break;
    case Qt::Key_Left: pan(e->modifiers() & Qt::ShiftModifier ? -0.5 : -0.1); break;
    case Qt::Key_Right: pan(e->modifiers() & Qt::ShiftModifier ? 0.5 : 0.1); break;
    case Qt::Key_Home:
    case Qt::Key_0: reset_zoom(); break;
    default: QAbstractScrollArea::keyPressEvent(e); return;  // Up/Down/PageUp/PageDown scroll the rows
  }
  e->accept();
}

double TimelineView::plot_width() const { return std::max(1, viewport()->width() - label_width_); }
double TimelineView::x_of(double t) const { return label_width_ + (t - t0_) / (t1_ - t0_) * plot_width(); }
double TimelineView::t_of(double x) const { return t0_ + (x - label_width_) / plot_width() * (t1_ - t0_); }

int TimelineView::row_at(int y) const {
  if (!data_ || y < header_height_) return -1;
  const int r = (y - header_height_ + verticalScrollBar()->value()) / row_height_;
  return r < static_cast<int>(data_->rows.size()) ? r : -1;
}

void TimelineView::update_scrollbars() {
  syncing_ = true;
  const int rows = data_ ? static_cast<int>(data_->rows.size()) : 0;
  const int visible = std::max(0, viewport()->height() - header_height_);
  verticalScrollBar()->setRange(0, std::max(0, rows * row_height_ - visible));
  verticalScrollBar()->setPageStep(visible);
  verticalScrollBar()->setSingleStep(row_height_);
  if (data_ && data_->makespan > 0) {
    const double span = static_cast<double>(data_->makespan);
    const int page = static_cast<int>(std::min(1.0, (t1_ - t0_) / span) * kScrollSteps);
    horizontalScrollBar()->setRange(0, std::max(0, kScrollSteps - page));
    horizontalScrollBar()->setPageStep(std::max(1, page));
    horizontalScrollBar()->setSingleStep(std::max(1, page / 20));
    horizontalScrollBar()->setValue(static_cast<int>(t0_ / span * kScrollSteps));
  } else {
    horizontalScrollBar()->setRange(0, 0);
  }
  syncing_ = false;
}

void TimelineView::resizeEvent(QResizeEvent* e) {
  QAbstractScrollArea::resizeEvent(e);
  update_scrollbars();
}

void TimelineView::scrollContentsBy(int, int) { viewport()->update(); }

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter p(viewport());
  const QRect area = viewport()->rect();
  const QPalette& pal = palette();
  p.fillRect(area, pal.color(QPalette::Base));
  last_rects_ = 0;
  if (!data_ || data_->rows.empty()) {
    p.setPen(pal.color(QPalette::PlaceholderText));
    p.drawText(area, Qt::AlignCenter, tr("no timeline yet"));
    return;
  }
  const int scroll = verticalScrollBar()->value();
  const int rows = static_cast<int>(data_->rows.size());
  const int first = std::max(0, scroll / row_height_);
  const int last = std::min(rows - 1, (scroll + area.height() - header_height_) / row_height_ + 1);
  const double px_per_ps = plot_width() / (t1_ - t0_);
  const QFontMetrics fm = p.fontMetrics();

  // Rows: shading, label, bars.
  p.setClipRect(QRect(0, header_height_, area.width(), area.height() - header_height_));
  for (int r = first; r <= last; ++r) {
    const TimelineRow& row = data_->rows[static_cast<std::size_t>(r)];
    const int y = header_height_ + r * row_height_ - scroll;
    if (row.rank % 2) p.fillRect(QRect(0, y, area.width(), row_height_), pal.color(QPalette::AlternateBase));
    p.setPen(pal.color(QPalette::Text));
    p.drawText(QRect(4, y, label_width_ - 8, row_height_), Qt::AlignVCenter | Qt::AlignLeft,
               fm.elidedText(QString::fromStdString(row.label), Qt::ElideRight, label_width_ - 8));

    p.save();
    p.setClipRect(QRect(label_width_, std::max(y, header_height_), area.width() - label_width_, row_height_));
    const auto& bars = row.bars;
    auto it = std::partition_point(bars.begin(), bars.end(), [&](const TimelineBar& b) { return static_cast<double>(b.end) < t0_; });
    // Pending merged rectangle.
    double mx0 = 0, mx1 = -1;
    std::array<double, sim::kNumCategories> weight{};
    double covered_px = 0;  // pixels of the pending rect the tasks actually cover
    const TimelineBar* single = nullptr;  // the only bar in the pending rect, for its label
    auto flush = [&]() {
      if (mx1 < mx0) return;
      int best = 0;
      for (int k = 1; k < sim::kNumCategories; ++k)
        if (weight[static_cast<std::size_t>(k)] > weight[static_cast<std::size_t>(best)]) best = k;
      const QColor color = category_color(static_cast<sim::Category>(best));
      // A merged rect is as tall as the share of it its tasks cover: a stream busy 30 % of the pixels is a
      // low bar, not a solid one (the colour stays the kind's, so it never reads as another kind).
      const double share = single ? 1.0 : std::clamp(covered_px / std::max(1.0, mx1 - mx0), 0.0, 1.0);
      const double full = row_height_ - 4, h = std::max(2.0, full * (0.3 + 0.7 * share));
      const QRectF rect(mx0, y + 2 + (full - h), std::max(1.0, mx1 - mx0), h);
      p.fillRect(rect, color);
      ++last_rects_;
      if (rect.width() > 5) {
        p.setPen(color.darker(140));
        p.drawRect(rect);
      }
      if (single && rect.width() > 50) {
        p.setPen(Qt::white);
        p.drawText(rect.adjusted(3, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                   fm.elidedText(QString::fromStdString(data_->names[single->name]), Qt::ElideRight, static_cast<int>(rect.width()) - 5));
      }
      weight.fill(0);
      covered_px = 0;
      single = nullptr;
      mx1 = -1;
    };
    for (; it != bars.end() && static_cast<double>(it->start) <= t1_; ++it) {
      const double x0 = x_of(static_cast<double>(it->start));
      const double x1 = x0 + static_cast<double>(it->end - it->start) * px_per_ps;
      const bool narrow = x1 - x0 < 2;
      if (mx1 >= mx0 && x0 <= mx1 + 1 && (narrow || mx1 - mx0 < 2)) {
        mx1 = std::max(mx1, x1);
        single = nullptr;
      } else {
        flush();
        mx0 = x0;
        mx1 = x1;
        single = &*it;
      }
      weight[static_cast<std::size_t>(it->category)] += static_cast<double>(it->end - it->start);
      covered_px += x1 - x0;
    }
    flush();
    p.restore();
  }
  p.setClipping(false);

  // Header: time axis.
  p.fillRect(QRect(0, 0, area.width(), header_height_), pal.color(QPalette::Button));
  p.setPen(pal.color(QPalette::Mid));
  p.drawLine(label_width_, header_height_ - 1, area.width(), header_height_ - 1);
  p.drawLine(label_width_ - 1, 0, label_width_ - 1, area.height());
  const double step = nice_step(t1_ - t0_, std::max(2, static_cast<int>(plot_width() / 110)));
  p.setPen(pal.color(QPalette::ButtonText));
  for (double t = std::ceil(t0_ / step) * step; t <= t1_; t += step) {
    const int x = static_cast<int>(x_of(t));
    p.drawLine(x, header_height_ - 6, x, header_height_ - 1);
    p.drawText(x + 3, header_height_ - 7, time_label(t, step));
  }
  p.drawText(QRect(4, 0, label_width_ - 8, header_height_), Qt::AlignVCenter | Qt::AlignLeft,
             tr("%1 rows, step %2").arg(rows).arg(format_seconds(static_cast<double>(data_->makespan) * 1e-12)));
  // End-of-step marker.
  const double xe = x_of(static_cast<double>(data_->makespan));
  if (xe >= label_width_ && xe <= area.width()) {
    p.setPen(QPen(kErrorColor, 1, Qt::DashLine));
    p.drawLine(QPointF(xe, header_height_), QPointF(xe, area.height()));
  }
}

void TimelineView::wheelEvent(QWheelEvent* e) {
  if (e->modifiers() & Qt::ShiftModifier) {  // shift+wheel scrolls rows
    QAbstractScrollArea::wheelEvent(e);
    return;
  }
  const double steps = e->angleDelta().y() / 120.0;
  if (steps == 0) return;
  const double anchor = std::clamp((e->position().x() - label_width_) / plot_width(), 0.0, 1.0);
  zoom(std::pow(1.25, steps), anchor);
  e->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* e) {
  if (e->button() == Qt::LeftButton) {
    dragging_ = true;
    drag_origin_ = e->pos();
    drag_t0_ = t0_;
    viewport()->setCursor(Qt::ClosedHandCursor);
  }
}

void TimelineView::mouseMoveEvent(QMouseEvent* e) {
  if (!dragging_ || !data_) return;
  const double width = t1_ - t0_;
  const double span = static_cast<double>(data_->makespan) * 1.01;
  t0_ = std::clamp(drag_t0_ - (e->pos().x() - drag_origin_.x()) / plot_width() * width, 0.0, std::max(0.0, span - width));
  t1_ = t0_ + width;
  update_scrollbars();
  viewport()->update();
}

void TimelineView::mouseReleaseEvent(QMouseEvent*) {
  dragging_ = false;
  viewport()->unsetCursor();
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent*) { reset_zoom(); }

bool TimelineView::viewportEvent(QEvent* e) {
  if (e->type() == QEvent::ToolTip && data_) {
    auto* help = static_cast<QHelpEvent*>(e);
    const int r = row_at(help->pos().y());
    if (r >= 0 && help->pos().x() >= label_width_) {
      const auto& bars = data_->rows[static_cast<std::size_t>(r)].bars;
      const double t = t_of(help->pos().x());
      const double slop = 3 * (t1_ - t0_) / plot_width();  // 3 px
      auto it = std::partition_point(bars.begin(), bars.end(), [&](const TimelineBar& b) { return static_cast<double>(b.end) < t - slop; });
      if (it != bars.end() && static_cast<double>(it->start) <= t + slop) {
        QToolTip::showText(help->globalPos(),
                           QStringLiteral("%1\n%2, micro-batch %3\nstart %4, duration %5")
                               .arg(QString::fromStdString(data_->names[it->name]), category_label(it->category))
                               .arg(it->micro_batch)
                               .arg(format_seconds(static_cast<double>(it->start) * 1e-12),
                                    format_seconds(static_cast<double>(it->end - it->start) * 1e-12)),
                           this);
        return true;
      }
    }
    QToolTip::hideText();
    return true;
  }
  return QAbstractScrollArea::viewportEvent(e);
}

}  // namespace cs::gui
