/**
 * The custom parts of the LSP contract between this extension and `codedraft lsp`:
 * notification names, their parameters, and the commands the server executes.
 */

export const STATUS_NOTIFICATION = 'codedraft/status';
export const STREAM_TEXT_NOTIFICATION = 'codedraft/streamText';
/** Client to server: where the cursor rests, so the server can compute the prompt there early. */
export const CURSOR_NOTIFICATION = 'codedraft/cursor';
export const EXECUTE_COMMAND_REQUEST = 'workspace/executeCommand';

/** Commands the server lists in `executeCommandProvider`; the language client registers them. */
export const ServerCommand = {
  refactor: 'codedraft.refactor',
  fix: 'codedraft.fix',
  reindex: 'codedraft.reindex',
  status: 'codedraft.status',
  /** On each inline completion item; VS Code runs it when the user takes the item (`[id]`). */
  acceptCompletion: 'codedraft.didAcceptCompletionItem',
  /** Forgets what the server learned from the user's accepts. */
  resetAcceptHistory: 'codedraft.resetAcceptHistory',
} as const;

/** Commands that live only in the extension. */
export const ExtensionCommand = {
  showStatus: 'codedraft.showStatus',
  toggle: 'codedraft.toggle',
} as const;

export type BackendState = 'loading' | 'indexing' | 'ready' | 'degraded' | 'error';

/**
 * The last suggestion the daemon answered. Its figures are null (never 0) when they never came, and
 * `note` then says "no figures".
 */
export interface LastCompletion {
  latencyMs: number;
  promptTokens: number | null;
  reusedTokens: number | null;
  daemonMs?: number;
  firstTokenMs?: number | null;
  localPrompt?: boolean;
  note?: string;
}

/** What the user did with the served model's suggestions, and the gate's threshold adapted to it. */
export interface Accepts {
  shown: number;
  accepted: number;
  partial: number;
  dismissed: number;
  /** Accepted whole or in part per shown; null before any was shown. */
  rate: number | null;
  gate?: { feature: string; figure?: string; threshold: number; calibratedThreshold: number };
}

/** Parameters of `codedraft/status`, also the result of the `codedraft.status` command. */
export interface StatusParams {
  state: BackendState;
  message: string;
  model?: string;
  device?: string;
  index?: { done: number; total: number };
  lastCompletion?: LastCompletion;
  suppressed?: string;
  accepts?: Accepts;
}

/** Parameters of `codedraft/streamText`: one piece of generated text of a long command. */
export interface StreamTextParams {
  id: string;
  delta: string;
  done: boolean;
}

/** LSP positions and ranges as they go over the wire (zero-based, UTF-16 columns). */
export interface WirePosition {
  line: number;
  character: number;
}

/** Parameters of `codedraft/cursor`. */
export interface CursorParams {
  textDocument: { uri: string };
  position: WirePosition;
}

export interface WireRange {
  start: WirePosition;
  end: WirePosition;
}

export interface RefactorArguments {
  uri: string;
  range: WireRange;
  instruction: string;
}

export interface FixArguments {
  uri: string;
  range: WireRange;
  /** Messages of the editor's problems in or touching the range, for the model to fix. */
  diagnostics?: string[];
}

const STATES: readonly string[] = ['loading', 'indexing', 'ready', 'degraded', 'error'];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** Checks a status object from the server, so that a malformed one is dropped instead of shown. */
export function isStatusParams(value: unknown): value is StatusParams {
  return isRecord(value) && typeof value.state === 'string' && STATES.includes(value.state);
}

export function isStreamTextParams(value: unknown): value is StreamTextParams {
  return (
    isRecord(value) &&
    typeof value.id === 'string' &&
    typeof value.delta === 'string' &&
    typeof value.done === 'boolean'
  );
}

/** The result of a long command names the stream that carries its text. */
export function streamIdOf(result: unknown): string | undefined {
  return isRecord(result) && typeof result.id === 'string' ? result.id : undefined;
}

/**
 * Whether a long command's result reports the end of its work (`{id, applied, reason?}`): then its
 * stream, if it had one, is over. A bare `{id}` means the text may still be streaming.
 */
export function isFinalResult(result: unknown): boolean {
  return isRecord(result) && typeof result.applied === 'boolean';
}

/** Why a long command proposed no edit (`{applied: false, reason}`), if it says so. */
export function notAppliedReason(result: unknown): string | undefined {
  return isRecord(result) && result.applied === false && typeof result.reason === 'string' && result.reason.length > 0
    ? result.reason
    : undefined;
}

function isWireRange(value: unknown): value is WireRange {
  if (!isRecord(value) || !isRecord(value.start) || !isRecord(value.end)) {
    return false;
  }
  return [value.start.line, value.start.character, value.end.line, value.end.character].every(
    (n) => typeof n === 'number',
  );
}

/** A `{uri, range}` target passed in by a code action or another extension. */
export function isRangeTarget(value: unknown): value is { uri: string; range: WireRange } {
  return isRecord(value) && typeof value.uri === 'string' && isWireRange(value.range);
}
