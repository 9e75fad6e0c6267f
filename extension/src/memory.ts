/**
 * The Memory tab: bytes of temporaries when every op writes its result to memory
 * (op by op) vs after fusion, beside the argument and output bytes, on one scale that
 * fills the output's width.
 */
import { barChart, empty, fillWidth, html, IBar } from './dom';
import { formatBytes, IReport } from './report';

/** A bar for a byte count. */
function bytesBar(label: string, count: number | undefined, kind: string): IBar {
  return { label, value: count ?? null, text: formatBytes(count), kind };
}

/** The memory chart, or a note when the report has no memory figures. */
export function memory(report: IReport): HTMLElement {
  const node = html('div', 'xlanb-memory');
  const m = report.memory ?? {};
  if (m.temp_bytes_unfused === undefined && m.temp_bytes_fused === undefined) {
    node.appendChild(empty('The report has no memory figures.'));
    return node;
  }
  const saved = (m.temp_bytes_unfused ?? 0) - (m.temp_bytes_fused ?? 0);
  node.appendChild(
    html('h4', 'xlanb-chart-title', `Temporaries: fusion saves ${formatBytes(saved)}`)
  );
  const host = html('div', 'xlanb-chart-host');
  node.appendChild(host);
  fillWidth(host, width =>
    barChart(
      [
        {
          caption: '',
          bars: [
            bytesBar('temporaries, op by op', m.temp_bytes_unfused, 'xlanb-bar-unfused'),
            bytesBar('temporaries, fused', m.temp_bytes_fused, 'xlanb-bar-fused')
          ]
        },
        {
          caption: '',
          bars: [
            bytesBar('arguments', m.argument_bytes, 'xlanb-bar-io'),
            bytesBar('outputs', m.output_bytes, 'xlanb-bar-io')
          ]
        }
      ],
      'xlanb-memory-chart',
      width
    )
  );
  return node;
}
