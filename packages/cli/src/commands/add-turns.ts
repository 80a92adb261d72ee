import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { assertNotFuture, DEFAULT_CONTEXT_TURNS, MemloomError, timeOrderedId, toEpochMs } from '@memloom/core';
import type { AddResult, AddTurn, Memory, Scope, UpdateDecision } from 'memloom';
import { dateOption, listOption, numberOption, requirePositionals, stringOption, type CommandContext, type CommandSpec } from '../command.js';
import { InterruptedError, UsageError } from '../exit-codes.js';
import { oneLine } from '../format.js';
import { readAll, yieldToSignals } from '../io.js';
import { sameMemory } from '../transfer.js';
import { CHECKPOINT_HEAD, failpoint, inputPath, removeLeftovers, scopeOption, withMemory, writeCheckpoint } from './shared.js';

/** The fields a JSON turn may have (those of core's `AddTurn`). */
const TURN_FIELDS = new Set(['content', 'at', 'sources', 'tags', 'metadata']);

/** Consecutive turns of one session, with the line each came from. */
export interface TurnSession {
  turns: AddTurn[];
  lines: number[];
}

/**
 * Read a transcript: one turn per line, plain text or a JSON string or
 * object (`AddTurn`), a blank line between sessions. Throws a UsageError
 * naming the first line that is not a turn. `nowMs` is the memory's clock:
 * an `at` more than a day after it is refused, as core refuses it.
 */
export function parseTurns(text: string, maxContentLength: number, nowMs: number): TurnSession[] {
  const sessions: TurnSession[] = [];
  let current: TurnSession | undefined;
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === '') {
      current = undefined;
      return;
    }
    const turn = parseTurn(raw.trim(), line, maxContentLength, nowMs);
    if (!current) {
      current = { turns: [], lines: [] };
      sessions.push(current);
    }
    current.turns.push(turn);
    current.lines.push(line);
  });
  return sessions;
}

function parseTurn(text: string, line: number, maxContentLength: number, nowMs: number): AddTurn {
  let turn: AddTurn;
  if (text.startsWith('{') || text.startsWith('"')) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new UsageError(`line ${line}: not valid JSON (${(error as Error).message}); a plain-text turn must not start with { or "`);
    }
    if (typeof value === 'string') turn = { content: value };
    else if (typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as { content?: unknown }).content === 'string') {
      const unknown = Object.keys(value).filter((key) => !TURN_FIELDS.has(key));
      if (unknown.length > 0) throw new UsageError(`line ${line}: unknown field ${unknown.map((key) => `"${key}"`).join(', ')}; a turn has ${[...TURN_FIELDS].join(', ')}`);
      turn = checkFields(value as Record<string, unknown>, line, nowMs);
    } else throw new UsageError(`line ${line}: a JSON turn is a string or an object with a "content" string`);
  } else turn = { content: text };
  const length = turn.content.trim().length;
  if (length === 0) throw new UsageError(`line ${line}: the turn is empty`);
  if (length > maxContentLength) throw new UsageError(`line ${line}: the turn is ${length} characters long; the limit is ${maxContentLength} (limits.maxContentLength)`);
  return turn;
}

/** Longest tag or source id core takes. */
const MAX_LABEL_LENGTH = 512;

/**
 * A number `at` below this (1e11 ms: 1973-03-03) is refused: Unix times in seconds, which many tools
 * write, are below it for any date before the year 5138, and read as milliseconds they date a
 * conversation in January 1970.
 */
const SECONDS_LOOK_ALIKE = 1e11;

/**
 * The optional fields of a JSON turn, checked as core checks them (so that a bad one is found while
 * reading, before any session is stored), each error naming the line and the field.
 */
