/**
 * The Graph tab: the optimized graph laid out by dagre (layered, top to bottom).
 *
 * Nodes are coloured by their first kernel (one colour per fusion group); edges whose
 * value stays in registers inside a kernel are dashed, edges through memory solid.
 * Hover a node for its op, shape and dtype; click it (or a legend entry) to show its
 * kernel's source under the graph; dragging pans (the SVG viewBox).  As in map widgets,
 * the wheel scrolls the page until the user clicks into the graph (or holds Ctrl, Alt or
 * Cmd); then it zooms, until a click outside the graph.
 */
import dagre from '@dagrejs/dagre';

import { empty, html, svg, tooltip } from './dom';
import { kernelSource } from './kernels';
import { IGraphNode, IReport, plural } from './report';

/** Colours cycle through this many CSS classes, `xlanb-color-0` ... */
const COLOURS = 10;
const NODE_HEIGHT = 36;
const CHAR_WIDTH = 7;
const MAX_NODES = 3000;

/** Unique marker ids: several reports can share one page. */
let instances = 0;

/** `(3, 4)`, `(5,)` or `()`, as NumPy prints shapes. */
export function shapeText(shape: number[]): string {
  return shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
}

/** The hover text of a node: op, shape, dtype, kernels and source location. */
export function nodeTitle(node: IGraphNode, name: string): string {
  const lines = [
    `op: ${node.op}${name !== node.op ? ` (${name})` : ''}`,
    `shape: ${shapeText(node.shape ?? [])}`,
    `dtype: ${node.dtype}`,
    `kernel: ${node.kernels.length > 0 ? node.kernels.join(', ') : '- (input or constant)'}`
  ];
  if (node.kernels.length > 1) {
    lines.push('recomputed in several kernels');
  }
  if (node.loc) {
    lines.push(`at: ${node.loc}`);
  }
  return lines.join('\n');
}

/** The interactive graph view (or a note when the report has no graph). */
export function graph(report: IReport): HTMLElement {
  const node = html('div', 'xlanb-graph');
  const nodes = report.graph?.nodes ?? [];
  if (nodes.length === 0) {
    node.appendChild(empty('The report has no graph.'));
    return node;
  }
  if (nodes.length > MAX_NODES) {
    node.appendChild(
      empty(`The graph has ${nodes.length} nodes: too many to draw (see the IR tab).`)
    );
    return node;
  }
  new GraphView(report, node);
  return node;
}

/** A point of the layout. */
interface IPoint {
  x: number;
  y: number;
}

