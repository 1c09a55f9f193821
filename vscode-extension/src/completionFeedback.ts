/**
 * Tells the server what became of its ghost text: shown, accepted whole or in part, dismissed, in the
 * notifications Copilot's language server takes (`textDocument/didShowCompletion`,
 * `textDocument/didPartiallyAcceptCompletion`) and codedraft's `codedraft/didDismissCompletion`.
 * The server learns from them when to stay quiet (see docs/settings.md, `completion.confidence`).
 *
 * VS Code's stable API says neither when ghost text is shown nor when it is dismissed, so:
 * - shown: the provider returned an item (VS Code shows the first one at the cursor); where the
 *   proposed `handleDidShowCompletionItem` is called, that too (reports are idempotent per item);
 * - accepted whole: VS Code runs the item's command (`codedraft.didAcceptCompletionItem`), which
 *   the language client sends to the server; it passes through here to close the item;
 * - accepted in part (next word, next line): `handleDidPartiallyAcceptCompletionItem`, a proposed
 *   API, so only where VS Code enables it;
 * - dismissed: Esc (the extension's binding), another item or none offered for the place (the user
 *   typed past it), or another editor made active. Typing through a suggestion keeps its id, as the
 *   server hands out the rest of the same suggestion.
 */
import { ServerCommand } from './protocol';

export const DID_SHOW_COMPLETION = 'textDocument/didShowCompletion';
export const DID_PARTIALLY_ACCEPT_COMPLETION = 'textDocument/didPartiallyAcceptCompletion';
export const DID_DISMISS_COMPLETION = 'codedraft/didDismissCompletion';

/** An item as it goes back to the server: the server reads only `command.arguments[0]`, its id. */
export interface WireItem {
  insertText: string;
  command: { title: string; command: string; arguments: [string] };
}

export type SendNotification = (method: string, params: unknown) => void;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** The server's id of an inline completion item (VS Code's or the wire's shape), if it has one. */
export function itemId(item: unknown): string | undefined {
  if (!isRecord(item) || !isRecord(item.command) || item.command.command !== ServerCommand.acceptCompletion) {
    return undefined;
  }
  const args = item.command.arguments;
  return Array.isArray(args) && typeof args[0] === 'string' && args[0].length > 0 ? args[0] : undefined;
}

function wireItem(item: Record<string, unknown>, id: string): WireItem {
  const text = item.insertText;
  const insertText = typeof text === 'string' ? text : isRecord(text) && typeof text.value === 'string' ? text.value : '';
  return { insertText, command: { title: 'Accept the suggestion', command: ServerCommand.acceptCompletion, arguments: [id] } };
}

/** How many settled ids are remembered, so that a late report of one is not sent twice. */
const SETTLED_KEPT = 64;

export class CompletionFeedback {
  private visible: { uri: string; item: WireItem } | undefined;
  private readonly settled: string[] = [];

  constructor(private readonly send: SendNotification) {}

  /** The id of the item the user sees now, if any. */
  get visibleId(): string | undefined {
    return this.visible?.item.command.arguments[0];
  }

  /** The provider returned `items` for a place in `uri`: the first of ours is what VS Code shows. */
  offered(uri: string, items: readonly unknown[]): void {
    const first = items.find((item) => itemId(item) !== undefined);
    if (first === undefined) {
      this.dismissed(); // nothing to show where the user went on typing: the shown one was passed over
      return;
    }
    this.shown(uri, first);
  }

  /** VS Code showed `item` (the proposed `handleDidShowCompletionItem`, or an offer). */
  shown(uri: string, item: unknown): void {
    const id = itemId(item);
    if (id === undefined || id === this.visibleId || this.settled.includes(id) || !isRecord(item)) {
      return;
    }
    this.dismissed(); // another suggestion replaced the shown one
    this.visible = { uri, item: wireItem(item, id) };
    this.send(DID_SHOW_COMPLETION, { item: this.visible.item });
  }

  /** VS Code ran the item's accept command with `args` (the server hears of it through the command). */
  accepted(args: readonly unknown[]): void {
    const id = typeof args[0] === 'string' ? args[0] : undefined;
    if (id !== undefined) {
      this.settle(id);
    }
  }

  /** The user took the first `acceptedLength` characters of `item` (a word, a line). */
  partiallyAccepted(item: unknown, acceptedLength: number): void {
    const id = itemId(item);
    if (id === undefined || this.settled.includes(id) || !isRecord(item) || !(acceptedLength > 0)) {
      return;
    }
    this.send(DID_PARTIALLY_ACCEPT_COMPLETION, { item: wireItem(item, id), acceptedLength: Math.floor(acceptedLength) });
    this.settle(id);
  }

  /** The user dismissed the shown suggestion (Esc, typed past it, another replaced it). */
  dismissed(): void {
    const visible = this.visible;
    if (visible === undefined) {
      return;
    }
    this.send(DID_DISMISS_COMPLETION, { item: visible.item });
    this.settle(visible.item.command.arguments[0]);
  }

  /** Another editor became active: ghost text of the old one is gone. */
  editorChanged(uri: string | undefined): void {
    if (this.visible !== undefined && this.visible.uri !== uri) {
      this.dismissed();
    }
  }

  /** A new server starts from scratch: nothing shown is known to it. */
  forget(): void {
    this.visible = undefined;
    this.settled.length = 0;
  }

  private settle(id: string): void {
    if (this.visibleId === id) {
      this.visible = undefined;
    }
    if (!this.settled.includes(id)) {
      this.settled.push(id);
      if (this.settled.length > SETTLED_KEPT) {
        this.settled.shift();
      }
    }
  }
}

/** The proposed provider hooks VS Code calls where `inlineCompletionsAdditions` is enabled. */
interface FeedbackHooks {
  handleDidShowCompletionItem?(item: unknown, updatedInsertText: string): void;
  handleDidPartiallyAcceptCompletionItem?(item: unknown, acceptedLength: number): void;
}

const hooked = new WeakSet<object>();

/**
 * Adds the proposed hooks to the language client's inline completion provider (VS Code looks them
 * up on each event, and ignores them where the proposal is not enabled).
 */
export function hookProvider(provider: object | undefined, feedback: CompletionFeedback, uri: () => string): void {
  if (provider === undefined || hooked.has(provider)) {
    return;
  }
  hooked.add(provider);
  const hooks = provider as FeedbackHooks;
  hooks.handleDidShowCompletionItem = (item) => feedback.shown(uri(), item);
  hooks.handleDidPartiallyAcceptCompletionItem = (item, acceptedLength) => feedback.partiallyAccepted(item, acceptedLength);
}
