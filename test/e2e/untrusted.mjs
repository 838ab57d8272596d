// node test/e2e/untrusted.mjs — a hostile trace in a real VS Code (code-server) driven by Debian Chromium. The
// trace names ops and kernels with Markdown, HTML and terminal payloads (a table row with a remote image, backtick
// runs, ESC sequences, bidirectional overrides) and names its user file /home/alice/checkout/proj/train.py, as a
// trace recorded on another machine does. The workspace holds proj/train.py and other/train.py. Checks: Open
// Trace… annotates proj/train.py, whose hover shows every name as text (no <img>, no link but the extension's own
// commands, no request to the payload's host) and keeps one table row per name; other/train.py, same base name,
// gets no hover and no CodeLens; the timeline's details show the control characters escaped.
// Screenshots go to test-artifacts/e2e-untrusted/. Needs scripts/install-e2e.sh.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { goToLine, hoverWord, runCommand, webviewFrame } from './workbench.mjs';
import { createSteps, startSuite } from './steps.mjs';
import { hostileTrace } from '../fixtures/hostile-trace.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const artifacts = path.join(root, 'test-artifacts', 'e2e-untrusted');
const timeoutS = Number(process.env.E2E_TIMEOUT_S ?? 600);
const steps = createSteps(root, artifacts);
const { screenshot, step, commandTitle } = steps;
let page;

const TRACE = 'hostile.pt.trace.json';
const EVIL_HOST = 'evil.example';
const MARKDOWN_KERNEL = `k\`\n| x | ![i](http://${EVIL_HOST}/a.png) |\n\``;
const MARKDOWN_OP = `aten::evil\`\`\` \`\` \` \\| <img src=http://${EVIL_HOST}/b.png> [link](http://${EVIL_HOST}/l) |`;
const TERMINAL_KERNEL = 'gemm\x1b[2J\x1b]0;pwn\x07\x1b]52;c;aGk=\x07';
const BIDI_OP = 'aten::add\u202eexe.txt\u2066x\u2069';
const SOURCE = 'import torch\n\ndef forward(x):\n    return torch.mm(x, x)\n\n\nforward(torch.ones(2, 2))\n';

/** Opens a workspace file by its path with Quick Open (two files share the name). */
async function quickOpenPath(relative) {
  const [folder, name] = relative.split('/');
  // The keyboard may be inside a webview: a click on a folder row in the Explorer gives it back.
  await page.locator('.explorer-folders-view .monaco-list-row', { hasText: folder }).first().click();
  const input = page.locator('.quick-input-widget input.input');
  for (let i = 0; i < 10; i++) {
    await page.keyboard.press('Control+P');
    await input.waitFor({ state: 'visible', timeout: 10_000 });
    await input.fill(relative);
    try {
      await page
        .locator('.quick-input-widget .monaco-list-row.focused', {
          hasText: new RegExp(`${name}.*${folder}`),
        })
        .waitFor({ timeout: 3_000 });
      await page.keyboard.press('Enter');
      await page.locator('.tab.active', { hasText: name }).waitFor({ timeout: 15_000 });
      await page.locator('.part.editor .monaco-editor.focused').first().waitFor({ timeout: 10_000 });
      return;
    } catch {
      await page.keyboard.press('Escape');
      await page.waitForTimeout(500);
    }
  }
  throw new Error(`could not open ${relative} with Quick Open`);
}

/** The hover widget as data: its images, link targets, attributes naming the payload host, table rows. */
function inspectHover(hover) {
  return hover.evaluate((element, host) => {
    const all = [...element.querySelectorAll('*')];
    return {
      images: element.querySelectorAll('img').length,
      links: [...element.querySelectorAll('a')].map(
        (a) => a.getAttribute('data-href') || a.getAttribute('href') || '',
      ),
      hostAttributes: all
        .flatMap((e) => [...e.attributes].map((a) => a.value))
        .filter((v) => v.includes(host)),
      rows: element.querySelectorAll('table tbody tr').length,
      cells: [...element.querySelectorAll('table tbody tr')].map((tr) => tr.querySelectorAll('td').length),
    };
  }, EVIL_HOST);
}

let context;
const suite = startSuite(steps, {
  root,
  artifacts,
  name: 'untrusted',
  timeoutS,
});
const { scratch } = suite;

