/**
 * The Timeline tab: one row per compile phase (trace, passes, fusion, codegen, each
 * kernel's Numba compile) on a time axis that fills the output's width, with round
 * ticks in one unit and each phase's duration beside its bar.
 *
 * Time no phase records (the compiler's Python between phases, imports, the garbage
 * collector) is drawn as a hatched "untracked" bar before the phase it delays, labelled
 * with its length: every gap wide enough to see at the current zoom is labelled.
 *
 * The axis zooms and pans as the graph does (wheel.ts): the wheel zooms around the
 * pointer once the timeline was clicked into (or with Ctrl held), dragging pans, a
 * double click on a bar zooms to it, and "Reset" shows the whole compile again.
 */
import { tickText, windowTicks } from './chart';
import { empty, fillWidth, html, svg, tooltip } from './dom';
import { formatSeconds, IPhase, IReport } from './report';
import { WheelGate } from './wheel';

const CATEGORIES = ['trace', 'pass', 'fusion', 'codegen', 'compile', 'other'];
const ROW = 22;
const LABEL = 220;
const VALUE = 90;
const AXIS = 30;
/** Gaps shorter than this (seconds) are timer noise, never drawn. */
const MIN_GAP = 1e-6;
/** A gap is drawn and labelled once it is this many pixels wide at the current zoom. */
const GAP_PIXELS = 3;
/** About how wide a character of chart text is (pixels), to place labels. */
const CHAR_WIDTH = 7.5;
/** The narrowest window, as a share of the whole compile. */
const MIN_WINDOW = 1e-4;

/** Unique clip-path ids: several reports can share one page. */
let instances = 0;

/** The CSS class of a phase category (unknown categories count as "other"). */
function categoryClass(category: string): string {
  return `xlanb-phase-${CATEGORIES.includes(category) ? category : 'other'}`;
}

/** A row: a phase, and the untracked time between the previous phase's end and it. */
export interface ITimelineRow {
  name: string;
  start: number;
  seconds: number;
  kind: string;
  tip: string;
  /** Untracked seconds just before `start` (0 when the phase follows without a gap). */
  gap: number;
  gapTip: string;
}

/** The rows: phases in start order, each with the gap before it. */
export function timelineRows(phases: IPhase[]): ITimelineRow[] {
  const sorted = [...phases].sort((a, b) => a.start - b.start);
  const rows: ITimelineRow[] = [];
  let end = 0;
  let previous = 'the start';
  for (const phase of sorted) {
    const gap = phase.start - end > MIN_GAP ? phase.start - end : 0;
    rows.push({
      name: phase.name,
      start: phase.start,
      seconds: phase.seconds,
      kind: categoryClass(phase.category),
      tip:
        `${phase.name} (${phase.category}): ${formatSeconds(phase.seconds)}, ` +
        `from ${formatSeconds(phase.start)} to ${formatSeconds(phase.start + phase.seconds)}`,
      gap,
      gapTip:
        `untracked: ${formatSeconds(gap)} between ${previous} and ${phase.name} that no ` +
        'phase records (Python work of the compiler between phases, imports, the garbage ' +
        'collector)'
    });
    if (phase.start + phase.seconds > end) {
      end = phase.start + phase.seconds;
      previous = phase.name;
    }
  }
  return rows;
}

/** A time window [from, to] in seconds. */
interface IWindow {
  from: number;
  to: number;
}

