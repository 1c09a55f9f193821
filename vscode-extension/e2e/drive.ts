/**
 * Drives code-server in Chromium through the user's path: trust the folder, open a Python file,
 * wait for the extension's status bar item, then either (scenario "working") type, accept the
 * ghost text with Tab, find it in the file, refactor a selection and apply the previewed edit, then
 * rename a parameter in another file and step through the next-edit suggestions (e2e/nextEdit.ts), or
 * (scenario "start-failure") check the "could not start" message and its "Open settings" action.
 * It judges what a person would: the ghost text has no loop and the file parses once it is accepted;
 * the refactor keeps `fibonacci` defined and the file parsing, or is refused with the server's
 * one-line reason (see `refactor` below).
 * Prints one JSON summary; exits 1 with a screenshot of the page when a step fails.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium, type Locator, type Page } from 'playwright-core';

import { definesFunction, isProposalCheckRefusal, loopIn, pythonSyntaxError } from './judge';
import { RENAME_FILE, stepThroughRename } from './nextEdit';

interface Options {
  url: string;
  file: string;
  scenario: 'working' | 'start-failure';
  screenshot: string;
  failureScreenshot: string;
  expectCompletion: string | undefined;
  expectRefactorMark: string | undefined;
  readyTimeoutMs: number;
  completionTimeoutMs: number;
  python: string;
  /** The file of the next-edit test, and where the screenshot of a shown next edit goes. */
  nextEditFile: string;
  nextEditScreenshot: string;
  /** Skip ghost text and refactor (CODEDRAFT_E2E_ONLY_NEXT_EDIT=1), to look at next edits alone. */
  onlyNextEdit: boolean;
}

function options(): Options {
  const env = process.env;
  const required = (name: string): string => {
    const value = env[name];
    if (value === undefined || value.length === 0) {
      throw new Error(`${name} is not set (e2e/run.sh sets it)`);
    }
    return value;
  };
  const scenario = required('E2E_SCENARIO');
  if (scenario !== 'working' && scenario !== 'start-failure') {
    throw new Error(`E2E_SCENARIO must be working or start-failure, not ${scenario}`);
  }
  return {
    url: required('E2E_URL'),
    file: required('E2E_FILE'),
    scenario,
    screenshot: required('E2E_SCREENSHOT'),
    failureScreenshot: required('E2E_FAILURE_SCREENSHOT'),
    expectCompletion: env.E2E_EXPECT_COMPLETION,
    expectRefactorMark: env.E2E_EXPECT_REFACTOR_MARK,
    readyTimeoutMs: Number(env.E2E_READY_TIMEOUT_MS ?? 300_000),
    completionTimeoutMs: Number(env.E2E_COMPLETION_TIMEOUT_MS ?? 180_000),
    python: env.E2E_PYTHON ?? 'python3',
    nextEditFile: required('E2E_NEXT_EDIT_FILE'),
    nextEditScreenshot: required('E2E_NEXT_EDIT_SCREENSHOT'),
    onlyNextEdit: env.E2E_ONLY_NEXT_EDIT === '1',
  };
}

const summary: Record<string, unknown> = {};
const started = Date.now();

async function step<T>(name: string, run: () => Promise<T>): Promise<T> {
  const begin = Date.now();
  process.stderr.write(`[e2e] ${name}\n`);
  const result = await run();
  summary[`${name} (s)`] = (Date.now() - begin) / 1000;
  return result;
}

const normalize = (text: string): string => text.replace(/\u00a0/g, ' ');

function statusItem(page: Page): Locator {
  // VS Code gives an extension's status bar entry the id `<extension id>.<item id>`.
  return page.locator('.statusbar-item[id$="codedraft.status"]');
}

async function trustFolder(page: Page): Promise<boolean> {
  const yes = page.getByRole('button', { name: /Yes, I trust the authors/ });
  try {
    await yes.waitFor({ timeout: 30_000 });
  } catch {
    return false;
  }
  await yes.click();
  return true;
}

