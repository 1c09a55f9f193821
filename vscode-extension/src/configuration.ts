/**
 * The `codedraft.*` settings: reading them, and the nested camelCase object the server receives
 * as `initializationOptions`, in `workspace/didChangeConfiguration` and for `workspace/configuration`.
 */

export const SECTION = 'codedraft';

/** The part of `vscode.WorkspaceConfiguration` this module reads, so tests can pass a plain map. */
export interface SettingsReader {
  get<T>(key: string): T | undefined;
}

export interface ServerSettings {
  daemon: { address: string; model: string; draftModel: string; device: string; tlsCa: string };
  completion: {
    enabled: boolean;
    enabledLanguages: string[];
    maxTokens: number;
    contextBudgetTokens: number;
    debounceMs: number;
    timeoutMs: number;
    prefill: boolean;
    confidence: string;
  };
  nextEdit: { enabled: boolean };
  agent: { checkCommand: string; stepLimit: number };
}

export type TraceLevel = 'off' | 'messages' | 'verbose';

/** Settings only the extension reads: how to start the server and how much to log. */
export interface ClientSettings {
  serverCommand: string[];
  pythonPath: string;
  trace: TraceLevel;
}

/** Defaults, keyed by setting name; `package.json` declares the same ones (a test checks). */
export const DEFAULTS = {
  'daemon.address': '',
  'daemon.model': '',
  'daemon.draftModel': '',
  'daemon.device': 'auto',
  'daemon.tlsCa': '',
  'completion.enabled': true,
  'completion.enabledLanguages': ['*'],
  'completion.maxTokens': 64,
  'completion.contextBudgetTokens': 1024,
  'completion.debounceMs': 75,
  'completion.timeoutMs': 5000,
  'completion.prefill': true,
  'completion.confidence': 'auto',
  'nextEdit.enabled': true,
  'agent.checkCommand': '',
  'agent.stepLimit': 4,
  'server.command': ['codedraft', 'lsp'],
  'server.pythonPath': '',
  'trace.server': 'off',
} as const;

type Key = keyof typeof DEFAULTS;

function readString(config: SettingsReader, key: Key): string {
  const value = config.get<unknown>(key);
  return typeof value === 'string' ? value.trim() : (DEFAULTS[key] as string);
}

function readCount(config: SettingsReader, key: Key): number {
  // A hand-edited settings.json can hold anything; a bad number falls back to the default. The
  // server takes only positive counts.
  const value = config.get<unknown>(key);
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : (DEFAULTS[key] as number);
}

function readStringList(config: SettingsReader, key: Key): string[] {
  const value = config.get<unknown>(key);
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) {
    return [...value];
  }
  return [...(DEFAULTS[key] as readonly string[])];
}

export function readServerSettings(config: SettingsReader): ServerSettings {
  const enabled = config.get<unknown>('completion.enabled');
  const prefill = config.get<unknown>('completion.prefill');
  const nextEdit = config.get<unknown>('nextEdit.enabled');
  return {
    daemon: {
      address: readString(config, 'daemon.address'),
      model: readString(config, 'daemon.model'),
      draftModel: readString(config, 'daemon.draftModel'),
      device: readString(config, 'daemon.device') || DEFAULTS['daemon.device'],
      tlsCa: readString(config, 'daemon.tlsCa'),
    },
    completion: {
      enabled: typeof enabled === 'boolean' ? enabled : DEFAULTS['completion.enabled'],
      enabledLanguages: readStringList(config, 'completion.enabledLanguages'),
      maxTokens: readCount(config, 'completion.maxTokens'),
      contextBudgetTokens: readCount(config, 'completion.contextBudgetTokens'),
      debounceMs: readCount(config, 'completion.debounceMs'),
      timeoutMs: readCount(config, 'completion.timeoutMs'),
      prefill: typeof prefill === 'boolean' ? prefill : DEFAULTS['completion.prefill'],
      confidence: readConfidence(config),
    },
    nextEdit: { enabled: typeof nextEdit === 'boolean' ? nextEdit : DEFAULTS['nextEdit.enabled'] },
    agent: {
      checkCommand: readString(config, 'agent.checkCommand'),
      stepLimit: readCount(config, 'agent.stepLimit'),
    },
  };
}

/** `auto`, `off` or a target precision in (0, 1] written as a string; anything else is `auto`. */
function readConfidence(config: SettingsReader): string {
  const value = readString(config, 'completion.confidence');
  if (value === 'auto' || value === 'off') {
    return value;
  }
  const target = Number(value);
  return value !== '' && Number.isFinite(target) && target > 0 && target <= 1 ? value : 'auto';
}

export function readClientSettings(config: SettingsReader): ClientSettings {
  const trace = config.get<unknown>('trace.server');
  return {
    serverCommand: readStringList(config, 'server.command').filter((part) => part.length > 0),
    pythonPath: readString(config, 'server.pythonPath'),
    trace: trace === 'messages' || trace === 'verbose' ? trace : 'off',
  };
}

/** Whether ghost text is wanted in a document of this language; `*` enables every language. */
export function completionWanted(settings: ServerSettings['completion'], languageId: string): boolean {
  if (!settings.enabled) {
    return false;
  }
  return settings.enabledLanguages.includes('*') || settings.enabledLanguages.includes(languageId);
}

/**
 * Answers one `workspace/configuration` item: the whole section, or one nested part of it
 * (`codedraft.completion`), or undefined for another extension's section (the client asks VS Code).
 */
export function configurationItem(settings: ServerSettings, section: string | undefined): unknown {
  if (section === undefined) {
    return undefined;
  }
  const parts = section.split('.');
  if (parts[0] !== SECTION) {
    return undefined;
  }
  let node: unknown = settings;
  for (const part of parts.slice(1)) {
    if (typeof node !== 'object' || node === null || !(part in node)) {
      return null;
    }
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}
