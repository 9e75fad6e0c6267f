/**
 * The Kernels tab: each kernel's ops, decisions, times and generated source, the
 * function first and the module's imports and shared constants folded under it, both
 * highlighted as Python by JupyterLab (highlight.ts).
 */
import { empty, html } from './dom';
import { highlightPython } from './highlight';
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
  const { body, preamble } = splitSource(kernel.source);
  node.appendChild(code(body, 'xlanb-kernel-body'));
  if (preamble) {
    const folded = html('details', 'xlanb-kernel-preamble');
    const constants = preamble.split('\n').filter(line => /^_\w+ = /.test(line)).length;
    folded.appendChild(
      html('summary', undefined, `imports and ${constants} shared constants (folded)`)
    );
    folded.appendChild(code(preamble));
    node.appendChild(folded);
  }
  return node;
}

/** Python source in a <pre>, highlighted the way JupyterLab highlights code. */
function code(source: string, className = ''): HTMLElement {
  const pre = html('pre', `xlanb-code ${className}`.trim());
  highlightPython(source, pre);
  return pre;
}

/**
 * A kernel's source split for reading: `body` is its header comments and its function
 * (from the first decorator or `def`), `preamble` the imports and module constants in
 * between (empty when there is no function to put first).
 */
export function splitSource(source: string): { body: string; preamble: string } {
  const lines = source.split('\n');
  const start = lines.findIndex(line => /^(@|def )/.test(line));
  if (start <= 0) {
    return { body: source, preamble: '' };
  }
  let header = 0;
  while (header < start && lines[header].startsWith('#')) {
    header++;
  }
  const preamble = lines.slice(header, start).join('\n').trim();
  if (!preamble) {
    return { body: source, preamble: '' };
  }
  return {
    body: [...lines.slice(0, header), ...lines.slice(start)].join('\n'),
    preamble
  };
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