function checkFields(value: Record<string, unknown>, line: number, nowMs: number): AddTurn {
  const { content, at, sources, tags, metadata } = value;
  const bad = (field: string, expected: string, got: unknown) =>
    new UsageError(`line ${line}: "${field}" must be ${expected}, got ${JSON.stringify(got)}`);
  if (typeof at === 'number' && Number.isFinite(at) && Math.abs(at) < SECONDS_LOOK_ALIKE) {
    // 1714550400 is 2024-05-01 in seconds, and 1970-01-20 in milliseconds: which one was meant cannot be told.
    throw bad('at', `milliseconds since 1970 (this looks like seconds: ${new Date(at * 1000).toISOString()} if it is; multiply by 1000) or a date such as 2024-05-01T09:00:00Z`, at);
  }
  if (at !== undefined && !readsAsTime(at)) throw bad('at', 'a date on the calendar such as 2024-05-01T09:00:00Z (or milliseconds since 1970)', at);
  // Core refuses it too, but only when the turn's session is stored: the sessions before would stay stored.
  if (at !== undefined) notInTheFuture(toEpochMs(at as string | number), nowMs, line);
  for (const [field, list] of [['sources', sources], ['tags', tags]] as const) {
    if (list === undefined) continue;
    const example = field === 'tags' ? '["pets"]' : '["D1:3"]';
    if (!Array.isArray(list)) throw bad(field, `a list of strings such as ${example}`, list);
    const wrong = list.find((item) => typeof item !== 'string' || item.length === 0 || item.length > MAX_LABEL_LENGTH);
    if (wrong !== undefined) throw bad(field, `a list of non-empty strings (at most ${MAX_LABEL_LENGTH} characters each) such as ${example}`, list);
  }
  if (metadata !== undefined) {
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) throw bad('metadata', 'an object such as {"speaker": "Ana"}', metadata);
  }
  return {
    content: content as string,
    ...(at !== undefined ? { at: at as string | number } : {}),
    ...(sources !== undefined ? { sources: sources as string[] } : {}),
    ...(tags !== undefined ? { tags: tags as string[] } : {}),
    ...(metadata !== undefined ? { metadata: metadata as Record<string, unknown> } : {}),
  };
}

