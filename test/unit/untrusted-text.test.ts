/**
 * Names from a trace are data in every renderer: hover Markdown, CodeLens and inline text, the CLI's terminal
 * output, the HTML report and the webview's DOM. A synthetic trace carrying injection payloads goes through the
 * real importer and analysis; each renderer's output is checked for what a payload would need to escape.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { marked } from 'marked';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import {
  buildLineIndex,
  codeLensTitle,
  hoverMarkdown,
  inlineText,
  lookupFile,
  type LineIndex,
} from '../../extension/analysis/lineIndex';
import { buildSummary } from '../../extension/analysis/summary';
import { loadBringup } from '../../extension/bringup/load';
import { buildMarkdownReport } from '../../extension/bringup/report';
import { summaryMarkdown } from '../../extension/analysis/summaryMarkdown';
import type { Analysis } from '../../extension/analysis/types';
import { checkCommand } from '../../extension/cli/check';
import { diagnosticsCommand } from '../../extension/cli/diagnostics';
import { formatTable } from '../../extension/cli/format';
import { renderSummary, summaryCommand } from '../../extension/cli/summary';
import { importTrace } from '../../extension/import/kineto';
import type { Profile } from '../../extension/model/profile';
import {
  commandUri,
  cutText,
  htmlText,
  labelText,
  markdownCode,
  markdownText,
  terminalLines,
  terminalText,
  visibleText,
} from '../../extension/shared/text';
import { unpackTimeline } from '../../extension/protocol';
import { buildReportHtml } from '../../extension/timeline/report';
import { encodeTimelineBuffer } from '../../extension/timeline/encode';
import { webviewNonce } from '../../extension/vscode/nonce';
import { hostileTrace } from '../fixtures/hostile-trace.mjs';

/** The payloads: Markdown table and image injection, terminal escapes, bidirectional overrides, backtick runs. */
const MARKDOWN_KERNEL = 'k`\n| x | ![i](http://evil.example/a.png) |\n`';
const MARKDOWN_OP = 'aten::evil``` `` ` \\| <img src=x onerror=alert(1)> [link](http://evil.example/l) |';
const TERMINAL_KERNEL = 'gemm\x1b[2J\x1b]0;pwn\x07\x1b]52;c;aGk=\x07\u009b2J';
const BIDI_OP = 'aten::add\u202eexe.txt\u2066x\u2069\u2028\u0085';
const FUNCTION_NAME = 'forward_![f](http://evil.example/f.png)_<img src=y>_$(loading~spin)';

/** Characters none of the outputs may carry: controls (newline aside where lines are kept), C1, separators, bidi. */
// eslint-disable-next-line no-control-regex -- the outputs are checked for control characters
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
// eslint-disable-next-line no-control-regex -- the terminal output is checked for escape bytes
const TERMINAL_BYTES = /[\x07\x1b\u009b\u009d]/;
const ESC = new RegExp(String.fromCharCode(0x1b));

let dir: string;
let project: string;
let userFile: string;
let tracePath: string;
let profile: Profile;
let analysis: Analysis;
let index: LineIndex;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'flagprof-untrusted-'));
  // A folder name with parentheses: the hover's command links carry the path and must stay one link each.
  project = path.join(dir, 'proj (copy)');
  mkdirSync(project);
  userFile = path.join(project, 'train.py');
  writeFileSync(userFile, 'import torch\n\ndef forward(x):\n    return x\n');
  // The trace's own file name is shown too (CLI header, report title): it carries a terminal payload.
  tracePath = path.join(dir, 'trace\x1b]0;pwn\x07.json');
  writeFileSync(
    tracePath,
    JSON.stringify(
      hostileTrace({
        file: userFile,
        functionName: FUNCTION_NAME,
        ops: [MARKDOWN_OP, BIDI_OP, 'aten::mm'],
        kernels: [MARKDOWN_KERNEL, TERMINAL_KERNEL, 'ampere_sgemm'],
      }),
    ),
  );
  profile = await importTrace(tracePath);
  analysis = analyze(profile);
  index = buildLineIndex(analysis);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The text of rendered HTML: tags removed, marked's entities decoded. */
