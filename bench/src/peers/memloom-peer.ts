/**
 * memloom as a user gets it from the umbrella package: `createMemory()` with
 * nothing configured (SQLite at `.memloom/memory.db` in the working folder,
 * the offline default embedder), or one of its stores by configuration. Each
 * turn becomes one memory in the conversation's user scope, with its session
 * date and dia_id as source, and merge / keep both / new runs on each as it
 * ships: stored a session at a time with `memory.addTurns` (each turn keeps
 * the two before it as its context), or each turn alone with `memory.add`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Embedder } from '@memloom/core';
import { createFakeClock } from '@memloom/core/testing';
import { createMemory, type Memory, type MemloomOptions } from 'memloom';
import { embedderWarmUp, turnText, type LocomoConversation, type LocomoRetriever, type LocomoTurn } from '../locomo.js';

export type MemloomStoreKind = 'default' | 'markdown' | 'memory' | 'qdrant';

export interface MemloomPeerOptions {
  store: MemloomStoreKind;
  /** An embedder instance; omitted, createMemory builds its own (the shipped default, or `embedderConfig`). */
  embedder?: Embedder;
  /** Embedder configuration for createMemory when no instance is given, e.g. 'lexical'. @default the shipped default */
  embedderConfig?: string;
  /** Qdrant server for the qdrant store. */
  qdrantUrl?: string;
  /** Clock and `at` for each add; omitted, the system clock and now. */
  clock?: { now(): number };
  /** The working folder (removed by dispose). @default a new temporary folder */
  folder?: string;
}

/**
 * A memloom Memory in a fresh temporary folder, its store opened (the SQLite file, the Markdown folder,
 * the Qdrant collection made) before any timer starts, as mem0's peer is; `dispose` closes it and removes the folder.
 */
export async function createMemloomPeer(options: MemloomPeerOptions): Promise<{ memory: Memory; folder: string; dispose(): Promise<void> }> {
  const folder = options.folder ?? mkdtempSync(join(tmpdir(), 'memloom-peer-'));
  const settings: MemloomOptions = {
    cwd: folder,
    configFile: false,
    // No MEMLOOM_* from the shell leaks into the measurement.
    env: {},
    generateId: counter(),
    ...(options.clock ? { clock: options.clock } : {}),
  };
  if (options.embedder) settings.embedder = options.embedder;
  else if (options.embedderConfig) settings.embedder = options.embedderConfig;
  if (options.store === 'markdown') settings.store = { type: 'markdown', root: join(folder, 'memory') };
  if (options.store === 'memory') settings.store = 'memory:';
  if (options.store === 'qdrant') {
    if (!options.qdrantUrl) throw new Error('the qdrant store needs QDRANT_URL');
    // One collection per run, so runs never see each other's points.
    settings.store = { type: 'qdrant', url: options.qdrantUrl, collection: `memloom_bench_${process.pid}_${Date.now()}` };
  }
  const memory = await createMemory(settings);
  // A store opens at its first use: without this, at the first add, inside the timed ingest or fill.
  await memory.count();
  return {
    memory,
    folder,
    async dispose() {
      await memory.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/**
 * The LoCoMo retriever over memloom: one user scope per conversation, every
 * turn added in order, the clock standing at the last session's date when the
 * questions are asked (as in the embeddings bench).
 */
export async function createMemloomRetriever(
  conversation: LocomoConversation,
  options: Omit<MemloomPeerOptions, 'clock'> & { ingest: 'turns' | 'add' },
): Promise<LocomoRetriever> {
  const lastTurn = conversation.turns[conversation.turns.length - 1] as LocomoTurn;
  const clock = createFakeClock(lastTurn.at.getTime());
  const peer = await createMemloomPeer({ ...options, clock });
  const scope = { userId: conversation.id };
  return {
    ...embedderWarmUp(peer.memory.embedder),
    async ingest(turns) {
      if (options.ingest === 'add') {
        for (const turn of turns) await peer.memory.add(turnText(turn), { scope, at: turn.at, sources: [turn.diaId] });
        return;
      }
      for (const session of sessionsOf(turns)) {
        await peer.memory.addTurns(
          session.map((turn) => ({ content: turnText(turn), at: turn.at, sources: [turn.diaId] })),
          { scope },
        );
      }
    },
    async search(question, k) {
      const results = await peer.memory.search(question, { scope, limit: k });
      return results.map((result) => result.memory.sources);
    },
    size: () => peer.memory.count({ scope }),
    async close() {
      // A server outlives the run: leave no points behind in its collection.
      if (options.store === 'qdrant') await peer.memory.deleteAll(scope);
      await peer.dispose();
    },
  };
}

/** Runs of consecutive turns of one session, in order. */
export function sessionsOf(turns: readonly LocomoTurn[]): LocomoTurn[][] {
  const sessions: LocomoTurn[][] = [];
  for (const turn of turns) {
    const current = sessions[sessions.length - 1];
    if (current && current[0]?.session === turn.session) current.push(turn);
    else sessions.push([turn]);
  }
  return sessions;
}

/** Ids in order of arrival, so ties rank alike in every run. */
function counter(): () => string {
  let next = 0;
  return () => `m${String(++next).padStart(7, '0')}`;
}
