/**
 * Small DOM and SVG builders shared by the views.  Text from the report is always set
 * with `textContent` (never parsed as HTML); attribute values are set one by one.
 */

/** The SVG namespace. */
export const SVG_NS = 'http://www.w3.org/2000/svg';

/** An HTML element with a class and optional text. */
export function html<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/** An SVG element with attributes and optional text. */
export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | number> = {},
  text?: string
): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) {
    node.setAttribute(name, String(value));
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/** A <title> child: the tooltip a browser shows on hover. */
export function tooltip(parent: SVGElement, text: string): void {
  parent.appendChild(svg('title', {}, text));
}

/** A paragraph saying there is nothing to show. */
export function empty(text: string): HTMLElement {
  return html('p', 'xlanb-empty', text);
}

/** One bar of a horizontal bar chart. */
export interface IBar {
  /** The row label on the left. */
  label: string;
  /** The bar's length in the chart's unit; null draws no bar ("not measured"). */
  value: number | null | undefined;
  /** The value as text, drawn right of the bar. */
  text: string;
  /** A class for the bar's colour, e.g. `xlanb-bar-fused`. */
  kind: string;
  /** Extra hover text. */
  title?: string;
}

/** A group of bars under a caption (e.g. one kernel: predicted and measured). */
export interface IBarGroup {
  caption: string;
  bars: IBar[];
}

const ROW = 20;
const GAP = 10;
const LABEL = 150;
const WIDTH = 620;

/**
 * A horizontal bar chart as SVG: groups of labelled bars on one linear scale.
 * The SVG gets class `xlanb-chart` and the given extra class.
 */
export function barChart(groups: IBarGroup[], className: string): SVGSVGElement {
  const max = Math.max(
    0,
    ...groups.flatMap(g => g.bars.map(b => (b.value && isFinite(b.value) ? b.value : 0)))
  );
  const barSpace = WIDTH - LABEL - 90;
  let y = 0;
  const body = svg('g');
  for (const group of groups) {
    if (group.caption) {
      body.appendChild(
        svg('text', { x: 0, y: y + 14, class: 'xlanb-chart-caption' }, group.caption)
      );
      y += ROW;
    }
    for (const bar of group.bars) {
      const row = svg('g', { class: 'xlanb-chart-row', transform: `translate(0,${y})` });
      row.appendChild(
        svg('text', { x: LABEL - 6, y: 14, class: 'xlanb-chart-label' }, bar.label)
      );
      const length =
        bar.value && max > 0 && isFinite(bar.value)
          ? Math.max(1, (bar.value / max) * barSpace)
          : 0;
      if (bar.value !== null && bar.value !== undefined) {
        const rect = svg('rect', {
          x: LABEL,
          y: 3,
          width: length.toFixed(1),
          height: ROW - 6,
          class: `xlanb-bar ${bar.kind}`
        });
        tooltip(rect, bar.title ?? `${bar.label}: ${bar.text}`);
        row.appendChild(rect);
      }
      row.appendChild(
        svg('text', { x: LABEL + length + 6, y: 14, class: 'xlanb-chart-value' }, bar.text)
      );
      body.appendChild(row);
      y += ROW;
    }
    y += GAP;
  }
  const height = Math.max(ROW, y - GAP);
  const chart = svg('svg', {
    class: `xlanb-chart ${className}`,
    width: WIDTH,
    height,
    viewBox: `0 0 ${WIDTH} ${height}`,
    role: 'img'
  });
  chart.appendChild(body);
  return chart;
}