function htmlTextOf(html: string): string {
  return html
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

/** Markdown with its code spans removed (what remains is parsed as Markdown). */
function outsideCodeSpans(markdown: string): string {
  return markdown.replace(/(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g, '');
}

describe('text module', () => {
  it('writes every invisible or reordering character as a visible escape', () => {
    expect(visibleText('a\nb\rc\td')).toBe('a\\nb\\rc\\td');
    expect(visibleText('\x1b[2J\x07')).toBe('\\u{1b}[2J\\u{7}');
    expect(visibleText('\u009b\u0085\u2028\u2029')).toBe('\\u{9b}\\u{85}\\u{2028}\\u{2029}');
    expect(visibleText('\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069')).toBe(
      '\\u{202a}\\u{202b}\\u{202c}\\u{202d}\\u{202e}\\u{2066}\\u{2067}\\u{2068}\\u{2069}',
    );
    expect(visibleText('\u200b\ufeff\u{e0041}')).toBe('\\u{200b}\\u{feff}\\u{e0041}');
    expect(visibleText('C:\\Users\\me\\train.py')).toBe('C:\\Users\\me\\train.py');
    expect(visibleText('void at::native::kernel<float, 4>()')).toBe('void at::native::kernel<float, 4>()');
  });

  it('cuts long names with an ellipsis, never inside a surrogate pair', () => {
    const long = 'x'.repeat(500);
    expect(visibleText(long)).toHaveLength(200);
    expect(visibleText(long).endsWith('…')).toBe(true);
    const emoji = `${'a'.repeat(8)}😀😀`;
    const cut = cutText(emoji, 10);
    expect(cut).toBe(`${'a'.repeat(8)}…`);
    expect(cutText('short', 10)).toBe('short');
  });

  it('builds code spans no backtick run can close, and cells no pipe can split', () => {
    for (const name of ['a`b', '``x``', '`', ' `lead', 'trail` ', 'a```b``c']) {
      const html = marked.parse(`x ${markdownCode(name)} y`, { async: false }) as string;
      expect(html.match(/<code>/g)).toHaveLength(1);
      expect(htmlTextOf(/<code>([\s\S]*)<\/code>/.exec(html)![1])).toBe(name);
    }
    for (const name of ['a|b', 'a\\|b', 'a\\\\|b', '|', 'x`|`y']) {
      const row = `| ${markdownCode(name, { tableCell: true })} | 1 |`;
      const html = marked.parse(`| n | c |\n|:--|--:|\n${row}`, { async: false }) as string;
      const cells = [...html.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => htmlTextOf(m[1]));
      expect(cells).toHaveLength(2);
      expect(cells[1]).toBe('1');
      // A backslash right before a pipe is written as its escape, so both renderer readings agree.
      expect(cells[0]).toBe(name.replace(/\\(?=\|)/g, '\\u{5c}'));
    }
  });

  it('escapes Markdown text so no link, image, HTML, emphasis or icon forms', () => {
    const text =
      '![i](http://evil.example/a.png) [l](http://evil.example) <b>x</b> **y** www.evil.example $(zap)';
    const html = marked.parse(markdownText(text), { async: false }) as string;
    expect(html).not.toMatch(/<(img|a|b|strong)\b/);
    expect(htmlTextOf(html).trim()).toBe(text);
    expect(markdownText(text)).not.toContain('$(');
  });

  it('encodes command arguments so the Markdown link holds', () => {
    const args = { file: '/w/a (1)/x).py', line: 3, note: "it's [a] *b* !" };
    const uri = commandUri('flagos.showLineInTimeline', args);
    expect(uri).toMatch(/^command:flagos\.showLineInTimeline\?[A-Za-z0-9%._~-]+$/);
    const html = marked.parse(`[go](${uri})`, { async: false }) as string;
    const href = /<a href="([^"]*)">go<\/a>/.exec(html)![1];
    expect(JSON.parse(decodeURIComponent(href.slice(href.indexOf('?') + 1)))).toEqual([args]);
  });

  it('escapes HTML, terminal text and labels', () => {
    expect(htmlText(`<img src="x" onerror='y'>&`)).toBe(
      '&#60;img src=&#34;x&#34; onerror=&#39;y&#39;&#62;&#38;',
    );
    expect(terminalText(TERMINAL_KERNEL)).not.toMatch(TERMINAL_BYTES);
    expect(terminalLines('line one\n\x1b]0;t\x07\tend')).toBe('line one\n\\u{1b}]0;t\\u{7}\tend');
    expect(labelText('$(zap) k\n')).toBe('\\$(zap) k\\n');
  });

  it('makes unguessable webview nonces in the CSP grammar', () => {
    const nonces = new Set(Array.from({ length: 200 }, () => webviewNonce()));
    expect(nonces.size).toBe(200);
    for (const n of nonces) expect(n).toMatch(/^[A-Za-z0-9+/]{22}==$/);
  });
});

