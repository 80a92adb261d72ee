import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLexicalEmbedder } from '@memloom/embeddings';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { loadLocomo } from '../src/locomo.js';
import { createMemloomRetriever } from '../src/peers/memloom-peer.js';
import { createMemoryRetriever } from '../src/retrievers.js';

const tiny = fileURLToPath(new URL('./fixtures/locomo-tiny', import.meta.url));

// What happens, in order: each SQLite store's open, and the start of an ingest (where runLocomo starts its timer).
const events = vi.hoisted(() => [] as string[]);
vi.mock('@memloom/store-sqlite', async (importOriginal) => {
  const actual = await importOriginal<typeof import('@memloom/store-sqlite')>();
  const createSqliteStore: typeof actual.createSqliteStore = (options) => {
    const store = actual.createSqliteStore(options);
    const open = store.open.bind(store);
    return Object.assign(store, {
      open: (openOptions: Parameters<typeof open>[0]) => {
        events.push('open');
        return open(openOptions);
      },
    });
  };
  return { ...actual, createSqliteStore };
});

beforeEach(() => {
  events.length = 0;
});

describe('every row builds its store before the ingest timer, as mem0 does', () => {
  it("memloom's default rows: the SQLite file is made when the retriever is, not at the first add", async () => {
    const [conversation] = await loadLocomo(tiny);
    const folder = mkdtempSync(join(tmpdir(), 'memloom-bench-test-'));
    const retriever = await createMemloomRetriever(conversation!, { store: 'default', ingest: 'turns', embedderConfig: 'lexical', folder });
    expect(existsSync(join(folder, '.memloom', 'memory.db'))).toBe(true);
    await retriever.close?.(); // removes the folder
  });

  it("the embeddings bench's SQLite retriever opens its store in warmUp, before the ingest", async () => {
    const [conversation] = await loadLocomo(tiny);
    const retriever = createMemoryRetriever(conversation!, { embedder: createLexicalEmbedder(), store: 'sqlite' });
    await retriever.warmUp?.();
    events.push('ingest');
    await retriever.ingest(conversation!.turns);
    expect(events).toEqual(['open', 'ingest']);
    await retriever.close?.();
  });
});
