/**
 * The Timeline tab: one bar per compile phase (trace, passes, fusion, codegen, each
 * kernel's Numba compile) on a time axis that fills the output's width, with round
 * ticks in one unit, each phase's duration beside its bar, and every gap between
 * phases longer than a small share of the whole drawn and labelled as time no phase
 * accounts for.
 */
import { tickText, timeTicks } from './chart';
import { empty, fillWidth, html, svg, tooltip } from './dom';
import { formatSeconds, IPhase, IReport } from './report';

const CATEGORIES = ['trace', 'pass', 'fusion', 'codegen', 'compile', 'other'];
const ROW = 22;
const LABEL = 220;
const VALUE = 90;
const AXIS = 30;
/** Gaps shorter than this share of the whole are not drawn. */
const GAP_SHARE = 0.01;

/** The CSS class of a phase category (unknown categories count as "other"). */
function categoryClass(category: string): string {
  return `xlanb-phase-${CATEGORIES.includes(category) ? category : 'other'}`;
}

/** A drawn row: a phase, or the untracked time between two phases. */
interface IRow {
  name: string;
  start: number;
  seconds: number;
  kind: string;
  tip: string;
  gap: boolean;
}

/** The rows: phases in start order, with the gaps between them that are worth a row. */
export function timelineRows(phases: IPhase[], total: number): IRow[] {
  const sorted = [...phases].sort((a, b) => a.start - b.start);
  const rows: IRow[] = [];
  let end = 0;
  let previous = 'the start';
  for (const phase of sorted) {
    const gap = phase.start - end;
    if (gap > GAP_SHARE * total && gap > 1e-4) {
      rows.push({
        name: 'untracked',
        start: end,
        seconds: gap,
        kind: 'xlanb-phase-gap',
        gap: true,
        tip:
          `${formatSeconds(gap)} between ${previous} and ${phase.name} that no phase ` +
          'records (Python work of the compiler between phases, imports, the garbage ' +
          'collector)'
      });
    }
    rows.push({
      name: phase.name,
      start: phase.start,
      seconds: phase.seconds,
      kind: categoryClass(phase.category),
      gap: false,
      tip:
        `${phase.name} (${phase.category}): ${formatSeconds(phase.seconds)}, ` +
        `from ${formatSeconds(phase.start)} to ${formatSeconds(phase.start + phase.seconds)}`
    });
    if (phase.start + phase.seconds > end) {
      end = phase.start + phase.seconds;
      previous = phase.name;
    }
  }
  return rows;
}

/** The timeline chart, `width` pixels wide. */
function timelineChart(rows: IRow[], span: number, width: number): SVGSVGElement {
  // the axis ends where the compile ends (the plot fills the width); ticks stay round
  const scale = timeTicks(span, Math.max(3, Math.floor((width - LABEL) / 110)));
  const ticks = scale.ticks.filter(t => t <= span * (1 + 1e-9));
  const { unit } = scale;
  const end = span;
  const plot = Math.max(100, width - LABEL - VALUE);
  const x = (t: number): number => LABEL + (t / end) * plot;
  const height = AXIS + rows.length * ROW + 4;
  const chart = svg('svg', {
    class: 'xlanb-chart xlanb-timeline-chart',
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: 'img'
  });
  const step = scale.ticks.length > 1 ? scale.ticks[1] - scale.ticks[0] : end;
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
    const group = svg('g', {
      class: `xlanb-timeline-row${row.gap ? ' xlanb-timeline-gap' : ''}`
    });
    group.appendChild(
      svg('text', { x: LABEL - 8, y: y + 15, class: 'xlanb-chart-label' }, row.name)
    );
    const left = x(row.start);
    const w = Math.max(2, x(row.start + row.seconds) - left);
    const bar = svg('rect', {
      x: left.toFixed(1),
      y: y + 3,
      width: w.toFixed(1),
      height: ROW - 6,
      class: `xlanb-bar ${row.kind}`,
      'data-seconds': row.seconds
    });
    tooltip(bar, row.tip);
    group.appendChild(bar);
    // the duration right of the bar, or left of it when the bar reaches the end
    const after = left + w + 6 + 70 <= width;
    group.appendChild(
      svg(
        'text',
        {
          x: after ? left + w + 6 : left - 6,
          y: y + 15,
          class: 'xlanb-chart-value',
          'text-anchor': after ? 'start' : 'end'
        },
        formatSeconds(row.seconds)
      )
    );
    chart.appendChild(group);
  });
  return chart;
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
  const rows = timelineRows(phases, span);
  const host = html('div', 'xlanb-chart-host');
  node.appendChild(host);
  fillWidth(host, width => timelineChart(rows, span > 0 ? span : 1e-3, width));

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
  const untracked = rows.filter(r => r.gap).reduce((sum, r) => sum + r.seconds, 0);
  if (untracked > 0) {
    const item = html('span', 'xlanb-legend-item');
    item.appendChild(html('span', 'xlanb-swatch xlanb-phase-gap'));
    item.appendChild(document.createTextNode(`untracked ${formatSeconds(untracked)}`));
    legend.appendChild(item);
  }
  node.appendChild(legend);
  return node;
}