describe('hover Markdown from a hostile trace', () => {
  it('imports the payload names unchanged (the test feeds what a renderer gets)', () => {
    const names = new Set(Array.from({ length: profile.slices.length }, (_, i) => profile.nameOf(i)));
    for (const name of [MARKDOWN_KERNEL, MARKDOWN_OP, TERMINAL_KERNEL, BIDI_OP])
      expect(names).toContain(name);
  });

  it('keeps every name inside its own table cell and renders no image, HTML or foreign link', () => {
    const file = lookupFile(index, userFile)!;
    expect(file).toBeDefined();
    const entry = file.lines.find((l) => l.kernelCount > 0)!;
    expect(entry.kernels.map((k) => k.name)).toContain(MARKDOWN_KERNEL);
    const args = { file: entry.file, line: entry.line };
    const md = hoverMarkdown(index, entry, {
      profileLabel: path.basename(tracePath),
      showInTimeline: commandUri('flagos.showLineInTimeline', args),
      showKernels: commandUri('flagos.showLineKernels', args),
      staleMessage: 'stale \x1b[2J <img src=z>',
    });
    expect(md).not.toMatch(RAW_CONTROL);
    // One Markdown line per op and per kernel: no name broke out into a new row.
    const rows = md.split('\n').filter((l) => l.startsWith('| `'));
    expect(rows).toHaveLength(entry.topOps.length + entry.kernels.length);
    const outside = outsideCodeSpans(md);
    expect(outside).not.toContain('![');
    expect(outside).not.toContain('<img');
    expect(outside).not.toMatch(/\]\((?!command:)/);

    const html = marked.parse(md, { async: false }) as string;
    expect(html).not.toMatch(/<img/i);
    expect(html).not.toMatch(/<a [^>]*href="(?!command:flagos\.showLine(InTimeline|Kernels)\?)/);
    expect(html.match(/<a /g)).toHaveLength(2);
    expect(html).not.toMatch(/evil\.example[^<]*<\/a>|href="[^"]*evil/);
    const tables = [...html.matchAll(/<tbody>([\s\S]*?)<\/tbody>/g)].map((m) => m[1]);
    expect(tables).toHaveLength(2);
    const cellsOf = (body: string) =>
      [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((r) =>
        [...r[1].matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((c) => htmlTextOf(c[1])),
      );
    const opRows = cellsOf(tables[0]);
    const kernelRows = cellsOf(tables[1]);
    expect(opRows.map((r) => r.length)).toEqual(entry.topOps.map(() => 4));
    expect(kernelRows.map((r) => r.length)).toEqual(entry.kernels.map(() => 3));
    // The cell shows the name itself, its newlines and controls written visibly.
    expect(kernelRows.map((r) => r[0])).toContain(visibleText(MARKDOWN_KERNEL));
    expect(opRows.map((r) => r[0])).toContain(visibleText(BIDI_OP));
    // A backslash before a pipe shows as its escape (see markdownCode).
    expect(opRows.map((r) => r[0])).toContain(
      cutText(visibleText(MARKDOWN_OP), 70).replace(/\\(?=\|)/g, '\\u{5c}'),
    );
    // The links carry the real path back to the command.
    const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]);
    for (const href of hrefs)
      expect(JSON.parse(decodeURIComponent(href.slice(href.indexOf('?') + 1)))).toEqual([args]);
  });

  it('shows a hostile function name as code at function level, and never in the CodeLens or inline text', () => {
    const entry = lookupFile(index, userFile)!.lines[0];
    expect(entry.exact).toBe(false);
    expect(entry.function).toBe(FUNCTION_NAME);
    const md = hoverMarkdown(index, entry, {
      profileLabel: '[x](http://evil.example) ![y](http://evil.example/y)',
    });
    const html = marked.parse(md, { async: false }) as string;
    expect(html).not.toMatch(/<img|<a /i);
    expect(htmlTextOf(html)).toContain(`function ${FUNCTION_NAME} (function level)`);
    const fn = lookupFile(index, userFile)!.functions[0];
    expect(fn.function).toBe(FUNCTION_NAME);
    expect(codeLensTitle(fn, index.hasDevice)).toMatch(
      /^device [\d.<]+ m?s · CPU [\d.<]+ m?s · \d+ kernels?$/,
    );
    expect(inlineText(entry, index.hasDevice)).toMatch(/^[\d.<]+ m?s device · [\d.<]+ m?s CPU$/);
  });

  it('drops a link whose URI is not a plain command URI', () => {
    const entry = lookupFile(index, userFile)!.lines[0];
    const md = hoverMarkdown(index, entry, {
      profileLabel: 'p',
      showInTimeline: 'command:x?a)![i](http://evil.example/i.png',
      showKernels: 'http://evil.example/',
    });
    expect(md).not.toContain('evil.example/i.png');
    expect(outsideCodeSpans(md)).not.toContain('](');
    expect(md).not.toContain('Show in timeline');
    expect(md).not.toContain('Show kernels');
  });
});

