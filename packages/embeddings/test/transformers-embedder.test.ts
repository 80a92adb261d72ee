import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cosineSimilarity, MemloomError } from '@memloom/core';
import { testEmbedder } from '@memloom/testkit';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTransformersEmbedder, type TransformersRuntime } from '../src/index.js';

/**
 * The model path, offline: memloom/tiny-bert is a BERT-shaped ONNX model
 * with a WordPiece tokenizer made by fixtures/models/generate-tiny-bert.py
 * (35 KB in all, both weights files included). Every request for the network goes to a spy that fails, and the
 * tests check that it was never called.
 */
const MODELS = fileURLToPath(new URL('./fixtures/models', import.meta.url));
const requests: string[] = [];
const offlineFetch = vi.fn(async (input: unknown) => {
  requests.push(String(input));
  throw new Error(`network disabled in tests: ${String(input)}`);
});
vi.stubGlobal('fetch', offlineFetch);

let runtime: TransformersRuntime & { env: { fetch: unknown; allowRemoteModels: boolean } };

beforeAll(async () => {
  runtime = (await import('@huggingface/transformers')) as never;
  runtime.env.fetch = offlineFetch;
});

afterAll(() => {
  vi.unstubAllGlobals();
});

const tiny = (options: Parameters<typeof createTransformersEmbedder>[0] = {}) =>
  createTransformersEmbedder({ model: 'memloom/tiny-bert', localModelPath: MODELS, ...options });

// The tiny model's vectors mean nothing, so the "rewording scores closer" case is off.
testEmbedder({ name: 'transformers.js (tiny-bert, q8)', create: () => tiny(), meaningful: false, tolerance: 1e-5 });
testEmbedder({ name: 'transformers.js (tiny-bert, fp32)', create: () => tiny({ dtype: 'fp32' }), meaningful: false, tolerance: 1e-5 });

describe('transformers.js embedder on the tiny fixture', () => {
  it('loads from a folder of models by id and reports shape, id and source', async () => {
    const embedder = await tiny();
    expect(embedder.dimension).toBe(16);
    expect(embedder.id).toBe('transformers:memloom/tiny-bert:q8:mean');
    expect(embedder.source).toBe(`${MODELS}/memloom/tiny-bert`);
    const vectors = await embedder.embed(['the user likes coffee', '用户喜欢喝咖啡', 'hello world']);
    expect(vectors).toHaveLength(3);
    for (const vector of vectors) {
      expect(vector).toHaveLength(16);
      expect(Math.hypot(...vector)).toBeCloseTo(1, 5);
    }
    await embedder.close();
    await expect(embedder.embed(['after close'])).rejects.toMatchObject({ code: 'CLOSED' });
  });

  it('gives the pinned vectors for quantized and full weights', async () => {
    const quantized = await tiny({ dtype: 'q8' });
    const full = await tiny({ dtype: 'fp32' });
    const [q] = await quantized.embed(['the user likes coffee']);
    const [f] = await full.embed(['the user likes coffee']);
    expect((q as number[]).slice(0, 4)).toEqual([0.061734, 0.116756, 0.155697, -0.225502].map((value) => expect.closeTo(value, 5)));
    expect((f as number[]).slice(0, 4)).toEqual([0.060148, 0.114645, 0.155366, -0.218468].map((value) => expect.closeTo(value, 5)));
    // int8 weights move the vector a little, not a lot.
    expect(cosineSimilarity(q as number[], f as number[])).toBeGreaterThan(0.99);
    expect(cosineSimilarity(q as number[], f as number[])).toBeLessThan(1 - 1e-7);
    const [chinese] = await quantized.embed(['用户喜欢喝咖啡']);
    expect((chinese as number[]).slice(0, 4)).toEqual([0.057, 0.023456, -0.244596, -0.265134].map((value) => expect.closeTo(value, 5)));
  });

  it('mean-pools token vectors over the attention mask and normalizes', async () => {
    const raw = await runtime.pipeline('feature-extraction', `${MODELS}/memloom/tiny-bert`, { dtype: 'q8', local_files_only: true });
    const texts = ['hello', 'the user likes coffee every morning'];
    const tokens = (await (raw as unknown as (t: string[], o: object) => Promise<{ tolist(): number[][][] }>)([texts[1] as string], {})).tolist()[0] as number[][];
    const mean = tokens[0]!.map((_, column) => tokens.reduce((sum, row) => sum + (row[column] as number), 0) / tokens.length);
    const norm = Math.hypot(...mean);
    const embedder = await tiny();
    // Embedded in a batch beside a shorter text, so padding is present and must be ignored.
    const [, pooled] = await embedder.embed(texts);
    (pooled as number[]).forEach((value, index) => expect(value).toBeCloseTo((mean[index] as number) / norm, 5));
  });

  it('loads from an explicit model folder and supports query and document prefixes', async () => {
    const plain = await createTransformersEmbedder({ modelPath: `${MODELS}/memloom/tiny-bert` });
    const prefixed = await createTransformersEmbedder({ modelPath: `${MODELS}/memloom/tiny-bert`, queryPrefix: 'query: ' });
    const [document] = await prefixed.embed(['coffee'], { purpose: 'document' });
    const [query] = await prefixed.embed(['coffee'], { purpose: 'query' });
    const [same] = await plain.embed(['coffee']);
    expect(document).toEqual(same);
    expect(query).not.toEqual(same);
  });

  it('never touched the network', () => {
    expect(requests).toEqual([]);
    expect(offlineFetch).not.toHaveBeenCalled();
  });
});

