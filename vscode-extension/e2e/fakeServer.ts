/**
 * A stand-in for `codedraft lsp` that speaks the same LSP contract with canned answers, so the
 * end-to-end harness (code-server, the packaged extension, Playwright) can be checked on its own.
 * It appends every message it receives to $CODEDRAFT_FAKE_LOG as one JSON line.
 */
import * as fs from 'node:fs';

type Message = { id?: number | string; method?: string; params?: unknown; result?: unknown; error?: unknown };
type Params = Record<string, unknown>;

export const FAKE_COMPLETION = 'return n if n < 2 else fibonacci(n - 1) + fibonacci(n - 2)';
export const FAKE_REFACTOR_MARK = '# refactored by codedraft:';

const logPath = process.env.CODEDRAFT_FAKE_LOG;
const pending = new Map<number, (message: Message) => void>();
const cancelled = new Set<number | string>();
const documents = new Map<string, string>();
const versions = new Map<string, number>();
let nextOwnId = 1;
let buffer = Buffer.alloc(0);

function log(entry: unknown): void {
  if (logPath !== undefined) {
    fs.appendFileSync(logPath, `${JSON.stringify(entry)}\n`);
  }
}

function send(message: Message): void {
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...message }), 'utf8');
  process.stdout.write(`Content-Length: ${body.length}\r\n\r\n`);
  process.stdout.write(body);
}

function request(method: string, params: unknown): Promise<Message> {
  const id = nextOwnId++;
  send({ id, method, params });
  return new Promise((resolve) => pending.set(id, resolve));
}

const status = { state: 'ready', message: 'fake server ready', model: 'fake-model', device: 'cpu' };
/** A JSON-RPC error answer. */
class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function streamText(id: string, text: string): Promise<void> {
  const pieces = text.match(/.{1,12}/gs) ?? [];
  for (const [index, delta] of pieces.entries()) {
    send({ method: 'codedraft/streamText', params: { id, delta, done: index === pieces.length - 1 } });
    await sleep(100);
  }
}

async function longCommand(command: string, argument: Params): Promise<unknown> {
  const id = `${command}-${nextOwnId}`;
  const instruction = typeof argument.instruction === 'string' ? argument.instruction : 'fix';
  const newText = `${FAKE_REFACTOR_MARK} ${instruction}\n`;
  await streamText(id, `step 1: read the selection\nstep 2: ${instruction}\n${newText}`);
  const range = argument.range as { start: unknown };
  const answer = await request('workspace/applyEdit', {
    label: 'Refactor with codedraft',
    edit: {
      documentChanges: [
        {
          textDocument: { uri: argument.uri, version: null },
          edits: [{ range: { start: range.start, end: range.start }, newText, annotationId: 'codedraft' }],
        },
      ],
      changeAnnotations: { codedraft: { label: instruction, needsConfirmation: true } },
    },
  });
  log({ applyEditAnswer: answer.result });
  const applied = (answer.result as { applied?: boolean } | undefined)?.applied === true;
  return { id, applied, reason: applied ? null : 'the edit was not applied' };
}

/**
 * Next edits of the e2e's prices.py, like the real server's rename propagation: once the parameter
 * `price` of `total` has another name, every use still called `price` is an edit to that name.
 */
function renameEdits(uri: string, text: string, version: number): unknown[] {
  const renamed = /^def total\((\w+), count\):/m.exec(text)?.[1];
  if (!uri.endsWith('/prices.py') || renamed === undefined || renamed === 'price') {
    return [];
  }
  const edits: unknown[] = [];
  text.split('\n').forEach((line, index) => {
    for (const use of line.matchAll(/\bprice\b/g)) {
      const start = { line: index, character: use.index };
      edits.push({
        text: renamed,
        range: { start, end: { line: index, character: use.index + use[0].length } },
        textDocument: { uri, version },
        command: { title: 'Accept next edit', command: 'codedraft.acceptInlineEdit', arguments: [`fake-${index}-${use.index}`] },
      });
    }
  });
  return edits;
}

