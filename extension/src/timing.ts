/**
 * The Timing tab: one chart on one time axis (round ticks, one unit), so every bar can
 * be compared with every other.
 *
 * - One call: xlanb, the same program op by op, plain NumPy (the --compare medians).
 * - Before vs after: the op-by-op run split per op kind, beside the xlanb call split
 *   per kernel plus the gap between the kernels and the whole call (the driver:
 *   argument checks, output allocation, Python between kernel calls).
 * - Per kernel: the cost model's prediction beside the measurement.
 *
 * Labels follow the flags of the report: a `--no-fusion` report never says "fused".
 */
import { ISection, ISegment, timeChart } from './chart';
import { empty, fillWidth, html } from './dom';
import { formatSeconds, IReport } from './report';

/** Colours cycle through this many CSS classes (as in the graph). */
const COLOURS = 10;

/** The name of the compiled run, as the flags that produced it say. */
export function xlanbLabel(report: IReport): string {
  if (report.cell?.options?.fusion === false) {
    return 'xlanb (no fusion)';
  }
  const kernels = report.kernels ?? [];
  const fused = report.summary?.fused_kernels ?? kernels.filter(k => k.ops.length > 1).length;
  return fused > 0 ? 'xlanb (fused)' : 'xlanb';
}

/** The name of the gap between the sum of the kernels and the whole call. */
export const GAP_LABEL = 'driver, allocation, Python';

/** The name of the time the jitted function's Python wrapper adds to a call. */
export const DISPATCH_LABEL = 'jit dispatch (arguments, cache)';

function known(value: number | null | undefined): value is number {
  return value !== null && value !== undefined && isFinite(value);
}

function single(label: string, seconds: number, kind: string): ISegment[] {
  return [{ label, seconds, kind }];
}

