/**
 * The Kernels tab: each kernel's ops, decisions, times and generated source.
 */
import { empty, html } from './dom';
import { formatSeconds, IKernel, IReport } from './report';

/** One kernel: a heading line, its fusion decisions and its source in a <pre>. */
export function kernelSource(kernel: IKernel, measured?: number): HTMLElement {
  const node = html('section', 'xlanb-kernel');
  node.dataset.kernel = kernel.name;
  node.appendChild(
    html('h4', 'xlanb-kernel-name', `${kernel.name} (${kernel.kind}): ${kernel.ops.join(', ')}`)
  );
  node.appendChild(
    html(
      'p',
      'xlanb-kernel-times',
      `predicted ${formatSeconds(kernel.predicted_seconds)}, measured ` +
        `${formatSeconds(measured)}, Numba compile ${formatSeconds(kernel.compile_seconds)}`
    )
  );
  const decisions = kernel.decisions ?? [];
  if (decisions.length > 0) {
    const list = html('ul', 'xlanb-kernel-decisions');
    for (const decision of decisions) {
      list.appendChild(html('li', undefined, decision));
    }
    node.appendChild(list);
  }
  node.appendChild(html('pre', 'xlanb-code', kernel.source));
  return node;
}

/** Every kernel's source, or a note when the report has no kernels. */
export function kernels(report: IReport): HTMLElement {
  const node = html('div', 'xlanb-kernels');
  const list = report.kernels ?? [];
  if (list.length === 0) {
    node.appendChild(empty('The report has no kernels.'));
  }
  const measured = report.timings?.kernels ?? {};
  for (const kernel of list) {
    node.appendChild(kernelSource(kernel, measured[kernel.name]));
  }
  return node;
}
