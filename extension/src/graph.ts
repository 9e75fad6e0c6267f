/**
 * The Graph tab: the optimized graph at the kernel level, laid out by dagre.
 *
 * It opens with one node per kernel (name, kind, ops, bytes in and out, measured time)
 * and the buffers that go through memory between kernels; click a kernel to show its
 * ops inside it (click the cluster's title to fold it again), or use "Ops" / "Kernels".
 * Nodes are coloured by kernel; edges whose value stays in registers are dashed.
 * Text is drawn at the notebook's code font size and never scaled below it: a wide
 * graph is panned, not shrunk.  Hover a node for details; click an op (or a legend
 * entry) to show its kernel's source.  As in map widgets, the wheel scrolls the page
 * until the user clicks into the graph (or holds Ctrl, Alt or Cmd); then it zooms,
 * until a click outside the graph.
 */
import dagre from '@dagrejs/dagre';

import { empty, html, svg, tooltip } from './dom';
import { GraphModel, IVisibleNode } from './graphmodel';
import { kernelSource } from './kernels';
import { IGraphNode, IReport, plural } from './report';
import { WheelGate } from './wheel';

export { nodeTitle, shapeText } from './graphmodel';

const LINE = 18;
const PAD = 8;
const CHAR_WIDTH = 8;
const MAX_NODES = 3000;
/** The tallest the graph frame starts (pixels); taller graphs scroll by dragging. */
const MAX_HEIGHT = 900;
/** The most a small graph is enlarged to fill the width. */
const MAX_SCALE = 1.25;

/** Unique marker ids: several reports can share one page. */
let instances = 0;

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

/** Builds the SVG into `host` and handles expanding, selection, zoom and pan. */
class GraphView {
  constructor(report: IReport, host: HTMLElement) {
    this._report = report;
    this._model = new GraphModel(report);
    const model = this._model;

    const toolbar = html('div', 'xlanb-graph-toolbar');
    const button = (text: string, title: string, action: () => void): HTMLButtonElement => {
      const b = html('button', 'xlanb-button', text);
      b.type = 'button';
      b.title = title;
      b.dataset.action = text;
      b.addEventListener('click', action);
      toolbar.appendChild(b);
      return b;
    };
    button('Kernels', 'One node per kernel', () => this._expand(new Set()));
    button('Ops', 'Show the ops of every kernel', () => this._expand(new Set(model.kernelNames)));
    button('Fit', 'Back to the start view', () => this._home());
    button('+', 'Zoom in', () => this._zoom(1 / 1.25));
    button('\u2212', 'Zoom out', () => this._zoom(1.25));
    toolbar.appendChild(
      html(
        'span',
        'xlanb-graph-hint',
        `${plural(model.nodes.length, 'node')}, ${plural(model.kernelNames.length, 'kernel')}; ` +
          'click a kernel for its ops; click into the graph (or hold Ctrl) to zoom with the ' +
          'wheel, drag to pan'
      )
    );
    host.appendChild(toolbar);

    this._marker = `xlanb-arrow-${++instances}`;
    this._svg = svg('svg', {
      class: 'xlanb-graph-svg',
      width: '100%',
      height: 200,
      role: 'img',
      'aria-label': `Graph of ${report.name}`
    });
    this._frame = html('div', 'xlanb-graph-frame');
    this._frame.appendChild(this._svg);
    this._wheel = new WheelGate(
      this._frame,
      'Click into the graph, or hold Ctrl, to zoom with the wheel',
      'xlanb-graph-wheel-hint'
    );
    host.appendChild(this._frame);
    host.appendChild(this._legend(model.kernelNames, model.nodes.some(n => n.kernels.length > 1)));
    this._detail = html('div', 'xlanb-graph-detail');
    this._detail.appendChild(
      html('p', 'xlanb-empty', 'Click an op to see the source of its kernel.')
    );
    host.appendChild(this._detail);
    this._draw();
    this._listen();
    if (typeof ResizeObserver !== 'undefined') {
      new ResizeObserver(() => {
        const width = this._frame.clientWidth;
        if (width > 0 && Math.abs(width - this._width) > 4 && !this._moved) {
          this._home();
        }
      }).observe(this._frame);
    }
  }

