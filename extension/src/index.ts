/**
 * The MIME renderer for xlanb compile reports (`application/vnd.xlanb.report+json`).
 *
 * A headline, then tabs: Timeline, Graph, Timing, Memory, IR and Kernels, one module
 * per view.  The report is data in and DOM out: every string from the kernel is set as
 * text, never parsed as HTML, so the renderer is safe in untrusted notebooks.
 */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { enableTooltips, hideTooltip, html } from './dom';
import { graph } from './graph';
import { ir } from './ir';
import { kernels } from './kernels';
import { memory } from './memory';
import { compareLine, headline, IReport } from './report';
import { timeline } from './timeline';
import { timing } from './timing';

/** The MIME type of a report. */
export const MIME_TYPE = 'application/vnd.xlanb.report+json';

/** The CSS class of the renderer's node; every other class starts with `xlanb-`. */
const CLASS_NAME = 'xlanb-report';

/** The tabs in order: label and the view that draws the panel. */
const TABS: [string, (report: IReport) => HTMLElement][] = [
  ['Timeline', timeline],
  ['Graph', graph],
  ['Timing', timing],
  ['Memory', memory],
  ['IR', ir],
  ['Kernels', kernels]
];

/** The tab shown first. */
const FIRST_TAB = 'Graph';

/**
 * A widget that renders one report.
 */
export class ReportView extends Widget implements IRenderMime.IRenderer {
  /**
   * Construct a report view for `options.mimeType`.
   */
  constructor(options: IRenderMime.IRendererOptions) {
    super();
    this._mimeType = options.mimeType;
    this.addClass(CLASS_NAME);
    enableTooltips(this.node);
  }

  /**
   * Render the report: headline, tab bar and one panel per tab.
   */
  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    hideTooltip();
    const report = model.data[this._mimeType] as unknown as IReport;
    if (!report || typeof report !== 'object' || report.version !== 1) {
      this.node.replaceChildren(
        html('p', 'xlanb-error', 'Not an xlanb report of version 1: cannot draw it.')
      );
      return;
    }
    const header = html('div', 'xlanb-header');
    header.appendChild(html('div', 'xlanb-headline', headline(report)));
    const compared = compareLine(report);
    if (compared) {
      header.appendChild(
        html(
          'div',
          `xlanb-compare ${report.compare?.allclose ? '' : 'xlanb-differ'}`,
          compared
        )
      );
    }
    const breaks = report.fallback?.breaks ?? [];
    for (const b of breaks) {
      header.appendChild(
        html(
          'div',
          'xlanb-break',
          `ran with NumPy: ${b.location ?? '?'}: ${b.what}: ${b.reason}`
        )
      );
    }

    const bar = html('div', 'xlanb-tabs');
    bar.setAttribute('role', 'tablist');
    const panels = html('div', 'xlanb-panels');
    const buttons: HTMLButtonElement[] = [];
    const views: HTMLElement[] = [];
    const show = (index: number): void => {
      buttons.forEach((b, i) => {
        b.classList.toggle('xlanb-tab-active', i === index);
        b.setAttribute('aria-selected', String(i === index));
      });
      views.forEach((v, i) => (v.hidden = i !== index));
    };
    TABS.forEach(([label, view], index) => {
      const button = html('button', 'xlanb-tab', label);
      button.type = 'button';
      button.setAttribute('role', 'tab');
      button.dataset.tab = label;
      button.addEventListener('click', () => show(index));
      buttons.push(button);
      bar.appendChild(button);
      const panel = html('div', `xlanb-panel xlanb-panel-${label.toLowerCase()}`);
      panel.setAttribute('role', 'tabpanel');
      panel.appendChild(view(report));
      views.push(panel);
      panels.appendChild(panel);
    });
    show(Math.max(0, TABS.findIndex(([label]) => label === FIRST_TAB)));
    this.node.replaceChildren(header, bar, panels);
  }

  private _mimeType: string;
}

/**
 * A renderer factory for reports; safe: nothing from the kernel becomes HTML.
 */
export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [MIME_TYPE],
  createRenderer: options => new ReportView(options)
};

/**
 * The MIME extension.  Its rank puts it before text/html (the report's static copy) and
 * before the ipywidgets view the kernel also sends (rank -10), which are the fallbacks
 * for front ends without this extension.
 */
const extension: IRenderMime.IExtension = {
  id: 'xlanb-jupyterlab:report',
  description: 'Renders xlanb compile reports: timeline, graph, timing, memory, IR, kernels.',
  rendererFactory,
  rank: -20,
  dataType: 'json'
};

export default extension;