/** The sections of the chart (empty when nothing was timed). */
export function timingSections(report: IReport): { sections: ISection[]; notes: string[] } {
  const sections: ISection[] = [];
  const notes: string[] = [];
  const timings = report.timings ?? {};
  const compare = report.compare;
  const name = xlanbLabel(report);

  const calls = [];
  if (compare && known(compare.xlanb_seconds)) {
    calls.push({ label: name, segments: single(name, compare.xlanb_seconds, 'xlanb-bar-fused') });
    if (known(compare.op_by_op_seconds)) {
      calls.push({
        label: 'op by op',
        segments: single('op by op', compare.op_by_op_seconds, 'xlanb-bar-unfused')
      });
    }
    if (known(compare.numpy_seconds)) {
      calls.push({
        label: 'NumPy',
        segments: single('NumPy', compare.numpy_seconds, 'xlanb-bar-numpy')
      });
    }
  }
  if (calls.length > 0) {
    sections.push({ caption: `One call (median of ${compare?.repeat ?? 1})`, rows: calls });
  }

  const kernels = report.kernels ?? [];
  const measured = timings.kernels ?? {};
  const split = [];
  const ops = Object.entries(timings.unfused_ops ?? {})
    .filter(([, s]) => known(s))
    .sort((a, b) => b[1] - a[1]);
  if (ops.length > 0 || known(timings.unfused_seconds)) {
    const segments: ISegment[] = ops.map(([op, seconds], i) => ({
      label: op,
      seconds,
      kind: `xlanb-bar-segment xlanb-color-${i % COLOURS}`
    }));
    const sum = segments.reduce((t, g) => t + g.seconds, 0);
    if (known(timings.unfused_seconds) && timings.unfused_seconds > sum) {
      segments.push({
        label: 'interpreter (Python)',
        seconds: timings.unfused_seconds - sum,
        kind: 'xlanb-bar-gap',
        tip:
          `interpreter (Python): ${formatSeconds(timings.unfused_seconds - sum)} ` +
          'between the ops'
      });
    }
    split.push({ label: 'op by op, per op', segments });
  }
  const timedKernels = kernels.filter(k => known(measured[k.name]));
  if (timedKernels.length > 0) {
    const segments: ISegment[] = timedKernels.map(k => ({
      label: k.name,
      seconds: measured[k.name],
      kind: `xlanb-bar-segment xlanb-color-${kernels.indexOf(k) % COLOURS}`,
      tip: `${k.name} (${k.kind}): ${formatSeconds(measured[k.name])}\n${k.ops.join(', ')}`
    }));
    const sum = segments.reduce((t, g) => t + g.seconds, 0);
    const whole = timings.fused_seconds;
    if (known(whole)) {
      const gap = whole - sum;
      if (gap >= 0) {
        segments.push({
          label: GAP_LABEL,
          seconds: gap,
          kind: 'xlanb-bar-gap',
          tip:
            `${GAP_LABEL}: ${formatSeconds(gap)} of the ${formatSeconds(whole)} call ` +
            'is outside the kernels (argument checks, allocating outputs, Python between ' +
            'kernel calls)'
        });
        notes.push(
          `The kernels take ${formatSeconds(sum)} of the ${formatSeconds(whole)} call; ` +
            `the other ${formatSeconds(gap)} (${Math.round((100 * gap) / whole)}%) is ` +
            `${GAP_LABEL}: checking arguments, allocating outputs and calling each kernel.`
        );
      } else {
        notes.push(
          `The kernels, each timed on its own, sum to ${formatSeconds(sum)}: more than ` +
            `the whole call (${formatSeconds(whole)}).  Medians of the parts come from ` +
            'different calls and each timer adds its own cost; read them as shares.'
        );
      }
    }
    const call = compare?.xlanb_seconds;
    if (known(whole) && known(call) && call > Math.max(whole, sum)) {
      const dispatch = call - Math.max(whole, sum);
      segments.push({
        label: DISPATCH_LABEL,
        seconds: dispatch,
        kind: 'xlanb-bar-gap xlanb-bar-dispatch',
        tip:
          `${DISPATCH_LABEL}: about ${formatSeconds(dispatch)}: the one-call time above ` +
          'goes through the jitted function (flattening arguments, the cache lookup); ' +
          'the profile calls the compiled program directly'
      });
      notes.push(
        `The call through the jitted function takes about ${formatSeconds(dispatch)} ` +
          `more than the compiled program alone: ${DISPATCH_LABEL}.`
      );
    }
    split.push({ label: `${name}, per kernel`, segments });
  }
  if (split.length > 0) {
    sections.push({ caption: 'Before vs after, profiled (median)', rows: split });
  }

  const perKernel = kernels.flatMap(k => {
    const colour = `xlanb-color-${kernels.indexOf(k) % COLOURS}`;
    const tip = `${k.name} (${k.kind}): ${k.ops.join(', ')}`;
    const rows = [
      {
        label: `${k.name} predicted`,
        tip,
        segments: single(`${k.name} predicted`, k.predicted_seconds, `xlanb-bar-predicted ${colour}`)
      }
    ];
    if (known(measured[k.name])) {
      rows.push({
        label: `${k.name} measured`,
        tip,
        segments: single(`${k.name} measured`, measured[k.name], `xlanb-bar-measured ${colour}`)
      });
    }
    return rows;
  });
  if (perKernel.length > 0) {
    sections.push({ caption: 'Per kernel: predicted vs measured', rows: perKernel });
  }
  return { sections, notes };
}

/** The timing chart, or a note when nothing was timed. */
export function timing(report: IReport): HTMLElement {
  const node = html('div', 'xlanb-timing');
  const { sections, notes } = timingSections(report);
  if (sections.length === 0) {
    node.appendChild(empty('Nothing was timed: run the cell with %%xla --compare.'));
    return node;
  }
  node.appendChild(html('h4', 'xlanb-chart-title', 'Time of one call, on one axis'));
  const host = html('div', 'xlanb-chart-host');
  node.appendChild(host);
  fillWidth(host, width => timeChart(sections, 'xlanb-timing-chart', width));
  for (const note of notes) {
    node.appendChild(html('p', 'xlanb-note', note));
  }
  return node;
}