async function handle(message: Message): Promise<unknown> {
  const params = (message.params ?? {}) as Params;
  switch (message.method) {
    case 'initialize':
      return {
        capabilities: {
          textDocumentSync: 1,
          inlineCompletionProvider: true,
          completionProvider: { triggerCharacters: ['.'] },
          executeCommandProvider: { commands: ['codedraft.refactor', 'codedraft.fix', 'codedraft.reindex', 'codedraft.status', 'codedraft.acceptInlineEdit', 'codedraft.rejectInlineEdit'] },
        },
        serverInfo: { name: 'codedraft-fake', version: '0' },
      };
    case 'textDocument/inlineCompletion': {
      // Long enough for a fast typist to cancel it, as the editor does on every keystroke.
      await sleep(300);
      if (message.id !== undefined && cancelled.has(message.id)) {
        throw new RpcError(-32800, 'cancelled');
      }
      const position = params.position as { line: number; character: number };
      const uri = (params.textDocument as { uri: string }).uri;
      const line = (documents.get(uri) ?? '').split('\n')[position.line] ?? '';
      // Like a model that keeps its mind: continue the canned line from whatever of it is typed.
      const typed = line.slice(0, position.character).trimStart();
      if (!FAKE_COMPLETION.startsWith(typed) || typed === FAKE_COMPLETION) {
        return { items: [] };
      }
      send({
        method: 'codedraft/status',
        params: { ...status, lastCompletion: { latencyMs: 300, promptTokens: 200, reusedTokens: 150 } },
      });
      return { items: [{ insertText: FAKE_COMPLETION.slice(typed.length), range: { start: position, end: position } }] };
    }
    case 'textDocument/copilotInlineEdit': {
      const uri = (params.textDocument as { uri: string }).uri;
      return { edits: renameEdits(uri, documents.get(uri) ?? '', versions.get(uri) ?? 0) };
    }
    case 'textDocument/completion':
      return { isIncomplete: false, items: [{ label: 'fake-completion-item' }] };
    case 'workspace/executeCommand': {
      const argument = ((params.arguments as unknown[] | undefined) ?? [])[0] as Params;
      switch (params.command) {
        case 'codedraft.status':
          return status;
        case 'codedraft.reindex':
        case 'codedraft.acceptInlineEdit':
        case 'codedraft.rejectInlineEdit':
          return null;
        default:
          return longCommand(params.command as string, argument);
      }
    }
    case 'shutdown':
      return null;
    default:
      throw new RpcError(-32601, `unhandled ${message.method}`);
  }
}

function onNotification(message: Message): void {
  const params = (message.params ?? {}) as {
    textDocument?: { uri: string; text?: string; version?: number };
    contentChanges?: { text: string }[];
  };
  if (params.textDocument?.version !== undefined) {
    versions.set(params.textDocument.uri, params.textDocument.version);
  }
  if (message.method === 'textDocument/didOpen' && params.textDocument?.text !== undefined) {
    documents.set(params.textDocument.uri, params.textDocument.text);
  } else if (message.method === 'textDocument/didChange' && params.textDocument !== undefined) {
    // Full synchronisation (textDocumentSync 1): the last change is the whole text.
    const text = params.contentChanges?.at(-1)?.text;
    if (text !== undefined) {
      documents.set(params.textDocument.uri, text);
    }
  } else if (message.method === '$/cancelRequest') {
    cancelled.add((message.params as { id: number | string }).id);
  } else if (message.method === 'initialized') {
    send({ method: 'codedraft/status', params: { state: 'loading', message: 'loading fake-model', model: 'fake-model' } });
    void request('workspace/configuration', { items: [{ section: 'codedraft' }] }).then((answer) => {
      log({ configuration: answer.result });
      send({ method: 'codedraft/status', params: status });
    });
  } else if (message.method === 'exit') {
    process.exit(0);
  }
}

function dispatch(message: Message): void {
  log(message);
  if (message.method === undefined && typeof message.id === 'number') {
    pending.get(message.id)?.(message);
    pending.delete(message.id);
  } else if (message.id === undefined) {
    onNotification(message);
  } else {
    const id = message.id;
    handle(message).then(
      (result) => send({ id, result: result ?? null }),
      (error: unknown) =>
        send({
          id,
          error: error instanceof RpcError ? { code: error.code, message: error.message } : { code: -32603, message: String(error) },
        }),
    );
  }
}

process.stdin.on('data', (chunk: Buffer) => {
  buffer = Buffer.concat([buffer, chunk]);
  for (;;) {
    const headerEnd = buffer.indexOf('\r\n\r\n');
    if (headerEnd < 0) {
      return;
    }
    const length = Number(/Content-Length: (\d+)/i.exec(buffer.subarray(0, headerEnd).toString('ascii'))?.[1]);
    if (buffer.length < headerEnd + 4 + length) {
      return;
    }
    const body = buffer.subarray(headerEnd + 4, headerEnd + 4 + length).toString('utf8');
    buffer = buffer.subarray(headerEnd + 4 + length);
    dispatch(JSON.parse(body) as Message);
  }
});
