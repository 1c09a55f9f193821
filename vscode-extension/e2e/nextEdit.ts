/**
 * The next-edit part of the end-to-end test: in a file whose function uses its parameter three
 * times, rename the parameter at its definition by typing, then step through the suggested edits
 * with Tab (each near one is applied, a far one is jumped to first) until every use is renamed,
 * and check the file's text exactly. What the user sees of a suggestion is read from the editor's
 * DOM: the struck-through text, and the text the extension's decorations draw after it (CSS
 * `::after` content: the new text, or the "⇥ Tab: next edit at line N" hint).
 */
import * as fs from 'node:fs';
import type { Page } from 'playwright-core';

/** The file run.sh writes into the workspace, before and after the rename. */
export const RENAME_FILE = 'prices.py';
export const OLD_NAME = 'price';
export const NEW_NAME = 'amount';
/** One-based line of `def total(price, count):` in the file. */
const DEFINITION_LINE = 4;
const DEFINITION_PREFIX = 'def total(';

export interface NextEditOptions {
  file: string;
  screenshot: string;
  /** Milliseconds to wait for each suggestion (the server may ask the model). */
  timeoutMs: number;
}

/** What the editor draws of a next edit (or of ghost text) now. */
interface Drawn {
  struck: string[];
  after: string[];
  ghostText: boolean;
}

async function drawn(page: Page): Promise<Drawn> {
  return page.evaluate(() => {
    const result = { struck: [] as string[], after: [] as string[], ghostText: false };
    const editor = document.querySelector('.editor-group-container.active .monaco-editor .view-lines');
    if (editor === null) {
      return result;
    }
    result.ghostText = editor.querySelector('.ghost-text-decoration, .ghost-text-decoration-preview, .ghost-text') !== null;
    for (const span of Array.from(editor.querySelectorAll('span'))) {
      if (getComputedStyle(span).textDecorationLine.includes('line-through')) {
        result.struck.push(span.textContent ?? '');
      }
      const after = getComputedStyle(span, '::after').content;
      if (after.startsWith('"') && after.length > 2) {
        result.after.push(JSON.parse(after) as string);
      }
    }
    return result;
  });
}

const shows = (view: Drawn): boolean => view.struck.length > 0 || view.after.length > 0;

async function waitForDrawn(page: Page, timeoutMs: number, accept: (view: Drawn) => boolean): Promise<Drawn | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const view = await drawn(page);
    if (accept(view)) {
      return view;
    }
    await page.waitForTimeout(200);
  }
  return undefined;
}

async function saveAndRead(page: Page, file: string): Promise<string> {
  await page.keyboard.press('Control+S');
  await page.locator('.tab.active.dirty').waitFor({ state: 'detached', timeout: 10_000 });
  return fs.readFileSync(file, 'utf8');
}

/** Types the new name over the old one at the definition, as a person would. */
async function renameAtDefinition(page: Page): Promise<void> {
  // Go to Line takes `line:column`; the quick input must be gone before the keys go to the editor.
  await page.keyboard.press('Control+G');
  const input = page.locator('.quick-input-widget .quick-input-box input.input');
  await input.fill(`:${DEFINITION_LINE}:${DEFINITION_PREFIX.length + 1}`);
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
  await page.keyboard.press('Shift+Control+ArrowRight');
  await page.keyboard.type(NEW_NAME, { delay: 60 });
  const renamed = `${DEFINITION_PREFIX}${NEW_NAME}, count):`;
  await page
    .locator('.editor-group-container.active .view-line', { hasText: renamed })
    .waitFor({ timeout: 10_000 })
    .catch(() => {
      throw new Error(`typing did not give "${renamed}" at line ${DEFINITION_LINE}`);
    });
}

/**
 * Renames, then presses Tab for each suggestion until the file holds the rename everywhere.
 * Returns what it saw, for the summary; throws when a suggestion does not come or the text is wrong.
 */
export async function stepThroughRename(page: Page, opts: NextEditOptions): Promise<Record<string, unknown>> {
  const before = fs.readFileSync(opts.file, 'utf8');
  const expected = before.replace(new RegExp(`\\b${OLD_NAME}\\b`, 'g'), NEW_NAME);
  const seen: Drawn[] = [];
  await renameAtDefinition(page);
  let text = before;
  let screenshot: string | undefined;
  for (let tab = 0; tab < 12; tab += 1) {
    const view = await waitForDrawn(page, opts.timeoutMs, (v) => shows(v) || v.ghostText);
    if (view === undefined) {
      text = await saveAndRead(page, opts.file);
      if (text === expected) {
        break; // every use renamed and nothing more suggested
      }
      throw new Error(`no next edit shown within ${opts.timeoutMs} ms after ${tab} Tab(s); the file is:\n${text}`);
    }
    if (!shows(view)) {
      // Ghost text comes first; Esc hides it and lets the waiting next edit show.
      await page.keyboard.press('Escape');
      continue;
    }
    seen.push(view);
    if (screenshot === undefined && view.struck.length > 0) {
      await page.screenshot({ path: opts.screenshot });
      screenshot = opts.screenshot;
    }
    await page.keyboard.press('Tab');
    const signature = JSON.stringify(view);
    await waitForDrawn(page, 10_000, (v) => JSON.stringify(v) !== signature);
    text = await saveAndRead(page, opts.file);
    if (text === expected) {
      break;
    }
  }
  if (text !== expected) {
    throw new Error(`after stepping through the next edits the file is:\n${text}\nnot:\n${expected}`);
  }
  if (screenshot === undefined) {
    throw new Error(`no next edit with struck-through text was ever shown; seen: ${JSON.stringify(seen)}`);
  }
  return { nextEditsSeen: seen, nextEditScreenshot: screenshot, documentAfterNextEdits: text };
}
