/** The details panel: everything known about the selected slice, with its links to related slices and source. */
import type { TimelineSite } from '../extension/protocol';
import { visibleText } from '../extension/shared/text';
import { formatCount, formatDuration } from '../extension/shared/format';
import { isDeviceKind } from '../extension/shared/kinds';
import { el } from './dom';
import { graphNodeOf, type TimelineModel } from './model';
import type { RangeRow, RangeTotals } from './timeline/rangeTotals';
import { siteKindLabel, siteKindTitle, siteText } from './sourceSite';

export interface DetailsActions {
  select(slice: number): void;
  openSource(site: TimelineSite): void;
  /** Asks the host for a slice's args (the payload left them out); the panel is drawn again when they come. */
  requestArgs?(slice: number): void;
}

const MAX_LINKS = 50;

const HINT =
  'W/S zoom · A/D pan · drag or Shift+wheel pans · Ctrl+wheel zooms · arrows walk the slices · Enter opens the source · C collapses a process · click a track name (or P) pins it · F fits the selection · 0 fits all · Shift+drag or drag the ruler: totals in a time range, Esc clears';

/** Names, args and paths come from the trace: each shows on one line, whole. */
function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  return el(tag, { className, text, oneLine: true });
}

function sliceLink(model: TimelineModel, slice: number, actions: DetailsActions): HTMLElement {
  const link = element('a', 'slice-link', model.nameOf(slice));
  link.href = '#';
  link.dataset.slice = String(slice);
  link.title = `${model.kindOf(slice)} · ${formatDuration(model.columns.dur[slice])}`;
  link.addEventListener('click', (event) => {
    event.preventDefault();
    actions.select(slice);
  });
  return link;
}

export function renderDetails(
  container: HTMLElement,
  model: TimelineModel,
  slice: number,
  actions: DetailsActions,
): void {
  container.replaceChildren();
  if (slice < 0) {
    container.append(
      element('p', 'details-empty', 'Select a slice to see its details. Click, or search by name above.'),
      element('p', 'details-hint', HINT),
    );
    return;
  }
  const heading = element('h2', 'details-name', model.nameOf(slice));
  heading.id = 'details-name';
  const args = model.argsOf(slice);
  container.append(heading, fieldList(model, slice, actions, args));
  if (args === undefined) {
    container.append(
      element('h3', 'details-section', 'Args'),
      element('p', 'muted details-args-loading', 'Loading…'),
    );
    actions.requestArgs?.(slice);
    return;
  }
  const list = argsList(args);
  if (list) container.append(element('h3', 'details-section', 'Args'), list);
}

/** The slice's fields: category, track, times, ids, source, and the slices it is linked to. */
function fieldList(
  model: TimelineModel,
  slice: number,
  actions: DetailsActions,
  args: Record<string, unknown> | undefined,
): HTMLElement {
  const c = model.columns;
  const table = element('dl', 'details-fields');
  const field = (label: string, value: string | Node): void => {
    const dd = element('dd');
    if (typeof value === 'string') dd.textContent = visibleText(value, Infinity);
    else dd.append(value);
    table.append(element('dt', undefined, label), dd);
  };
  const origin = model.header.startNs;
  const track = model.trackOf(slice);
  field('Category', `${model.categoryOf(slice)} (${model.kindOf(slice)})`);
  if (track) field('Track', `${track.processName} · ${track.name}`);
  field('Start', formatDuration(c.start[slice] - origin));
  field('Duration', formatDuration(c.dur[slice]));
  field('End', formatDuration(model.end(slice) - origin));
  if (!Number.isNaN(c.correlation[slice])) field('Correlation id', String(c.correlation[slice]));
  if (!Number.isNaN(c.externalId[slice])) field('External id', String(c.externalId[slice]));
  const site = model.siteOf(slice);
  if (site) field('Source', sourceLink(site, actions));
  const op = c.opOf[slice];
  const runtime = c.runtimeOf[slice];
  if (op >= 0) field('Launching op', sliceLink(model, op, actions));
  if (runtime >= 0) field('Runtime call', sliceLink(model, runtime, actions));
  const graph = graphField(model, slice, args);
  if (graph) {
    field(graph.label, graph.text);
    table.lastElementChild!.id = 'details-graph';
  }
  if (!isDeviceKind(c.kind[slice])) {
    const launched = model.launchedFrom(slice);
    if (launched.length > 0) {
      let total = 0;
      for (const k of launched) total += c.dur[k];
      field(
        `Launched (${launched.length}, ${formatDuration(total)})`,
        launchedList(model, launched, actions),
      );
    }
  }
  return table;
}

/** "graph 3 · node 7", from a kernel's args (newer Kineto); undefined without a graph id. */
function graphNodeText(args: Record<string, unknown> | undefined): string | undefined {
  const node = graphNodeOf(args);
  if (!node) return undefined;
  return `graph ${node.graph}${node.node !== undefined ? ` · node ${node.node}` : ''}`;
}

/**
 * A graph's kernel: "graph 3 · node 7, launched by cudaGraphLaunch (4 kernels in this launch)"; the launch: how
 * many kernels it replayed and their device time (with the graph's id when its kernels' args are at hand).
 */