describe('CLI text output of a hostile trace', () => {
  let written: string[];
  beforeEach(() => {
    written = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
  });
  afterEach(() => vi.restoreAllMocks());

  it('summary prints no escape sequence, and shows the names visibly', async () => {
    expect(await summaryCommand.run([tracePath])).toBe(0);
    const out = written.join('');
    expect(out).not.toMatch(TERMINAL_BYTES);
    expect(out).not.toMatch(RAW_CONTROL);
    expect(out).toContain('gemm\\u{1b}[2J\\u{1b}]0;pwn\\u{7}');
    expect(out).toContain('trace\\u{1b}]0;pwn\\u{7}.json');
    expect(out).toContain('aten::add\\u{202e}exe.txt');
    // Every table row is one line: a newline in a name did not start a new one.
    const kernelRows = out.split('\n').filter((l) => l.startsWith('k`'));
    expect(kernelRows).toHaveLength(1);
  });

  it('summary --json keeps the raw names (JSON escaping only)', async () => {
    expect(await summaryCommand.run([tracePath, '--json'])).toBe(0);
    const json = JSON.parse(written.join('')) as ReturnType<typeof buildSummary>;
    expect(json.kernels.map((k) => k.name)).toEqual(
      expect.arrayContaining([MARKDOWN_KERNEL, TERMINAL_KERNEL]),
    );
    expect(json.ops.map((o) => o.name)).toEqual(expect.arrayContaining([MARKDOWN_OP, BIDI_OP]));
    expect(written.join('')).not.toMatch(ESC);
  });

  it('renderSummary and formatTable escape every cell', () => {
    const text = renderSummary(buildSummary(analysis), 15);
    expect(text).not.toMatch(TERMINAL_BYTES);
    expect(formatTable(['name'], [[TERMINAL_KERNEL]])).not.toMatch(TERMINAL_BYTES);
  });

  it('check prints no escape sequence', async () => {
    await checkCommand.run([tracePath]);
    const out = written.join('');
    expect(out).toContain('trace\\u{1b}]0;pwn\\u{7}.json');
    expect(out).not.toMatch(TERMINAL_BYTES);
    written.length = 0;
    await checkCommand.run([tracePath, '--markdown']);
    expect(written.join('')).not.toMatch(TERMINAL_BYTES);
    expect(written.join('')).toContain('\n');
  });

  it('diagnostics of a hostile log prints no escape sequence', async () => {
    const log = path.join(dir, 'flagos_trace.log');
    writeFileSync(
      log,
      [
        '[FLAGOS_TRACE] cupti: library /usr/lib/libcupti.so\x1b]52;c;aGk=\x07',
        '[FLAGOS_TRACE] warning: something \x1b[2J odd \u202eevil',
        'junk line \x1b]0;title\x07',
        '',
      ].join('\n'),
    );
    expect(await diagnosticsCommand.run([log, '--all'])).toBe(0);
    const out = written.join('');
    expect(out).not.toMatch(TERMINAL_BYTES);
    expect(out).not.toMatch(RAW_CONTROL);
    expect(out).toContain('\\u{1b}');
  });
});