async function runCommand(page: Page, title: string): Promise<void> {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget .quick-input-box input.input');
  await input.waitFor();
  await input.fill(`>${title}`);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor();
  await page.keyboard.press('Enter');
}

async function openFile(page: Page, name: string): Promise<void> {
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget .quick-input-box input.input');
  await input.waitFor();
  await input.fill(name);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.tab.active', { hasText: name }).waitFor();
  // The active group's editor: a panel (output, refactor preview) may hold other editors.
  await page.locator('.editor-group-container.active .monaco-editor .view-lines').first().click();
}

async function save(page: Page): Promise<void> {
  await page.keyboard.press('Control+S');
  await page.locator('.tab.active.dirty').waitFor({ state: 'detached' });
}

async function serverReady(page: Page, opts: Options): Promise<void> {
  const item = statusItem(page);
  await step('server ready', () =>
    page.waitForFunction(
      (selector) => {
        const text = document.querySelector(selector)?.textContent ?? '';
        // Ready, or a state that will not turn into ready on its own.
        return text.length > 0 && !/starting|loading|indexing/.test(text);
      },
      '.statusbar-item[id$="codedraft.status"]',
      { timeout: opts.readyTimeoutMs },
    ),
  );
  summary.statusReady = normalize((await item.textContent()) ?? '');
  if (/stopped|error|daemon down/.test(summary.statusReady as string)) {
    throw new Error(`the backend did not get ready: the status bar says "${summary.statusReady as string}"`);
  }
}

