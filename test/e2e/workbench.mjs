// Driving the VS Code workbench in Chromium: command palette, quick open, hovers, the status bar, webviews.
import { createRequire } from 'node:module';
import { chromium } from 'playwright-core';

const browser = createRequire(import.meta.url)('../helpers/chromium.json');

export async function launch(profileDir) {
  return await chromium.launchPersistentContext(profileDir, {
    executablePath: browser.executable,
    headless: true,
    viewport: { width: 1440, height: 900 },
    args: browser.flags,
  });
}

/**
 * Runs a command by its palette title. The palette lists what the extension host registered when it opened and
 * does not refresh, so it is reopened until the command shows up as the focused row.
 */
export async function runCommand(page, title, { attempts = 30 } = {}) {
  const input = page.locator('.quick-input-widget input.input');
  for (let i = 1; i <= attempts; i++) {
    await page.keyboard.press('F1');
    const row = page.locator('.quick-input-widget .monaco-list-row.focused', { hasText: title });
    try {
      await input.waitFor({ state: 'visible', timeout: 10_000 });
      // The palette can be re-rendered under the cursor (focus moving out of a webview): a fill that cannot
      // land is tried again from a fresh palette rather than waited on.
      await input.fill('>' + title, { timeout: 5_000 });
      await row.waitFor({ timeout: 2_000 });
      await page.keyboard.press('Enter');
      return i;
    } catch {
      await page.keyboard.press('Escape');
      await input.waitFor({ state: 'hidden', timeout: 10_000 }).catch(() => {});
    }
  }
  throw new Error(`command "${title}" never appeared in the command palette`);
}

/**
 * Opens a workspace file (or brings its tab back) by clicking it in the Explorer: a click works wherever the
 * keyboard focus is, even inside a webview that keeps key presses to itself.
 */
export async function openFile(page, name) {
  // The file's own tab by its exact name: a timeline's tab is named after its script too ("train.py · 18:02").
  const tab = page.getByRole('tab', { name, exact: true }).first();
  if (await tab.isVisible().catch(() => false)) await tab.click();
  else await page.locator('.explorer-folders-view .monaco-list-row', { hasText: name }).first().dblclick();
  await page.locator('.tab.active', { hasText: name }).first().waitFor({ timeout: 15_000 });
  // The keyboard focus must be in the text (a tab click or a double click in the Explorer gives it there).
  const focused = page.locator('.part.editor .monaco-editor.focused').first();
  if (
    !(await focused.waitFor({ timeout: 3_000 }).then(
      () => true,
      () => false,
    ))
  ) {
    const box = await page.locator('.part.editor .monaco-editor').first().boundingBox();
    if (box) await page.mouse.click(box.x + box.width / 2, box.y + 10);
    await focused.waitFor({ timeout: 10_000 });
  }
}

/** Moves the cursor to a 1-based line (Go to Line), which also scrolls it into view. */
export async function goToLine(page, line) {
  await page.keyboard.press('Control+G');
  const input = page.locator('.quick-input-widget input.input');
  await input.waitFor({ state: 'visible', timeout: 10_000 });
  await input.fill(`:${line}`);
  await page.keyboard.press('Enter');
  await input.waitFor({ state: 'hidden', timeout: 10_000 });
  // The status bar names the cursor's line once the editor has moved there (and revealed it).
  await page
    .locator('.statusbar-item', { hasText: new RegExp(`\\bLn ${line}, Col \\d+`) })
    .first()
    .waitFor({ timeout: 10_000 });
}

/** The rendered line of the active editor whose text contains `text` (it must be in view). */
export function viewLine(page, text) {
  return page.locator('.part.editor .monaco-editor .view-lines .view-line', { hasText: text }).first();
}

/** Hovers a word of a line and returns the hover widget's text once it shows `expect`. */
export async function hoverWord(page, lineText, word, expect, timeoutMs = 15_000) {
  const line = viewLine(page, lineText);
  await line.waitFor({ timeout: 10_000 });
  const span = line.locator('span span', { hasText: word }).first();
  const hover = page.locator('.monaco-hover:not(.hidden)', { hasText: expect }).first();
  const anyHover = page.locator('.monaco-hover:not(.hidden)').first();
  const deadline = Date.now() + timeoutMs;
  // What the hover said instead, for the failure message.
  let seen = '';
  // The hover needs the mouse to arrive on the word; moving away and back again re-triggers it.
  while (Date.now() < deadline) {
    await page.mouse.move(5, 5);
    await span.hover();
    try {
      await hover.waitFor({ state: 'visible', timeout: 3_000 });
      return { text: await hover.innerText(), hover };
    } catch {
      seen = await anyHover.innerText({ timeout: 500 }).catch(() => seen);
    }
  }
  const said = seen ? `; the hover said: ${seen.replace(/\s+/g, ' ').slice(0, 300)}` : '; no hover showed';
  throw new Error(`no hover with "${expect}" over "${word}" in line "${lineText}"${said}`);
}

/** The webview's document, two iframes deep. */
export function webviewFrame(page) {
  // VS Code keeps the webviews of background tabs in the page, hidden: the one shown is the one meant.
  return page.frameLocator('iframe.webview.ready:visible').frameLocator('#active-frame');
}

/**
 * Opens a workspace file with Quick Open and waits for its tab (a custom editor: no text lines to wait for).
 * Resolves to the time (Date.now()) the file was picked: what a measurement of the open starts from, the Quick Open
 * box's own search before it being the workbench's.
 */
export async function quickOpen(page, name) {
  const input = page.locator('.quick-input-widget input.input');
  for (let i = 0; i < 10; i++) {
    await page.keyboard.press('Control+P');
    await input.waitFor({ state: 'visible', timeout: 10_000 });
    await input.fill(name);
    try {
      await page
        .locator('.quick-input-widget .monaco-list-row.focused', { hasText: name })
        .waitFor({ timeout: 3_000 });
      const picked = Date.now();
      await page.keyboard.press('Enter');
      await page.locator('.tab.active', { hasText: name }).waitFor({ timeout: 15_000 });
      return picked;
    } catch {
      await page.keyboard.press('Escape');
      await input.waitFor({ state: 'hidden', timeout: 10_000 });
    }
  }
  throw new Error(`could not open ${name} with Quick Open`);
}