describe('the HTML report of a hostile trace', () => {
  it('carries the names only inside the encoded payload and escapes the title', () => {
    const title = '<img src=x onerror=alert(1)>\x1b</title><script>alert(2)</script>';
    const payload = encodeTimelineBuffer(profile, analysis, { title, source: tracePath });
    const html = buildReportHtml(payload, title, { script: 'void 0;', style: '' });
    expect(html).not.toContain('<img');
    expect(html).not.toContain('evil.example');
    expect(html.match(/<script/g)).toHaveLength(2);
    expect(html.match(/<\/title>/g)).toHaveLength(1);
    expect(html).toContain('<title>&#60;img src=x onerror=alert(1)&#62;\\u{1b}&#60;/title&#62;');
    expect(html).not.toMatch(ESC);
  });
});

describe('the Markdown a capture and the bring-up report write, from a hostile trace', () => {
  /** Markdown outside code spans: where a link, an image or HTML could form. */
  function outsideCode(markdown: string): string {
    return markdown.replace(/(`+)(?:(?!\1).)*?\1/g, '');
  }

  it('summary.md: names stay in their code spans and cells, nothing renders as an image or a foreign link', () => {
    const markdown = summaryMarkdown(buildSummary(analysis), {
      script: `${dir}/x](http://evil.example/s)`,
      sessionDir: dir,
      exitCode: 0,
      notes: ['note ![n](http://evil.example/n.png) <img src=z>'],
    });
    expect(markdown).not.toMatch(RAW_CONTROL);
    const outside = outsideCode(markdown);
    expect(outside).not.toContain('![');
    expect(outside).not.toContain('<img');
    const html = marked.parse(markdown, { async: false }) as string;
    expect(html).not.toContain('<img');
    expect(html).not.toMatch(/href="http/);
    // Each table row keeps the header's cell count: no name split a row.
    const tables = markdown.split('\n\n').filter((b) => b.includes('| ---'));
    expect(tables.length).toBeGreaterThan(0);
    for (const table of tables) {
      const rows = table.split('\n').filter((l) => l.startsWith('|'));
      const cells = (line: string): number => line.replace(/\\\|/g, '').split('|').length;
      for (const row of rows) expect(cells(row)).toBe(cells(rows[0]));
    }
  });

  it('the bring-up report: evidence names in code spans, no image or HTML from the trace', async () => {
    const model = await loadBringup(tracePath);
    const markdown = buildMarkdownReport(model);
    expect(markdown).not.toMatch(RAW_CONTROL);
    const html = marked.parse(markdown, { async: false }) as string;
    expect(html).not.toContain('<img');
    expect(html).not.toContain('evil.example/a.png"');
  });
});