async function working(page: Page, opts: Options): Promise<void> {
  const item = statusItem(page);
  const ghost = page.locator('.ghost-text-decoration, .ghost-text-decoration-preview, .ghost-text').first();
  await step('ghost text', async () => {
    await page.keyboard.press('Control+End');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Enter');
    await page.keyboard.type('def fibonacci(n):', { delay: 40 });
    await page.keyboard.press('Enter');
    await ghost.waitFor({ timeout: opts.completionTimeoutMs }).catch(async () => {
      // No suggestion at all is what the person sees when the model's one was a loop or did not parse.
      const status = normalize((await item.textContent()) ?? '');
      throw new Error(`no ghost text after "def fibonacci(n):" within ${opts.completionTimeoutMs} ms (status bar: ${status})`);
    });
  });
  const shown = normalize(
    (await page.locator('.ghost-text-decoration, .ghost-text-decoration-preview').allTextContents()).join(''),
  );
  summary.ghostText = shown;
  await page.screenshot({ path: opts.screenshot });
  summary.screenshot = opts.screenshot;
  const loop = loopIn(shown);
  if (loop !== undefined) {
    throw new Error(`the ghost text loops (${loop}): nobody would accept it`);
  }

  await step('accept a word', async () => {
    // Partial accept: Ctrl+Right takes the next word of the suggestion and leaves the rest shown.
    await page.keyboard.press('Control+ArrowRight');
    await page.waitForFunction(
      (before) => {
        const parts = document.querySelectorAll('.ghost-text-decoration, .ghost-text-decoration-preview');
        const now = Array.from(parts, (part) => part.textContent ?? '').join('');
        return now.length > 0 && now.length < before.length;
      },
      shown,
      { timeout: 10_000 },
    );
  });
  summary.ghostTextAfterWord = normalize(
    (await page.locator('.ghost-text-decoration, .ghost-text-decoration-preview').allTextContents()).join(''),
  );

  await step('accept with Tab', async () => {
    await page.keyboard.press('Tab');
    await ghost.waitFor({ state: 'detached', timeout: 10_000 }).catch(() => undefined);
    await save(page);
  });
  const afterTab = fs.readFileSync(opts.file, 'utf8');
  const firstLine = shown.split('\n')[0].trim();
  if (firstLine.length === 0 || !afterTab.includes(firstLine)) {
    throw new Error(`the accepted ghost text "${firstLine}" is not in the file:\n${afterTab}`);
  }
  if (opts.expectCompletion !== undefined && !afterTab.includes(opts.expectCompletion)) {
    throw new Error(`expected "${opts.expectCompletion}" in the file:\n${afterTab}`);
  }
  const tabSyntax = pythonSyntaxError(opts.file, opts.python);
  if (tabSyntax !== undefined) {
    throw new Error(`the file does not parse once the ghost text is accepted (${tabSyntax}):\n${afterTab}`);
  }
  summary.documentAfterTab = afterTab;
  summary.statusAfterCompletion = normalize((await item.textContent()) ?? '');

  await step('refactor', async () => {
    const line = afterTab.split('\n').findIndex((text) => text.startsWith('def fibonacci')) + 1;
    await page.keyboard.press('Control+G');
    await page.locator('.quick-input-widget .quick-input-box input.input').fill(`:${line}`);
    await page.keyboard.press('Enter');
    await page.keyboard.press('Home');
    await page.keyboard.press('Shift+Control+End');
    await runCommand(page, 'Refactor with codedraft');
    const instruction = page.locator('.quick-input-widget .quick-input-box input.input');
    await instruction.waitFor();
    await instruction.fill('add a docstring');
    await page.keyboard.press('Enter');
    summary.progressSeen = await page
      .locator('.notification-toast', { hasText: 'codedraft: refactoring' })
      .waitFor({ timeout: 30_000 })
      .then(() => true, () => false);
    const apply = page.locator('.bulk-edit-panel .buttons .monaco-button', { hasText: 'Apply' });
    const noEdit = page.locator('.notification-toast', { hasText: /codedraft: refactoring(: no change made| failed)/ });
    await apply.or(noEdit).first().waitFor({ timeout: opts.completionTimeoutMs });
    if (await noEdit.isVisible()) {
      const message = normalize((await noEdit.locator('.notification-list-item-message').textContent()) ?? '');
      // A proposal that would lose the code is not offered: the person sees exactly this one-line
      // notification, names what was wrong, and can ask again. That is a right outcome for a model
      // that cannot do the refactor (the embedded one answers with unrelated code); any other
      // reason for "no change" (no answer, no code) is a failure.
      const reason = /no change made \((.*)\)\.?$/.exec(message)?.[1] ?? '';
      if (!isProposalCheckRefusal(reason)) {
        throw new Error(`no edit to apply: ${message}`);
      }
      summary.refactorOutcome = 'refused by the proposal check; the user saw this notification';
      summary.refactorRefusal = message;
      await page.screenshot({ path: path.join(path.dirname(opts.failureScreenshot), 'refactor-refused.png') });
      return;
    }
    await page.screenshot({ path: path.join(path.dirname(opts.failureScreenshot), 'refactor-preview.png') });
    // Changes whose annotation needs confirmation start unticked in the preview: the user opts in.
    const fileCheckbox = page.locator('.bulk-edit-panel .edit-checkbox').first();
    summary.previewStartedTicked = await fileCheckbox.isChecked();
    await fileCheckbox.check();
    await apply.click();
    await page.locator('.tab.active', { hasText: path.basename(opts.file) }).click();
    await page.waitForFunction(() => document.querySelector('.tab.active.dirty') !== null, undefined, {
      timeout: 10_000,
    });
    await save(page);
  });
  const afterRefactor = fs.readFileSync(opts.file, 'utf8');
  if (summary.refactorOutcome !== undefined) {
    if (afterRefactor !== afterTab) {
      throw new Error(`the refactor was refused, yet the file changed:\n${afterRefactor}`);
    }
    return;
  }
  summary.refactorOutcome = 'applied';
  if (afterRefactor === afterTab) {
    throw new Error('the refactor did not change the file');
  }
  if (!definesFunction(afterRefactor, 'fibonacci')) {
    throw new Error(`the refactor lost the definition of fibonacci:\n${afterRefactor}`);
  }
  const refactorSyntax = pythonSyntaxError(opts.file, opts.python);
  if (refactorSyntax !== undefined) {
    throw new Error(`the refactored file does not parse (${refactorSyntax}):\n${afterRefactor}`);
  }
  const refactorLoop = loopIn(afterRefactor);
  if (refactorLoop !== undefined) {
    throw new Error(`the refactored file loops (${refactorLoop}):\n${afterRefactor}`);
  }
  if (opts.expectRefactorMark !== undefined && !afterRefactor.includes(opts.expectRefactorMark)) {
    throw new Error(`expected "${opts.expectRefactorMark}" in the refactored file:\n${afterRefactor}`);
  }
  summary.documentAfterRefactor = afterRefactor;
}