function graphField(
  model: TimelineModel,
  slice: number,
  args: Record<string, unknown> | undefined,
): { label: string; text: string } | undefined {
  const launch = model.graphLaunchOf(slice, args);
  if (launch < 0) {
    // A graph's kernel whose launch is not in the trace still says which graph and node it is.
    const where = isDeviceKind(model.columns.kind[slice]) ? graphNodeText(args) : undefined;
    return where ? { label: 'Graph', text: `${where}, its launch not in the trace` } : undefined;
  }
  const kernels = model.launchedFrom(launch);
  const count = `${formatCount(kernels.length)} kernel${kernels.length === 1 ? '' : 's'}`;
  const launchName = model.nameOf(launch);
  if (launch !== slice) {
    const where = graphNodeText(args);
    return {
      label: launchName.startsWith('hip') ? 'HIP graph' : 'CUDA graph',
      text: `${where ? `${where}, ` : ''}launched by ${launchName} (${count} in this launch)`,
    };
  }
  let total = 0;
  for (const k of kernels) total += model.columns.dur[k];
  // In the editor the kernels' args come on request: the graph's id is named only where they are at hand.
  const first =
    kernels.length > 0 && !model.header.argsOnRequest ? graphNodeOf(model.argsOf(kernels[0])) : undefined;
  const which = first ? `graph ${first.graph}: ` : '';
  return { label: 'Graph launch', text: `${which}${count} · ${formatDuration(total)} device time` };
}

/** The line the one attribution charges the slice to (what the editor's hover shows), with how it was found. */
function sourceLink(site: TimelineSite, actions: DetailsActions): HTMLElement {
  const link = element('a', 'source-link', siteText(site));
  link.href = '#';
  link.id = 'details-source';
  link.dataset.file = site.file;
  link.dataset.line = String(site.line);
  if (site.column !== undefined) link.dataset.column = String(site.column);
  link.title = siteKindTitle(site);
  link.addEventListener('click', (event) => {
    event.preventDefault();
    actions.openSource(site);
  });
  const wrap = element('span');
  wrap.append(link, element('span', 'muted', ` ${site.function}() · ${siteKindLabel(site)}`));
  return wrap;
}

function launchedList(model: TimelineModel, launched: number[], actions: DetailsActions): HTMLElement {
  const list = element('ul', 'launched-list');
  list.id = 'details-launched';
  for (const k of launched.slice(0, MAX_LINKS)) {
    const item = element('li');
    item.append(
      sliceLink(model, k, actions),
      element('span', 'muted', ` ${formatDuration(model.columns.dur[k])}`),
    );
    list.append(item);
  }
  if (launched.length > MAX_LINKS)
    list.append(element('li', 'muted', `… and ${launched.length - MAX_LINKS} more`));
  return list;
}

/** The args object as a definition list; undefined when the slice has none. */
function argsList(args: Record<string, unknown>): HTMLElement | undefined {
  const keys = Object.keys(args);
  if (keys.length === 0) return undefined;
  const list = element('dl', 'details-fields details-args');
  for (const key of keys) {
    const value = args[key];
    list.append(
      element('dt', undefined, key),
      element('dd', undefined, typeof value === 'string' ? value : JSON.stringify(value)),
    );
  }
  return list;
}

/** Rows of a range table shown; the rest are counted. */
const MAX_RANGE_ROWS = 100;

/**
 * The totals over a dragged-out time range: its start, end and length, then per op and per device slice name
 * how many overlap it and their time inside it ("In range"; the full name on hover).
 */
export function renderRange(
  container: HTMLElement,
  model: TimelineModel,
  range: { start: number; end: number },
  totals: RangeTotals,
): void {
  container.replaceChildren();
  const origin = model.header.startNs;
  const heading = element('h2', 'details-name', `Range ${formatDuration(range.end - range.start)}`);
  heading.id = 'range-heading';
  const where = element(
    'p',
    'muted',
    `${formatDuration(range.start - origin)} to ${formatDuration(range.end - origin)} · Esc clears`,
  );
  container.append(heading, where);
  for (const [title, rows, id] of [
    ['Ops', totals.ops, 'range-ops'],
    ['Device', totals.device, 'range-device'],
  ] as const) {
    container.append(element('h3', 'details-section', `${title} (${rows.length})`), rangeTable(rows, id));
  }
}

function rangeTable(rows: readonly RangeRow[], id: string): HTMLElement {
  const table = element('table', 'range-table');
  table.id = id;
  const head = element('tr');
  for (const title of ['Name', 'Count', 'In range']) head.append(element('th', undefined, title));
  table.append(head);
  for (const row of rows.slice(0, MAX_RANGE_ROWS)) {
    const tr = element('tr');
    const name = element('td', 'range-name', row.name);
    name.title = visibleText(row.name, Infinity);
    tr.append(
      name,
      element('td', 'range-number', formatCount(row.count)),
      element('td', 'range-number', formatDuration(row.totalNs)),
    );
    table.append(tr);
  }
  if (rows.length > MAX_RANGE_ROWS) {
    const more = element('tr');
    more.append(element('td', 'muted', `… and ${rows.length - MAX_RANGE_ROWS} more`));
    table.append(more);
  }
  if (rows.length === 0) {
    const none = element('tr');
    none.append(element('td', 'muted', 'none in this range'));
    table.append(none);
  }
  return table;
}
