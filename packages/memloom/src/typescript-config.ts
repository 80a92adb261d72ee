import { existsSync, readFileSync } from 'node:fs';
import { register } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Module hooks for one configuration file, registered before it is first imported.
 *
 * On a Node.js that cannot import TypeScript (20, 22 before 22.18), the loader first imports the
 * file (which fails with ERR_UNKNOWN_FILE_EXTENSION), then imports it through tsx. tsx loads a `.ts`
 * file as CommonJS unless the nearest package.json says "type": "module"; written as an ES module
 * (`import { defineConfig } from 'memloom'`), its imports then become require() calls, which cannot
 * load memloom (an ES module only). These hooks mark the file as an ES module written in TypeScript:
 * tsx then compiles it as one, as Node 22.18+ does for a `.ts` file with ES module syntax. Before
 * tsx's hooks are there, the load hook fails the way Node does, so the loader turns to tsx as before.
 */
const HOOKS = `
let target;
const plain = (url) => url.split(/[?#]/)[0];
export function initialize(data) {
  target = data.url;
}
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (!result.format && plain(result.url) === target) return { ...result, format: 'module-typescript' };
  return result;
}
export async function load(url, context, next) {
  if (context.format === 'module-typescript' && plain(url) === target) {
    const error = new TypeError('Unknown file extension ".ts" for ' + new URL(plain(url)).pathname);
    error.code = 'ERR_UNKNOWN_FILE_EXTENSION';
    throw error;
  }
  return next(url, context);
}
`;

const prepared = new Set<string>();

/**
 * Make `file` (the configuration about to be loaded) load as the ES module it is written as, when
 * it is a `.ts` file with ES module syntax that this Node.js would otherwise hand to tsx as
 * CommonJS. Does nothing for other files, or where Node imports TypeScript by itself.
 */
export function prepareTypeScriptConfig(file: string): void {
  if (!file.endsWith('.ts') || prepared.has(file)) return;
  prepared.add(file);
  if ((process.features as { typescript?: unknown }).typescript) return; // Node 22.18+: it detects the syntax itself
  if (typeof register !== 'function' || packageType(dirname(file)) === 'module') return;
  let source: string;
  try {
    source = readFileSync(file, 'utf8');
  } catch {
    return; // the loader reports the file it cannot read
  }
  if (!isEsModuleSource(source)) return;
  register(`data:text/javascript,${encodeURIComponent(HOOKS)}`, { data: { url: pathToFileURL(file).href } });
}

/** Written as an ES module (import or export statements) and without CommonJS-only names. */
export function isEsModuleSource(source: string): boolean {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  if (!/^\s*(import|export)\b/m.test(code)) return false;
  return !/\b(require\s*\(|module\.exports\b|exports\.[\w$]+\s*=|__dirname\b|__filename\b)/.test(code);
}

/** The "type" of the nearest package.json from `directory` upwards ("commonjs" when none says). */
function packageType(directory: string): string {
  for (let current = directory; ; current = dirname(current)) {
    const manifest = join(current, 'package.json');
    if (existsSync(manifest)) {
      try {
        const type = (JSON.parse(readFileSync(manifest, 'utf8')) as { type?: unknown }).type;
        return type === 'module' ? 'module' : 'commonjs';
      } catch {
        return 'commonjs';
      }
    }
    if (dirname(current) === current) return 'commonjs';
  }
}
