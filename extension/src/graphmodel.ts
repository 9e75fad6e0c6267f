/**
 * What the Graph tab draws, as data: the report's graph seen at the kernel level.
 *
 * A collapsed kernel is one node (name, kind, ops, bytes in and out, time); the values
 * it writes to memory for other kernels or as outputs are buffer nodes; inputs stay
 * nodes.  An expanded kernel shows its ops inside a cluster, with fused (register)
 * edges dashed.  `view(expanded)` gives the nodes and edges for a set of expanded kernels.
 */
import { IGraphEdge, IGraphNode, IReport, formatBytes, formatSeconds, plural } from './report';

/** Colours cycle through this many CSS classes, `xlanb-color-0` ... */
export const COLOURS = 10;

/** A node as drawn: an op (or input), a collapsed kernel, or a buffer between kernels. */
export interface IVisibleNode {
  key: string;
  kind: 'op' | 'kernel' | 'buffer';
  lines: string[];
  colour: string;
  classes: string[];
  tip: string;
  /** The cluster (`c:<kernel>`) an op is drawn in, when its kernel is expanded. */
  parent?: string;
  /** The report's node (ops, inputs and buffers). */
  node?: IGraphNode;
  /** The kernel of a kernel node, or the first kernel of an op. */
  kernel?: string;
}

/** An edge as drawn; `fused` only between ops inside one expanded kernel. */
export interface IVisibleEdge {
  src: string;
  dst: string;
  fused: boolean;
}

/** `(3, 4)`, `(5,)` or `()`, as NumPy prints shapes. */
export function shapeText(shape: number[]): string {
  return shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
}

/** Bytes of one element of a dtype named like NumPy's (`float32`, `bool`, `c64`). */
export function itemBytes(dtype: string): number {
  if (/bool/.test(dtype)) {
    return 1;
  }
  const bits = /(\d+)$/.exec(dtype);
  if (!bits) {
    return 8;
  }
  const n = Number(bits[1]);
  return /^c(omplex)?\d/.test(dtype) && n < 64 ? n / 4 : n / 8;
}

/** Bytes of a node's value. */
export function nodeBytes(node: IGraphNode): number {
  return (node.shape ?? []).reduce((p, d) => p * d, 1) * itemBytes(node.dtype);
}

/** The hover text of an op node: op, shape, dtype, kernels and source location. */
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

/** A node's second line: dtype and shape. */
export function detail(n: IGraphNode): string {
  return `${n.dtype} ${shapeText(n.shape ?? [])}`;
}

/** The report's graph with names, kernel colours and the kernel-level views of it. */
export class GraphModel {
  constructor(report: IReport) {
    this.report = report;
    const outputs = report.graph?.outputs ?? [];
    const all = report.graph?.nodes ?? [];
    const ids = new Set(all.map(n => n.id));
    // One drawn edge per (src, dst, fused): `x * x` reads x twice but draws one arrow.
    const seen = new Set<string>();
    this.edges = (report.graph?.edges ?? []).filter(e => {
      const key = `${e.src} ${e.dst} ${e.fused}`;
      const keep = ids.has(e.src) && ids.has(e.dst) && !seen.has(key);
      seen.add(key);
      return keep;
    });
    // Inputs that no op reads and that are not outputs are left out (as the PNG does).
    const used = new Set(this.edges.flatMap(e => [e.src, e.dst]));
    this.outputs = new Set(outputs);
    this.nodes = all.filter(
      n => n.op !== 'parameter' || used.has(n.id) || this.outputs.has(n.id)
    );
    this.byId = new Map(this.nodes.map(n => [n.id, n]));
    this.names = nodeNames(all, report.param_names ?? []);
    const outputNames = report.graph?.output_names ?? [];
    outputs.forEach((id, i) => {
      const name = outputNames[i] ?? null;
      const previous = this.outputNames.get(id);
      if (name) {
        this.outputNames.set(id, previous && previous !== 'out' ? `${previous}, ${name}` : name);
      } else if (previous === undefined) {
        this.outputNames.set(id, 'out');
      }
    });
    this.kernelNames = (report.kernels ?? []).map(k => k.name);
    for (const n of this.nodes) {
      for (const k of n.kernels) {
        if (!this.kernelNames.includes(k)) {
          this.kernelNames.push(k);
        }
      }
    }
    this.kernelIndex = new Map(this.kernelNames.map((name, i) => [name, i]));
  }

