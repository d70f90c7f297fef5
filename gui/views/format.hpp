#pragma once
// How the GUI writes numbers and which colour each kind of work gets, in one place so the headline,
// the charts, the timeline and the CSV export agree.
#include <QChart>
#include <QChartView>
#include <QColor>
#include <QSize>
#include <QString>

#include "sim/engine/task_graph.hpp"

#include <QPalette>

namespace cs::gui {

QString format_seconds(double s);      // "12.38 s", "41.2 ms", "730 us"
QString format_rate(double per_s);     // "1.23 M", "456 k"
QString format_usd(double usd);        // "$12.34", "$1.23 M"
QString format_days(double days);      // "41.3 days", "5.2 h"
QString format_gib(double bytes);      // "71.4 GiB"
QString format_percent(double fraction, int decimals = 1);
QString format_count(double n);        // "16,384"

// Every chart's frame: antialiased, titled, the legend at `legend`, thin margins, at least `minimum`.
void style_chart(QChartView& view, const QString& title, Qt::Alignment legend, QSize minimum);
// Whether a palette is dark (its window colour), so the views pick matching colours.
bool is_dark(const QPalette& palette);
// Light or dark chart theme; series keep the colours the views give them.
void apply_chart_theme(QChartView& view, bool dark);
// Empties a chart before it is drawn again: its series and its axes (which the chart owns).
void clear_chart(QChart& chart);
// A chart's hover tip that stays: shown at the cursor for kTipMs, kept while the mouse stays within
// kTipSlack px of where it appeared (Qt hides a tip when the mouse leaves its rect, qtooltip.cpp), so
// leaving a 10 px marker no longer takes it away. The chart's un-hover does not hide it.
inline constexpr int kTipMs = 30000;
inline constexpr int kTipSlack = 24;
void show_staying_tip(QChartView& view, const QString& text);

QColor category_color(cs::sim::Category c);
QString category_label(cs::sim::Category c);  // "compute", "TP comm", ...

// Breakdown / memory parts shared by the charts and the legend.
inline const QColor kComputeColor{0x3b, 0x6e, 0xc4};
inline const QColor kBubbleColor{0xb0, 0xb0, 0xb0};
inline const QColor kOtherColor{0xdc, 0xdc, 0xdc};
inline const QColor kErrorColor{0xc0, 0x1c, 0x28};

}  // namespace cs::gui