async function nextEdits(page: Page, opts: Options): Promise<void> {
  await step('open the next-edit file', () => openFile(page, RENAME_FILE));
  const seen = await step('next edits', () =>
    stepThroughRename(page, {
      file: opts.nextEditFile,
      screenshot: opts.nextEditScreenshot,
      timeoutMs: opts.completionTimeoutMs,
    }),
  );
  Object.assign(summary, seen);
  const syntax = pythonSyntaxError(opts.nextEditFile, opts.python);
  if (syntax !== undefined) {
    throw new Error(`the file does not parse after the next edits (${syntax})`);
  }
}

async function startFailure(page: Page, opts: Options): Promise<void> {
  const toast = page.locator('.notification-toast', { hasText: 'the language server could not start' });
  await step('start failure message', () => toast.waitFor({ timeout: 60_000 }));
  summary.message = normalize((await toast.locator('.notification-list-item-message').textContent()) ?? '');
  await page.locator('.statusbar-item[id$="codedraft.status"]', { hasText: 'codedraft: stopped' }).waitFor();
  summary.status = normalize((await statusItem(page).textContent()) ?? '');
  await page.screenshot({ path: opts.screenshot });
  summary.screenshot = opts.screenshot;
  await step('open settings', async () => {
    await toast.getByRole('button', { name: 'Open settings' }).click();
    await page.locator('.settings-editor').waitFor();
    const pythonPath = page.locator('.setting-item-contents', { hasText: 'Python interpreter that has codedraft installed' });
    // In code-server every window is remote: machine-scoped settings sit in the "Remote" tab.
    const onUserTab = await pythonPath.waitFor({ timeout: 5_000 }).then(() => true, () => false);
    if (!onUserTab) {
      await page.locator('.settings-tabs-widget .action-label', { hasText: 'Remote' }).click();
      await pythonPath.waitFor();
    }
  });
  summary.settingsShown = true;
}

async function main(): Promise<number> {
  const opts = options();
  const browser = await chromium.launch({
    executablePath: process.env.E2E_CHROMIUM ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  try {
    await step('workbench', async () => {
      await page.goto(opts.url);
      await page.locator('.monaco-workbench').waitFor({ timeout: 180_000 });
    });
    summary.trustDialogClicked = await step('trust', () => trustFolder(page));
    await step('open file', () => openFile(page, path.basename(opts.file)));
    await step('status bar item', () => statusItem(page).waitFor({ timeout: 60_000 }));
    summary.statusFirstSeen = normalize((await statusItem(page).textContent()) ?? '');
    if (opts.scenario === 'working') {
      await serverReady(page, opts);
      if (!opts.onlyNextEdit) {
        await working(page, opts);
      }
      await nextEdits(page, opts);
    } else {
      await startFailure(page, opts);
    }
    summary.ok = true;
    return 0;
  } catch (error) {
    summary.ok = false;
    summary.error = error instanceof Error ? error.message : String(error);
    await page.screenshot({ path: opts.failureScreenshot }).catch(() => undefined);
    summary.failureScreenshot = opts.failureScreenshot;
    return 1;
  } finally {
    summary['total (s)'] = (Date.now() - started) / 1000;
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    await browser.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  },
);
