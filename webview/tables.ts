/**
 * Sortable, virtualised tables (ops, kernels, lines): only the rows in view exist in the DOM, so a table of
 * 100 000 kernels scrolls like one of ten. Keyboard: arrows move, Enter (or a click) selects in the timeline.
 */
import { visibleText } from '../extension/shared/text';

export interface Column<Row> {
  title: string;
  value(row: Row): string | number;
  format?(row: Row): string;
  numeric?: boolean;
  /** Share of the width, in fractions: 4 for the first column and 1 for the others unless said. */
  width?: number;
}

const ROW_HEIGHT = 22;

export class VirtualTable<Row> {
  readonly element: HTMLElement;
  private readonly body: HTMLElement;
  private readonly spacer: HTMLElement;
  private readonly windowEl: HTMLElement;
  private readonly headerCells: HTMLElement[] = [];
  private rows: Row[];
  private sortColumn = -1;
  private sortDescending = true;
  private active = -1;
  /** The rows' grid-template-columns, from the columns' widths. */
  private readonly gridColumns: string;

  constructor(
    name: string,
    private readonly columns: Column<Row>[],
    rows: Row[],
    private readonly onActivate: (row: Row) => void,
  ) {
    this.rows = rows.slice();
    this.element = document.createElement('div');
    this.element.className = 'vtable';
    this.element.setAttribute('role', 'grid');
    this.element.setAttribute('aria-label', name);
    this.element.setAttribute('aria-rowcount', String(rows.length + 1));
    this.gridColumns = columns.map((c, i) => `minmax(0, ${c.width ?? (i === 0 ? 4 : 1)}fr)`).join(' ');
    const header = this.headerRow();
    this.body = document.createElement('div');
    this.body.className = 'vtable-body';
    this.body.tabIndex = 0;
    this.spacer = document.createElement('div');
    this.spacer.className = 'vtable-spacer';
    this.windowEl = document.createElement('div');
    this.windowEl.className = 'vtable-window';
    this.spacer.append(this.windowEl);
    this.body.append(this.spacer);
    this.element.append(header, this.body);
    this.body.addEventListener('scroll', () => this.renderRows());
    this.body.addEventListener('keydown', (event) => this.onKey(event));
    new ResizeObserver(() => this.renderRows()).observe(this.body);
    this.spacer.style.height = `${this.rows.length * ROW_HEIGHT}px`;
  }

  /** The column titles: buttons that sort by their column. */
  private headerRow(): HTMLElement {
    const header = document.createElement('div');
    header.className = 'vtable-row vtable-header';
    header.style.gridTemplateColumns = this.gridColumns;
    header.setAttribute('role', 'row');
    this.columns.forEach((column, index) => {
      const cell = document.createElement('button');
      cell.className = `vtable-cell${column.numeric ? ' numeric' : ''} col-${index}`;
      cell.setAttribute('role', 'columnheader');
      cell.setAttribute('aria-sort', 'none');
      cell.textContent = column.title;
      cell.addEventListener('click', () => this.sortBy(index));
      this.headerCells.push(cell);
      header.append(cell);
    });
    return header;
  }

  /** Shows other rows, in the current sort order. */
  setRows(rows: Row[]): void {
    this.rows = rows.slice();
    this.active = -1;
    this.element.setAttribute('aria-rowcount', String(rows.length + 1));
    this.spacer.style.height = `${this.rows.length * ROW_HEIGHT}px`;
    if (this.sortColumn >= 0) this.sortRows();
    this.renderRows();
  }

  sortBy(index: number): void {
    if (this.sortColumn === index) this.sortDescending = !this.sortDescending;
    else {
      this.sortColumn = index;
      this.sortDescending = !!this.columns[index].numeric;
    }
    this.sortRows();
    this.headerCells.forEach((cell, i) =>
      cell.setAttribute('aria-sort', i !== index ? 'none' : this.sortDescending ? 'descending' : 'ascending'),
    );
    this.renderRows();
  }

  private sortRows(): void {
    const column = this.columns[this.sortColumn];
    const sign = this.sortDescending ? -1 : 1;
    this.rows.sort((a, b) => {
      const x = column.value(a);
      const y = column.value(b);
      return (x < y ? -1 : x > y ? 1 : 0) * sign;
    });
  }

  private onKey(event: KeyboardEvent): void {
    const page = Math.max(1, Math.floor(this.body.clientHeight / ROW_HEIGHT) - 1);
    const moves: Record<string, number> = { ArrowDown: 1, ArrowUp: -1, PageDown: page, PageUp: -page };
    if (event.key in moves) {
      this.setActive(Math.min(this.rows.length - 1, Math.max(0, this.active + moves[event.key])));
      event.preventDefault();
    } else if (event.key === 'Home' || event.key === 'End') {
      this.setActive(event.key === 'Home' ? 0 : this.rows.length - 1);
      event.preventDefault();
    } else if (event.key === 'Enter' && this.active >= 0) {
      this.onActivate(this.rows[this.active]);
      event.preventDefault();
    }
  }

  private setActive(index: number): void {
    this.active = index;
    const top = index * ROW_HEIGHT;
    if (top < this.body.scrollTop) this.body.scrollTop = top;
    else if (top + ROW_HEIGHT > this.body.scrollTop + this.body.clientHeight) {
      this.body.scrollTop = top + ROW_HEIGHT - this.body.clientHeight;
    }
    this.renderRows();
  }

  renderRows(): void {
    const first = Math.max(0, Math.floor(this.body.scrollTop / ROW_HEIGHT) - 5);
    const count = Math.ceil(this.body.clientHeight / ROW_HEIGHT) + 10;
    const last = Math.min(this.rows.length, first + count);
    this.windowEl.style.transform = `translateY(${first * ROW_HEIGHT}px)`;
    const fragment = document.createDocumentFragment();
    for (let r = first; r < last; r++) {
      const row = this.rows[r];
      const line = document.createElement('div');
      line.className = `vtable-row${r === this.active ? ' active' : ''}`;
      line.setAttribute('role', 'row');
      line.style.gridTemplateColumns = this.gridColumns;
      line.setAttribute('aria-rowindex', String(r + 2));
      this.columns.forEach((column, index) => {
        const cell = document.createElement('div');
        cell.className = `vtable-cell${column.numeric ? ' numeric' : ''} col-${index}`;
        cell.setAttribute('role', 'gridcell');
        // Names from the trace: DOM text only, with invisible characters shown.
        cell.textContent = visibleText(
          column.format ? column.format(row) : String(column.value(row)),
          Infinity,
        );
        cell.title = cell.textContent;
        line.append(cell);
      });
      line.addEventListener('click', () => {
        this.active = r;
        this.renderRows();
        this.onActivate(row);
      });
      fragment.append(line);
    }
    this.windowEl.replaceChildren(fragment);
  }
}
