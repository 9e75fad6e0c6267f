/**
 * The front-end plugin: a command "Run cell with XLA comparison" in the command palette
 * and the cell toolbar (schema/commands.json) that runs the active code cell under
 * `%%xla --compare`; it also hands JupyterLab's editor language registry to the report
 * renderer, which highlights kernel sources with it (highlight.ts).
 *
 * `%%xla` cells need no highlighting support of their own: JupyterLab 4 highlights a
 * cell in the kernel's language, Python, whatever cell magic its first line names.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { INotebookTracker, NotebookActions } from '@jupyterlab/notebook';
import { LabIcon } from '@jupyterlab/ui-components';

import { setLanguageRegistry } from './highlight';
import { withCompare } from './magic';

/** The command's id (also named in schema/commands.json for the cell toolbar). */
export const COMMAND = 'xlanb:run-cell-compare';

/** The toolbar icon: "XLA" over a bar, in the theme's icon colour. */
const xlaIcon = new LabIcon({
  name: 'xlanb-jupyterlab:xla',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="16" height="16">' +
    '<g class="jp-icon3" fill="#616161">' +
    '<path d="M2 5h3l2 3.2L9 5h3l-3.5 5L12 15H9l-2-3.2L5 15H2l3.5-5z"/>' +
    '<path d="M13 5h2.4v7.8H19V15h-6z"/>' +
    '<path d="M3 18h18v2H3z"/></g></svg>'
});

/**
 * The plugin: registers the command, its palette entry and (through its schema) its
 * cell toolbar button.
 */
const plugin: JupyterFrontEndPlugin<void> = {
  id: 'xlanb-jupyterlab:commands',
  description: 'Run the active cell under %%xla --compare.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ICommandPalette, IEditorLanguageRegistry],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    palette: ICommandPalette | null,
    languages: IEditorLanguageRegistry | null
  ): void => {
    if (languages) {
      setLanguageRegistry(languages);     // the Kernels tab highlights with it
    }
    app.commands.addCommand(COMMAND, {
      label: 'Run cell with XLA comparison',
      caption: 'Run this cell under %%xla --compare: fused vs op by op vs NumPy',
      icon: xlaIcon,
      isEnabled: () => tracker.activeCell?.model.type === 'code',
      execute: async () => {
        const panel = tracker.currentWidget;
        const cell = tracker.activeCell;
        if (!panel || !cell || cell.model.type !== 'code') {
          return;
        }
        const rewrite = withCompare(cell.model.sharedModel.getSource());
        if ('error' in rewrite) {
          Notification.warning(rewrite.error, { autoClose: 5000 });
          return;
        }
        cell.model.sharedModel.setSource(rewrite.source);
        await NotebookActions.run(panel.content, panel.sessionContext);
      }
    });
    palette?.addItem({ command: COMMAND, category: 'xlanb' });
  }
};

export default plugin;
