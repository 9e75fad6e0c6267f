/**
 * The IR tab: the optimized IR with its fusion groups, as text.
 */
import { empty, html } from './dom';
import { IReport } from './report';

/** The IR in a <pre>, or a note when the report has none. */
export function ir(report: IReport): HTMLElement {
  const node = html('div', 'xlanb-ir');
  node.appendChild(
    report.ir ? html('pre', 'xlanb-code', report.ir) : empty('The report has no IR.')
  );
  return node;
}