/** The view box being shown. */
interface IBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** Builds the SVG into `host` and handles selection, zoom and pan. */
class GraphView {
  constructor(report: IReport, host: HTMLElement) {
    this._report = report;
    const outputs = new Set(report.graph?.outputs ?? []);
    const all = report.graph?.nodes ?? [];
    const allIds = new Set(all.map(n => n.id));
    // One drawn edge per (src, dst, fused): `x * x` reads x twice but draws one arrow.
    const seen = new Set<string>();
    const edges = (report.graph?.edges ?? []).filter(e => {
      const key = `${e.src} ${e.dst} ${e.fused}`;
      const keep = allIds.has(e.src) && allIds.has(e.dst) && !seen.has(key);
      seen.add(key);
      return keep;
    });
    // Inputs that no op reads and that are not outputs are left out (as the PNG does).
    const used = new Set(edges.flatMap(e => [e.src, e.dst]));
    const nodes = all.filter(n => n.op !== 'parameter' || used.has(n.id) || outputs.has(n.id));
    const names = nodeNames(all, report.param_names ?? []);
    const outputNames = report.graph?.output_names ?? [];
    const outputLabel = new Map<number, string>();
    (report.graph?.outputs ?? []).forEach((id, i) => {
      const known = outputNames[i];
      const previous = outputLabel.get(id);
      const label = known ?? (previous === undefined ? 'out' : '');
      if (label) {
        outputLabel.set(id, previous && previous !== 'out' ? `${previous}, ${label}` : label);
      }
    });
    const firstLine = (n: IGraphNode): string => {
      const text = names.get(n.id) ?? n.op;
      return outputLabel.has(n.id) ? `${text} \u2192 ${outputLabel.get(n.id)}` : text;
    };
    const kernelNames = (report.kernels ?? []).map(k => k.name);
    for (const n of nodes) {
      for (const k of n.kernels) {
        if (!kernelNames.includes(k)) {
          kernelNames.push(k);
        }
      }
    }
    this._kernelIndex = new Map(kernelNames.map((name, i) => [name, i]));

    // Layout.
    const g = new dagre.graphlib.Graph({ multigraph: true });
    g.setGraph({ rankdir: 'TB', nodesep: 18, ranksep: 34, marginx: 12, marginy: 12 });
    g.setDefaultEdgeLabel(() => ({}));
    for (const n of nodes) {
      const first = firstLine(n);
      const width = Math.max(64, CHAR_WIDTH * Math.max(first.length, detail(n).length) + 18);
      g.setNode(String(n.id), { width, height: NODE_HEIGHT });
    }
    edges.forEach((e, i) => g.setEdge(String(e.src), String(e.dst), {}, `e${i}`));
    dagre.layout(g);
    const size = g.graph();
    const width = Math.max(size.width ?? 100, 100);
    const height = Math.max(size.height ?? 60, 60);
    this._home = { x: 0, y: 0, w: width, h: height };
    this._box = { ...this._home };

    // Toolbar: fit, zoom in, zoom out.
    const toolbar = html('div', 'xlanb-graph-toolbar');
    const button = (text: string, title: string, action: () => void): void => {
      const b = html('button', 'xlanb-button', text);
      b.type = 'button';
      b.title = title;
      b.addEventListener('click', action);
      toolbar.appendChild(b);
    };
    button('Fit', 'Show the whole graph', () => this._setBox({ ...this._home }));
    button('+', 'Zoom in', () => this._zoom(1 / 1.25));
    button('\u2212', 'Zoom out', () => this._zoom(1.25));
    toolbar.appendChild(
      html(
        'span',
        'xlanb-graph-hint',
        `${plural(nodes.length, 'node')}, ${plural(kernelNames.length, 'kernel')}; ` +
          'click into the graph (or hold Ctrl) to zoom with the wheel, drag to pan, ' +
          'click a node for its kernel'
      )
    );
    host.appendChild(toolbar);

    // The SVG.
    const id = `xlanb-arrow-${++instances}`;
    this._svg = svg('svg', {
      class: 'xlanb-graph-svg',
      width: '100%',
      height: Math.min(Math.max(height, 120), 560),
      role: 'img',
      'aria-label': `Graph of ${report.name}`
    });
    const defs = svg('defs');
    const marker = svg('marker', {
      id,
      class: 'xlanb-arrow',
      viewBox: '0 0 10 10',
      refX: 10,
      refY: 5,
      markerUnits: 'userSpaceOnUse',
      markerWidth: 8,
      markerHeight: 8,
      orient: 'auto-start-reverse'
    });
    marker.appendChild(svg('path', { d: 'M 0 0 L 10 5 L 0 10 z' }));
    defs.appendChild(marker);
    this._svg.appendChild(defs);

    const edgeLayer = svg('g', { class: 'xlanb-edges' });
    edges.forEach((e, i) => {
      const points: IPoint[] = g.edge({ v: String(e.src), w: String(e.dst), name: `e${i}` })
        ?.points ?? [];
      if (points.length < 2) {
        return;
      }
      const d = points
        .map((p, j) => `${j === 0 ? 'M' : 'L'} ${p.x.toFixed(1)} ${p.y.toFixed(1)}`)
        .join(' ');
      const path = svg('path', {
        d,
        class: `xlanb-edge ${e.fused ? 'xlanb-edge-fused' : 'xlanb-edge-memory'}`,
        'marker-end': `url(#${id})`
      });
      tooltip(path, e.fused ? 'fused: stays in registers' : 'through memory');
      edgeLayer.appendChild(path);
    });
    this._svg.appendChild(edgeLayer);

    const nodeLayer = svg('g', { class: 'xlanb-nodes' });
    for (const n of nodes) {
      const box = g.node(String(n.id));
      const first = n.kernels[0];
      const colour =
        first !== undefined
          ? `xlanb-color-${(this._kernelIndex.get(first) ?? 0) % COLOURS}`
          : 'xlanb-color-none';
      const name = names.get(n.id) ?? n.op;
      const classes = ['xlanb-node', colour];
      if (outputs.has(n.id)) {
        classes.push('xlanb-node-output');
      }
      if (n.kernels.length > 1) {
        classes.push('xlanb-node-shared');
      }
      const group = svg('g', {
        class: classes.join(' '),
        transform: `translate(${(box.x - box.width / 2).toFixed(1)},${(
          box.y -
          box.height / 2
        ).toFixed(1)})`,
        'data-node': n.id,
        'data-op': n.op,
        'data-kernel': first ?? ''
      });
      tooltip(group, nodeTitle(n, name));
      group.appendChild(
        svg('rect', { width: box.width, height: box.height, rx: 5, ry: 5 })
      );
      group.appendChild(
        svg(
          'text',
          { x: box.width / 2, y: 15, class: 'xlanb-node-op' },
          firstLine(n)
        )
      );
      group.appendChild(
        svg('text', { x: box.width / 2, y: 29, class: 'xlanb-node-detail' }, detail(n))
      );
      group.addEventListener('click', () => {
        if (!this._dragged) {
          this._select(n, name);
        }
      });
      nodeLayer.appendChild(group);
      this._nodes.push([n, group]);
    }
    this._svg.appendChild(nodeLayer);
    this._setBox(this._box);

    this._frame = html('div', 'xlanb-graph-frame');
    this._frame.appendChild(this._svg);
    this._wheelHint = html(
      'div',
      'xlanb-graph-wheel-hint',
      'Click into the graph, or hold Ctrl, to zoom with the wheel'
    );
    this._wheelHint.hidden = true;
    this._frame.appendChild(this._wheelHint);
    host.appendChild(this._frame);
    this._listen();
    host.appendChild(this._legend(kernelNames, nodes.some(n => n.kernels.length > 1)));
    this._detail = html('div', 'xlanb-graph-detail');
    this._detail.appendChild(
      html('p', 'xlanb-empty', 'Click a node to see the source of its kernel.')
    );
    host.appendChild(this._detail);
  }

