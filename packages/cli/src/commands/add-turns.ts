import { readFile } from 'node:fs/promises';
import { assertNotFuture, MemloomError, toEpochMs } from '@memloom/core';
import type { AddResult, AddTurn, UpdateDecision } from 'memloom';
import { dateOption, listOption, numberOption, requirePositionals, type CommandSpec } from '../command.js';
import { InterruptedError, UsageError } from '../exit-codes.js';
import { readAll, yieldToSignals } from '../io.js';
import { inputPath, scopeOption, withMemory } from './shared.js';

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
  ].join('\n'),
  options: {
    'context-turns': { type: 'string', value: 'n', description: 'turns before each one kept as its context (default 2, 0 for none)' },
    at: { type: 'string', value: 'date', description: 'when turns without their own "at" were said (default now; at most a day ahead)' },
    tag: { type: 'string', multiple: true, value: 'tag', description: 'a tag on every turn without its own "tags"' },
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
    const text = path ? await readFile(path, 'utf8') : await readAll(context.io.stdin, 'add-turns', context.io.signal);

    await withMemory(context, async ({ memory }) => {
      const sessions = parseTurns(text, memory.config.limits.maxContentLength, memory.clock.now());
      const total = sessions.reduce((sum, session) => sum + session.turns.length, 0);
      if (total === 0) throw new UsageError(`${input === '-' ? 'stdin' : input} holds no turns`);
      const options = {
        ...scopeOption(context),
        ...(contextTurns !== undefined ? { contextTurns } : {}),
        ...(at ? { at } : {}),
        ...(tags.length > 0 ? { tags } : {}),
      };
      const progress = context.progress('add-turns');
      const { signal } = context.io;
      const results: AddResult[] = [];
      try {
        for (const [index, session] of sessions.entries()) {
          // Ctrl-C before a session: the sessions before stay stored.
          if (signal?.aborted) {
            throw new InterruptedError(`add-turns interrupted after ${index} of ${sessions.length} sessions; the ${results.length} turns of those were stored and stay stored`);
          }
          // Turns of this session stored so far: addTurns stores them one by one, each whole.
          let stored = 0;
          try {
            results.push(
              ...(await memory.addTurns(session.turns, {
                ...options,
                // Ctrl-C inside a session stops before the next turn, or during a turn's model call (a merge).
                ...(signal ? { signal } : {}),
                onProgress: async (done) => {
                  stored = done;
                  progress.update(results.length + done, total);
                  await yieldToSignals();
                },
              })),
            );
          } catch (error) {
            const [first, last] = [session.lines[0], session.lines.at(-1)];
            const span = first === last ? `line ${first}` : `lines ${first}-${last}`;
            const storedInAll = results.length + stored;
            if (signal?.aborted) {
              throw new InterruptedError(
                `add-turns interrupted in session ${index + 1} of ${sessions.length} (${span}) after ${stored} of its ${session.turns.length} turns; ${turnsText(storedInAll)} stored in all and stay${storedInAll === 1 ? 's' : ''} stored`,
              );
            }
            context.note(
              stored === 0
                ? `session ${index + 1} (${span}) was not stored; the ${results.length} turns before it were`
                : `session ${index + 1} (${span}) was stored up to its turn ${stored} of ${session.turns.length}; the ${storedInAll} turns before the failure were`,
            );
            throw error;
          }
        }
      } finally {
        progress.finish();
      }
      const decisions = countDecisions(results);
      if (context.globals.json) {
        return context.printJson({ turns: results.length, sessions: sessions.length, decisions, memories: results.map((result) => result.memory.id) });
      }
      const parts = [`${decisions.create_new} created`, `${decisions.keep_both} kept beside a related memory`, `${decisions.merge_update} merged`];
      context.print(`stored ${results.length} turn${results.length === 1 ? '' : 's'} in ${sessions.length} session${sessions.length === 1 ? '' : 's'}: ${parts.join(', ')}`);
    });
  },
};

/** "1 turn was", "2 turns were". */
function turnsText(count: number): string {
  return count === 1 ? '1 turn was' : `${count} turns were`;
}

function countDecisions(results: readonly AddResult[]): Record<UpdateDecision['strategy'], number> {
  const counts: Record<UpdateDecision['strategy'], number> = { create_new: 0, keep_both: 0, merge_update: 0 };
  for (const result of results) counts[result.decision.strategy]++;
  return counts;
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
