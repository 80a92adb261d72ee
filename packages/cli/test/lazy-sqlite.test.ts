import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { json, run, tempFolder } from './helpers.js';

// Counts the loads of the SQLite store (and with it better-sqlite3's native module), which a command on another store does not need.
const loads = vi.hoisted(() => ({ sqlite: 0 }));
vi.mock('@memloom/store-sqlite', async (importOriginal) => {
  loads.sqlite++;
  return importOriginal();
});

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempFolder()));
afterEach(() => cleanup());

describe('the SQLite store package', () => {
  it('is not loaded by the CLI on a Markdown or in-process store', async () => {
    expect(json(await run(dir, ['add', 'Keeps bees on the roof', '--user', 'alice', '--store', 'markdown:./notes', '--json'])).decision.strategy).toBe('create_new');
    expect(json(await run(dir, ['list', '--store', 'markdown:./notes', '--json']))).toHaveLength(1);
    expect((await run(dir, ['stats', '--store', 'memory:'])).code).toBe(0);
    expect(loads.sqlite).toBe(0);
    // Nothing configured and the default store not made yet: an empty SQLite store in process memory is read in its place.
    const bare = await run(dir, ['stats']);
    expect(bare.stdout).toContain('not made yet');
    expect(loads.sqlite).toBe(1);
  });
});
