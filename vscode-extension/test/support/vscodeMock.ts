/**
 * A stand-in for the `vscode` module, holding just what the extension's own logic calls. Every
 * call is recorded in `mock`, and answers to dialogs are queued there by the tests.
 */

export interface Disposable {
  dispose(): void;
}

const disposable = (): Disposable => ({ dispose: () => undefined });

export class ThemeColor {
  constructor(readonly id: string) {}
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  constructor(
    readonly start: Position,
    readonly end: Position,
  ) {}
}

export class MarkdownString {
  value = '';
  appendCodeblock(code: string, language = ''): this {
    this.value += `\n\`\`\`${language}\n${code}\n\`\`\`\n`;
    return this;
  }
}

export class FakeDecorationType {
  constructor(readonly options: Record<string, unknown>) {}
  dispose(): void {}
}

export const StatusBarAlignment = { Left: 1, Right: 2 } as const;
export const ProgressLocation = { SourceControl: 1, Window: 10, Notification: 15 } as const;
export const ConfigurationTarget = { Global: 1, Workspace: 2, WorkspaceFolder: 3 } as const;
export const QuickPickItemKind = { Separator: -1, Default: 0 } as const;

export class FakeStatusBarItem {
  text = '';
  tooltip: unknown = undefined;
  name: string | undefined;
  command: string | undefined;
  backgroundColor: ThemeColor | undefined;
  visible = false;
  constructor(
    readonly id: string,
    readonly alignment: number,
    readonly priority: number,
  ) {}
  show(): void {
    this.visible = true;
  }
  hide(): void {
    this.visible = false;
  }
  dispose(): void {
    this.visible = false;
  }
}

export class FakeOutputChannel {
  text = '';
  shown = 0;
  constructor(readonly name: string) {}
  append(value: string): void {
    this.text += value;
  }
  appendLine(value: string): void {
    this.text += `${value}\n`;
  }
  show(): void {
    this.shown += 1;
  }
  dispose(): void {}
}

export class FakeCancellationToken {
  isCancellationRequested = false;
  private readonly listeners: (() => void)[] = [];
  onCancellationRequested = (listener: () => void): Disposable => {
    this.listeners.push(listener);
    return disposable();
  };
  cancel(): void {
    this.isCancellationRequested = true;
    for (const listener of this.listeners) {
      listener();
    }
  }
}

interface ProgressRun {
  options: { location: number; title?: string; cancellable?: boolean };
  reports: { message?: string }[];
  token: FakeCancellationToken;
}

type Settings = Record<string, unknown>;

interface SettingsUpdate {
  key: string;
  value: unknown;
  target: number;
}

/** Recorded calls and queued answers; `reset()` before each test. */
export const mock = {
  settings: {} as Settings,
  workspaceSettings: {} as Settings,
  updates: [] as SettingsUpdate[],
  statusBarItems: [] as FakeStatusBarItem[],
  outputChannels: [] as FakeOutputChannel[],
  messages: [] as { severity: 'error' | 'warning' | 'info'; text: string; actions: string[] }[],
  messageAnswers: [] as (string | undefined)[],
  inputBoxAnswers: [] as (string | undefined)[],
  inputBoxes: [] as unknown[],
  quickPicks: [] as { items: { label: string }[] }[],
  quickPickChooser: (items: { label: string }[]): { label: string } | undefined => {
    void items;
    return undefined;
  },
  progressRuns: [] as ProgressRun[],
  /** Called with each progress run as it starts, to cancel it or feed it. */
  onProgress: (run: ProgressRun): void => {
    void run;
  },
  registeredCommands: new Map<string, (...args: unknown[]) => unknown>(),
  executedCommands: [] as { command: string; args: unknown[] }[],
  diagnostics: new Map<string, { range: unknown; message: string }[]>(),
  activeTextEditor: undefined as unknown,
  visibleTextEditors: [] as unknown[],
  decorationTypes: [] as FakeDecorationType[],
  reset(): void {
    this.settings = {};
    this.workspaceSettings = {};
    this.updates = [];
    this.statusBarItems = [];
    this.outputChannels = [];
    this.messages = [];
    this.messageAnswers = [];
    this.inputBoxAnswers = [];
    this.inputBoxes = [];
    this.quickPicks = [];
    this.quickPickChooser = () => undefined;
    this.progressRuns = [];
    this.onProgress = () => undefined;
    this.registeredCommands = new Map();
    this.executedCommands = [];
    this.diagnostics = new Map();
    this.activeTextEditor = undefined;
    this.visibleTextEditors = [];
    this.decorationTypes = [];
  },
};

