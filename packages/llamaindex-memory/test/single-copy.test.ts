import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Settings as CoreSettings } from '@llamaindex/core/global';
import { BaseMemoryBlock as FromCore } from '@llamaindex/core/memory';
import { BaseMemoryBlock as FromLlamaindex, Settings as LlamaindexSettings } from 'llamaindex';
import { describe, expect, it } from 'vitest';
import { memloomBlock } from '../src/index.js';
import { countTokens } from '../src/messages.js';
import { ScriptedLLM, setupMemory } from './helpers.js';

const require = createRequire(import.meta.url);

/** The folder of the @llamaindex/core copy that a package (or this one) resolves. */
function coreCopyFrom(packageName?: string): string {
  const from = packageName ? createRequire(require.resolve(packageName)) : require;
  const entry = realpathSync(from.resolve('@llamaindex/core/memory'));
  return entry.slice(0, entry.lastIndexOf('/memory/'));
}

describe('one copy of @llamaindex/core (0.6.23 next to 0.6.22 breaks constructor checks)', () => {
  it('is the copy that llamaindex, @llamaindex/workflow and this package all load', () => {
    const ours = coreCopyFrom();
    expect(ours).toMatch(/@llamaindex\+core@0\.6\.22\//);
    expect(coreCopyFrom('llamaindex')).toBe(ours);
    expect(coreCopyFrom('@llamaindex/workflow')).toBe(ours);
    expect(require(`${dirname(require.resolve('@llamaindex/core/memory'))}/../../package.json`).version).toBe('0.6.22');
  });

  it('so a memloom block is a BaseMemoryBlock of llamaindex and counts tokens with its global settings', () => {
    const { memory } = setupMemory();
    const block = memloomBlock({ memory, scope: { userId: 'alice' } });
    expect(FromLlamaindex).toBe(FromCore);
    expect(block).toBeInstanceOf(FromLlamaindex);

    const llm = new ScriptedLLM(() => ({ content: 'ok' }));
    LlamaindexSettings.llm = llm;
    expect(CoreSettings.llm).toBe(llm);

    const oneTokenPerCharacter = { encode: (text: string) => new Uint32Array(text.length), decode: () => '' };
    expect(CoreSettings.withTokenizer(oneTokenPerCharacter, () => countTokens('twelve chars'))).toBe(12);
  });
});
