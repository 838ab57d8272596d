/** The details panel: everything known about the selected slice, with its links to related slices and source. */
import type { TimelineSite } from '../extension/protocol';
import { visibleText } from '../extension/shared/text';
import { formatDuration } from '../extension/shared/format';
import { isDevice, KIND_DRIVER, KIND_RUNTIME, type TimelineModel } from './model';

export interface DetailsActions {
  select(slice: number): void;
  openSource(site: TimelineSite): void;
}

const MAX_LINKS = 50;

function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  // Names, args and paths come from the trace: DOM text only, with invisible characters shown.
  if (text !== undefined) node.textContent = visibleText(text, Infinity);
  return node;
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
      element(
        'p',
        'details-hint',
        'W/S zoom · A/D pan · drag or Shift+wheel pans · Ctrl+wheel zooms · arrows walk the slices · Enter opens the source · C collapses a process · F fits the selection · 0 fits all',
      ),
    );
    return;
  }
  const c = model.columns;
  const heading = element('h2', 'details-name', model.nameOf(slice));
  heading.id = 'details-name';
  container.append(heading);
  const table = element('dl', 'details-fields');
  const field = (label: string, value: string | Node): void => {
    const dd = element('dd');
    if (typeof value === 'string') dd.textContent = visibleText(value, Infinity);
    else dd.append(value);
    table.append(element('dt', undefined, label), dd);
  };
  const origin = model.header.startNs;
  const track = model.lanes[model.laneOfSlice[slice]]?.track;
  field('Category', `${model.categoryOf(slice)} (${model.kindOf(slice)})`);
  if (track) field('Track', `${track.processName} · ${track.name}`);
  field('Start', formatDuration(c.start[slice] - origin));
  field('Duration', formatDuration(c.dur[slice]));
  field('End', formatDuration(model.end(slice) - origin));
  if (!Number.isNaN(c.correlation[slice])) field('Correlation id', String(c.correlation[slice]));
  if (!Number.isNaN(c.externalId[slice])) field('External id', String(c.externalId[slice]));

  const site = model.siteOf(slice);
  if (site) {
    const link = element('a', 'source-link', `${site.file}:${site.line}`);
    link.href = '#';
    link.id = 'details-source';
    link.dataset.file = site.file;
    link.dataset.line = String(site.line);
    link.title = site.exact
      ? 'the call site'
      : `the definition of ${visibleText(site.function)}() (no call-site record in this trace)`;
    link.addEventListener('click', (event) => {
      event.preventDefault();
      actions.openSource(site);
    });
    const wrap = element('span');
    wrap.append(
      link,
      element('span', 'muted', ` ${site.function}() · ${site.exact ? 'call site' : 'function'}`),
    );
    field('Source', wrap);
  }

  const op = c.opOf[slice];
  const runtime = c.runtimeOf[slice];
  if (op >= 0) field('Launching op', sliceLink(model, op, actions));
  if (runtime >= 0) field('Runtime call', sliceLink(model, runtime, actions));
  if (!isDevice(c.kind[slice])) {
    const isLaunch = c.kind[slice] === KIND_RUNTIME || c.kind[slice] === KIND_DRIVER;
    const launched = Array.from(model.launchedBy(slice)).filter((k) => !isLaunch || c.runtimeOf[k] === slice);
    if (launched.length > 0) {
      const list = element('ul', 'launched-list');
      list.id = 'details-launched';
      let total = 0;
      for (const k of launched) total += c.dur[k];
      for (const k of launched.slice(0, MAX_LINKS)) {
        const item = element('li');
        item.append(sliceLink(model, k, actions), element('span', 'muted', ` ${formatDuration(c.dur[k])}`));
        list.append(item);
      }
      if (launched.length > MAX_LINKS)
        list.append(element('li', 'muted', `… and ${launched.length - MAX_LINKS} more`));
      field(`Launched (${launched.length}, ${formatDuration(total)})`, list);
    }
  }
  container.append(table);

  const args = model.argsOf(slice);
  const keys = Object.keys(args);
  if (keys.length > 0) {
    container.append(element('h3', 'details-section', 'Args'));
    const argsList = element('dl', 'details-fields details-args');
    for (const key of keys) {
      const value = args[key];
      argsList.append(
        element('dt', undefined, key),
        element('dd', undefined, typeof value === 'string' ? value : JSON.stringify(value)),
      );
    }
    container.append(argsList);
  }
}