describe('transformers.js embedder without its model', () => {
  it('fails at once with MISSING_RESOURCE naming the files and the folder to put them in', async () => {
    const started = Date.now();
    const error = await createTransformersEmbedder({ model: 'Xenova/not-here', localModelPath: MODELS, cacheDir: `${MODELS}/../no-cache` }).catch(
      (caught: unknown) => caught,
    );
    expect(MemloomError.hasCode(error, 'MISSING_RESOURCE')).toBe(true);
    const message = (error as Error).message;
    expect(message).toMatch(/^\[memloom\] \[embeddings\] model Xenova\/not-here \(q8\) not found/);
    for (const file of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model_quantized.onnx']) expect(message).toContain(file);
    expect(message).toContain(`${MODELS}/Xenova/not-here`);
    expect(message).toContain('allowDownload: false');
    expect((error as MemloomError).details).toMatchObject({ model: 'Xenova/not-here' });
    expect(requests).toEqual([]);
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('names the weights file of the dtype asked for', async () => {
    const error = await tiny({ dtype: 'fp16' }).catch((caught: unknown) => caught);
    expect(MemloomError.hasCode(error, 'MISSING_RESOURCE')).toBe(true);
    expect((error as Error).message).toContain('missing: onnx/model_fp16.onnx');
  });

  it('turns a failed download into MISSING_RESOURCE instead of hanging or leaking a deep stack', async () => {
    const error = await createTransformersEmbedder({
      model: 'Xenova/not-here',
      localModelPath: MODELS,
      cacheDir: `${MODELS}/../no-cache`,
      allowDownload: true,
    }).catch((caught: unknown) => caught);
    expect(MemloomError.hasCode(error, 'MISSING_RESOURCE')).toBe(true);
    expect((error as Error).message).toContain('the download failed');
    // This is the one test that asks for the network: the spy saw it, and refused.
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.every((url) => url.includes('Xenova/not-here'))).toBe(true);
    requests.length = 0;
    offlineFetch.mockClear();
  });

  it.each([
    [{ dtype: 'q16' }, 'dtype'],
    [{ batchSize: 0 }, 'batchSize'],
    [{ model: '' }, 'model'],
    [{ model: '../etc' }, 'model'],
    [{ pooling: 'max' }, 'pooling'],
    [{ allowDownload: 'yes' }, 'allowDownload'],
  ])('rejects bad options %j', async (options, field) => {
    const error = await createTransformersEmbedder(options as never).catch((caught: unknown) => caught);
    expect(MemloomError.hasCode(error, 'INVALID_OPTIONS')).toBe(true);
    expect((error as Error).message).toContain(field);
  });
});

describe('transformers.js embedder ids name what decides the vectors', () => {
  const TINY = `${MODELS}/memloom/tiny-bert`;
  const scratch = mkdtempSync(join(tmpdir(), 'memloom-transformers-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('names a model folder given alone by the folder, not by the default model', async () => {
    const byFolder = await createTransformersEmbedder({ modelPath: TINY, dtype: 'fp32' });
    expect(byFolder.id).toMatch(/^transformers:folder:tiny-bert@[0-9a-f]{12}:fp32:mean$/);
    expect(byFolder.id).not.toContain('paraphrase-multilingual');
    // Stable: the same folder, or a copy of it, gets the same id.
    expect((await createTransformersEmbedder({ modelPath: TINY, dtype: 'fp32' })).id).toBe(byFolder.id);
    const copy = join(scratch, 'copy', 'tiny-bert');
    cpSync(TINY, copy, { recursive: true });
    expect((await createTransformersEmbedder({ modelPath: copy, dtype: 'fp32' })).id).toBe(byFolder.id);
    // Another tokenizer setup in a folder of the same name is another vector space.
    const changed = join(scratch, 'changed', 'tiny-bert');
    cpSync(TINY, changed, { recursive: true });
    const tokenizerConfig = JSON.parse(readFileSync(join(changed, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(changed, 'tokenizer_config.json'), JSON.stringify({ ...tokenizerConfig, model_max_length: 8 }));
    expect((await createTransformersEmbedder({ modelPath: changed, dtype: 'fp32' })).id).not.toBe(byFolder.id);
  });

  it('names a model folder by the model option when both are given, as before', async () => {
    const embedder = await createTransformersEmbedder({ modelPath: TINY, model: 'memloom/tiny-bert' });
    expect(embedder.id).toBe('transformers:memloom/tiny-bert:q8:mean');
  });

  it('keeps the default model name for a folder laid out as the default model (the README placement)', async () => {
    const folder = join(scratch, 'models', 'Xenova', 'paraphrase-multilingual-MiniLM-L12-v2');
    mkdirSync(folder, { recursive: true });
    cpSync(TINY, folder, { recursive: true });
    const embedder = await createTransformersEmbedder({ modelPath: folder });
    expect(embedder.id).toBe('transformers:Xenova/paraphrase-multilingual-MiniLM-L12-v2:q8:mean');
    // With sentence-transformers' cut, shorter than the tokenizer's, the vectors of long texts differ: so does the id.
    writeFileSync(join(folder, 'sentence_bert_config.json'), JSON.stringify({ max_seq_length: 16 }));
    expect((await createTransformersEmbedder({ modelPath: folder })).id).toBe('transformers:Xenova/paraphrase-multilingual-MiniLM-L12-v2:q8:mean:max16');
  });

  it('names the weights: a folder with other weights under the same config and tokenizer gets another id', async () => {
    const byFolder = await createTransformersEmbedder({ modelPath: TINY });
    // A "fine-tune": the same config and tokenizer, other weights (here the full-precision ones in the q8 file).
    const tuned = join(scratch, 'tuned', 'tiny-bert');
    cpSync(TINY, tuned, { recursive: true });
    cpSync(join(TINY, 'onnx', 'model.onnx'), join(tuned, 'onnx', 'model_quantized.onnx'));
    const other = await createTransformersEmbedder({ modelPath: tuned });
    const [a] = await byFolder.embed(['the user likes coffee']);
    const [b] = await other.embed(['the user likes coffee']);
    expect(a).not.toEqual(b);
    expect(other.id).toMatch(/^transformers:folder:tiny-bert@[0-9a-f]{12}:q8:mean$/);
    expect(other.id).not.toBe(byFolder.id);
  });

  it('names a sentence_bert_config.json that cuts texts shorter, also when the model option names the folder', async () => {
    const withLimit = (name: string, maxSeqLength: number) => {
      const folder = join(scratch, name, 'memloom', 'tiny-bert');
      cpSync(TINY, folder, { recursive: true });
      writeFileSync(join(folder, 'sentence_bert_config.json'), JSON.stringify({ max_seq_length: maxSeqLength, do_lower_case: false }));
      return folder;
    };
    const cut = withLimit('cut-at-8', 8);
    const plain = await createTransformersEmbedder({ model: 'memloom/tiny-bert', modelPath: TINY });
    const byPath = await createTransformersEmbedder({ model: 'memloom/tiny-bert', modelPath: cut });
    const byRoot = await createTransformersEmbedder({ model: 'memloom/tiny-bert', localModelPath: join(scratch, 'cut-at-8') });
    expect(plain.id).toBe('transformers:memloom/tiny-bert:q8:mean');
    expect(byPath.id).toBe('transformers:memloom/tiny-bert:q8:mean:max8');
    expect(byRoot.id).toBe(byPath.id);
    const long = Array.from({ length: 100 }, (_, index) => `word${index % 30}`).join(' ');
    const [whole] = await plain.embed([long]);
    const [short] = await byPath.embed([long]);
    expect(cosineSimilarity(whole as number[], short as number[])).toBeLessThan(0.99);
    // A limit the model's 64 positions cut below anyway changes nothing, and is not named.
    expect((await createTransformersEmbedder({ model: 'memloom/tiny-bert', modelPath: withLimit('cut-at-1000', 1000) })).id).toBe(plain.id);
    // Nor is a limit equal to what the model takes.
    expect((await createTransformersEmbedder({ model: 'memloom/tiny-bert', modelPath: withLimit('cut-at-64', 64) })).id).toBe(plain.id);
    // A folder named by itself says it too (its hash covers the file as well).
    expect((await createTransformersEmbedder({ modelPath: cut })).id).toMatch(/^transformers:folder:tiny-bert@[0-9a-f]{12}:q8:mean:max8$/);
  });

  it('names query and document prefixes when set, and only then', async () => {
    const plain = await tiny({ dtype: 'fp32' });
    const passage = await tiny({ dtype: 'fp32', documentPrefix: 'passage: ' });
    const both = await tiny({ dtype: 'fp32', queryPrefix: 'query: ', documentPrefix: 'passage: ' });
    const queryOnly = await tiny({ dtype: 'fp32', queryPrefix: 'query: ', documentPrefix: '' });
    expect(plain.id).toBe('transformers:memloom/tiny-bert:fp32:mean');
    expect(passage.id).toBe('transformers:memloom/tiny-bert:fp32:mean:document="passage: "');
    expect(both.id).toBe('transformers:memloom/tiny-bert:fp32:mean:query="query: ":document="passage: "');
    expect(queryOnly.id).toBe('transformers:memloom/tiny-bert:fp32:mean:query="query: "');
    expect((await createTransformersEmbedder({ modelPath: TINY, documentPrefix: 'passage: ' })).id).toMatch(
      /^transformers:folder:tiny-bert@[0-9a-f]{12}:q8:mean:document="passage: "$/,
    );
    const [a] = await plain.embed(['coffee']);
    const [b] = await passage.embed(['coffee']);
    expect(a).not.toEqual(b);
  });

  it('closes once, however often close is called', async () => {
    const embedder = await tiny();
    const pending = embedder.embed(['one', 'two']);
    const first = embedder.close();
    expect(await pending).toHaveLength(2);
    await first;
    await expect(embedder.close()).resolves.toBeUndefined();
    await expect(Promise.all([embedder.close(), embedder.close()])).resolves.toBeDefined();
    await expect(embedder.embed(['after close'])).rejects.toMatchObject({ code: 'CLOSED' });
  });
});

describe('transformers.js embedder cuts long texts at what the model takes', () => {
  const TINY = `${MODELS}/memloom/tiny-bert`;
  const scratch = mkdtempSync(join(tmpdir(), 'memloom-transformers-long-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  // 300 words: far more tokens than the tiny model's 64 position embeddings.
  const long = Array.from({ length: 300 }, (_, index) => `word${index % 50}`).join(' ');

  /** The fixture with its tokenizer's model_max_length set to `value` (undefined: left out, as some exports do). */
  function variant(name: string, value: number | undefined): string {
    const folder = join(scratch, name, 'tiny-bert');
    cpSync(TINY, folder, { recursive: true });
    const { model_max_length: _, ...rest } = JSON.parse(readFileSync(join(folder, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(folder, 'tokenizer_config.json'), JSON.stringify(value === undefined ? rest : { ...rest, model_max_length: value }));
    return folder;
  }

  it('embeds a text past max_position_embeddings when the tokenizer names no limit or 1e30, as if the limit were the model\'s', async () => {
    const [expected] = await (await createTransformersEmbedder({ modelPath: TINY, dtype: 'fp32' })).embed([long]);
    for (const [name, value] of [['none', undefined], ['huge', 1e30]] as const) {
      const embedder = await createTransformersEmbedder({ modelPath: variant(name, value), dtype: 'fp32' });
      const [vector] = await embedder.embed([long]);
      expect(vector, name).toHaveLength(embedder.dimension);
      vector!.forEach((value, index) => expect(value, `${name} [${index}]`).toBeCloseTo(expected![index]!, 6));
    }
  });

  it('keeps a tokenizer limit below the model\'s', async () => {
    // The same first words, then other ones: one vector under a limit of 8 tokens, two under the fixture's 64.
    const other = `${long.split(' ').slice(0, 10).join(' ')} ${Array.from({ length: 290 }, () => 'other').join(' ')}`;
    const [shortA, shortB] = await (await createTransformersEmbedder({ modelPath: variant('eight', 8), dtype: 'fp32' })).embed([long, other]);
    const [fullA, fullB] = await (await createTransformersEmbedder({ modelPath: TINY, dtype: 'fp32' })).embed([long, other]);
    shortA!.forEach((value, index) => expect(value).toBeCloseTo(shortB![index]!, 6));
    expect(fullA).not.toEqual(fullB);
  });
});

describe("transformers.js embedder cuts long texts where sentence-transformers does (sentence_bert_config.json)", () => {
  const TINY = `${MODELS}/memloom/tiny-bert`;
  const scratch = mkdtempSync(join(tmpdir(), 'memloom-transformers-sbert-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  const long = Array.from({ length: 300 }, (_, index) => `word${index % 50}`).join(' ');
  const other = `${long.split(' ').slice(0, 10).join(' ')} ${Array.from({ length: 290 }, () => 'other').join(' ')}`;

  function withConfig(name: string, text: string): string {
    const folder = join(scratch, name, 'tiny-bert');
    cpSync(TINY, folder, { recursive: true });
    writeFileSync(join(folder, 'sentence_bert_config.json'), text);
    return folder;
  }

  it('takes max_seq_length when it is below the tokenizer limit, and names another vector space', async () => {
    const folder = withConfig('eight', JSON.stringify({ max_seq_length: 8, do_lower_case: false }));
    const cut = await createTransformersEmbedder({ modelPath: folder, dtype: 'fp32' });
    const [a, b] = await cut.embed([long, other]);
    a!.forEach((value, index) => expect(value).toBeCloseTo(b![index]!, 6)); // the same first 8 tokens
    const whole = await createTransformersEmbedder({ modelPath: TINY, dtype: 'fp32' });
    const [fullA, fullB] = await whole.embed([long, other]);
    expect(fullA).not.toEqual(fullB);
    expect(cut.id).not.toBe(whole.id);
    // A limit above the model's is never taken: the model's 64 positions still cut.
    const above = await createTransformersEmbedder({ modelPath: withConfig('huge', JSON.stringify({ max_seq_length: 100000 })), dtype: 'fp32' });
    const [aboveA] = await above.embed([long]);
    aboveA!.forEach((value, index) => expect(value).toBeCloseTo(fullA![index]!, 6));
  });

  it('refuses a sentence_bert_config.json that is not JSON, or a length that is not a positive whole number (EMBEDDER_ERROR naming the file)', async () => {
    for (const [name, text] of [['broken', '{ max_seq'], ['zero', '{"max_seq_length": 0}'], ['text', '{"max_seq_length": "128"}']] as const) {
      await expect(createTransformersEmbedder({ modelPath: withConfig(name, text), dtype: 'fp32' }), name).rejects.toMatchObject({
        code: 'EMBEDDER_ERROR',
        message: expect.stringContaining('sentence_bert_config.json'),
      });
    }
  });
});

describe('transformers.js embedder errors name the model it was given', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'memloom-transformers-errors-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('names the folder, not the default model, when a modelPath alone fails to load', async () => {
    const folder = join(scratch, 'broken');
    cpSync(`${MODELS}/memloom/tiny-bert`, folder, { recursive: true });
    writeFileSync(join(folder, 'onnx', 'model_quantized.onnx'), 'not an onnx model');
    const error = (await createTransformersEmbedder({ modelPath: folder }).catch((caught: unknown) => caught)) as MemloomError;
    expect(error).toBeInstanceOf(MemloomError);
    expect(error.code).toBe('EMBEDDER_ERROR');
    expect(error.message).toContain(`the model in ${folder}`);
    expect(error.message).not.toContain('paraphrase-multilingual');
    // A folder missing its files: the message and the details name the folder's model.
    const empty = join(scratch, 'empty');
    mkdirSync(empty, { recursive: true });
    const missing = (await createTransformersEmbedder({ modelPath: empty }).catch((caught: unknown) => caught)) as MemloomError;
    expect(missing.code).toBe('MISSING_RESOURCE');
    expect(missing.details).toMatchObject({ model: `the model in ${empty}` });
    expect(JSON.stringify(missing.details)).not.toContain('paraphrase-multilingual');
    // Given both, the model option names it.
    const named = (await createTransformersEmbedder({ modelPath: folder, model: 'memloom/tiny-bert' }).catch((caught: unknown) => caught)) as MemloomError;
    expect(named.message).toContain('could not load memloom/tiny-bert from');
  });
});

describe('transformers.js embedder with modelPath never downloads', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'memloom-transformers-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  const fakeRuntime = () => {
    const pipeline = vi.fn(async () => {
      throw new Error('fake runtime: would have downloaded');
    });
    return { pipeline, runtime: { pipeline, env: { localModelPath: '/nonexistent/', cacheDir: null } } as unknown as TransformersRuntime };
  };

  it('fails with MISSING_RESOURCE naming the missing files, even with allowDownload: true', async () => {
    const empty = mkdtempSync(join(scratch, 'empty-'));
    const { pipeline, runtime: fake } = fakeRuntime();
    const error = await createTransformersEmbedder({ modelPath: empty, allowDownload: true, runtime: fake }).catch((caught: unknown) => caught);
    expect(pipeline).not.toHaveBeenCalled();
    expect(MemloomError.hasCode(error, 'MISSING_RESOURCE')).toBe(true);
    const message = (error as Error).message;
    for (const file of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model_quantized.onnx']) expect(message).toContain(file);
    expect(message).toContain(empty);
    expect(message).toContain('nothing is downloaded when modelPath is set');
    expect(message).not.toContain('paraphrase-multilingual');
  });

  it('names only the files that are missing', async () => {
    const partial = mkdtempSync(join(scratch, 'partial-'));
    cpSync(`${MODELS}/memloom/tiny-bert`, partial, { recursive: true });
    rmSync(join(partial, 'tokenizer.json'));
    const { pipeline, runtime: fake } = fakeRuntime();
    const error = await createTransformersEmbedder({ modelPath: partial, model: 'memloom/other', dtype: 'fp16', allowDownload: true, runtime: fake }).catch(
      (caught: unknown) => caught,
    );
    expect(pipeline).not.toHaveBeenCalled();
    expect(MemloomError.hasCode(error, 'MISSING_RESOURCE')).toBe(true);
    expect((error as Error).message).toContain('missing: tokenizer.json, onnx/model_fp16.onnx)');
    expect((error as MemloomError).details).toMatchObject({ missing: ['tokenizer.json', 'onnx/model_fp16.onnx'] });
  });

  it('does not reach the network with the real runtime either', async () => {
    const empty = mkdtempSync(join(scratch, 'empty-'));
    const error = await createTransformersEmbedder({ modelPath: empty, model: 'memloom/other', allowDownload: true }).catch((caught: unknown) => caught);
    expect(MemloomError.hasCode(error, 'MISSING_RESOURCE')).toBe(true);
    expect(requests).toEqual([]);
    expect(offlineFetch).not.toHaveBeenCalled();
  });
});

/** A runtime whose pipeline embeds every text as the same 4-dimensional vector, counting forward passes. */
function countingRuntime(onPass: (texts: string[]) => void = () => {}) {
  const passes: string[][] = [];
  const extractor = async (texts: string[]) => {
    passes.push(texts);
    onPass(texts);
    return { dims: [texts.length, 4], tolist: () => texts.map(() => [1, 0, 0, 0]) };
  };
  const runtime = { pipeline: async () => extractor, env: { localModelPath: '/nonexistent/', cacheDir: null } } as unknown as TransformersRuntime;
  return { passes, runtime };
}

describe('transformers.js embedder ids of large weights files', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'memloom-transformers-weights-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('hashes the size and both ends of a weights file over 2 MiB, and its external data files', async () => {
    const folder = join(scratch, 'big');
    mkdirSync(join(folder, 'onnx'), { recursive: true });
    for (const file of ['config.json', 'tokenizer.json', 'tokenizer_config.json']) writeFileSync(join(folder, file), '{}');
    const weights = join(folder, 'onnx', 'model_quantized.onnx');
    const bytes = Buffer.alloc(5 * 1024 * 1024, 7);
    writeFileSync(weights, bytes);
    const idOf = async () => (await createTransformersEmbedder({ modelPath: folder, runtime: countingRuntime().runtime })).id;
    const base = await idOf();
    expect(base).toMatch(/^transformers:folder:big@[0-9a-f]{12}:q8:mean$/);
    const changedAt = async (offset: number) => {
      const changed = Buffer.from(bytes);
      changed[offset] = 8;
      writeFileSync(weights, changed);
      const id = await idOf();
      writeFileSync(weights, bytes);
      return id;
    };
    expect(await changedAt(0)).not.toBe(base);
    expect(await changedAt(bytes.length - 1)).not.toBe(base);
    // Only the first and last MiB are read, so a start stays cheap for a model of any size.
    expect(await changedAt(bytes.length / 2)).toBe(base);
    writeFileSync(weights, Buffer.concat([bytes, Buffer.alloc(1, 7)]));
    expect(await idOf()).not.toBe(base);
    writeFileSync(weights, bytes);
    expect(await idOf()).toBe(base);
    // Weights kept beside the graph (onnx external data) are hashed too.
    writeFileSync(join(folder, 'onnx', 'model_quantized.onnx_data'), 'tensors');
    const withData = await idOf();
    expect(withData).not.toBe(base);
    writeFileSync(join(folder, 'onnx', 'model_quantized.onnx_data'), 'other tensors');
    expect(await idOf()).not.toBe(withData);
    // Other dtypes' files are not this model's weights.
    rmSync(join(folder, 'onnx', 'model_quantized.onnx_data'));
    writeFileSync(join(folder, 'onnx', 'model.onnx'), 'fp32 weights');
    expect(await idOf()).toBe(base);
  });
});

describe('transformers.js embedder stops at an aborted signal', () => {
  const TINY = `${MODELS}/memloom/tiny-bert`;

  it('rejects with the signal\'s reason before any forward pass when the signal is already aborted', async () => {
    const { passes, runtime: counting } = countingRuntime();
    const embedder = await createTransformersEmbedder({ modelPath: TINY, runtime: counting });
    const before = passes.length;
    const controller = new AbortController();
    const reason = new Error('stopped by the caller');
    controller.abort(reason);
    await expect(embedder.embed(['one', 'two'], { signal: controller.signal })).rejects.toBe(reason);
    expect(passes.length).toBe(before);
    // The embedder still works for the next call.
    await expect(embedder.embed(['three'])).resolves.toHaveLength(1);
  });

  it('runs no further batch once the signal is aborted during one', async () => {
    const controller = new AbortController();
    const { passes, runtime: counting } = countingRuntime((texts) => {
      if (texts[0] === 'a') controller.abort();
    });
    const embedder = await createTransformersEmbedder({ modelPath: TINY, batchSize: 2, runtime: counting });
    const before = passes.length;
    const error = await embedder.embed(['a', 'b', 'c', 'd', 'e'], { signal: controller.signal }).catch((caught: unknown) => caught);
    expect((error as Error).name).toBe('AbortError');
    expect(passes.slice(before)).toEqual([['a', 'b']]);
  });

  it('stops the real model too', async () => {
    const embedder = await tiny();
    const controller = new AbortController();
    controller.abort();
    await expect(embedder.embed(['the user likes coffee'], { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    await embedder.close();
  });
});
