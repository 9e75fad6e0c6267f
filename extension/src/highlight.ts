/**
 * Python highlighting of kernel sources, done by JupyterLab itself.
 *
 * The front-end plugin (plugin.ts) hands over JupyterLab's editor language registry;
 * `highlightPython` then asks it to highlight, which is how JupyterLab highlights code
 * blocks in Markdown: CodeMirror's Python parser and JupyterLab's highlight style, so
 * the colours follow the theme like a code cell's.  Until the registry arrives (or where
 * the plugin is not loaded) the source stays plain text.
 */
import { IEditorLanguageRegistry } from '@jupyterlab/codemirror';

/** The registry, once the plugin has activated. */
let registry: IEditorLanguageRegistry | null = null;

/** Highlights asked for before the registry arrived. */
const waiting: (() => void)[] = [];

/** Called by the plugin on activation with JupyterLab's language registry. */
export function setLanguageRegistry(languages: IEditorLanguageRegistry): void {
  registry = languages;
  for (const run of waiting.splice(0)) {
    run();
  }
}

/**
 * Show `code` in `pre` as text now, and highlighted as Python as soon as JupyterLab's
 * registry can (then `pre` gets `data-highlighted="python"`).
 */
export function highlightPython(code: string, pre: HTMLElement): void {
  pre.textContent = code;
  const run = (): void => {
    const languages = registry;
    if (!languages) {
      return;
    }
    const into = document.createElement('div');
    languages
      .highlight(code, languages.findBest('python'), into)
      .then(() => {
        if (pre.textContent === code && into.textContent === code) {
          pre.replaceChildren(...Array.from(into.childNodes));
          pre.dataset.highlighted = 'python';
        }
      })
      .catch(error => console.warn('xlanb: could not highlight a kernel source', error));
  };
  if (registry) {
    run();
  } else {
    waiting.push(run);
  }
}
