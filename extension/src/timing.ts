/**
 * The Timing tab: the whole function fused vs op by op (and plain NumPy under
 * --compare), then each kernel's predicted time next to its measured time.
 */
import { barChart, empty, html, IBar, IBarGroup } from './dom';
import { formatSeconds, IReport } from './report';

/** A bar for a duration in seconds. */
function secondsBar(label: string, seconds: number | null | undefined, kind: string): IBar {
  return { label, value: seconds ?? null, text: formatSeconds(seconds), kind };
}

/** The timing charts, or a note when nothing was measured. */
export function timing(report: IReport): HTMLElement {
  const node = html('div', 'xlanb-timing');
  const timings = report.timings ?? {};
  const compare = report.compare;
  const totals: IBar[] = [];
  if (compare) {
    totals.push(secondsBar('xlanb (fused)', compare.xlanb_seconds, 'xlanb-bar-fused'));
    if (compare.op_by_op_seconds !== null && compare.op_by_op_seconds !== undefined) {
      totals.push(secondsBar('op by op', compare.op_by_op_seconds, 'xlanb-bar-unfused'));
    }
    if (compare.numpy_seconds !== null && compare.numpy_seconds !== undefined) {
      totals.push(secondsBar('NumPy', compare.numpy_seconds, 'xlanb-bar-numpy'));
    }
  } else if (timings.fused_seconds !== undefined) {
    totals.push(secondsBar('fused', timings.fused_seconds, 'xlanb-bar-fused'));
    if (timings.unfused_seconds !== undefined) {
      totals.push(secondsBar('op by op', timings.unfused_seconds, 'xlanb-bar-unfused'));
    }
  }
  if (totals.length > 0) {
    node.appendChild(html('h4', 'xlanb-chart-title', 'Whole function, one call'));
    node.appendChild(barChart([{ caption: '', bars: totals }], 'xlanb-timing-total'));
  }

  const measured = timings.kernels ?? {};
  const groups: IBarGroup[] = (report.kernels ?? []).map(kernel => ({
    caption: `${kernel.name}: ${kernel.ops.join(', ')}`,
    bars: [
      secondsBar('predicted', kernel.predicted_seconds, 'xlanb-bar-predicted'),
      secondsBar('measured', measured[kernel.name], 'xlanb-bar-measured')
    ]
  }));
  if (groups.length > 0) {
    node.appendChild(html('h4', 'xlanb-chart-title', 'Per kernel: predicted vs measured'));
    node.appendChild(barChart(groups, 'xlanb-timing-kernels'));
  }
  if (node.childElementCount === 0) {
    node.appendChild(empty('Nothing was timed: run the cell with %%xla --compare.'));
  }
  return node;
}