  /** The legend: one swatch per kernel (click to select it), inputs, the edge kinds. */
  private _legend(kernelNames: string[], shared: boolean): HTMLElement {
    const legend = html('div', 'xlanb-legend');
    const info = new Map((this._report.kernels ?? []).map(k => [k.name, k]));
    for (const name of kernelNames) {
      const item = html('button', 'xlanb-legend-item xlanb-legend-kernel');
      item.type = 'button';
      item.dataset.kernel = name;
      item.appendChild(
        html('span', `xlanb-swatch xlanb-color-${(this._kernelIndex.get(name) ?? 0) % COLOURS}`)
      );
      const kernel = info.get(name);
      item.appendChild(
        document.createTextNode(
          kernel ? `${name} (${kernel.kind}, ${plural(kernel.ops.length, 'op')})` : name
        )
      );
      item.addEventListener('click', () => this._selectKernel(name));
      legend.appendChild(item);
    }
    const inputs = html('span', 'xlanb-legend-item');
    inputs.appendChild(html('span', 'xlanb-swatch xlanb-color-none'));
    inputs.appendChild(document.createTextNode('input / constant'));
    legend.appendChild(inputs);
    if (shared) {
      const item = html('span', 'xlanb-legend-item');
      item.appendChild(html('span', 'xlanb-swatch xlanb-swatch-shared'));
      item.appendChild(document.createTextNode('recomputed in several kernels'));
      legend.appendChild(item);
    }
    for (const [kind, text] of [
      ['memory', 'through memory'],
      ['fused', 'fused (registers)']
    ]) {
      const item = html('span', 'xlanb-legend-item');
      const line = svg('svg', { width: 26, height: 10, class: 'xlanb-legend-edge' });
      line.appendChild(
        svg('line', { x1: 1, y1: 5, x2: 25, y2: 5, class: `xlanb-edge xlanb-edge-${kind}` })
      );
      item.appendChild(line);
      item.appendChild(document.createTextNode(text));
      legend.appendChild(item);
    }
    return legend;
  }

  /** Show the kernel of a node, or say that it is not in one. */
  private _select(node: IGraphNode, name: string): void {
    if (node.kernels.length > 0) {
      this._selectKernel(node.kernels[0]);
      return;
    }
    this._highlight(null);
    this._detail.replaceChildren(
      html('p', 'xlanb-empty', `${name} (${node.op}) is an input or constant, not computed in a kernel.`)
    );
  }

  /** Highlight a kernel's nodes and show its source. */
  private _selectKernel(name: string): void {
    this._highlight(name);
    const kernel = (this._report.kernels ?? []).find(k => k.name === name);
    this._detail.replaceChildren(
      kernel
        ? kernelSource(kernel, this._report.timings?.kernels?.[name])
        : html('p', 'xlanb-empty', `The report has no source for ${name}.`)
    );
  }

  private _highlight(kernel: string | null): void {
    for (const [n, element] of this._nodes) {
      element.classList.toggle(
        'xlanb-selected',
        kernel !== null && n.kernels.includes(kernel)
      );
    }
  }

  private _setBox(box: IBox): void {
    this._box = box;
    this._svg.setAttribute(
      'viewBox',
      `${box.x.toFixed(2)} ${box.y.toFixed(2)} ${box.w.toFixed(2)} ${box.h.toFixed(2)}`
    );
  }