  /** Show the ops of the kernels in `expanded`, the others as one node each. */
  private _expand(expanded: Set<string>): void {
    this._expanded = expanded;
    this._draw();
  }

  /** Lay out and draw the current view, then show it from its start. */
  private _draw(): void {
    const { nodes, edges } = this._model.view(this._expanded);
    const g = new dagre.graphlib.Graph({ compound: true, multigraph: true });
    g.setGraph({ rankdir: 'TB', nodesep: 22, ranksep: 40, marginx: 16, marginy: 28 });
    g.setDefaultEdgeLabel(() => ({}));
    for (const kernel of this._expanded) {
      g.setNode(`c:${kernel}`, {});
    }
    for (const n of nodes) {
      const chars = Math.max(...n.lines.map(l => l.length));
      g.setNode(n.key, {
        width: Math.max(70, CHAR_WIDTH * chars + 2 * PAD + 4),
        height: n.lines.length * LINE + 2 * PAD - 4
      });
      if (n.parent) {
        g.setParent(n.key, n.parent);
      }
    }
    edges.forEach((e, i) => g.setEdge(e.src, e.dst, {}, `e${i}`));
    dagre.layout(g);
    const size = g.graph();
    this._layout = {
      x: 0,
      y: 0,
      w: Math.max(size.width ?? 100, 100),
      h: Math.max(size.height ?? 60, 60)
    };

    const defs = svg('defs');
    const marker = svg('marker', {
      id: this._marker,
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

    const clusterLayer = svg('g', { class: 'xlanb-clusters' });
    const titleLayer = svg('g', { class: 'xlanb-cluster-titles' });   // above the edges
    for (const kernel of this._expanded) {
      const box = g.node(`c:${kernel}`);
      if (!box || !box.width) {
        continue;
      }
      const group = svg('g', {
        class: `xlanb-cluster ${this._model.colour(kernel)}`,
        'data-kernel': kernel
      });
      const x = box.x - box.width / 2;
      const y = box.y - box.height / 2;
      group.appendChild(
        svg('rect', { x, y, width: box.width, height: box.height, rx: 8, ry: 8 })
      );
      const title = svg(
        'text',
        { x: x + 6, y: y - 7, class: 'xlanb-cluster-title' },
        `${kernel} \u25be`
      );
      tooltip(title, `${kernel}: click to fold its ops into one node`);
      title.addEventListener('click', () => {
        const next = new Set(this._expanded);
        next.delete(kernel);
        this._expand(next);
      });
      title.setAttribute('data-kernel', kernel);
      titleLayer.appendChild(title);
      clusterLayer.appendChild(group);
    }

    const edgeLayer = svg('g', { class: 'xlanb-edges' });
    edges.forEach((e, i) => {
      const points: IPoint[] = g.edge({ v: e.src, w: e.dst, name: `e${i}` })?.points ?? [];
      if (points.length < 2) {
        return;
      }
      const d = points
        .map((p, j) => `${j === 0 ? 'M' : 'L'} ${p.x.toFixed(1)} ${p.y.toFixed(1)}`)
        .join(' ');
      const path = svg('path', {
        d,
        class: `xlanb-edge ${e.fused ? 'xlanb-edge-fused' : 'xlanb-edge-memory'}`,
        'marker-end': `url(#${this._marker})`,
        'data-src': e.src,
        'data-dst': e.dst
      });
      tooltip(path, e.fused ? 'fused: stays in registers' : 'through memory');
      edgeLayer.appendChild(path);
    });

    const nodeLayer = svg('g', { class: 'xlanb-nodes' });
    this._nodes = [];
    for (const n of nodes) {
      const group = this._drawNode(n, g.node(n.key));
      nodeLayer.appendChild(group);
      this._nodes.push([n, group]);
    }
    this._svg.replaceChildren(defs, clusterLayer, edgeLayer, nodeLayer, titleLayer);
    this._frame.dataset.level = this._expanded.size === 0 ? 'kernels' : 'ops';
    this._highlight(this._selected);
    this._home();
  }

  /** One node: a rounded box with its lines of text, hover text and click action. */
  private _drawNode(n: IVisibleNode, box: { x: number; y: number; width: number; height: number }): SVGGElement {
    const group = svg('g', {
      class: [...n.classes, n.colour].join(' '),
      transform: `translate(${(box.x - box.width / 2).toFixed(1)},${(box.y - box.height / 2).toFixed(1)})`,
      'data-key': n.key,
      'data-kernel': n.kernel ?? ''
    });
    if (n.node) {
      group.setAttribute('data-node', String(n.node.id));
      group.setAttribute('data-op', n.node.op);
    }
    tooltip(group, n.tip);
    group.appendChild(
      svg('rect', {
        width: box.width,
        height: box.height,
        rx: n.kind === 'buffer' ? box.height / 2 : 5,
        ry: n.kind === 'buffer' ? box.height / 2 : 5
      })
    );
    n.lines.forEach((line, i) => {
      group.appendChild(
        svg(
          'text',
          {
            x: box.width / 2,
            y: PAD + LINE * i + 13,
            class: i === 0 ? 'xlanb-node-op' : 'xlanb-node-detail'
          },
          line
        )
      );
    });
    group.addEventListener('click', () => {
      if (this._dragged) {
        return;
      }
      if (n.kind === 'kernel' && n.kernel) {
        this._selectKernel(n.kernel);
        this._expand(new Set([...this._expanded, n.kernel]));
      } else if (n.kind === 'buffer' && n.kernel) {
        this._selectKernel(n.kernel);
      } else if (n.node) {
        this._select(n.node, this._model.names.get(n.node.id) ?? n.node.op);
      }
    });
    return group;
  }

  /** The start view: text at (or above) the notebook's size, the graph filling the width. */
  private _home(): void {
    const width = this._frame.clientWidth || 900;
    this._width = width;
    const layout = this._layout;
    // enlarge a small graph to fill the width, but no taller than the frame; never shrink
    const scale = Math.max(1, Math.min(MAX_SCALE, width / layout.w, MAX_HEIGHT / layout.h));
    const height = Math.min(layout.h * scale, MAX_HEIGHT);
    this._svg.setAttribute('height', String(Math.ceil(height)));
    const w = width / scale;
    this._start = { x: layout.x - Math.max(0, (w - layout.w) / 2), y: 0, w, h: height / scale };
    this._moved = false;
    this._setBox({ ...this._start });
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
        html('span', `xlanb-swatch ${this._model.colour(name)}`)
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
    this._selected = kernel;
    for (const [n, element] of this._nodes) {
      const kernels = n.node?.kernels ?? (n.kernel ? [n.kernel] : []);
      element.classList.toggle(
        'xlanb-selected',
        kernel !== null && n.kind !== 'buffer' && kernels.includes(kernel)
      );
    }
  }

  private _setBox(box: IBox): void {
    this._box = box;
    this._moved = this._moved || box.x !== this._start.x || box.y !== this._start.y ||
      box.w !== this._start.w;
    this._svg.setAttribute(
      'viewBox',
      `${box.x.toFixed(2)} ${box.y.toFixed(2)} ${box.w.toFixed(2)} ${box.h.toFixed(2)}`
    );
  }

  /** Zoom by `factor` (< 1 zooms in) around `at` (view box coordinates) or the centre. */
  private _zoom(factor: number, at?: IPoint): void {
    const b = this._box;
    const zoom = b.w / this._start.w;
    const scale = Math.min(Math.max(factor, 0.05 / zoom), 20 / zoom);
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

  /** Wheel zooms around the pointer once the graph is active (or with Ctrl); dragging pans. */
  private _listen(): void {
    this._svg.addEventListener(
      'wheel',
      event => {
        if (!this._wheel.zooms(event)) {
          return;                                 // the page scrolls
        }
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
      this._wheel.setActive(true);
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
  private _model: GraphModel;
  private _svg: SVGSVGElement;
  private _frame: HTMLElement;
  private _wheel: WheelGate;
  private _detail: HTMLElement;
  private _marker: string;
  private _layout: IBox = { x: 0, y: 0, w: 100, h: 60 };
  private _start: IBox = { x: 0, y: 0, w: 100, h: 60 };
  private _box: IBox = { x: 0, y: 0, w: 100, h: 60 };
  private _width = 0;
  private _moved = false;
  private _expanded = new Set<string>();
  private _selected: string | null = null;
  private _dragged = false;
  private _nodes: [IVisibleNode, SVGGElement][] = [];
}