/** Just enough DOM for the webview's renderers: it refuses markup (innerHTML) so only text can get in. */
class FakeElement {
  readonly children: (FakeElement | string)[] = [];
  readonly attributes: Record<string, string> = {};
  readonly dataset: Record<string, string> = {};
  readonly style: Record<string, string> = {};
  readonly classList = { add() {}, remove() {} };
  className = '';
  id = '';
  href = '';
  title = '';
  tabIndex = -1;
  scrollTop = 0;
  clientHeight = 400;
  constructor(readonly tagName: string) {}
  set textContent(value: string) {
    this.children.length = 0;
    this.children.push(String(value));
  }
  get textContent(): string {
    return this.children.map((c) => (typeof c === 'string' ? c : c.textContent)).join('');
  }
  set innerHTML(_: string) {
    throw new Error('markup written into the webview DOM');
  }
  append(...nodes: (FakeElement | string)[]): void {
    this.children.push(...nodes);
  }
  replaceChildren(...nodes: (FakeElement | string)[]): void {
    this.children.length = 0;
    this.children.push(...nodes);
  }
  setAttribute(name: string, value: string): void {
    this.attributes[name] = value;
  }
  addEventListener(): void {}
  /** Every text a person can see or hover: text nodes, titles and attributes. */
  allText(): string[] {
    const own = [this.title, ...Object.values(this.attributes)];
    return [...own, ...this.children.flatMap((c) => (typeof c === 'string' ? [c] : c.allText()))];
  }
}

describe('the webview renderers on a hostile trace', () => {
  beforeAll(() => {
    vi.stubGlobal(
      'ResizeObserver',
      class {
        observe(): void {}
      },
    );
    vi.stubGlobal('document', {
      createElement: (tag: string) => new FakeElement(tag),
      createDocumentFragment: () => new FakeElement('#fragment'),
    });
  });
  afterAll(() => vi.unstubAllGlobals());

  async function timelineModel() {
    const { TimelineModel } = await import('../../webview/model');
    const payload = unpackTimeline(
      encodeTimelineBuffer(profile, analysis, { title: 't', source: tracePath }),
    );
    return new TimelineModel(payload);
  }

  it('details: the names show as text with their controls escaped', async () => {
    const { renderDetails } = await import('../../webview/details');
    const model = await timelineModel();
    let checked = 0;
    for (let slice = 0; slice < model.header.sliceCount; slice++) {
      const name = model.nameOf(slice);
      if (![MARKDOWN_KERNEL, TERMINAL_KERNEL, BIDI_OP].includes(name)) continue;
      const container = new FakeElement('div');
      renderDetails(container as unknown as HTMLElement, model, slice, { select() {}, openSource() {} });
      const texts = container.allText();
      for (const text of texts) expect(text).not.toMatch(RAW_CONTROL);
      expect(texts).toContain(visibleText(name, Infinity));
      checked++;
    }
    expect(checked).toBe(3);
  });

  it('tables: kernel names show as text with their controls escaped', async () => {
    const { VirtualTable } = await import('../../webview/tables');
    const model = await timelineModel();
    const kernels = model.header.tables.kernels;
    expect(kernels.map((k) => k.name)).toContain(MARKDOWN_KERNEL);
    const table = new VirtualTable(
      'Kernels',
      [{ title: 'Kernel', value: (r: (typeof kernels)[number]) => r.name }],
      kernels,
      () => {},
    );
    table.renderRows();
    const texts = (table.element as unknown as FakeElement).allText();
    for (const text of texts) expect(text).not.toMatch(RAW_CONTROL);
    expect(texts).toContain(visibleText(MARKDOWN_KERNEL, Infinity));
    expect(texts).toContain(visibleText(TERMINAL_KERNEL, Infinity));
  });
});

