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

/** The attribute holding an element's hover text. */
export const TIP_ATTRIBUTE = 'data-xlanb-tip';

/**
 * Give an element hover text.  The text is shown in the page's DOM (one shared
 * `.xlanb-tooltip` element, see `enableTooltips`), not as a native SVG <title>, so it
 * follows the theme and tests can read it.
 */
export function tooltip(target: Element, text: string): void {
  target.setAttribute(TIP_ATTRIBUTE, text);
}

/** The one floating tooltip element of the page, made on first use. */
let tipNode: HTMLElement | null = null;

function tipElement(): HTMLElement {
  if (!tipNode || !tipNode.isConnected) {
    tipNode = html('div', 'xlanb-tooltip');
    tipNode.setAttribute('role', 'tooltip');
    tipNode.hidden = true;
    document.body.appendChild(tipNode);
  }
  return tipNode;
}

/** Hide the tooltip (when the pointer leaves, or a view is redrawn). */
export function hideTooltip(): void {
  if (tipNode) {
    tipNode.hidden = true;
  }
}

/** Place the tooltip near the pointer, inside the window. */
function placeTooltip(tip: HTMLElement, x: number, y: number): void {
  const gap = 14;
  const width = tip.offsetWidth;
  const height = tip.offsetHeight;
  const left = x + gap + width > window.innerWidth ? Math.max(4, x - gap - width) : x + gap;
  const top = y + gap + height > window.innerHeight ? Math.max(4, y - gap - height) : y + gap;
  tip.style.left = `${left}px`;
  tip.style.top = `${top}px`;
}

/**
 * Show the hover text of any element under `root` that has one, while the pointer is
 * over it (event delegation: views only call `tooltip`).
 */
export function enableTooltips(root: HTMLElement): void {
  root.addEventListener('pointerover', event => {
    const target = (event.target as Element | null)?.closest?.(`[${TIP_ATTRIBUTE}]`);
    const text = target && root.contains(target) ? target.getAttribute(TIP_ATTRIBUTE) : null;
    if (!text) {
      hideTooltip();
      return;
    }
    const tip = tipElement();
    tip.textContent = text;
    tip.hidden = false;
    placeTooltip(tip, event.clientX, event.clientY);
  });
  root.addEventListener('pointermove', event => {
    if (tipNode && !tipNode.hidden) {
      placeTooltip(tipNode, event.clientX, event.clientY);
    }
  });
  root.addEventListener('pointerleave', hideTooltip);
  root.addEventListener('pointerdown', hideTooltip);
}

/**
 * Draw `draw(width)` into `host` at the host's width, and again when that width
 * changes (a hidden tab has no width: it is drawn when first shown).
 */
export function fillWidth(
  host: HTMLElement,
  draw: (width: number) => Element,
  fallback = 760
): void {
  let drawn = 0;
  const render = (width: number): void => {
    drawn = width;
    host.replaceChildren(draw(width));
  };
  render(fallback);
  if (typeof ResizeObserver === 'undefined') {
    return;
  }
  new ResizeObserver(entries => {
    const width = Math.floor(entries[entries.length - 1].contentRect.width);
    if (width > 200 && Math.abs(width - drawn) > 4) {
      render(width);
    }
  }).observe(host);
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

const ROW = 22;
const GAP = 10;
const LABEL = 190;
const VALUE = 120;

/**
 * A horizontal bar chart as SVG, `width` pixels wide (see `fillWidth`): groups of
 * labelled bars on one linear scale, the longest bar ending where the value column
 * begins.  The SVG gets class `xlanb-chart` and the given extra class; every bar is a
 * `rect.xlanb-bar` with its value in `data-value`.
 */
export function barChart(groups: IBarGroup[], className: string, width: number): SVGSVGElement {
  const max = Math.max(
    0,
    ...groups.flatMap(g => g.bars.map(b => (b.value && isFinite(b.value) ? b.value : 0)))
  );
  const barSpace = Math.max(80, width - LABEL - VALUE);
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
        svg('text', { x: LABEL - 8, y: 15, class: 'xlanb-chart-label' }, bar.label)
      );
      const length =
        bar.value && max > 0 && isFinite(bar.value)
          ? Math.max(1, (bar.value / max) * barSpace)
          : 0;
      if (bar.value !== null && bar.value !== undefined) {
        const rect = svg('rect', {
          x: LABEL,
          y: 3,
          width: length.toFixed(2),
          height: ROW - 6,
          class: `xlanb-bar ${bar.kind}`,
          'data-value': bar.value
        });
        tooltip(rect, bar.title ?? `${bar.label}: ${bar.text}`);
        row.appendChild(rect);
      }
      row.appendChild(
        svg('text', { x: LABEL + length + 6, y: 15, class: 'xlanb-chart-value' }, bar.text)
      );
      body.appendChild(row);
      y += ROW;
    }
    y += GAP;
  }
  const height = Math.max(ROW, y - GAP);
  const chart = svg('svg', {
    class: `xlanb-chart ${className}`,
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: 'img'
  });
  chart.appendChild(body);
  return chart;
}
