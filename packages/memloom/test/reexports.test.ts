import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as core from '@memloom/core';
import * as umbrella from '../src/index.js';
import { packageDir } from './helpers.js';

/** Core exports that memloom replaces with its own. */
const REPLACED = ['createMemory'];

describe("memloom re-exports @memloom/core's API", () => {
  it('has every value of core, the same object, except the createMemory it replaces', () => {
    const missing = Object.keys(core).filter((name) => !REPLACED.includes(name) && !(name in umbrella));
    expect(missing).toEqual([]);
    for (const name of Object.keys(core)) {
      if (!REPLACED.includes(name)) expect(umbrella[name as keyof typeof umbrella], name).toBe(core[name as keyof typeof core]);
    }
    expect(umbrella.createMemory).not.toBe(core.createMemory);
  });

  it('has every type of core (as the type checker sees both modules)', { timeout: 60_000 }, () => {
    // Types are gone at run time: ask the compiler for the export names of both entry points.
    const config = ts.getParsedCommandLineOfConfigFile(join(packageDir, 'tsconfig.json'), {}, {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    });
    if (!config) throw new Error('tsconfig.json not read');
    const entry = join(packageDir, 'src/index.ts');
    const program = ts.createProgram([entry], config.options);
    const checker = program.getTypeChecker();
    const exportNames = (file: ts.SourceFile): string[] =>
      checker.getExportsOfModule(checker.getSymbolAtLocation(file)!).map((symbol) => symbol.name);
    const umbrellaFile = program.getSourceFile(entry)!;
    const coreFileName = ts.resolveModuleName('@memloom/core', entry, config.options, ts.sys).resolvedModule?.resolvedFileName;
    const coreFile = coreFileName === undefined ? undefined : program.getSourceFile(coreFileName);
    if (!coreFile) throw new Error(`@memloom/core's types not found (${coreFileName}): build it first`);
    const coreNames = exportNames(coreFile);
    expect(coreNames.length).toBeGreaterThan(250);
    const umbrellaNames = new Set(exportNames(umbrellaFile));
    expect(coreNames.filter((name) => !umbrellaNames.has(name))).toEqual([]);
    // The types the audit found missing, by name.
    for (const name of ['MemoryCategory', 'MemoryLevel', 'ScoreParts', 'ConversationMessage', 'TurnInput', 'MaintainOptions', 'CreateMemoryPipelineOptions', 'StrategyConfig']) {
      expect(umbrellaNames.has(name), name).toBe(true);
    }
  });
});