try {
  await steps.installTools();
  const vsix = await steps.packageVsix();

  const workspace = path.join(scratch, 'workspace');
  for (const folder of ['proj', 'other']) {
    mkdirSync(path.join(workspace, folder), { recursive: true });
    writeFileSync(path.join(workspace, folder, 'train.py'), SOURCE);
  }
  writeFileSync(
    path.join(workspace, TRACE),
    JSON.stringify(
      hostileTrace({
        file: '/home/alice/checkout/proj/train.py',
        functionName: 'forward',
        ops: [MARKDOWN_OP, BIDI_OP, 'aten::mm'],
        kernels: [MARKDOWN_KERNEL, TERMINAL_KERNEL, 'ampere_sgemm'],
      }),
    ),
  );

  let port;
  ({ page, context, port } = await suite.openWorkbench({ vsix, workspace }));
  // Any request to the payload's host (an image in a hover, a link followed) is a failure.
  const hostRequests = [];
  context.on('request', (request) => {
    if (request.url().includes(EVIL_HOST)) hostRequests.push(request.url());
  });

  await step('open the workspace in the workbench', async () => {
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
    await page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
    await page
      .locator('.explorer-folders-view .monaco-list-row', { hasText: TRACE })
      .first()
      .waitFor({ timeout: 90_000 });
  });

  await step('Open Trace… loads the hostile trace and names it in the status bar', async () => {
    await runCommand(page, commandTitle('flagos.openTrace'));
    const input = page.locator('.quick-input-widget input.input');
    await input.waitFor({ state: 'visible', timeout: 10_000 });
    await page
      .locator('.quick-input-widget .monaco-list-row', { hasText: TRACE })
      .first()
      .click({ timeout: 20_000 });
    for (let i = 0; i < 3 && (await input.isVisible()); i++) {
      await page.waitForTimeout(1_000);
      if (await input.isVisible()) await page.keyboard.press('Enter');
    }
    const status = page.locator('.statusbar-item', { hasText: `FlagOS: ${TRACE}` }).first();
    await status.waitFor({ timeout: 60_000 });
    return (await status.innerText()).trim();
  });

  await step('the timeline details show a kernel name with its escape sequences written out', async () => {
    const frame = webviewFrame(page);
    await frame.locator('.toolbar .summary').waitFor({ timeout: 60_000 });
    await frame.locator('#search').click();
    await page.keyboard.type('pwn');
    await page.keyboard.press('Enter');
    const name = frame.locator('#details-name');
    await name.waitFor({ timeout: 10_000 });
    const text = await name.innerText();
    await screenshot('timeline-details');
    if (!text.includes('\\u{1b}[2J') || text.includes('\x1b'))
      throw new Error(`details name: ${JSON.stringify(text)}`);
    return text;
  });

  await step('proj/train.py: the hover shows every name as text, one table row each', async () => {
    await quickOpenPath('proj/train.py');
    await goToLine(page, 3);
    const { text, hover } = await hoverWord(page, 'def forward(x):', 'forward', 'FlagOS Profiler');
    // Let anything the hover would load arrive before looking.
    await page.waitForTimeout(1_500);
    await screenshot('hostile-hover');
    const found = await inspectHover(hover);
    const detail = JSON.stringify(found);
    if (found.images !== 0) throw new Error(`the hover holds ${found.images} images: ${detail}`);
    if (found.hostAttributes.length > 0) throw new Error(`an attribute names ${EVIL_HOST}: ${detail}`);
    const foreign = found.links.filter(
      (href) => !/^command:flagos\.showLine(InTimeline|Kernels)\?/.test(href),
    );
    if (foreign.length > 0 || found.links.length !== 2) throw new Error(`unexpected links: ${detail}`);
    if (found.cells.join(',') !== '4,4,4,3,3,3')
      throw new Error(`the tables do not hold one row per op and kernel: ${detail}`);
    for (const shown of ['k`\\n| x |', '\\u{1b}[2J', 'aten::add\\u{202e}exe.txt'])
      if (!text.includes(shown)) throw new Error(`the hover lacks "${shown}": ${text.slice(0, 400)}`);
    if (hostRequests.length > 0) throw new Error(`requests to ${EVIL_HOST}: ${hostRequests.join(', ')}`);
    // The kernel table sits below the fold of the hover: scrolled into view for the screenshot.
    await hover.locator('table').last().scrollIntoViewIfNeeded();
    await screenshot('hostile-hover-kernels');
    return `${found.rows} rows, links ${found.links.map((l) => l.split('?')[0]).join(', ')}, no image`;
  });

  await step('proj/train.py has its CodeLens', async () => {
    const lens = page
      .locator('.part.editor .monaco-editor .codelens-decoration a:visible', {
        hasText: /CPU \S+ ms · 3 kernels/,
      })
      .first();
    await lens.waitFor({ timeout: 30_000 });
    return (await lens.innerText()).trim();
  });

  await step('other/train.py, the same base name in another folder, gets no annotations', async () => {
    await quickOpenPath('other/train.py');
    await goToLine(page, 3);
    const shown = await hoverWord(page, 'def forward(x):', 'forward', 'FlagOS Profiler', 6_000).then(
      () => true,
      () => false,
    );
    await screenshot('other-file');
    if (shown) throw new Error('other/train.py shows the trace in its hover');
    const lenses = await page
      .locator('.part.editor .monaco-editor .codelens-decoration a:visible', { hasText: /CPU \S+ ms/ })
      .count();
    if (lenses > 0) throw new Error(`other/train.py shows ${lenses} CodeLens`);
    if (hostRequests.length > 0) throw new Error(`requests to ${EVIL_HOST}: ${hostRequests.join(', ')}`);
    return 'no hover, no CodeLens';
  });
} catch {
  process.exitCode = 1;
} finally {
  await suite.finish();
}
