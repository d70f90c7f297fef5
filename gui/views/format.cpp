#include "gui/views/format.hpp"

#include <cmath>

#include <QAbstractAxis>
#include <QCursor>
#include <QLegend>
#include <QToolTip>

#include "sim/base/units.hpp"
#include "sim/report/format.hpp"

namespace cs::gui {

QString format_seconds(double s) {
  if (!std::isfinite(s)) return QStringLiteral("–");
  if (s >= 100) return QString::number(s, 'f', 1) + " s";
  if (s >= 1) return QString::number(s, 'f', 3) + " s";
  if (s >= 1e-3) return QString::number(s * 1e3, 'f', 2) + " ms";
  if (s <= 0) return QStringLiteral("0 s");
  return QString::number(s * 1e6, 'f', 1) + " µs";
}

QString format_rate(double v) {
  if (v >= 1e9) return QString::number(v / 1e9, 'f', 2) + " G";
  if (v >= 1e6) return QString::number(v / 1e6, 'f', 2) + " M";
  if (v >= 1e3) return QString::number(v / 1e3, 'f', 1) + " k";
  return QString::number(v, 'f', 0);
}

QString format_usd(double usd) {
  if (usd >= 1e9) return "$" + QString::number(usd / 1e9, 'f', 2) + " B";
  if (usd >= 1e6) return "$" + QString::number(usd / 1e6, 'f', 2) + " M";
  if (usd >= 1e4) return "$" + QString::number(usd / 1e3, 'f', 1) + " k";
  if (usd >= 1) return "$" + QString::number(usd, 'f', 2);
  return "$" + QString::number(usd, 'f', 4);
}

QString format_days(double days) {
  if (days <= 0) return QStringLiteral("–");
  if (days < 1) return QString::number(days * 24, 'f', 1) + " h";
  return QString::number(days, 'f', 1) + " days";
}

QString format_gib(double bytes) { return QString::fromStdString(sim::fmt("%.1f GiB", bytes / kGiB)); }

QString format_percent(double fraction, int decimals) { return QString::number(fraction * 100, 'f', decimals) + " %"; }

QString format_count(double n) { return QString::fromStdString(sim::grouped(n)); }

namespace {

// The tooltip event Qt sends when the mouse has rested 700 ms (QApplication's tool-tip wake-up) reaches the
// chart's scene, and QGraphicsScene::helpEvent (qgraphicsscene.cpp) answers it with QToolTip::showText of
// the tooltip of the item under the cursor, an empty text when it has none, which hides any tip. No chart
// item has a tooltip (the charts' tips come from their series' hovered signals), so every hover tip went
// 0.7 s after it came. The viewport's tooltip events are eaten: the tips stay (show_staying_tip).
class KeepHoverTips : public QObject {
 public:
  using QObject::QObject;
  bool eventFilter(QObject*, QEvent* e) override { return e->type() == QEvent::ToolTip; }
};

}  // namespace

void style_chart(QChartView& view, const QString& title, Qt::Alignment legend, QSize minimum) {
  view.viewport()->installEventFilter(new KeepHoverTips(&view));
  view.setRenderHint(QPainter::Antialiasing);
  view.chart()->setTitle(title);
  view.chart()->legend()->setAlignment(legend);
  view.chart()->setMargins(QMargins(4, 4, 4, 4));
  view.setMinimumSize(minimum);
  // Every repaint redraws the whole view: a chart rebuilt with fewer or shorter point labels (a new
  // sweep) otherwise leaves fragments of the old labels where only the changed region was repainted.
  view.setViewportUpdateMode(QGraphicsView::FullViewportUpdate);
}

bool is_dark(const QPalette& palette) { return palette.color(QPalette::Window).lightness() < 128; }

void apply_chart_theme(QChartView& view, bool dark) {
  const QChart::ChartTheme theme = dark ? QChart::ChartThemeDark : QChart::ChartThemeLight;
  if (view.chart()->theme() != theme) view.chart()->setTheme(theme);
}

void show_staying_tip(QChartView& view, const QString& text) {
  const QPoint at = view.viewport()->mapFromGlobal(QCursor::pos());
  QToolTip::showText(QCursor::pos(), text, view.viewport(),
                     QRect(at - QPoint(kTipSlack, kTipSlack), QSize(2 * kTipSlack, 2 * kTipSlack)), kTipMs);
}

void clear_chart(QChart& chart) {
  chart.removeAllSeries();
  for (QAbstractAxis* a : chart.axes()) chart.removeAxis(a), delete a;
}

QColor category_color(cs::sim::Category c) {
  using cs::sim::Category;
  switch (c) {
    case Category::compute: return kComputeColor;
    case Category::recompute: return {0x7f, 0xa7, 0xe0};
    case Category::optimizer: return {0x6c, 0x3f, 0xa8};
    case Category::tp_comm: return {0xe6, 0x8a, 0x1a};
    case Category::cp_comm: return {0xc9, 0xa2, 0x27};
    case Category::ep_comm: return {0xd4, 0x5d, 0x9c};
    case Category::dp_comm: return {0x2e, 0x9e, 0x5b};
    case Category::pp_comm: return {0xd0, 0x3b, 0x3b};
  }
  return Qt::black;
}

QString category_label(cs::sim::Category c) {
  using cs::sim::Category;
  switch (c) {
    case Category::compute: return QStringLiteral("compute");
    case Category::recompute: return QStringLiteral("recompute");
    case Category::optimizer: return QStringLiteral("optimizer");
    case Category::tp_comm: return QStringLiteral("TP comm");
    case Category::cp_comm: return QStringLiteral("CP comm");
    case Category::ep_comm: return QStringLiteral("EP comm");
    case Category::dp_comm: return QStringLiteral("DP comm");
    case Category::pp_comm: return QStringLiteral("PP comm");
  }
  return QStringLiteral("?");
}

}  // namespace cs::gui
