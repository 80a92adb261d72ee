import { describe, expect, it } from 'vitest';
import { isEsModuleSource } from '../src/ts-config.js';

describe('which memloom.config.ts the CLI loads as an ES module on Node 20', () => {
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
