import { execFile, execSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MemloomError } from '../src/index.js';

export const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * For tests that run this package's dist in a plain Node child process, as an application does: turbo builds
 * first (turbo.json); run by itself, a test rebuilds a missing or stale dist with this.
 */
export function buildDist(): void {
  const built = join(packageDir, 'dist', 'index.js');
  const sources = readdirSync(join(packageDir, 'src')).map((name) => join(packageDir, 'src', name));
  if (!existsSync(built) || sources.some((file) => statSync(file).mtimeMs > statSync(built).mtimeMs)) {
    execSync('npx tsup', { cwd: packageDir, stdio: 'ignore' });
  }
}

/**
 * Run app.mjs in `cwd` in a plain Node child process, with the environment less memloom's variables and
 * NODE_OPTIONS (vitest's), plus `env`.
 */
export function runApp(cwd: string, env: Record<string, string> = {}): Promise<{ stdout: string; stderr: string }> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('MEMLOOM_') && name !== 'NODE_OPTIONS'));
  return new Promise((resolve) => {
    execFile(process.execPath, ['app.mjs'], { cwd, env: { ...base, ...env } }, (_error, stdout, stderr) => resolve({ stdout, stderr }));
  });
}

/** The MemloomError a promise rejects with; anything else (or no rejection) fails the test. */
export async function errorOf(promise: Promise<unknown>): Promise<MemloomError> {
  try {
    await promise;
  } catch (error) {
    if (MemloomError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a MemloomError');
}
