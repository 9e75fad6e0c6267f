/**
 * Charts on one time axis: rows of (possibly stacked) bars under a top axis with round
 * ticks and a unit, every bar on the same linear scale.  Used by the Timing tab.
 *
 * Every bar is a `rect.xlanb-bar` with `data-seconds`: its width is
 * `seconds * pixelsPerSecond` for the whole chart, which the browser tests check.
 */
import { svg, tooltip } from './dom';
import { formatSeconds } from './report';

/** One piece of a bar: a kernel, an op kind, or a named gap. */
export interface ISegment {
  label: string;
  seconds: number;
  /** CSS classes for the colour, e.g. `xlanb-color-2` or `xlanb-bar-gap`. */
  kind: string;
  /** Hover text (default: label and time). */
  tip?: string;
}

/** One row: a label on the left, its segments laid end to end, the total on the right. */
export interface IRow {
  label: string;
  segments: ISegment[];
  /** Text after the bar (default: the total time). */
  text?: string;
  /** Hover text of the row label. */
  tip?: string;
}

/** Rows under a caption. */
export interface ISection {
  caption: string;
  rows: IRow[];
}

/** A time unit: its name and seconds per unit. */
type Unit = [string, number];

const UNITS: Unit[] = [
  ['s', 1],
  ['ms', 1e-3],
  ['µs', 1e-6],
  ['ns', 1e-9]
];

/** The round tick step (1, 2 or 5 times a power of ten) giving about `count` ticks. */
export function niceStep(span: number, count = 5): number {
  if (!(span > 0) || !isFinite(span)) {
    return 1;
  }
  const raw = span / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const fraction = raw / power;
  const nice = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10;
  return nice * power;
}

/** Round ticks from 0 past `max`, the unit to print them in, and the axis end. */
export function timeTicks(
  max: number,
  count = 5
): { ticks: number[]; end: number; unit: Unit } {
  const step = niceStep(max > 0 ? max : 1e-3, count);
  const n = Math.max(1, Math.ceil((max > 0 ? max : step) / step - 1e-9));
  const ticks = Array.from({ length: n + 1 }, (_, i) => i * step);
  const end = ticks[ticks.length - 1];
  const unit = UNITS.find(([, size]) => end >= size) ?? UNITS[UNITS.length - 1];
  return { ticks, end, unit };
}

/**
 * Round ticks inside the window [`from`, `to`] (a zoomed axis), their step, and the unit
 * to print them in (the unit of the window's end, so a tick reads "121.5" ms).
 */
export function windowTicks(
  from: number,
  to: number,
  count = 5
): { ticks: number[]; step: number; unit: Unit } {
  const step = niceStep(to - from, count);
  const first = Math.ceil(from / step - 1e-9);
  const ticks: number[] = [];
  for (let i = first; i * step <= to + step * 1e-9; i++) {
    ticks.push(i * step);
  }
  const unit = UNITS.find(([, size]) => to >= size) ?? UNITS[UNITS.length - 1];
  return { ticks, step, unit };
}

/** A tick value in `unit`, with no more decimals than the step needs. */
export function tickText(seconds: number, step: number, unit: Unit): string {
  const digits = Math.max(0, -Math.floor(Math.log10(step / unit[1]) + 1e-9));
  return (seconds / unit[1]).toFixed(Math.min(digits, 6));
}

const ROW = 22;
const CAPTION = 22;
const GAP = 8;
const AXIS = 30;
const LABEL = 190;
const VALUE = 120;
/** Below this many pixels a segment gets no label inside it (its tooltip has one). */
const INNER_LABEL = 64;

/**
 * A chart of `sections` on one time axis, `width` pixels wide.  The axis starts at 0 and
 * ends at a round tick past the longest row; ticks are labelled in one unit, named in
 * the axis title.
 */
export function timeChart(sections: ISection[], className: string, width: number): SVGSVGElement {
  const totals = sections.flatMap(s =>
    s.rows.map(r => r.segments.reduce((sum, g) => sum + Math.max(0, g.seconds), 0))
  );
  const { ticks, end, unit } = timeTicks(Math.max(0, ...totals));
  const plot = Math.max(80, width - LABEL - VALUE);
  const perSecond = plot / end;
  const x = (t: number): number => LABEL + t * perSecond;
  const step = ticks.length > 1 ? ticks[1] - ticks[0] : end;

  const body = svg('g');
  let y = AXIS;
  for (const section of sections) {
    if (section.caption) {
      body.appendChild(
        svg('text', { x: 0, y: y + 15, class: 'xlanb-chart-caption' }, section.caption)
      );
      y += CAPTION;
    }
    for (const row of section.rows) {
      const group = svg('g', { class: 'xlanb-chart-row', transform: `translate(0,${y})` });
      const label = svg('text', { x: LABEL - 8, y: 15, class: 'xlanb-chart-label' }, row.label);
      if (row.tip) {
        tooltip(label, row.tip);
      }
      group.appendChild(label);
      let at = 0;
      for (const segment of row.segments) {
        const seconds = Math.max(0, segment.seconds);
        const w = seconds * perSecond;
        const rect = svg('rect', {
          x: x(at).toFixed(2),
          y: 3,
          width: w.toFixed(2),
          height: ROW - 6,
          class: `xlanb-bar ${segment.kind}`,
          'data-seconds': seconds,
          'data-label': segment.label
        });
        tooltip(rect, segment.tip ?? `${segment.label}: ${formatSeconds(seconds)}`);
        group.appendChild(rect);
        if (w >= INNER_LABEL && row.segments.length > 1) {
          group.appendChild(
            svg(
              'text',
              { x: x(at) + 4, y: 15, class: 'xlanb-segment-label' },
              fit(segment.label, w - 8)
            )
          );
        }
        at += seconds;
      }
      group.appendChild(
        svg(
          'text',
          { x: x(at) + 6, y: 15, class: 'xlanb-chart-value' },
          row.text ?? formatSeconds(at)
        )
      );
      body.appendChild(group);
      y += ROW;
    }
    y += GAP;
  }
  const height = y;

  const axis = svg('g', { class: 'xlanb-axis' });
  axis.appendChild(
    svg(
      'text',
      { x: LABEL - 8, y: AXIS - 12, class: 'xlanb-chart-label xlanb-axis-title' },
      `time (${unit[0]})`
    )
  );
  for (const t of ticks) {
    axis.appendChild(
      svg('line', { x1: x(t), x2: x(t), y1: AXIS - 6, y2: height - GAP, class: 'xlanb-grid' })
    );
    axis.appendChild(
      svg(
        'text',
        { x: x(t), y: AXIS - 12, class: 'xlanb-axis-label', 'text-anchor': 'middle' },
        tickText(t, step, unit)
      )
    );
  }
  const chart = svg('svg', {
    class: `xlanb-chart ${className}`,
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: 'img',
    'data-seconds-per-pixel': 1 / perSecond
  });
  chart.appendChild(axis);
  chart.appendChild(body);
  return chart;
}

/** `text` cut to about `pixels` wide (7 px a character), with an ellipsis. */
function fit(text: string, pixels: number): string {
  const chars = Math.floor(pixels / 7);
  return text.length <= chars ? text : `${text.slice(0, Math.max(1, chars - 1))}…`;
}