describe('which open file a trace annotates', () => {
  const index = (files: string[]): LineIndex =>
    ({ files: new Map(files.map((f) => [f, { file: f }])) }) as unknown as LineIndex;

  it('the same path, for traces recorded here and Profile Current File sessions', () => {
    const i = index(['/home/me/proj/train.py']);
    expect(lookupFile(i, '/home/me/proj/train.py')?.file).toBe('/home/me/proj/train.py');
    expect(lookupFile(i, '/home/me/proj/train.py', { workspaceFolder: '/elsewhere' })).toBeDefined();
  });

  it('never by base name alone', () => {
    const i = index(['/home/alice/exp1/train.py']);
    expect(lookupFile(i, '/home/me/other/train.py')).toBeUndefined();
    expect(lookupFile(i, '/home/me/ws/other/train.py', { workspaceFolder: '/home/me/ws' })).toBeUndefined();
    expect(lookupFile(i, '/home/me/ws/train.py', { workspaceFolder: '/home/me/ws' })).toBeUndefined();
    expect(
      lookupFile(index(['train.py']), '/home/me/ws/sub/train.py', { workspaceFolder: '/home/me/ws' }),
    ).toBe(undefined);
  });

  it('another machine: the trace path ends with the workspace path, with a folder in it', () => {
    const i = index(['/ci/build/src/train.py']);
    expect(lookupFile(i, '/home/me/repo/src/train.py', { workspaceFolder: '/home/me/repo' })).toBeDefined();
    // Deeper in the workspace than in the trace: the trace does not name the same file.
    expect(
      lookupFile(i, '/home/me/repo/x/src/train.py', { workspaceFolder: '/home/me/repo' }),
    ).toBeUndefined();
    // At the top of the workspace folder, the folder's name is the folder component.
    const top = index(['/home/alice/proj/train.py']);
    expect(lookupFile(top, '/work/proj/train.py', { workspaceFolder: '/work/proj' })).toBeDefined();
    expect(
      lookupFile(top, '/work/proj-main/train.py', { workspaceFolder: '/work/proj-main' }),
    ).toBeUndefined();
    // Outside every workspace folder: the parent folder must agree.
    expect(lookupFile(top, '/tmp/proj/train.py')).toBeDefined();
    expect(lookupFile(top, '/tmp/elsewhere/train.py')).toBeUndefined();
  });

  it('relative paths, as torch writes them for imported modules', () => {
    const i = index(['models/resnet.py', 'train.py']);
    const ws = { workspaceFolder: '/w/repo' };
    expect(lookupFile(i, '/w/repo/models/resnet.py', ws)?.file).toBe('models/resnet.py');
    expect(lookupFile(i, '/w/repo/train.py', ws)?.file).toBe('train.py');
    expect(lookupFile(i, '/w/repo/scripts/train.py', ws)).toBeUndefined();
    expect(lookupFile(i, '/w/repo/resnet.py', ws)).toBeUndefined();
  });

  it('an ambiguous match annotates nothing, the closest match wins', () => {
    const two = index(['/m1/proj/src/train.py', '/m2/proj/src/train.py']);
    expect(lookupFile(two, '/w/proj/src/train.py', { workspaceFolder: '/w/proj' })).toBeUndefined();
    const closer = index(['/m1/a/proj/src/train.py', '/m2/b/src/train.py']);
    expect(lookupFile(closer, '/w/proj/src/train.py', { workspaceFolder: '/w/proj' })?.file).toBe(
      '/m1/a/proj/src/train.py',
    );
  });

  it('the same file through a symbolic link', () => {
    const real = path.join(dir, 'real');
    mkdirSync(real);
    writeFileSync(path.join(real, 'train.py'), '');
    const link = path.join(dir, 'link');
    symlinkSync(real, link);
    const realPath = (p: string) => {
      try {
        return realpathSync(p);
      } catch {
        return undefined;
      }
    };
    const recordedReal = index([realpathSync(path.join(real, 'train.py'))]);
    expect(lookupFile(recordedReal, path.join(link, 'train.py'), { realPath })).toBeDefined();
    const recordedLink = index([path.join(link, 'train.py')]);
    expect(lookupFile(recordedLink, path.join(real, 'train.py'), { realPath })).toBeDefined();
    expect(lookupFile(recordedLink, path.join(real, 'train.py'))).toBeUndefined();
  });

  it('on the hostile trace: the profiled file matches, a train.py in another folder does not', () => {
    expect(lookupFile(realIndex(), userFile)).toBeDefined();
    const other = path.join(dir, 'other', 'train.py');
    expect(lookupFile(realIndex(), other, { workspaceFolder: dir })).toBeUndefined();
    expect(lookupFile(realIndex(), other)).toBeUndefined();
  });

  function realIndex(): LineIndex {
    return buildLineIndex(analysis);
  }
});
