/**
 * Accumulates the `codedraft/streamText` notifications of long commands (refactor, fix) so the
 * text generated so far can be shown while the command runs.
 */
import type { StreamTextParams } from './protocol';

export interface StreamUpdate {
  id: string;
  delta: string;
  text: string;
  done: boolean;
}

type Listener = (update: StreamUpdate) => void;

/** Finished streams kept for a late reader (a command result can arrive after `done`). */
const FINISHED_KEPT = 16;

/**
 * The text of each stream by id. Invariants: a stream's text only grows, by its deltas in arrival
 * order; once done, later notifications for the id are ignored; at most FINISHED_KEPT finished
 * streams are remembered, the oldest dropped first.
 */
export class StreamTexts {
  private readonly streams = new Map<string, { text: string; done: boolean }>();
  private readonly finished: string[] = [];
  private readonly listeners = new Set<Listener>();

  accept(params: StreamTextParams): void {
    let stream = this.streams.get(params.id);
    if (stream === undefined) {
      stream = { text: '', done: false };
      this.streams.set(params.id, stream);
    }
    if (stream.done) {
      return;
    }
    stream.text += params.delta;
    stream.done = params.done;
    if (stream.done) {
      this.finished.push(params.id);
      while (this.finished.length > FINISHED_KEPT) {
        this.streams.delete(this.finished.shift() as string);
      }
    }
    const update = { id: params.id, delta: params.delta, text: stream.text, done: stream.done };
    for (const listener of [...this.listeners]) {
      listener(update);
    }
  }

  text(id: string): string | undefined {
    return this.streams.get(id)?.text;
  }

  isDone(id: string): boolean {
    return this.streams.get(id)?.done ?? false;
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

export interface FollowerView {
  /** New text of the followed stream. */
  append(delta: string): void;
  /** The followed stream changed: show this text in place of what was shown. */
  replace(text: string): void;
}

/**
 * Follows the one stream that belongs to a running command. The server names the stream in the
 * command's result, which may come only after the text; until then the first stream that moves
 * after the command started is taken to be its own.
 */
export class StreamFollower {
  private followedId: string | undefined;
  private readonly unsubscribe: () => void;
  private readonly doneWaiters: (() => void)[] = [];

  constructor(
    private readonly streams: StreamTexts,
    private readonly view: FollowerView,
  ) {
    this.unsubscribe = streams.subscribe((update) => this.onUpdate(update));
  }

  get id(): string | undefined {
    return this.followedId;
  }

  /** Follows the stream the server named, switching to it if another one was taken so far. */
  bind(id: string): void {
    if (this.followedId === id) {
      return;
    }
    this.followedId = id;
    this.view.replace(this.streams.text(id) ?? '');
    if (this.streams.isDone(id)) {
      this.settle();
    }
  }

  /** Resolves when the followed stream is done; at once when no stream is followed. */
  untilDone(): Promise<void> {
    if (this.followedId === undefined || this.streams.isDone(this.followedId)) {
      return Promise.resolve();
    }
    return new Promise((resolve) => this.doneWaiters.push(resolve));
  }

  dispose(): void {
    this.unsubscribe();
    this.settle();
  }

  private onUpdate(update: StreamUpdate): void {
    if (this.followedId === undefined) {
      this.followedId = update.id;
    }
    if (update.id !== this.followedId) {
      return;
    }
    if (update.delta.length > 0) {
      this.view.append(update.delta);
    }
    if (update.done) {
      this.settle();
    }
  }

  private settle(): void {
    for (const resolve of this.doneWaiters.splice(0)) {
      resolve();
    }
  }
}
