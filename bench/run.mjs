#!/usr/bin/env node
// Dispatcher for `pnpm bench <suite> [options]`. Each suite is a TypeScript
// file under src/, run with tsx against the built workspace packages.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const suites = {
  markdown: 'src/markdown-bench.ts',
};

const [name, ...args] = process.argv.slice(2);
if (!name || !(name in suites)) {
  console.error(`usage: pnpm bench <suite> [options]\nsuites: ${Object.keys(suites).join(', ')}`);
  process.exit(name ? 1 : 0);
}
const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(here, suites[name]), ...args], { cwd: here, stdio: 'inherit' });
process.exit(result.status ?? 1);