/** The timeline chart of `rows` over `view`, `width` pixels wide. */
function timelineChart(rows: ITimelineRow[], view: IWindow, width: number): SVGSVGElement {
  const plot = Math.max(100, width - LABEL - VALUE);
  const right = LABEL + plot;
  const perSecond = plot / (view.to - view.from);
  const x = (t: number): number => LABEL + (t - view.from) * perSecond;
  const clip = (t: number): number => Math.min(right, Math.max(LABEL, x(t)));
  const height = AXIS + rows.length * ROW + 4;
  const chart = svg('svg', {
    class: 'xlanb-chart xlanb-timeline-chart',
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: 'img',
    'data-t0': view.from,
    'data-t1': view.to,
    'data-seconds-per-pixel': 1 / perSecond
  });
  const clipId = `xlanb-timeline-clip-${++instances}`;
  const clipPath = svg('clipPath', { id: clipId });
  clipPath.appendChild(svg('rect', { x: LABEL, y: 0, width: plot, height }));
  chart.appendChild(clipPath);

  const { ticks, step, unit } = windowTicks(
    view.from,
    view.to,
    Math.max(3, Math.floor(plot / 110))
  );
  chart.appendChild(
    svg(
      'text',
      { x: LABEL - 8, y: AXIS - 12, class: 'xlanb-chart-label xlanb-axis-title' },
      `time (${unit[0]})`
    )
  );
  for (const t of ticks) {
    chart.appendChild(
      svg('line', { x1: x(t), x2: x(t), y1: AXIS - 6, y2: height, class: 'xlanb-grid' })
    );
    chart.appendChild(
      svg(
        'text',
        { x: x(t), y: AXIS - 12, class: 'xlanb-axis-label', 'text-anchor': 'middle' },
        tickText(t, step, unit)
      )
    );
  }

  rows.forEach((row, i) => {
    const y = AXIS + i * ROW;
    const group = svg('g', { class: 'xlanb-timeline-row', 'data-phase': row.name });
    group.appendChild(
      svg('text', { x: LABEL - 8, y: y + 15, class: 'xlanb-chart-label' }, row.name)
    );
    const bars = svg('g', { 'clip-path': `url(#${clipId})` });
    group.appendChild(bars);
    const end = row.start + row.seconds;

    // the duration: right of the bar's visible part, or at the edge it is hidden past
    const left = end < view.from;
    const after = row.start > view.to;
    const valueX = left ? LABEL + 4 : after ? right + 6 : clip(end) + 6;
    const valueText = `${left ? '\u25c2 ' : after ? '\u25b8 ' : ''}${formatSeconds(row.seconds)}`;
    group.appendChild(
      svg('text', { x: valueX, y: y + 15, class: 'xlanb-chart-value' }, valueText)
    );

    const bar = svg('rect', {
      x: x(row.start).toFixed(1),
      y: y + 3,
      width: Math.max(2, row.seconds * perSecond).toFixed(1),
      height: ROW - 6,
      class: `xlanb-bar xlanb-phase-bar ${row.kind}`,
      'data-start': row.start,
      'data-seconds': row.seconds
    });
    tooltip(bar, row.tip);
    bars.appendChild(bar);

    const gapStart = row.start - row.gap;
    const gapShown = Math.min(row.start, view.to) - Math.max(gapStart, view.from);
    if (row.gap > 0 && gapShown * perSecond >= GAP_PIXELS) {
      const gap = svg('g', { class: 'xlanb-timeline-gap' });
      const rect = svg('rect', {
        x: x(gapStart).toFixed(1),
        y: y + 3,
        width: (row.gap * perSecond).toFixed(1),
        height: ROW - 6,
        class: 'xlanb-bar xlanb-phase-gap',
        'data-start': gapStart,
        'data-seconds': row.gap
      });
      tooltip(rect, row.gapTip);
      const clipped = svg('g', { 'clip-path': `url(#${clipId})` });
      clipped.appendChild(rect);
      gap.appendChild(clipped);
      // the label left of the gap (rows are a staircase: nothing is drawn there), or
      // after the duration when the gap starts too near the left edge
      const text = `untracked ${formatSeconds(row.gap)}`;
      const before = clip(gapStart) - 6;
      const fits = before - text.length * CHAR_WIDTH >= LABEL;
      const label = svg(
        'text',
        {
          x: fits ? before : valueX + valueText.length * CHAR_WIDTH + 10,
          y: y + 15,
          class: 'xlanb-chart-value xlanb-gap-label',
          'text-anchor': fits ? 'end' : 'start'
        },
        text
      );
      tooltip(label, row.gapTip);
      gap.appendChild(label);
      group.appendChild(gap);
    }
    chart.appendChild(group);
  });
  return chart;
}

