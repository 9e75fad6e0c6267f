/**
 * Rewriting a cell so that it runs under `%%xla --compare`.
 */

/** The result of `withCompare`: the new source, or why the cell cannot be rewritten. */
export type Rewrite = { source: string } | { error: string };

/**
 * `source` as a `%%xla --compare` cell: an `%%xla` first line gets `--compare` added
 * (once), plain code gets the magic prepended; a cell that starts with another cell
 * magic cannot be rewritten.
 */
export function withCompare(source: string): Rewrite {
  const newline = source.indexOf('\n');
  const first = newline < 0 ? source : source.slice(0, newline);
  const rest = newline < 0 ? '' : source.slice(newline);
  const match = /^%%xla(\s.*)?$/.exec(first.trimEnd());
  if (match) {
    const args = (match[1] ?? '').trim().split(/\s+/).filter(Boolean);
    if (args.includes('--compare')) {
      return { source };
    }
    return { source: ['%%xla', '--compare', ...args].join(' ') + rest };
  }
  if (/^\s*%%/.test(first)) {
    return { error: `The cell already starts with another cell magic: ${first.trim()}` };
  }
  return { source: `%%xla --compare\n${source}` };
}
