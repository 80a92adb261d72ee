import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh folder under the OS temp dir, removed by `dispose`. */
export function tempFolder(prefix = 'memloom-sqlite-'): { path: string; file: (name?: string) => string; dispose: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return {
    path,
    file: (name = 'memory.db') => join(path, name),
    dispose: () => rmSync(path, { recursive: true, force: true }),
  };
}
