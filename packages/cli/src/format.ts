import { CONTROL_OR_BIDI_SOURCE } from '@memloom/core';
import type { MemoryRecord, MemoryVersion, SearchResult } from 'memloom';
import type { CommandContext } from './command.js';
import { describeScope } from './command.js';
import { clipToWidth, displayWidth } from './text-width.js';

/** One line per memory: id, level, category, day of the last update, scope, the text cut to the terminal. */
export function memoryLine(context: CommandContext, memory: MemoryRecord): string {
  const head = `${oneLine(memory.id)}  ${memory.level.padEnd(7)} ${memory.category.padEnd(7)} ${memory.updatedAt.slice(0, 10)}`;
  const scope = scopeLabel(memory);
  return `${head}  ${context.dim(scope)}${scope ? '  ' : ''}${clip(context, oneLine(memory.content), displayWidth(head) + displayWidth(scope) + 4)}`;
}

export function searchLine(context: CommandContext, result: SearchResult, rank: number): string[] {
  const { memory } = result;
  const head = `${String(rank).padStart(2)}. ${result.score.toFixed(3)}  ${oneLine(memory.id)}`;
  const lines = [`${head}  ${clip(context, oneLine(memory.content), displayWidth(head) + 2)}`];
  const parts = result.parts;
  lines.push(
    context.dim(
      `    ${memory.category}, ${memory.level}, updated ${memory.updatedAt.slice(0, 10)}; semantic ${parts.semantic.toFixed(2)}, text ${parts.text.toFixed(2)}, weight ${parts.weight.toFixed(2)}, recency ${parts.recency.toFixed(2)}${parts.date === undefined ? '' : `, date ${parts.date.toFixed(2)}`}`,
    ),
  );
  if (result.freshness) lines.push(context.dim(`    ${oneLine(result.freshness)}`));
  return lines;
}

/**
 * Every field of a memory, one per line; the context on one line, cut to the terminal like list lines. Every
 * stored string (the id, the scope, tags, sources, metadata too) is shown as stored text is: without escape sequences.
 */
export function memoryDetails(context: CommandContext, memory: MemoryRecord): string[] {
  const list = (values: readonly string[]) => values.map(oneLine).join(', ');
  return [
    `id           ${oneLine(memory.id)}`,
    `content      ${withoutControls(memory.content).replace(/\n/g, '\n             ')}`,
    ...(memory.context !== undefined ? [`context      ${clip(context, oneLine(memory.context), 13)}`] : []),
    `scope        ${oneLine(describeScope(memory.scope))}`,
    `level        ${memory.level}`,
    `category     ${memory.category}`,
    `type         ${memory.type}`,
    `weight       ${memory.weight.toFixed(3)} (base ${memory.baseWeight.toFixed(3)})`,
    `importance   ${memory.importance.toFixed(3)} (base ${memory.baseImportance.toFixed(3)})`,
    `source       ${memory.source}${memory.verified ? ', verified' : ''}`,
    `created      ${memory.createdAt}`,
    `updated      ${memory.updatedAt}`,
    `accessed     ${memory.lastAccessedAt}`,
    `revision     ${memory.revision}`,
    ...(memory.tags.length > 0 ? [`tags         ${list(memory.tags)}`] : []),
    ...(memory.sources.length > 0 ? [`sources      ${list(memory.sources)}`] : []),
    // JSON escapes C0 controls and line breaks, not C1 controls or bidi marks.
    ...(Object.keys(memory.metadata).length > 0 ? [`metadata     ${oneLine(JSON.stringify(memory.metadata))}`] : []),
  ];
}

export function versionLines(context: CommandContext, version: MemoryVersion): string[] {
  const after = version.after;
  const changes: string[] = [];
  if (version.before) {
    if (version.before.level !== after.level) changes.push(`level ${version.before.level} -> ${after.level}`);
    if (version.before.weight !== after.weight) changes.push(`weight ${version.before.weight.toFixed(3)} -> ${after.weight.toFixed(3)}`);
    if (version.before.importance !== after.importance) changes.push(`importance ${version.before.importance.toFixed(2)} -> ${after.importance.toFixed(2)}`);
    if (version.before.updatedAt !== after.updatedAt) changes.push('timestamp refreshed');
    if (version.before.context !== after.context) {
      changes.push(after.context === undefined ? 'context dropped' : version.before.context === undefined ? 'context added' : 'context changed');
    }
  }
  // The context as this version made it: at the first version, and whenever it changed to one.
  const contextShown = after.context !== undefined && (!version.before || version.before.context !== after.context);
  return [
    `${context.bold(`v${version.version}`)}  ${version.at}  ${version.trigger}/${version.action}: ${oneLine(version.reason)}`,
    ...(changes.length > 0 ? [context.dim(`    ${changes.join('; ')}`)] : []),
    `    ${oneLine(after.content)}`,
    ...(contextShown ? [context.dim(`    context: ${oneLine(after.context as string)}`)] : []),
  ];
}

export function scopeLabel(memory: MemoryRecord): string {
  const { userId, agentId, sessionId } = memory.scope;
  // Core refuses scope ids with a control character or a bidi control, but a file another program wrote may hold them.
  return oneLine([userId && `user:${userId}`, agentId && `agent:${agentId}`, sessionId && `session:${sessionId}`].filter(Boolean).join(' '));
}

/**
 * Stored text on one line of a terminal: line breaks shown as ⏎, a tab as a space, and no terminal
 * escape sequence, other control character or bidi control (a memory's text must not recolour, move or
 * retitle the terminal, nor reorder what is printed after it on the line).
 */
export function oneLine(text: string): string {
  return withoutControls(text.replace(/\s*[\r\n\u2028\u2029]\s*/g, ' ⏎ '));
}

/**
 * ESC sequences (CSI such as colours and cursor moves, OSC such as titles and links, and two-character ones), then
 * any other C0 or C1 control character but a line break, and the bidi controls (U+202E shows what follows it right
 * to left: "txt.exe" as "exe.txt"; the marks, embeddings, overrides and isolates of Unicode's bidi algorithm), removed.
 * Other format characters stay: a zero-width joiner holds an emoji sequence together.
 */
const ESCAPE_SEQUENCE = /\u001b(?:\[[0-?]*[ -/]*[@-~]?|\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[ -/]*[0-~]?)|\u009b[0-?]*[ -/]*[@-~]?/g;
/** Core's set (`CONTROL_OR_BIDI_SOURCE`, which ids are checked against), all at once: the two cannot drift. A line break is kept. */
const CONTROL = new RegExp(CONTROL_OR_BIDI_SOURCE, 'gu');

/** Text without escape sequences, control characters and bidi controls, a tab shown as a space (line breaks stay). */
export function withoutControls(text: string): string {
  return text
    .replace(/\t/g, ' ')
    .replace(ESCAPE_SEQUENCE, '')
    .replace(CONTROL, (control) => (control === '\n' ? control : ''));
}

/** Cut text to what is left of the terminal's width (only on a terminal: pipes get everything). */
export function clip(context: CommandContext, text: string, used: number): string {
  const columns = context.io.stdout.isTTY ? context.io.stdout.columns : undefined;
  if (!columns) return text;
  return clipToWidth(text, Math.max(20, columns - used));
}

/** "1 memory", "2 memories". */
export function memoriesText(count: number): string {
  return `${count} ${count === 1 ? 'memory' : 'memories'}`;
}