  /** The CSS colour class of a kernel (inputs and constants: `xlanb-color-none`). */
  colour(kernel: string | undefined): string {
    return kernel === undefined
      ? 'xlanb-color-none'
      : `xlanb-color-${(this.kernelIndex.get(kernel) ?? 0) % COLOURS}`;
  }

  /** A node's first line: its name, and the user's name when it is an output. */
  firstLine(n: IGraphNode): string {
    const text = this.names.get(n.id) ?? n.op;
    const out = this.outputNames.get(n.id);
    return out ? `${text} \u2192 ${out}` : text;
  }

  /** Does the value of `n` go through memory out of its kernel (or out of the call)? */
  private _leavesKernel(n: IGraphNode): boolean {
    if (this.outputs.has(n.id)) {
      return true;
    }
    return this.edges.some(e => {
      if (e.src !== n.id || e.fused) {
        return false;
      }
      const d = this.byId.get(e.dst);
      return d !== undefined && !d.kernels.includes(n.kernels[0]);
    });
  }

  /** Bytes a kernel reads from memory and writes to it. */
  kernelBytes(kernel: string): { read: number; written: number } {
    const inside = (n: IGraphNode | undefined): boolean => !!n && n.kernels.includes(kernel);
    const read = new Set<number>();
    for (const e of this.edges) {
      if (inside(this.byId.get(e.dst)) && !inside(this.byId.get(e.src))) {
        read.add(e.src);
      }
    }
    let readBytes = 0;
    read.forEach(id => (readBytes += nodeBytes(this.byId.get(id)!)));
    let written = 0;
    for (const n of this.nodes) {
      if (n.kernels[0] === kernel && this._leavesKernel(n)) {
        written += nodeBytes(n);
      }
    }
    return { read: readBytes, written };
  }

