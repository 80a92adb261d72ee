import { createTestEmbedder } from '@memloom/core/testing';
import { describe, expect, it } from 'vitest';
import {
  createCachedEmbedder,
  createCompositeEmbedder,
  createDefaultEmbedder,
  createLexicalEmbedder,
  createOfflineEmbedder,
  createScriptRoutedEmbedder,
  createTransformersEmbedder,
  createUseLiteEmbedder,
} from '../src/index.js';

const invalid = (pattern: RegExp) => expect.objectContaining({ code: 'INVALID_OPTIONS', backend: 'embeddings', message: expect.stringMatching(pattern) });

describe('factory options', () => {
  it.each([
    ['createDefaultEmbedder', () => createDefaultEmbedder({ cacheEntrys: 0 } as never), 'cacheEntrys'],
    ['createDefaultEmbedder', () => createDefaultEmbedder({ semanticWeight: 0.5 } as never), 'semanticWeight'],
    ['createOfflineEmbedder', () => createOfflineEmbedder({ semanticweight: 0.5 } as never), 'semanticweight'],
    ['createOfflineEmbedder', () => createOfflineEmbedder({ lexical: { wordDim: 512 } } as never), 'lexical.wordDim'],
    ['createLexicalEmbedder', () => createLexicalEmbedder({ wordDim: 8 } as never), 'wordDim'],
    ['createUseLiteEmbedder', () => createUseLiteEmbedder({ maxChars: 10 } as never), 'maxChars'],
    ['createCompositeEmbedder', () => createCompositeEmbedder([{ embedder: createTestEmbedder(), weight: 1 }], { name: 'x' } as never), 'name'],
    ['createScriptRoutedEmbedder', () => createScriptRoutedEmbedder({ latin: createTestEmbedder(), cjk: createTestEmbedder(), CJK: createTestEmbedder() } as never), 'CJK'],
  ])('%s refuses an unknown option, naming it and the factory', (factory, create, key) => {
    expect(create).toThrow(invalid(new RegExp(`^\\[memloom\\] \\[embeddings\\] ${factory}: unknown option "${key.replace('.', '\\.')}" \\(known: `)));
  });

  it('createTransformersEmbedder refuses an unknown option instead of loading the default model', async () => {
    // Without the check, `modelpath` was ignored and the default model looked for (MISSING_RESOURCE).
    await expect(createTransformersEmbedder({ modelpath: '/nope' } as never)).rejects.toThrow(invalid(/createTransformersEmbedder: unknown option "modelpath" \(known: model, modelPath,/));
  });

  it('says an empty prefix is allowed when a prefix is not a string', async () => {
    await expect(createTransformersEmbedder({ queryPrefix: 5 } as never)).rejects.toThrow(invalid(/queryPrefix must be a string$/));
    await expect(createTransformersEmbedder({ model: '' })).rejects.toThrow(invalid(/model must be a non-empty string$/));
  });

  it('names its own option when cacheEntries or persistentCache is wrong', () => {
    expect(() => createDefaultEmbedder({ cacheEntries: -1 })).toThrow(invalid(/default embedder: cacheEntries must be a whole number >= 0, got -1$/));
    expect(() => createDefaultEmbedder({ cacheEntries: '5' } as never)).toThrow(invalid(/cacheEntries .*, got "5"$/));
    for (const persistentCache of [{}, 5, null]) {
      expect(() => createDefaultEmbedder({ persistentCache } as never)).toThrow(invalid(/default embedder: persistentCache must be an object with getMany and setMany methods/));
    }
    // What was given instead: an object by its keys, a function by its kind (not its source text), a long string cut.
    expect(() => createDefaultEmbedder({ persistentCache: { get: () => 1, set: () => 1 } } as never)).toThrow(invalid(/persistentCache must be an object with getMany and setMany methods, got \{ get, set \}$/));
    expect(() => createDefaultEmbedder({ persistentCache: () => ({ getMany: 1 }) } as never)).toThrow(invalid(/persistentCache must be an object with getMany and setMany methods, got a function$/));
    expect(() => createDefaultEmbedder({ cacheEntries: '1'.repeat(500) } as never)).toThrow(invalid(/cacheEntries .*, got "1{40}…"$/));
    const persistentCache = { getMany: async () => new Map<string, number[]>(), setMany: async () => undefined };
    expect(createDefaultEmbedder({ cacheEntries: 0, persistentCache }).id).toBe(createOfflineEmbedder().id);
  });

  it('refuses a composite or routed id that is not a non-empty string', () => {
    const parts = [{ embedder: createTestEmbedder(), weight: 1 }];
    for (const id of ['', ' ', 5]) {
      expect(() => createCompositeEmbedder(parts, { id } as never)).toThrow(invalid(/composite embedder: id must be a non-empty string/));
      expect(() => createScriptRoutedEmbedder({ latin: createTestEmbedder(), cjk: createTestEmbedder(), id } as never)).toThrow(invalid(/script-routed embedder: id must be a non-empty string/));
    }
    expect(createCompositeEmbedder(parts, { id: 'mine' }).id).toBe('mine');
    expect(createScriptRoutedEmbedder({ latin: createTestEmbedder(), cjk: createTestEmbedder(), id: 'mine' }).id).toBe('mine');
  });

  it('shows a number given as text in quotes, so it is not taken for the number', () => {
    const parts = (weight: unknown) => [{ embedder: createTestEmbedder(), weight }] as never;
    const cases: Array<[() => unknown, RegExp]> = [
      [() => createOfflineEmbedder({ semanticWeight: '0.5' } as never), /semanticWeight must be a number between 0 and 1 \(exclusive\), got "0\.5"$/],
      [() => createOfflineEmbedder({ lexical: 'none' } as never), /lexical must be an object, got "none"$/],
      [() => createOfflineEmbedder('fast' as never), /options must be an object, got "fast"$/],
      [() => createDefaultEmbedder(null as never), /options must be an object, got null$/],
      [() => createLexicalEmbedder({ wordDimension: '512' } as never), /wordDimension must be an integer from 8 to 65536, got "512"$/],
      [() => createLexicalEmbedder({ charDimension: '0' } as never), /charDimension must be an integer from 0 to 65536, got "0"$/],
      [() => createLexicalEmbedder({ charNgramSize: '3' } as never), /charNgramSize must be an integer from 2 to 6, got "3"$/],
      [() => createLexicalEmbedder({ charWeight: '0.2' } as never), /charWeight must be a number in \[0, 1\), got "0\.2"$/],
      [() => createCompositeEmbedder(parts('1')), /needs a positive weight, got "1"$/],
      [() => createCompositeEmbedder(parts(1), 'mine' as never), /options must be an object, got "mine"$/],
      [() => createCachedEmbedder(createTestEmbedder(), 'big' as never), /cached embedder: options must be an object, got "big"$/],
      [() => createUseLiteEmbedder({ batchSize: '32' } as never), /batchSize must be a whole number >= 1, got "32"$/],
      [() => createUseLiteEmbedder({ maxCharacters: '100' } as never), /maxCharacters must be a whole number >= 1, got "100"$/],
      [() => createUseLiteEmbedder(7 as never), /options must be an object, got 7$/],
    ];
    for (const [create, message] of cases) expect(create, String(message)).toThrow(invalid(message));
  });

  it('reads a lexical setting given as undefined as the offline default, and refuses an array', () => {
    expect(createOfflineEmbedder({ lexical: { wordDimension: undefined, charDimension: undefined } }).id).toBe(createOfflineEmbedder().id);
    expect(() => createOfflineEmbedder({ lexical: [] as never })).toThrow(invalid(/lexical must be an object, got an array/));
  });
});