/** The drawn timeline: a toolbar, the chart in a frame, and its zoom and pan. */
class TimelineView {
  constructor(rows: ITimelineRow[], span: number, host: HTMLElement) {
    this._rows = rows;
    this._span = span;
    this._view = { from: 0, to: span };

    const toolbar = html('div', 'xlanb-graph-toolbar xlanb-timeline-toolbar');
    const button = (text: string, title: string, action: () => void): void => {
      const b = html('button', 'xlanb-button', text);
      b.type = 'button';
      b.title = title;
      b.dataset.action = text;
      b.addEventListener('click', action);
      toolbar.appendChild(b);
    };
    button('Reset', 'Show the whole compile', () => this._show({ from: 0, to: span }));
    button('+', 'Zoom in', () => this._zoom(1 / 1.5));
    button('\u2212', 'Zoom out', () => this._zoom(1.5));
    this._range = html('span', 'xlanb-graph-hint xlanb-timeline-range');
    toolbar.appendChild(this._range);
    host.appendChild(toolbar);

    this._frame = html('div', 'xlanb-timeline-frame');
    this._chart = html('div', 'xlanb-chart-host');
    this._frame.appendChild(this._chart);
    this._wheel = new WheelGate(
      this._frame,
      'Click into the timeline, or hold Ctrl, to zoom with the wheel'
    );
    host.appendChild(this._frame);
    fillWidth(this._chart, width => {
      this._width = width;
      return this._drawChart();
    });
    this._showRange();
    this._listen();
  }

  private _drawChart(): SVGSVGElement {
    return timelineChart(this._rows, this._view, this._width);
  }

  /** Show the window `view`, kept inside the compile and no narrower than the minimum. */
  private _show(view: IWindow): void {
    const span = this._span;
    const width = Math.min(span, Math.max(span * MIN_WINDOW, view.to - view.from));
    const from = Math.min(Math.max(0, view.from), span - width);
    this._view = { from, to: from + width };
    this._chart.replaceChildren(this._drawChart());
    this._showRange();
  }

  /** Zoom by `factor` (< 1 zooms in) around the time `at` (default: the middle). */
  private _zoom(factor: number, at?: number): void {
    const { from, to } = this._view;
    const t = at ?? (from + to) / 2;
    this._show({ from: t - (t - from) * factor, to: t + (to - t) * factor });
  }

  /** The time under the pointer's x, inside the plot. */
  private _timeAt(clientX: number): number {
    const box = this._chart.getBoundingClientRect();
    const plot = Math.max(100, this._width - LABEL - VALUE);
    const share = Math.min(1, Math.max(0, (clientX - box.left - LABEL) / plot));
    return this._view.from + share * (this._view.to - this._view.from);
  }

  private _showRange(): void {
    const { from, to } = this._view;
    const whole = from <= 0 && to >= this._span;
    this._range.textContent = whole
      ? `the whole compile, ${formatSeconds(this._span)}; click in (or hold Ctrl) to zoom ` +
        'with the wheel, drag to pan, double-click a bar to zoom to it'
      : `showing ${from > 0 ? formatSeconds(from) : '0'} to ${formatSeconds(to)} of ` +
        `${formatSeconds(this._span)}; drag to pan`;
  }

