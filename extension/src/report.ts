/**
 * The report data (application/vnd.xlanb.report+json, version 1) as the views read it.
 *
 * The schema is xlanb/notebook/report.schema.json; every field a view draws is read
 * defensively (a missing array is empty, a missing number is absent), so an older or
 * partial report still renders.
 */

/** One phase of the compile timeline, seconds since the report began. */
export interface IPhase {
  name: string;
  category: string;
  start: number;
  seconds: number;
}

/** One generated kernel. */
export interface IKernel {
  name: string;
  kind: string;
  ops: string[];
  predicted_seconds: number;
  compile_seconds: number;
  decisions?: string[];
  source: string;
  locations?: string[];
}

/** A node of the optimized graph; `kernels` are the kernels it is computed in. */
export interface IGraphNode {
  id: number;
  op: string;
  shape: number[];
  dtype: string;
  loc?: string | null;
  label?: string;
  kernels: string[];
}

/** An edge: `fused` values stay inside one kernel, the others go through memory. */
export interface IGraphEdge {
  src: number;
  dst: number;
  fused: boolean;
}

/** The --compare measurements of %%xla. */
export interface ICompare {
  xlanb_seconds: number;
  op_by_op_seconds?: number | null;
  numpy_seconds?: number | null;
  speedup_vs_op_by_op?: number | null;
  speedup_vs_numpy?: number | null;
  allclose: boolean;
  max_abs_diff?: number | null;
  reference?: string;
  repeat: number;
}

/** The whole report. */
export interface IReport {
  version: number;
  name: string;
  target: string;
  total_seconds: number;
  phases?: IPhase[];
  kernels?: IKernel[];
  memory?: {
    temp_bytes_unfused?: number;
    temp_bytes_fused?: number;
    argument_bytes?: number;
    output_bytes?: number;
  };
  graph?: {
    nodes?: IGraphNode[];
    edges?: IGraphEdge[];
    outputs?: number[];
    /** The user's name of each output (parallel to `outputs`), where known. */
    output_names?: (string | null)[];
  };
  timings?: {
    fused_seconds?: number;
    unfused_seconds?: number;
    kernels?: Record<string, number>;
    unfused_ops?: Record<string, number>;
  };
  ir?: string;
  param_names?: string[];
  summary?: {
    ops: number;
    kernels: number;
    fused_kernels: number;
    compile_seconds: number;
    speedup?: number | null;
    fallback_breaks?: number;
  };
  compare?: ICompare | null;
  /** The `%%xla` cell that was compiled, with the options (flags) it ran with. */
  cell?: {
    filename?: string;
    inputs?: string[];
    outputs?: string[];
    options?: { target?: string; fusion?: boolean; repeat?: number; compare?: boolean };
  } | null;
  fallback?: {
    breaks: { what: string; location: string | null; reason: string }[];
  } | null;
}

/** Seconds as text, in the unit the Python side uses (s, ms or µs). */
export function formatSeconds(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !isFinite(seconds)) {
    return '-';
  }
  if (seconds >= 1) {
    return `${seconds.toFixed(2)} s`;
  }
  if (seconds >= 1e-3) {
    return `${(seconds * 1e3).toFixed(2)} ms`;
  }
  return `${(seconds * 1e6).toFixed(1)} µs`;
}

/** A byte count as text (B, KiB, MiB or GiB). */
export function formatBytes(count: number | null | undefined): string {
  if (count === null || count === undefined || !isFinite(count)) {
    return '-';
  }
  const units: [string, number][] = [
    ['GiB', 2 ** 30],
    ['MiB', 2 ** 20],
    ['KiB', 2 ** 10]
  ];
  for (const [unit, size] of units) {
    if (Math.abs(count) >= size) {
      return `${(count / size).toFixed(1)} ${unit}`;
    }
  }
  return `${Math.round(count)} B`;
}

/** "1 op", "3 ops". */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** The first line over the tabs: what was compiled into what, and how fast it ran. */
export function headline(report: IReport): string {
  const kernels = report.kernels ?? [];
  const s = report.summary ?? {
    ops: kernels.reduce((n, k) => n + k.ops.length, 0),
    kernels: kernels.length,
    fused_kernels: kernels.filter(k => k.ops.length > 1).length,
    compile_seconds: report.total_seconds
  };
  return (
    `xlanb: ${report.name} (${report.target}): ${plural(s.ops, 'op')} in ` +
    `${plural(s.kernels, 'kernel')} (${s.fused_kernels} fused), compiled in ` +
    formatSeconds(s.compile_seconds)
  );
}

/** The --compare line, or null when the cell was not compared. */
export function compareLine(report: IReport): string | null {
  const c = report.compare;
  if (!c) {
    return null;
  }
  const parts = [`xlanb ${formatSeconds(c.xlanb_seconds)}`];
  if (c.op_by_op_seconds !== null && c.op_by_op_seconds !== undefined) {
    parts.push(
      `op by op ${formatSeconds(c.op_by_op_seconds)} (${ratio(c.speedup_vs_op_by_op)})`
    );
  }
  if (c.numpy_seconds !== null && c.numpy_seconds !== undefined) {
    parts.push(`NumPy ${formatSeconds(c.numpy_seconds)} (${ratio(c.speedup_vs_numpy)})`);
  }
  const verdict = c.allclose ? 'agree' : 'DIFFER';
  return (
    `${parts.join(', ')} (median of ${c.repeat}); results ${verdict} with ` +
    `${c.reference ?? 'op by op'}`
  );
}

function ratio(speedup: number | null | undefined): string {
  if (!speedup) {
    return '-';
  }
  return speedup >= 1
    ? `${speedup.toFixed(1)}x faster`
    : `${(1 / speedup).toFixed(1)}x slower`;
}
