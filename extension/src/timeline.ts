/**
 * The Timeline tab: one bar per compile phase (trace, passes, fusion, codegen, each
 * kernel's Numba compile) on a shared time axis.
 */
import { empty, html, svg, tooltip } from './dom';
import { formatSeconds, IReport } from './report';

const CATEGORIES = ['trace', 'pass', 'fusion', 'codegen', 'compile', 'other'];
const ROW = 18;
const LABEL = 220;
const WIDTH = 720;
const AXIS = 24;

/** The CSS class of a phase category (unknown categories count as "other"). */
function categoryClass(category: string): string {
  return `xlanb-phase-${CATEGORIES.includes(category) ? category : 'other'}`;
}

/** The timeline of `report.phases`, or a note when there are none. */
export function timeline(report: IReport): HTMLElement {
  const phases = report.phases ?? [];
  const node = html('div', 'xlanb-timeline');
  if (phases.length === 0) {
    node.appendChild(empty('No compile phases were recorded.'));
    return node;
  }
  const end = Math.max(
    report.total_seconds || 0,
    ...phases.map(p => p.start + p.seconds)
  );
  const span = end > 0 ? end : 1;
  const plot = WIDTH - LABEL - 10;
  const x = (t: number): number => LABEL + (t / span) * plot;
  const height = AXIS + phases.length * ROW + 4;
  const chart = svg('svg', {
    class: 'xlanb-chart xlanb-timeline-chart',
    width: WIDTH,
    height,
    viewBox: `0 0 ${WIDTH} ${height}`,
    role: 'img'
  });

  for (let i = 0; i <= 4; i++) {
    const t = (span * i) / 4;
    chart.appendChild(
      svg('line', { x1: x(t), x2: x(t), y1: AXIS - 4, y2: height, class: 'xlanb-grid' })
    );
    chart.appendChild(
      svg(
        'text',
        {
          x: x(t),
          y: AXIS - 8,
          class: 'xlanb-axis-label',
          'text-anchor': i === 0 ? 'start' : i === 4 ? 'end' : 'middle'
        },
        i === 0 ? '0' : formatSeconds(t)
      )
    );
  }

  phases.forEach((phase, i) => {
    const y = AXIS + i * ROW;
    const row = svg('g', { class: 'xlanb-timeline-row' });
    row.appendChild(
      svg('text', { x: LABEL - 6, y: y + 13, class: 'xlanb-chart-label' }, phase.name)
    );
    const bar = svg('rect', {
      x: x(phase.start).toFixed(1),
      y: y + 3,
      width: Math.max(1, x(phase.start + phase.seconds) - x(phase.start)).toFixed(1),
      height: ROW - 5,
      class: `xlanb-bar ${categoryClass(phase.category)}`
    });
    tooltip(
      bar,
      `${phase.name} (${phase.category}): ${formatSeconds(phase.seconds)} ` +
        `at ${formatSeconds(phase.start)}`
    );
    row.appendChild(bar);
    chart.appendChild(row);
  });
  node.appendChild(chart);

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
  node.appendChild(legend);
  return node;
}