  /** Wheel zoom (once clicked into), drag to pan, double click to zoom to a bar. */
  private _listen(): void {
    const frame = this._frame;
    frame.addEventListener(
      'wheel',
      event => {
        if (!this._wheel.zooms(event)) {
          return;                                   // the page scrolls
        }
        if (Math.abs(event.deltaX) > Math.abs(event.deltaY)) {
          const { from, to } = this._view;           // a sideways swipe pans
          const shift = (event.deltaX / this._plot()) * (to - from);
          this._show({ from: from + shift, to: to + shift });
          return;
        }
        const delta = Math.max(-100, Math.min(100, event.deltaY));
        this._zoom(Math.exp(delta * 0.004), this._timeAt(event.clientX));
      },
      { passive: false }
    );
    frame.addEventListener('pointerdown', event => {
      if (event.button !== 0) {
        return;
      }
      this._wheel.setActive(true);
      const startX = event.clientX;
      const start = { ...this._view };
      let dragged = false;
      const move = (e: PointerEvent): void => {
        const dx = e.clientX - startX;
        if (Math.abs(dx) > 3) {
          dragged = true;
          frame.classList.add('xlanb-panning');
        }
        if (dragged) {
          const shift = (-dx / this._plot()) * (start.to - start.from);
          this._show({ from: start.from + shift, to: start.to + shift });
        }
      };
      const up = (): void => {
        window.removeEventListener('pointermove', move);
        window.removeEventListener('pointerup', up);
        frame.classList.remove('xlanb-panning');
      };
      window.addEventListener('pointermove', move);
      window.addEventListener('pointerup', up);
    });
    frame.addEventListener('dblclick', event => {
      const bar = (event.target as Element | null)?.closest?.('rect[data-start]');
      if (!bar) {
        return;
      }
      const start = parseFloat(bar.getAttribute('data-start') ?? '0');
      const seconds = parseFloat(bar.getAttribute('data-seconds') ?? '0');
      const margin = Math.max(seconds * 0.1, this._span * MIN_WINDOW);
      this._show({ from: start - margin, to: start + seconds + margin });
    });
  }

  private _plot(): number {
    return Math.max(100, this._width - LABEL - VALUE);
  }

  private _rows: ITimelineRow[];
  private _span: number;
  private _view: IWindow;
  private _width = 760;
  private _frame: HTMLElement;
  private _chart: HTMLElement;
  private _range: HTMLElement;
  private _wheel: WheelGate;
}

/** The timeline of `report.phases`, or a note when there are none. */
export function timeline(report: IReport): HTMLElement {
  const phases = report.phases ?? [];
  const node = html('div', 'xlanb-timeline');
  if (phases.length === 0) {
    node.appendChild(empty('No compile phases were recorded.'));
    return node;
  }
  const span = Math.max(report.total_seconds || 0, ...phases.map(p => p.start + p.seconds));
  const rows = timelineRows(phases);
  new TimelineView(rows, span > 0 ? span : 1e-3, node);

  const legend = html('div', 'xlanb-legend');
  const used = new Set(phases.map(p => categoryClass(p.category)));
  for (const category of CATEGORIES) {
    if (used.has(categoryClass(category))) {
      const total = phases
        .filter(p => categoryClass(p.category) === categoryClass(category))
        .reduce((sum, p) => sum + p.seconds, 0);
      const item = html('span', 'xlanb-legend-item');
      item.appendChild(html('span', `xlanb-swatch ${categoryClass(category)}`));
      item.appendChild(document.createTextNode(`${category} ${formatSeconds(total)}`));
      legend.appendChild(item);
    }
  }
  const gaps = rows.filter(r => r.gap > 0);
  if (gaps.length > 0) {
    const untracked = gaps.reduce((sum, r) => sum + r.gap, 0);
    const item = html('span', 'xlanb-legend-item');
    item.appendChild(html('span', 'xlanb-swatch xlanb-phase-gap'));
    item.appendChild(
      document.createTextNode(
        `untracked ${formatSeconds(untracked)} in ${gaps.length} gap${gaps.length === 1 ? '' : 's'}`
      )
    );
    legend.appendChild(item);
  }
  node.appendChild(legend);
  return node;
}