function message(severity: 'error' | 'warning' | 'info') {
  return (text: string, ...actions: unknown[]): Promise<string | undefined> => {
    const labels = actions.filter((action): action is string => typeof action === 'string');
    mock.messages.push({ severity, text, actions: labels });
    return Promise.resolve(mock.messageAnswers.shift());
  };
}

export const window = {
  get activeTextEditor(): unknown {
    return mock.activeTextEditor;
  },
  get visibleTextEditors(): unknown[] {
    return mock.visibleTextEditors;
  },
  createTextEditorDecorationType(options: Record<string, unknown>): FakeDecorationType {
    const type = new FakeDecorationType(options);
    mock.decorationTypes.push(type);
    return type;
  },
  createStatusBarItem(id: string, alignment: number, priority: number): FakeStatusBarItem {
    const item = new FakeStatusBarItem(id, alignment, priority);
    mock.statusBarItems.push(item);
    return item;
  },
  createOutputChannel(name: string): FakeOutputChannel {
    const channel = new FakeOutputChannel(name);
    mock.outputChannels.push(channel);
    return channel;
  },
  showErrorMessage: message('error'),
  showWarningMessage: message('warning'),
  showInformationMessage: message('info'),
  showInputBox(options: unknown): Promise<string | undefined> {
    mock.inputBoxes.push(options);
    return Promise.resolve(mock.inputBoxAnswers.shift());
  },
  showQuickPick(items: { label: string }[]): Promise<{ label: string } | undefined> {
    mock.quickPicks.push({ items });
    return Promise.resolve(mock.quickPickChooser(items));
  },
  async withProgress<T>(
    options: ProgressRun['options'],
    task: (progress: { report(value: { message?: string }): void }, token: FakeCancellationToken) => Promise<T>,
  ): Promise<T> {
    const run: ProgressRun = { options, reports: [], token: new FakeCancellationToken() };
    mock.progressRuns.push(run);
    const result = task({ report: (value) => run.reports.push(value) }, run.token);
    mock.onProgress(run);
    return result;
  },
};

class FakeConfiguration {
  constructor(private readonly prefix: string) {}
  private key(key: string): string {
    return this.prefix.length > 0 ? `${this.prefix}.${key}` : key;
  }
  get<T>(key: string): T | undefined {
    const full = this.key(key);
    const value = full in mock.workspaceSettings ? mock.workspaceSettings[full] : mock.settings[full];
    return value as T | undefined;
  }
  inspect<T>(key: string): { globalValue?: T; workspaceValue?: T; workspaceFolderValue?: T } {
    const full = this.key(key);
    return { globalValue: mock.settings[full] as T, workspaceValue: mock.workspaceSettings[full] as T };
  }
  update(key: string, value: unknown, target: number): Promise<void> {
    mock.updates.push({ key: this.key(key), value, target });
    const store = target === ConfigurationTarget.Global ? mock.settings : mock.workspaceSettings;
    store[this.key(key)] = value;
    return Promise.resolve();
  }
}

export const workspace = {
  workspaceFolders: undefined,
  getConfiguration(section?: string): FakeConfiguration {
    return new FakeConfiguration(section ?? '');
  },
  onDidChangeConfiguration(): Disposable {
    return disposable();
  },
};

export const commands = {
  registerCommand(command: string, callback: (...args: unknown[]) => unknown): Disposable {
    mock.registeredCommands.set(command, callback);
    return disposable();
  },
  executeCommand(command: string, ...args: unknown[]): Promise<unknown> {
    mock.executedCommands.push({ command, args });
    const registered = mock.registeredCommands.get(command);
    return Promise.resolve(registered?.(...args));
  },
};

export const languages = {
  getDiagnostics(uri: { toString(): string }): { range: unknown; message: string }[] {
    return mock.diagnostics.get(uri.toString()) ?? [];
  },
};