export const addTurnsCommand: CommandSpec = {
  name: 'add-turns',
  summary: 'remember a conversation turn by turn (each turn a memory, with the turns before it as context)',
  usage: ['add-turns <file> [options]', 'add-turns - [options]          (turns from stdin)'],
  description: [
    'One turn per line, in order: plain text ("Ana: I adopted a puppy last week"), or a JSON string, or a',
    'JSON object {"content": "...", "at": "2024-05-01T09:00:00Z", "sources": ["D1:1"], "tags": [...], "metadata": {...}}.',
    'A blank line ends a session: no turn takes context from another session. Each turn is added as',
    '`memloom add` adds (merged, kept beside or new) and keeps the turns before it in its session as its',
    'context, so that an answer is found by the words of the question it answers. Every line is read and',
    'checked (each field\'s type: "at" a date, at most a day after now; "sources" and "tags" lists of',
    'strings; "metadata" an object) before the first turn is stored; if storing fails part-way, the turns',
    'before it stay stored.',
    'Ctrl-C (or SIGTERM) stops before the next turn, or during a turn\'s model call: the turns stored by then',
    'stay stored, and the message says how many.',
    '',
    'Progress is kept in a checkpoint file (<file>.add-turns-checkpoint.json, or --checkpoint), written after',
    'each turn is stored: running the same command again after an interruption (Ctrl-C, a failure, or the',
    'process killed) resumes after the last turn stored, each resumed turn with the turns before it as its',
    'context. The checkpoint belongs to the file\'s content and the options: another file or other options are',
    'refused until it is deleted. It is removed when every turn is stored.',
  ].join('\n'),
  options: {
    'context-turns': { type: 'string', value: 'n', description: 'turns before each one kept as its context (default 2, 0 for none)' },
    at: { type: 'string', value: 'date', description: 'when turns without their own "at" were said (default now; at most a day ahead)' },
    tag: { type: 'string', multiple: true, value: 'tag', description: 'a tag on every turn without its own "tags"' },
    checkpoint: { type: 'string', value: 'file', description: 'where progress is kept (default <file>.add-turns-checkpoint.json; none for stdin)' },
  },
  examples: [
    'memloom add-turns chat.txt --user alice',
    'memloom add-turns session.jsonl --user alice --context-turns 1 --json',
    'cat transcript.txt | memloom add-turns - --user alice',
  ],
  async run(context) {
    const [input] = requirePositionals(context, ['file']);
    const contextTurns = numberOption(context.values, 'context-turns', { min: 0, max: 20, integer: true });
    const at = dateOption(context.values, 'at');
    const tags = listOption(context.values, 'tag');
    const path = inputPath(context, input!);
    const given = stringOption(context.values, 'checkpoint');
    const checkpointPath = given ? resolve(context.io.cwd, given) : path ? `${path}.add-turns-checkpoint.json` : undefined;
    const text = path ? await readFile(path, 'utf8') : await readAll(context.io.stdin, 'add-turns', context.io.signal);
    if (checkpointPath) await removeLeftovers(context, checkpointPath, 'tmp', 'an add-turns', CHECKPOINT_HEAD);

    await withMemory(context, async ({ memory: opened, resolved }) => {
      // With a checkpoint, the id a new memory will get is in the checkpoint before it is written (see resumeFrom).
      const ids = { next: timeOrderedId(opened.clock.now()) };
      const memory = checkpointPath ? sameMemory(opened, { scope: resolved.engine.scope, generateId: () => ids.next }) : opened;
      const sessions = parseTurns(text, memory.config.limits.maxContentLength, memory.clock.now());
      const total = sessions.reduce((sum, session) => sum + session.turns.length, 0);
      if (total === 0) throw new UsageError(`${input === '-' ? 'stdin' : input} holds no turns`);
      const options = {
        ...scopeOption(context),
        ...(contextTurns !== undefined ? { contextTurns } : {}),
        ...(at ? { at } : {}),
        ...(tags.length > 0 ? { tags } : {}),
      };
      // A checkpoint belongs to these turns (the input's content) stored with these options.
      // (--context-turns 2 is the default said out loud: the same options.)
      const key = {
        digest: createHash('sha256').update(text).digest('hex'),
        options: JSON.stringify({
          scope: options.scope,
          contextTurns: contextTurns ?? DEFAULT_CONTEXT_TURNS,
          at: at === undefined ? undefined : toEpochMs(at),
          tags: options.tags,
        }),
      };
      const resumed = checkpointPath && existsSync(checkpointPath) ? await resumeFrom(checkpointPath, key, total, memory, options.scope, context) : undefined;
      if (!checkpointPath) context.note('Reading stdin without --checkpoint: an interrupted add-turns cannot resume.');
      const decisions = resumed?.decisions ?? { create_new: 0, keep_both: 0, merge_update: 0 };
      // Turns stored in all, by an interrupted run before this one and by this one.
      let storedInAll = resumed?.done ?? 0;
      const resume = checkpointPath ? `; run the same command again to resume after them (progress is in ${checkpointPath})` : '';
      const save = async () => {
        if (checkpointPath) await writeCheckpoint<Checkpoint>(checkpointPath, { source: path ?? 'stdin', ...key, done: storedInAll, decisions, next: ids.next });
      };
      await save();
      const progress = context.progress('add-turns');
      const { signal } = context.io;
      const results: AddResult[] = [];
      try {
        let before = 0; // turns of the sessions before this one
        for (const [index, session] of sessions.entries()) {
          const first = before;
          before += session.turns.length;
          const skip = Math.min(session.turns.length, Math.max(0, storedInAll - first));
          // Stored whole by an interrupted run.
          if (skip === session.turns.length) continue;
          // Ctrl-C before a session: the sessions before stay stored.
          if (signal?.aborted) {
            throw new InterruptedError(`add-turns interrupted after ${index} of ${sessions.length} sessions; the ${turnsText(storedInAll)} stored and stay${storedInAll === 1 ? 's' : ''} stored${resume}`);
          }
          try {
            results.push(
              ...(await memory.addTurns(session.turns, {
                ...options,
                // A session an interrupted run stored part of: its first turns give the next ones their context.
                ...(skip > 0 ? { skip } : {}),
                // Ctrl-C inside a session stops before the next turn, or during a turn's model call (a merge).
                ...(signal ? { signal } : {}),
                onProgress: async (_done, _total, result) => {
                  storedInAll++;
                  decisions[result.decision.strategy]++;
                  failpoint(context, 'add-turns-stored', storedInAll);
                  ids.next = timeOrderedId(memory.clock.now());
                  await save();
                  failpoint(context, 'add-turns-saved', storedInAll);
                  progress.update(storedInAll, total);
                  await yieldToSignals();
                },
              })),
            );
          } catch (error) {
            // Turns of this session stored so far: addTurns stores them one by one, each whole.
            const stored = storedInAll - first;
            const [firstLine, lastLine] = [session.lines[0], session.lines.at(-1)];
            const span = firstLine === lastLine ? `line ${firstLine}` : `lines ${firstLine}-${lastLine}`;
            if (signal?.aborted) {
              throw new InterruptedError(
                `add-turns interrupted in session ${index + 1} of ${sessions.length} (${span}) after ${stored} of its ${session.turns.length} turns; ${turnsText(storedInAll)} stored in all and stay${storedInAll === 1 ? 's' : ''} stored${resume}`,
              );
            }
            context.note(
              stored === 0
                ? `session ${index + 1} (${span}) was not stored; the ${storedInAll} turns before it were${resume}`
                : `session ${index + 1} (${span}) was stored up to its turn ${stored} of ${session.turns.length}; the ${storedInAll} turns before the failure were${resume}`,
            );
            throw error;
          }
        }
      } finally {
        progress.finish();
      }
      if (checkpointPath) await rm(checkpointPath, { force: true });
      if (context.globals.json) {
        return context.printJson({
          turns: storedInAll,
          sessions: sessions.length,
          decisions,
          ...(resumed ? { resumed: resumed.done } : {}),
          memories: results.map((result) => result.memory.id),
        });
      }
      const parts = [`${decisions.create_new} created`, `${decisions.keep_both} kept beside a related memory`, `${decisions.merge_update} merged`];
      const earlier = resumed ? ` (${resumed.done} of them by the interrupted run resumed)` : '';
      context.print(`stored ${storedInAll} turn${storedInAll === 1 ? '' : 's'} in ${sessions.length} session${sessions.length === 1 ? '' : 's'}${earlier}: ${parts.join(', ')}`);
    });
  },
};