  /** Zoom by `factor` (< 1 zooms in) around `at` (view box coordinates) or the centre. */
  private _zoom(factor: number, at?: IPoint): void {
    const b = this._box;
    const scale = Math.min(Math.max(factor, 0.05 / (b.w / this._home.w)), 20 / (b.w / this._home.w));
    const p = at ?? { x: b.x + b.w / 2, y: b.y + b.h / 2 };
    this._setBox({
      x: p.x - (p.x - b.x) * scale,
      y: p.y - (p.y - b.y) * scale,
      w: b.w * scale,
      h: b.h * scale
    });
  }

  /** Screen pixels per view box unit. */
  private _pixelsPerUnit(): number {
    const m = this._svg.getScreenCTM();
    return m && m.a > 0 ? m.a : 1;
  }

  /** Whether the wheel zooms (after a click into the graph) or scrolls the page. */
  private _setActive(active: boolean): void {
    this._active = active;
    this._frame.classList.toggle('xlanb-graph-active', active);
    this._frame.dataset.active = String(active);
    if (active) {
      this._wheelHint.hidden = true;
    }
  }

  /** Say how to zoom, for a moment, when the wheel scrolled past the graph. */
  private _showWheelHint(): void {
    this._wheelHint.hidden = false;
    window.clearTimeout(this._hintTimer);
    this._hintTimer = window.setTimeout(() => (this._wheelHint.hidden = true), 1500);
  }

  /** Wheel zooms around the pointer once the graph is active (or with Ctrl); dragging pans. */
  private _listen(): void {
    this._setActive(false);
    const outside = (event: PointerEvent): void => {
      if (!this._frame.isConnected) {
        document.removeEventListener('pointerdown', outside, true);
      } else if (!this._frame.contains(event.target as Node)) {
        this._setActive(false);
      }
    };
    document.addEventListener('pointerdown', outside, true);
    this._svg.addEventListener(
      'wheel',
      event => {
        if (!this._active && !(event.ctrlKey || event.metaKey || event.altKey)) {
          this._showWheelHint();                  // the page scrolls
          return;
        }
        event.preventDefault();
        const m = this._svg.getScreenCTM();
        let at: IPoint | undefined;
        if (m) {
          const p = new DOMPoint(event.clientX, event.clientY).matrixTransform(m.inverse());
          at = { x: p.x, y: p.y };
        }
        this._zoom(Math.exp(Math.max(-100, Math.min(100, event.deltaY)) * 0.004), at);
      },
      { passive: false }
    );
    this._svg.addEventListener('pointerdown', event => {
      if (event.button !== 0) {
        return;
      }
      this._setActive(true);
      const start = { x: event.clientX, y: event.clientY };
      const from = { ...this._box };
      const perUnit = this._pixelsPerUnit();
      this._dragged = false;
      const move = (e: PointerEvent): void => {
        const dx = e.clientX - start.x;
        const dy = e.clientY - start.y;
        if (Math.abs(dx) + Math.abs(dy) > 3) {
          this._dragged = true;
          this._svg.classList.add('xlanb-panning');
        }
        if (this._dragged) {
          this._setBox({ ...from, x: from.x - dx / perUnit, y: from.y - dy / perUnit });
        }
      };
      const up = (): void => {
        window.removeEventListener('pointermove', move);
        window.removeEventListener('pointerup', up);
        this._svg.classList.remove('xlanb-panning');
      };
      window.addEventListener('pointermove', move);
      window.addEventListener('pointerup', up);
    });
  }

  private _report: IReport;
  private _svg: SVGSVGElement;
  private _frame: HTMLElement;
  private _wheelHint: HTMLElement;
  private _active = false;
  private _hintTimer = 0;
  private _detail: HTMLElement;
  private _home: IBox;
  private _box: IBox;
  private _dragged = false;
  private _kernelIndex: Map<string, number>;
  private _nodes: [IGraphNode, SVGGElement][] = [];
}

/**
 * The name each node is drawn with: its label, else a parameter's name from
 * `param_names` (parameters in id order), else its op.
 */
function nodeNames(nodes: IGraphNode[], paramNames: string[]): Map<number, string> {
  const names = new Map<number, string>();
  const params = nodes
    .filter(n => n.op === 'parameter')
    .map(n => n.id)
    .sort((a, b) => a - b);
  for (const n of nodes) {
    const index = params.indexOf(n.id);
    names.set(
      n.id,
      n.label || (index >= 0 ? (paramNames[index] ?? `arg${index}`) : n.op)
    );
  }
  return names;
}

/** A node's second line: dtype and shape. */
function detail(n: IGraphNode): string {
  return `${n.dtype} ${shapeText(n.shape ?? [])}`;
}
