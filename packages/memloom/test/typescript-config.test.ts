import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isEsModuleSource } from '../src/typescript-config.js';
import { buildDist, packageDir, runApp } from './helpers.js';

describe('which memloom.config.ts is loaded as an ES module on Node 20', () => {
  it('one written with import or export statements', () => {
    expect(isEsModuleSource("// memloom.config.ts\nimport { defineConfig } from 'memloom';\n\nexport default defineConfig({ store: 'memory:' });\n")).toBe(true);
    expect(isEsModuleSource("import type { MemloomConfig } from 'memloom';\nconst config: MemloomConfig = {};\nexport default config;\n")).toBe(true);
  });

  it('not one written for CommonJS, or without module syntax (tsx loads those as before)', () => {
    expect(isEsModuleSource("const path = require('node:path');\nmodule.exports = { store: path.join(__dirname, 'm.db') };\n")).toBe(false);
    expect(isEsModuleSource("export default { store: 'sqlite:' + __dirname + '/m.db' };\n")).toBe(false);
    expect(isEsModuleSource("/* export default {} */\n// import x from 'y'\nmodule.exports = {};\n")).toBe(false);
  });
});

// Inside vitest, Vite compiles every .ts file itself: these cases run createMemory() in a plain Node
// child process, as an application does, with this package (its dist) installed as `memloom`.
describe('createMemory() in plain Node, in a project whose package.json lacks "type": "module"', () => {
  let project: string;

  beforeAll(buildDist, 120_000);

  beforeEach(() => {
    project = mkdtempSync(join(tmpdir(), 'memloom-ts-config-'));
    mkdirSync(join(project, 'node_modules'));
    symlinkSync(packageDir, join(project, 'node_modules', 'memloom'), 'dir');
    writeFileSync(join(project, 'package.json'), '{ "name": "app", "private": true }\n');
    writeFileSync(
      join(project, 'app.mjs'),
      [
        "import { createMemory } from 'memloom';",
        'const memory = await createMemory();',
        "await memory.add('I keep my bike in the garage');",
        'const [found] = await memory.search("bike");',
        'console.log(JSON.stringify({ store: memory.store.name, scope: found.memory.scope }));',
        'await memory.close();',
      ].join('\n'),
    );
  });

  afterEach(() => rmSync(project, { recursive: true, force: true }));

  it("loads the README's memloom.config.ts (import { defineConfig } from 'memloom')", async () => {
    writeFileSync(
      join(project, 'memloom.config.ts'),
      "// memloom.config.ts\nimport { defineConfig } from 'memloom';\n\nexport default defineConfig({ store: 'memory:', embedder: 'lexical', scope: { userId: 'me' } });\n",
    );
    const result = await runApp(project);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({ store: 'memory', scope: { userId: 'me' } });
  });

  it('still loads a memloom.config.ts written for CommonJS as CommonJS', async () => {
    writeFileSync(
      join(project, 'memloom.config.ts'),
      "const path = require('node:path');\nmodule.exports = { store: 'sqlite:' + path.join('data', 'cjs.db'), embedder: 'lexical', scope: { userId: 'cjs' } };\n",
    );
    const result = await runApp(project);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({ store: 'sqlite', scope: { userId: 'cjs' } });
    expect(existsSync(join(project, 'data', 'cjs.db'))).toBe(true);
  });
});
