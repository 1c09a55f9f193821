/**
 * What the status bar says: a pure function of the last `codedraft/status` notification, whether
 * the language client runs, and whether completions are on, so it can be tested without VS Code.
 */
import type { Accepts, LastCompletion, StatusParams } from './protocol';

export type ClientPhase = 'starting' | 'running' | 'stopped';

export interface StatusPresentation {
  text: string;
  tooltip: string;
  severity: 'normal' | 'warning' | 'error';
}

/**
 * `85 ms · 92% reused`: latency and the share of the prompt the KV cache already held; `85 ms · no
 * figures` when the daemon's figures never came (null, or missing from an older server).
 */
export function describeLastCompletion(last: LastCompletion): string {
  const latency = `${Math.round(last.latencyMs)} ms`;
  const tokens = promptFigures(last);
  if (tokens === undefined) {
    return `${latency} · ${last.note ?? 'no figures'}`;
  }
  if (tokens.prompt <= 0) {
    return latency;
  }
  const reused = Math.round((100 * Math.min(tokens.reused, tokens.prompt)) / tokens.prompt);
  return `${latency} · ${reused}% reused`;
}

/** The prompt's token counts, undefined when the daemon's figures never came. */
function promptFigures(last: LastCompletion): { prompt: number; reused: number } | undefined {
  if (typeof last.promptTokens !== 'number' || typeof last.reusedTokens !== 'number') {
    return undefined;
  }
  return { prompt: last.promptTokens, reused: last.reusedTokens };
}

function lastCompletionDetail(last: LastCompletion): string {
  const described = `Last completion: ${describeLastCompletion(last)}`;
  const tokens = promptFigures(last);
  return tokens === undefined ? described : `${described} (${tokens.reused} of ${tokens.prompt} prompt tokens from cache)`;
}

/** `accepts 12/40`: suggestions accepted (whole or in part) of those shown; none before one was shown. */
export function describeAccepts(accepts: Accepts | undefined): string | undefined {
  if (accepts === undefined || accepts.shown <= 0) {
    return undefined;
  }
  return `accepts ${accepts.accepted + accepts.partial}/${accepts.shown}`;
}

function acceptDetails(accepts: Accepts): string[] {
  const lines = [
    `Suggestions: ${accepts.accepted + accepts.partial} of ${accepts.shown} accepted (${accepts.partial} in part), ${accepts.dismissed} dismissed`,
  ];
  const gate = accepts.gate;
  if (gate !== undefined) {
    const moved = gate.threshold === gate.calibratedThreshold ? 'as calibrated' : `calibrated ${gate.calibratedThreshold.toFixed(2)}`;
    const figure = gate.figure ?? `first line ${gate.feature} log-probability`;
    lines.push(`Confidence gate: ${figure} ≥ ${gate.threshold.toFixed(2)} (${moved})`);
  }
  return lines;
}

function modelAndDevice(status: StatusParams): string {
  return [status.model, status.device].filter((part) => part !== undefined && part.length > 0).join(' · ');
}

function stateLabel(status: StatusParams): { icon: string; label: string; severity: StatusPresentation['severity'] } {
  switch (status.state) {
    case 'loading':
      return { icon: '$(loading~spin)', label: 'loading', severity: 'normal' };
    case 'indexing': {
      const progress = status.index === undefined ? '' : ` ${status.index.done}/${status.index.total}`;
      return { icon: '$(sync~spin)', label: `indexing${progress}`, severity: 'normal' };
    }
    case 'ready':
      return { icon: '$(sparkle)', label: 'ready', severity: 'normal' };
    case 'degraded':
      // The server is up but cannot reach the inference daemon: no suggestions until it is back.
      return { icon: '$(warning)', label: 'daemon down', severity: 'warning' };
    case 'error':
      return { icon: '$(error)', label: 'error', severity: 'error' };
  }
}

/** Details, one per line, for the tooltip and the "show status" view. */
export function statusDetails(status: StatusParams | undefined, phase: ClientPhase, completionEnabled: boolean): string[] {
  const lines: string[] = [];
  if (phase !== 'running' || status === undefined) {
    lines.push(phase === 'stopped' ? 'Language server: not running' : 'Language server: starting');
  } else {
    lines.push(`State: ${stateLabel(status).label}${status.message ? ` (${status.message})` : ''}`);
    if (status.model) {
      lines.push(`Model: ${status.model}`);
    }
    if (status.device) {
      lines.push(`Device: ${status.device}`);
    }
    if (status.index) {
      lines.push(`Index: ${status.index.done} of ${status.index.total} files`);
    }
    if (status.lastCompletion) {
      lines.push(lastCompletionDetail(status.lastCompletion));
    }
    if (status.suppressed) {
      lines.push(`Last suggestion suppressed: ${status.suppressed}`);
    }
    if (status.accepts) {
      lines.push(...acceptDetails(status.accepts));
    }
  }
  lines.push(`Completions: ${completionEnabled ? 'on' : 'off'}`);
  return lines;
}

export function presentStatus(
  status: StatusParams | undefined,
  phase: ClientPhase,
  completionEnabled: boolean,
): StatusPresentation {
  const tooltip = [...statusDetails(status, phase, completionEnabled), 'Click for details'].join('\n');
  const off = completionEnabled ? '' : ' (off)';
  if (phase === 'stopped') {
    return { text: '$(debug-disconnect) codedraft: stopped', tooltip, severity: 'error' };
  }
  if (phase === 'starting' || status === undefined) {
    return { text: '$(loading~spin) codedraft: starting', tooltip, severity: 'normal' };
  }
  const { icon, label, severity } = stateLabel(status);
  const where = modelAndDevice(status);
  const parts = [status.state === 'ready' && where.length > 0 ? where : `codedraft: ${label}`];
  if (status.state !== 'ready' && where.length > 0) {
    parts.push(where);
  }
  if (status.state === 'ready' && status.lastCompletion) {
    parts.push(describeLastCompletion(status.lastCompletion));
  }
  const accepts = describeAccepts(status.accepts);
  if (status.state === 'ready' && accepts !== undefined) {
    parts.push(accepts);
  }
  return { text: `${completionEnabled ? icon : '$(circle-slash)'} ${parts.join(' · ')}${off}`, tooltip, severity };
}