  /** The nodes and edges to draw when the kernels in `expanded` show their ops. */
  view(expanded: Set<string>): { nodes: IVisibleNode[]; edges: IVisibleEdge[] } {
    const openKernel = (n: IGraphNode): string | undefined =>
      n.kernels.find(k => expanded.has(k));
    const isOp = (n: IGraphNode): boolean =>
      n.kernels.length === 0 || openKernel(n) !== undefined;
    // Constants show only beside the ops that read them.
    const shownConstant = (n: IGraphNode): boolean =>
      this.edges.some(e => {
        const d = this.byId.get(e.dst);
        return e.src === n.id && d !== undefined && isOp(d) && d.kernels.length > 0;
      });
    const visible = (n: IGraphNode): boolean => n.op !== 'constant' || isOp(n) && (
      n.kernels.length > 0 || shownConstant(n));

    const nodes: IVisibleNode[] = [];
    const edges: IVisibleEdge[] = [];
    const edgeKeys = new Set<string>();
    const addEdge = (src: string, dst: string, fused: boolean): void => {
      const key = `${src} ${dst}`;
      if (src !== dst && !edgeKeys.has(key)) {
        edgeKeys.add(key);
        edges.push({ src, dst, fused });
      }
    };

    const measured = this.report.timings?.kernels ?? {};
    for (const kernel of this.report.kernels ?? []) {
      if (expanded.has(kernel.name)) {
        continue;
      }
      const bytes = this.kernelBytes(kernel.name);
      const time = measured[kernel.name];
      const timeText =
        time !== undefined ? formatSeconds(time) : `~${formatSeconds(kernel.predicted_seconds)}`;
      nodes.push({
        key: `k:${kernel.name}`,
        kind: 'kernel',
        kernel: kernel.name,
        colour: this.colour(kernel.name),
        classes: ['xlanb-kernel-node'],
        lines: [
          kernel.name,
          `${kernel.kind} \u00b7 ${plural(kernel.ops.length, 'op')} \u00b7 ${timeText}`,
          `in ${formatBytes(bytes.read)} \u2192 out ${formatBytes(bytes.written)}`
        ],
        tip:
          `${kernel.name} (${kernel.kind}): ${kernel.ops.join(', ')}\n` +
          `reads ${formatBytes(bytes.read)}, writes ${formatBytes(bytes.written)}\n` +
          `measured ${formatSeconds(time)}, predicted ${formatSeconds(kernel.predicted_seconds)}` +
          '\nclick to show its ops'
      });
    }

    const buffers = new Set<number>();
    for (const n of this.nodes) {
      if (!visible(n)) {
        continue;
      }
      if (isOp(n)) {
        const kernel = openKernel(n);
        const classes = ['xlanb-node'];
        if (this.outputs.has(n.id)) {
          classes.push('xlanb-node-output');
        }
        if (n.kernels.length > 1) {
          classes.push('xlanb-node-shared');
        }
        nodes.push({
          key: `n${n.id}`,
          kind: 'op',
          node: n,
          kernel: kernel ?? n.kernels[0],
          parent: kernel !== undefined ? `c:${kernel}` : undefined,
          colour: this.colour(kernel ?? n.kernels[0]),
          classes,
          lines: [this.firstLine(n), detail(n)],
          tip: nodeTitle(n, this.names.get(n.id) ?? n.op)
        });
      } else if (this._leavesKernel(n)) {
        buffers.add(n.id);
        nodes.push({
          key: `b${n.id}`,
          kind: 'buffer',
          node: n,
          kernel: n.kernels[0],
          colour: this.colour(n.kernels[0]),
          classes: ['xlanb-buffer-node'],
          lines: [this.firstLine(n), `${detail(n)} \u00b7 ${formatBytes(nodeBytes(n))}`],
          tip:
            `${this.firstLine(n)}: ${detail(n)}, ${formatBytes(nodeBytes(n))} through memory\n` +
            `written by ${n.kernels[0]}` +
            (n.loc ? `\nat: ${n.loc}` : '')
        });
        addEdge(`k:${n.kernels[0]}`, `b${n.id}`, false);
      }
    }

    for (const e of this.edges) {
      const s = this.byId.get(e.src);
      const d = this.byId.get(e.dst);
      if (!s || !d || !visible(s) || !visible(d)) {
        continue;
      }
      // an op drawn in an open kernel, and every folded kernel that computes d from s
      const targets = isOp(d) ? [`n${d.id}`] : [];
      for (const k of d.kernels) {
        if (!expanded.has(k) && !s.kernels.includes(k)) {
          targets.push(`k:${k}`);
        }
      }
      let src = `n${s.id}`;
      if (!isOp(s)) {
        if (!buffers.has(s.id)) {
          continue;                               // never leaves its kernel
        }
        src = `b${s.id}`;
      }
      for (const dst of targets) {
        addEdge(src, dst, e.fused && isOp(s) && isOp(d) && dst === `n${d.id}`);
      }
    }
    return { nodes, edges };
  }

  readonly report: IReport;
  readonly nodes: IGraphNode[];
  readonly edges: IGraphEdge[];
  readonly outputs: Set<number>;
  readonly names: Map<number, string>;
  readonly outputNames = new Map<number, string>();
  readonly kernelNames: string[];
  readonly kernelIndex: Map<string, number>;
  private byId: Map<number, IGraphNode>;
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
    names.set(n.id, n.label || (index >= 0 ? (paramNames[index] ?? `arg${index}`) : n.op));
  }
  return names;
}
