/**
 * The Results view: what a run comes to at a glance — how it ended, the capture mode and why, totals, device busy
 * and idle, steps, memory peaks, the top lines (a click opens the line), ops and kernels, and buttons to the
 * timeline, the bring-up checks, the run's output and a comparison. DOM text only (names come from the trace);
 * colours from --vscode-* variables in results.css.
 */
import './results.css';
import type {
  ResultsHostToWebview,
  ResultsModel,
  ResultsWebviewToHost,
} from '../../extension/results/protocol';
import { formatBytes, formatCount, formatDuration, formatPercent } from '../../extension/shared/format';
import { button, el } from '../dom';

interface VsCodeApi {
  postMessage(message: ResultsWebviewToHost): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const root = document.getElementById('root') ?? document.body;

function basename(file: string): string {
  return file.split(/[\\/]/).pop() ?? file;
}

function table(caption: string, head: string[], rows: (string | Node)[][], numeric: number[]): HTMLElement {
  const section = el('section', { className: 'table' }, el('h2', { text: caption }));
  const grid = el('table');
  const headRow = el('tr');
  head.forEach((name, i) =>
    headRow.append(el('th', { text: name, className: numeric.includes(i) ? 'num' : '' })),
  );
  grid.append(el('thead', {}, headRow));
  const body = el('tbody');
  for (const row of rows) {
    const tr = el('tr');
    row.forEach((cell, i) => tr.append(el('td', { className: numeric.includes(i) ? 'num' : '' }, cell)));
    body.append(tr);
  }
  grid.append(body);
  section.append(grid);
  return section;
}

function card(label: string, value: string, detail?: string): HTMLElement {
  return el(
    'div',
    { className: 'card' },
    el('div', { className: 'label', text: label }),
    el('div', { className: 'value', text: value }),
    detail ? el('div', { className: 'detail', text: detail }) : undefined,
  );
}

function lineLink(line: ResultsModel['lines'][number]): HTMLElement {
  const text = `${basename(line.file)}:${line.line}${line.kind ? ` (${line.kind})` : ''}`;
  const link = el('a', { text, title: `${line.file}:${line.line}`, oneLine: true });
  link.className = 'line-link';
  link.href = '#';
  link.addEventListener('click', (event) => {
    event.preventDefault();
    vscode.postMessage({ type: 'results.openLine', file: line.file, line: line.line, column: line.column });
  });
  return link;
}

function header(model: ResultsModel): HTMLElement {
  const actions = el('div', { className: 'actions' });
  actions.append(button('Open Timeline', () => vscode.postMessage({ type: 'results.openTimeline' })));
  if (model.canOpenBringup)
    actions.append(button('Bring-up Checks', () => vscode.postMessage({ type: 'results.openBringup' })));
  if (model.canShowOutput)
    actions.append(button('Show Output', () => vscode.postMessage({ type: 'results.showOutput' })));
  actions.append(button('Compare with…', () => vscode.postMessage({ type: 'results.compare' })));
  const mode = model.mode
    ? el('p', {
        className: 'mode',
        text: `Capture mode ${model.mode.chosen}${model.mode.reason ? `: ${model.mode.reason}` : ''}`,
      })
    : undefined;
  return el(
    'header',
    {},
    el('h1', { text: model.title, oneLine: true }),
    el('p', { className: `ended ${model.ended.severity}`, text: model.ended.text }),
    mode,
    actions,
  );
}

function totals(model: ResultsModel): HTMLElement {
  const cards = el('div', { className: 'cards' });
  if (model.totals.wallNs !== undefined)
    cards.append(card('Wall', formatDuration(model.totals.wallNs), 'the whole run'));
  cards.append(card('Profiled', formatDuration(model.totals.spanNs), 'first to last event'));
  cards.append(card('CPU in ops', formatDuration(model.totals.cpuNs)));
  if (model.device) {
    const share = model.device.spanNs > 0 ? model.device.busyNs / model.device.spanNs : 0;
    cards.append(card('Device time', formatDuration(model.totals.deviceNs), 'kernels, copies, sets'));
    cards.append(card('Device busy', formatPercent(share), `idle ${formatPercent(1 - share)} of its span`));
  } else cards.append(card('Device', 'none', 'no device activity: CPU times only'));
  for (const memory of model.memory ?? [])
    cards.append(
      card(
        `Peak memory · ${memory.device}`,
        formatBytes(memory.peakBytes),
        `at ${formatDuration(memory.atNs)}`,
      ),
    );
  return cards;
}

/** A run of several ranks: communication per rank, then the collectives the others waited longest for. */
function ranks(overview: NonNullable<ResultsModel['ranks']>): HTMLElement[] {
  const sections = [
    table(
      `Ranks (${overview.rows.length}): communication and who waited for whom`,
      ['Rank', 'In collectives', 'Exposed', 'Started last', 'Others waited for it', 'Waited itself'],
      overview.rows.map((r) => [
        r.rank,
        formatDuration(r.commNs),
        `${formatDuration(r.exposedNs)}${r.commNs > 0 ? ` (${Math.round((100 * r.exposedNs) / r.commNs)}%)` : ''}`,
        formatCount(r.stragglerCount),
        formatDuration(r.waitCausedNs),
        formatDuration(r.waitSufferedNs),
      ]),
      [1, 2, 3, 4, 5],
    ),
  ];
  if (overview.collectives.length > 0)
    sections.push(
      table(
        'Most waited-for collectives',
        ['Collective', 'Group', 'Size', 'Median', 'Max', 'Started last', 'Longest wait'],
        overview.collectives.map((c) => [
          c.name,
          c.group || '—',
          c.size === undefined ? '—' : formatBytes(c.size),
          formatDuration(c.medianNs),
          formatDuration(c.maxNs),
          `rank ${c.straggler}`,
          formatDuration(c.maxWaitNs),
        ]),
        [2, 3, 4, 6],
      ),
    );
  if (overview.notes.length > 0) {
    const list = el('ul', { className: 'notes' });
    for (const note of overview.notes) list.append(el('li', { text: note }));
    sections.push(el('section', {}, list));
  }
  return sections;
}

function render(model: ResultsModel): void {
  const time = model.primary === 'device' ? 'Device' : 'CPU';
  const parts: (HTMLElement | undefined)[] = [header(model), totals(model)];
  parts.push(
    table(
      `Top lines by ${time.toLowerCase()} time (self: the line's own ops)`,
      ['Line', 'Function', `${time} self`, `${time} total`, 'Ops'],
      model.lines.map((line) => [
        lineLink(line),
        line.function,
        formatDuration(line.selfNs),
        formatDuration(line.totalNs),
        formatCount(line.ops),
      ]),
      [2, 3, 4],
    ),
  );
  if (model.steps)
    parts.push(
      table(
        `Steps (${model.steps.rows.length}): first ${formatDuration(model.steps.firstNs)}${model.steps.steadyMedianNs !== undefined ? `, steady state ${formatDuration(model.steps.steadyMedianNs)}` : ''}`,
        ['Step', 'Wall', 'CPU in ops', 'Device', ''],
        model.steps.rows.map((row) => [
          `#${row.step}`,
          formatDuration(row.wallNs),
          formatDuration(row.cpuNs),
          formatDuration(row.deviceNs),
          row.step === model.steps!.slowest ? 'slowest' : '',
        ]),
        [1, 2, 3],
      ),
    );
  if (model.ranks) parts.push(...ranks(model.ranks));
  if (model.device && model.device.gaps.length > 0)
    parts.push(
      table(
        'Largest device idle gaps (no device busy)',
        ['Starts at', 'Idle for'],
        model.device.gaps.map((gap) => [formatDuration(gap.startNs), formatDuration(gap.durNs)]),
        [0, 1],
      ),
    );
  parts.push(
    table(
      `Top ops by ${time.toLowerCase()} self time`,
      ['Op', 'Calls', `${time} self`, `${time} total`],
      model.ops.map((op) => [
        el('span', { text: op.name, oneLine: true }),
        formatCount(op.calls),
        formatDuration(op.selfNs),
        formatDuration(op.totalNs),
      ]),
      [1, 2, 3],
    ),
  );
  if (model.kernels.length > 0)
    parts.push(
      table(
        'Top kernels',
        ['Kernel', 'Count', 'Device time', 'Launched by'],
        model.kernels.map((k) => [
          el('span', { text: k.name, oneLine: true }),
          formatCount(k.count),
          formatDuration(k.totalNs),
          el('span', { text: k.topOp, oneLine: true }),
        ]),
        [1, 2],
      ),
    );
  if (model.notes.length > 0) {
    const list = el('ul', { className: 'notes' });
    for (const note of model.notes) list.append(el('li', { text: note }));
    parts.push(el('section', {}, el('h2', { text: 'Notes' }), list));
  }
  root.replaceChildren(...parts.filter((part): part is HTMLElement => part !== undefined));
}

window.addEventListener('message', (event: MessageEvent<ResultsHostToWebview>) => {
  const message = event.data;
  if (message?.type === 'results.show') render(message.model);
  else if (message?.type === 'results.error')
    root.replaceChildren(el('p', { className: 'ended error', text: message.text }));
});
vscode.postMessage({ type: 'results.ready' });
