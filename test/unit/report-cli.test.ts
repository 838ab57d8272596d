/** `flagprof report`: one self-contained HTML file, and one-line errors for bad input. */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { UserError } from '../../extension/import/errors';
import { reportCommand } from '../../extension/cli/report';
import { unpackTimeline } from '../../extension/protocol';
import { memoryBudgetProblem } from '../../extension/timeline/budget';

import { ROOT } from '../helpers/paths';
const TRACE = path.resolve(ROOT, '../shared/traces/tracelens_h100_bert_small.trace.json.gz');
const dir = mkdtempSync(path.join(tmpdir(), 'flagprof-report-'));

beforeAll(() => {
  // The report inlines dist/webview.js and dist/webview.css.
  if (!existsSync(path.join(ROOT, 'dist/webview.js')))
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT });
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
});
afterAll(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

describe('flagprof report', () => {
  it('writes one HTML file holding the bundle and the compressed profile, loading nothing from outside', async () => {
    const out = path.join(dir, 'bert.html');
    expect(await reportCommand.run([TRACE, '--out', out])).toBe(0);
    const html = readFileSync(out, 'utf8');
    expect(html.slice(0, 2_000)).toMatch(
      /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-/,
    );
    // Outside the inline script and style bodies, nothing refers to another file.
    const markup = html
      .replace(/(<script[^>]*>)[\s\S]*?<\/script>/g, '$1</script>')
      .replace(/<style>[\s\S]*?<\/style>/g, '<style></style>');
    expect(markup).not.toMatch(/(src|href)=/i);
    expect(markup.match(/<script/g)).toHaveLength(2);
    const data =
      /<script id="flagprof-data" type="application\/octet-stream">([A-Za-z0-9+/=]+)<\/script>/.exec(html);
    expect(data).not.toBeNull();
    const bytes = gunzipSync(Buffer.from(data![1], 'base64'));
    const payload = unpackTimeline(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    expect(payload.header.title).toBe(path.basename(TRACE));
    expect(payload.header.sliceCount).toBeGreaterThan(2_000);
    expect(payload.header.tables.kernels.length).toBeGreaterThan(0);
    expect(payload.columns.flowTo.length).toBeGreaterThan(0);
  });

  it('rejects a broken trace with the importer one-line error, writing nothing', async () => {
    const bad = path.join(dir, 'broken.pt.trace.json');
    writeFileSync(bad, '{"traceEvents": [{"ph": "X", "name": "aten::mm", "ts": 1, "dur": ');
    const out = path.join(dir, 'broken.html');
    const failure = await reportCommand.run([bad, '--out', out]).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UserError);
    const message = (failure as UserError).message;
    expect(message).toContain(bad);
    expect(message).not.toContain('\n');
    expect(existsSync(out)).toBe(false);
  });

  it('asks for --out', async () => {
    await expect(reportCommand.run([TRACE])).rejects.toThrow(
      'usage: flagprof report TRACE|SESSION|FOLDER --out report.html',
    );
  });

  it('refuses a trace too large for the memory available before reading it', () => {
    const problem = memoryBudgetProblem(TRACE, 1_000_000);
    expect(problem).toMatch(
      new RegExp(`^${TRACE.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: too large for the memory available`),
    );
    expect(memoryBudgetProblem(TRACE, 64 * 2 ** 30)).toBeUndefined();
  });
});