/** Progress of add-turns, kept after each turn stored: how many turns of which input, stored with which options. */
interface Checkpoint {
  source: string;
  /** sha256 of the input. */
  digest: string;
  /** The options the turns are stored with (scope, context turns, time, tags), as JSON. */
  options: string;
  /** Turns stored, in input order. */
  done: number;
  decisions: Record<UpdateDecision['strategy'], number>;
  /** The id the next turn's memory gets if it is a new one: written before the turn is stored. */
  next: string;
}

/** The checkpoint of an interrupted run of the same input with the same options; undefined when it stored nothing. */
async function resumeFrom(
  path: string,
  key: Pick<Checkpoint, 'digest' | 'options'>,
  total: number,
  memory: Memory,
  scope: Scope | undefined,
  context: CommandContext,
): Promise<Checkpoint | undefined> {
  let checkpoint: Checkpoint;
  try {
    checkpoint = JSON.parse(await readFile(path, 'utf8')) as Checkpoint;
  } catch {
    throw new UsageError(`${path} is not an add-turns checkpoint; delete it to start over`);
  }
  if (typeof checkpoint.done !== 'number' || typeof checkpoint.digest !== 'string') throw new UsageError(`${path} is not an add-turns checkpoint; delete it to start over`);
  // A run that stored nothing (it failed or was stopped before its first turn) leaves nothing to resume: start over,
  // whatever its turns or options were (a corrected command is not refused for the mistake it corrects).
  if (checkpoint.done === 0 && !(checkpoint.next && (await memory.get(checkpoint.next)))) {
    context.note(`${oneLine(path)} is from a run that stored no turn: starting over.`);
    return undefined;
  }
  if (checkpoint.digest !== key.digest) throw new UsageError(`${path} belongs to other turns (${checkpoint.source} as it was then); delete it to start over`);
  if (checkpoint.options !== key.options) {
    throw new UsageError(`${path} belongs to a run with other options (${checkpoint.options}); run it with the same --user/--agent/--session, --context-turns, --at and --tag, or delete it to start over`);
  }
  // Killed after a turn was stored but before the checkpoint said so: the memory it made has the id the checkpoint names.
  // (A turn merged into an existing memory makes none: that one turn is merged again, a version more on that memory.)
  if (checkpoint.done < total && checkpoint.next && (await memory.get(checkpoint.next, scope ? { scope } : {}))) {
    checkpoint.done++;
    checkpoint.decisions.create_new++; // or kept beside a related memory: the store does not say which
  }
  context.note(`Resuming from ${oneLine(path)}: ${checkpoint.done} of the ${total} turns ${checkpoint.done === 1 ? 'was' : 'were'} stored before.`);
  return checkpoint;
}

/** "1 turn was", "2 turns were". */
function turnsText(count: number): string {
  return count === 1 ? '1 turn was' : `${count} turns were`;
}

/** Core's refusal of an `at` more than a day ahead (a memory dated then would not decay until then), naming the line. */
function notInTheFuture(atMs: number, nowMs: number, line: number): void {
  try {
    assertNotFuture(atMs, nowMs, '"at"');
  } catch (error) {
    throw new UsageError(`line ${line}: ${MemloomError.isInstance(error) ? error.reason : String(error)}`);
  }
}

/** Whether a JSON turn's `at` is a time core takes (a string or epoch milliseconds; toEpochMs). */
function readsAsTime(at: unknown): boolean {
  if (typeof at !== 'string' && typeof at !== 'number') return false;
  try {
    toEpochMs(at);
    return true;
  } catch {
    return false;
  }
}
