import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { MemloomError, type Embedder, type EmbedOptions } from '@memloom/core';
import { assertKnownOptions } from './known-options.js';
import { assertTexts } from './lexical-embedder.js';

/** Weight formats transformers.js can load; each maps to a file in the model's `onnx/` folder. */
export type TransformersDtype = 'fp32' | 'fp16' | 'q8' | 'int8' | 'uint8' | 'q4' | 'bnb4' | 'q4f16';

/** The multilingual default for users who can download it (50+ languages, 384 dimensions, ~120 MB quantized). */
export const DEFAULT_TRANSFORMERS_MODEL = 'Xenova/paraphrase-multilingual-MiniLM-L12-v2';

export interface TransformersEmbedderOptions {
  /**
   * A sentence-transformers model exported to ONNX: a Hub id such as
   * `Xenova/all-MiniLM-L6-v2`, looked up under `localModelPath` and `cacheDir`.
   * @default 'Xenova/paraphrase-multilingual-MiniLM-L12-v2'
   */
  model?: string;
  /**
   * A folder that holds this model's files directly (`config.json`,
   * `tokenizer.json`, `tokenizer_config.json`, `onnx/model_quantized.onnx`).
   * When set, nothing else is searched and nothing is downloaded, whatever
   * `allowDownload` says. The `id` names the model by `model` when that is
   * given too, else by the folder (see the package README).
   */
  modelPath?: string;
  /**
   * A folder of models by id: the model is read from `<localModelPath>/<model>/`.
   * @default transformers.js's own (`env.localModelPath`)
   */
  localModelPath?: string;
  /**
   * Where downloaded models are cached, by id.
   * @default transformers.js's own (`env.cacheDir`)
   */
  cacheDir?: string;
  /**
   * Fetch the model from the Hugging Face Hub when it is not found locally.
   * Off by default: memloom never reaches the network unless told to.
   * @default false
   */
  allowDownload?: boolean;
  /**
   * Weights to load: `q8` is `onnx/model_quantized.onnx` (4x smaller, nearly
   * as good), `fp32` is `onnx/model.onnx`.
   * @default 'q8'
   */
  dtype?: TransformersDtype;
  /** How token vectors become one text vector. @default 'mean' */
  pooling?: 'mean' | 'cls';
  /** Texts per forward pass; larger inputs are split. @default 32 */
  batchSize?: number;
  /** Prepended to queries, for models trained with one (e5: `'query: '`). @default '' */
  queryPrefix?: string;
  /** Prepended to documents (e5: `'passage: '`). @default '' */
  documentPrefix?: string;
  /**
   * The transformers.js module, for tests or bundlers. Loaded with a dynamic
   * `import('@huggingface/transformers')` when omitted.
   */
  runtime?: TransformersRuntime;
}

/** The part of `@huggingface/transformers` this embedder uses. */
export interface TransformersRuntime {
  pipeline(task: 'feature-extraction', model: string, options: Record<string, unknown>): Promise<FeatureExtractor>;
  env: { localModelPath: string; cacheDir: string | null };
}

interface FeatureExtractor {
  (texts: string[], options: { pooling: 'mean' | 'cls'; normalize: boolean }): Promise<{ dims: number[]; tolist(): unknown }>;
  dispose?(): Promise<void>;
  /** transformers.js's: the pipeline truncates inputs at its `model_max_length` (read from tokenizer_config.json). */
  tokenizer?: { model_max_length?: number; _tokenizerConfig?: Record<string, unknown> };
  model?: { config?: { model_type?: unknown; max_position_embeddings?: unknown; pad_token_id?: unknown } };
}

export interface TransformersEmbedder extends Embedder {
  /** The folder the model was loaded from, or the Hub id when it was downloaded. */
  readonly source: string;
  /** Wait for running batches, then free the ONNX session; later calls fail with CLOSED. */
  close(): Promise<void>;
}

const REQUIRED_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json'] as const;
/** sentence-transformers' settings, when a folder has them: the length it cuts texts at. */
const SENTENCE_CONFIG = 'sentence_bert_config.json';

/**
 * Load a sentence-transformers ONNX model with transformers.js and embed
 * with mean pooling and L2 normalization. The model is loaded here, so a
 * missing model fails now (MISSING_RESOURCE, naming the files and where to
 * put them) rather than on the first `add`.
 *
 * `@huggingface/transformers` is an optional peer dependency (it brings
 * onnxruntime, ~400 MB installed): install it to use this embedder.
 */
export async function createTransformersEmbedder(options: TransformersEmbedderOptions = {}): Promise<TransformersEmbedder> {
  const settings = resolveOptions(options);
  const runtime = options.runtime ?? (await loadRuntime());
  const candidates = candidateFolders(settings, runtime);
  const weightsFile = `onnx/${weightsFileName(settings.dtype)}`;
  const present = candidates.find((folder) => missingFiles(folder, weightsFile).length === 0);

  // An explicit folder is the whole answer: a missing file there is never fetched from the Hub.
  if (!present && (settings.modelPath !== undefined || !settings.allowDownload)) throw missingModelError(settings, candidates, weightsFile);

  const source = present ?? settings.model;
  let extractor: FeatureExtractor;
  try {
    extractor = await runtime.pipeline('feature-extraction', present ?? settings.model, {
      dtype: settings.dtype,
      // A folder path is read as is; a Hub id is downloaded (allowDownload) into the cache.
      local_files_only: !!present || !settings.allowDownload,
      ...(settings.cacheDir ? { cache_dir: settings.cacheDir } : {}),
    });
  } catch (error) {
    if (!present) throw missingModelError(settings, candidates, weightsFile, error);
    throw new MemloomError({
      code: 'EMBEDDER_ERROR',
      backend: 'embeddings',
      message: `could not load ${settings.label} from ${present}: ${firstLine(error)}`,
      cause: error,
      details: { folder: present },
    });
  }

  // Read once: it sets where texts are cut, and is part of a folder's id.
  const sentenceConfig = present ? readIfPresent(join(present, SENTENCE_CONFIG)) : undefined;
  const sentenceLimit = present && sentenceConfig ? sentenceTransformersLimit(join(present, SENTENCE_CONFIG), sentenceConfig) : undefined;
  const modelLimit = inputLimit(extractor, undefined);
  const limit = inputLimit(extractor, sentenceLimit);
  setInputLimit(extractor, limit);
  const dimension = await probeDimension(extractor, settings);
  // A sentence_bert_config.json that cuts texts shorter than the model and its tokenizer do changes their vectors: the id says so.
  const id = embedderId(options, settings, source, {
    sentenceConfig,
    weightsFile,
    ...(limit !== undefined && limit !== modelLimit ? { maxLength: limit } : {}),
  });
  // One forward pass at a time: onnxruntime already uses every core, and queuing keeps memory flat.
  let queue: Promise<unknown> = Promise.resolve();
  let closed = false;
  let closing: Promise<void> | undefined;

  return {
    id,
    dimension,
    source,
    async embed(texts: readonly string[], embedOptions?: EmbedOptions): Promise<number[][]> {
      assertTexts(texts, id);
      if (closed) throw new MemloomError({ code: 'CLOSED', backend: 'embeddings', message: `${id} was closed` });
      if (texts.length === 0) return [];
      const prefix = embedOptions?.purpose === 'query' ? settings.queryPrefix : settings.documentPrefix;
      const inputs = texts.map((text) => prefix + text);
      const run = queue.then(() => embedBatches(extractor, inputs, settings, dimension, id, embedOptions?.signal));
      queue = run.catch(() => undefined);
      return run;
    },
    close() {
      // Idempotent: onnxruntime throws "Session already disposed." on a second dispose.
      closed = true;
      closing ??= queue.then(async () => {
        await extractor.dispose?.();
      });
      return closing;
    },
  };
}

interface Settings {
  model: string;
  /** The model as errors name it: the folder's, for a modelPath given without a model. */
  label: string;
  modelPath: string | undefined;
  localModelPath: string | undefined;
  cacheDir: string | undefined;
  allowDownload: boolean;
  dtype: TransformersDtype;
  pooling: 'mean' | 'cls';
  batchSize: number;
  queryPrefix: string;
  documentPrefix: string;
}

const DTYPES: readonly TransformersDtype[] = ['fp32', 'fp16', 'q8', 'int8', 'uint8', 'q4', 'bnb4', 'q4f16'];

// Every option of TransformersEmbedderOptions, no more and no fewer: the compiler checks the list both ways.
const OPTION_KEYS = {
  model: true,
  modelPath: true,
  localModelPath: true,
  cacheDir: true,
  allowDownload: true,
  dtype: true,
  pooling: true,
  batchSize: true,
  queryPrefix: true,
  documentPrefix: true,
  runtime: true,
} satisfies Record<keyof TransformersEmbedderOptions, true>;

function resolveOptions(options: TransformersEmbedderOptions): Settings {
  if (options === null || typeof options !== 'object') throw invalid('options must be an object');
  assertKnownOptions(options, OPTION_KEYS, 'createTransformersEmbedder');
  const text = (name: keyof TransformersEmbedderOptions, fallback: string | undefined) => {
    const value = options[name];
    if (value === undefined) return fallback;
    const mayBeEmpty = name === 'queryPrefix' || name === 'documentPrefix';
    if (typeof value !== 'string' || (!mayBeEmpty && value.trim() === '')) {
      throw invalid(`${name} must be a ${mayBeEmpty ? '' : 'non-empty '}string`);
    }
    return value;
  };
  const settings: Settings = {
    model: text('model', DEFAULT_TRANSFORMERS_MODEL) as string,
    label: '',
    modelPath: text('modelPath', undefined),
    localModelPath: text('localModelPath', undefined),
    cacheDir: text('cacheDir', undefined),
    allowDownload: options.allowDownload ?? false,
    dtype: options.dtype ?? 'q8',
    pooling: options.pooling ?? 'mean',
    batchSize: options.batchSize ?? 32,
    queryPrefix: text('queryPrefix', '') as string,
    documentPrefix: text('documentPrefix', '') as string,
  };
  if (typeof settings.allowDownload !== 'boolean') throw invalid('allowDownload must be true or false');
  if (!DTYPES.includes(settings.dtype)) throw invalid(`dtype must be one of ${DTYPES.join(', ')}, got ${String(settings.dtype)}`);
  if (settings.pooling !== 'mean' && settings.pooling !== 'cls') throw invalid(`pooling must be 'mean' or 'cls'`);
  if (!Number.isInteger(settings.batchSize) || settings.batchSize < 1) throw invalid('batchSize must be a whole number >= 1');
  settings.label = options.model === undefined && settings.modelPath !== undefined ? `the model in ${settings.modelPath}` : settings.model;
  if (settings.model.includes('..')) throw invalid('model must be a Hub id such as Xenova/all-MiniLM-L6-v2 (use modelPath for a folder)');
  return settings;
}

/** What, beside the options, names a loaded model's vector space. */
interface LoadedModel {
  /** The folder's sentence_bert_config.json, when it has one. */
  sentenceConfig: Buffer | undefined;
  /** The weights file the dtype loads, relative to the folder (`onnx/model_quantized.onnx`). */
  weightsFile: string;
  /** Set when sentence_bert_config.json cuts texts shorter than the model and its tokenizer do. */
  maxLength?: number;
}

/**
 * Names the vector space, so a store never mixes vectors of two setups:
 * `transformers:<model>:<dtype>:<pooling>`, then `:max<n>` when the folder's
 * sentence_bert_config.json cuts texts at n tokens, shorter than the model
 * and its tokenizer would, then the prefixes when set (JSON-quoted, so any
 * text fits). Ids without those are unchanged from earlier versions.
 *
 * `<model>` is the `model` option when given (also beside `modelPath`: the
 * caller says which model the folder holds). A `modelPath` alone is named by
 * the folder: `folder:<folder name>@<hash>`, the hash over its config,
 * tokenizer and weights files, except a folder laid out as the default
 * model's Hub id (`…/Xenova/paraphrase-multilingual-MiniLM-L12-v2`, as the
 * README places it), which keeps the default model's name.
 */
function embedderId(options: TransformersEmbedderOptions, settings: Settings, source: string, loaded: LoadedModel): string {
  let model = settings.model;
  if (settings.modelPath !== undefined && options.model === undefined) {
    const segments = source.split(/[\\/]+/).filter((segment) => segment !== '');
    if (segments.slice(-2).join('/') !== DEFAULT_TRANSFORMERS_MODEL) model = `folder:${basename(source)}@${folderDigest(source, loaded)}`;
  }
  let id = `transformers:${model}:${settings.dtype}:${settings.pooling}`;
  if (loaded.maxLength !== undefined) id += `:max${loaded.maxLength}`;
  if (settings.queryPrefix !== '') id += `:query=${JSON.stringify(settings.queryPrefix)}`;
  if (settings.documentPrefix !== '') id += `:document=${JSON.stringify(settings.documentPrefix)}`;
  return id;
}

/**
 * A short hash of what decides a folder's vectors: its config, tokenizer,
 * sentence-transformers settings and weights (with their external data
 * files, `<weights>_data`, `<weights>_data_1`, …, when the model has them).
 */
function folderDigest(folder: string, loaded: LoadedModel): string {
  const hash = createHash('sha256');
  for (const file of REQUIRED_FILES) {
    const bytes = readFileSync(join(folder, file));
    hash.update(`${file}\u0000${bytes.length}\u0000`).update(bytes);
  }
  const { sentenceConfig } = loaded;
  if (sentenceConfig) hash.update(`${SENTENCE_CONFIG}\u0000${sentenceConfig.length}\u0000`).update(sentenceConfig);
  const weightsFolder = dirname(loaded.weightsFile);
  const weightsName = basename(loaded.weightsFile);
  const externalData = readdirSync(join(folder, weightsFolder))
    .filter((name) => name === `${weightsName}_data` || name.startsWith(`${weightsName}_data_`))
    .sort();
  for (const file of [weightsName, ...externalData]) hashLargeFile(hash, join(folder, weightsFolder, file), `${weightsFolder}/${file}`);
  return hash.digest('hex').slice(0, 12);
}

/** Bytes of a large weights file hashed from each end. */
const WEIGHTS_SAMPLE_BYTES = 1024 * 1024;

/**
 * Adds a file's name, size and bytes to `hash`; a file over 2 MiB adds only
 * its first and last MiB. Kept cheap because it runs on every start (a full
 * SHA-256 of a 1 GB fp32 model takes seconds). Other weights (another model,
 * a fine-tune) differ in size or in those bytes, which hold tensors of their
 * own; a change confined to the middle of a large file keeps the id.
 */
function hashLargeFile(hash: ReturnType<typeof createHash>, path: string, name: string): void {
  const { size } = statSync(path);
  hash.update(`${name}\u0000${size}\u0000`);
  if (size <= 2 * WEIGHTS_SAMPLE_BYTES) {
    hash.update(readFileSync(path));
    return;
  }
  const buffer = Buffer.alloc(WEIGHTS_SAMPLE_BYTES);
  const descriptor = openSync(path, 'r');
  try {
    for (const position of [0, size - WEIGHTS_SAMPLE_BYTES]) {
      const read = readSync(descriptor, buffer, 0, WEIGHTS_SAMPLE_BYTES, position);
      hash.update(buffer.subarray(0, read));
    }
  } finally {
    closeSync(descriptor);
  }
}

/** Where to look, in order: the explicit folder, else `<localModelPath>/<id>` then `<cacheDir>/<id>`. */
function candidateFolders(settings: Settings, runtime: TransformersRuntime): string[] {
  if (settings.modelPath) return [resolve(settings.modelPath)];
  const roots = [settings.localModelPath ?? runtime.env.localModelPath, settings.cacheDir ?? runtime.env.cacheDir ?? undefined];
  const folders = roots.filter((root): root is string => !!root).map((root) => resolve(root, settings.model));
  return [...new Set(folders)];
}

function weightsFileName(dtype: TransformersDtype): string {
  const suffix: Record<TransformersDtype, string> = {
    fp32: '',
    fp16: '_fp16',
    q8: '_quantized',
    int8: '_int8',
    uint8: '_uint8',
    q4: '_q4',
    bnb4: '_bnb4',
    q4f16: '_q4f16',
  };
  return `model${suffix[dtype]}.onnx`;
}

function missingFiles(folder: string, weightsFile: string): string[] {
  return [...REQUIRED_FILES, weightsFile].filter((file) => !existsSync(join(folder, file)));
}

function missingModelError(settings: Settings, candidates: string[], weightsFile: string, cause?: unknown): MemloomError {
  const where = candidates.map((folder) => `${folder} (missing: ${missingFiles(folder, weightsFile).join(', ')})`).join('; ');
  const target = candidates[0] ?? '<folder>';
  const files = [...REQUIRED_FILES, weightsFile];
  if (settings.modelPath !== undefined) {
    return new MemloomError({
      code: 'MISSING_RESOURCE',
      backend: 'embeddings',
      message:
        `model folder ${target} (${settings.dtype}) is incomplete (missing: ${missingFiles(target, weightsFile).join(', ')}); ` +
        `nothing is downloaded when modelPath is set: put config.json, tokenizer.json, tokenizer_config.json and ${weightsFile} ` +
        `from the model's Hub repository into ${target}`,
      details: { model: settings.label, folders: candidates, files, missing: missingFiles(target, weightsFile) },
    });
  }
  const download = settings.allowDownload
    ? `the download failed (${firstLine(cause)}); `
    : 'downloads are off (allowDownload: false); ';
  return new MemloomError({
    code: 'MISSING_RESOURCE',
    backend: 'embeddings',
    message:
      `model ${settings.model} (${settings.dtype}) not found: looked in ${where}. ${download}` +
      `put config.json, tokenizer.json, tokenizer_config.json and ${weightsFile} from the model's Hub repository into ${target}, ` +
      `or pass modelPath pointing at a folder that holds them`,
    ...(cause === undefined ? {} : { cause }),
    details: { model: settings.model, folders: candidates, files },
  });
}

/**
 * Model types whose position ids start after the padding id (RoBERTa's scheme): such a model
 * takes `max_position_embeddings - pad_token_id - 1` tokens (514 - 2 = 512).
 */
const POSITIONS_AFTER_PADDING = new Set(['roberta', 'xlm-roberta', 'camembert', 'mpnet']);

/**
 * Where the pipeline should cut inputs: the lowest of the tokenizer's
 * `model_max_length`, what the model can take, and `sentenceLimit` (a
 * sentence_bert_config.json's `max_seq_length`); undefined when none is known
 * or the pipeline has no tokenizer. transformers.js truncates at the
 * tokenizer's `model_max_length`, which some exported tokenizers leave out
 * (read as unlimited) or set far too high (1e30): a text longer than the
 * model's position embeddings then fails inside onnxruntime ("Attempting to
 * broadcast an axis…") instead of being cut, as sentence-transformers cuts
 * it. What the model takes is `max_position_embeddings` in config.json.
 */
function inputLimit(extractor: FeatureExtractor, sentenceLimit: number | undefined): number | undefined {
  const { tokenizer } = extractor;
  if (!tokenizer) return undefined;
  const config = extractor.model?.config;
  const positions = config?.max_position_embeddings;
  const limits: number[] = sentenceLimit === undefined ? [] : [sentenceLimit];
  if (typeof positions === 'number' && Number.isInteger(positions) && positions > 0) {
    const padding = typeof config?.pad_token_id === 'number' ? config.pad_token_id : 1;
    limits.push(POSITIONS_AFTER_PADDING.has(String(config?.model_type)) ? positions - padding - 1 : positions);
  }
  const current = tokenizer.model_max_length;
  if (typeof current === 'number' && current > 0) limits.push(current);
  const limit = Math.min(...limits);
  return Number.isFinite(limit) && limit > 0 ? limit : undefined;
}

/**
 * Make the pipeline cut inputs at `limit`, lowering the tokenizer's
 * `model_max_length`, never raising it. transformers.js 3 keeps
 * `model_max_length` as a field, 4 reads it from the tokenizer config:
 * whichever this one does is set.
 */
function setInputLimit(extractor: FeatureExtractor, limit: number | undefined): void {
  const { tokenizer } = extractor;
  if (!tokenizer || limit === undefined) return;
  const current = tokenizer.model_max_length;
  if (typeof current === 'number' && current <= limit) return;
  if (tokenizer._tokenizerConfig && typeof tokenizer._tokenizerConfig === 'object' && !Object.getOwnPropertyDescriptor(tokenizer, 'model_max_length')) {
    tokenizer._tokenizerConfig.model_max_length = limit;
  } else {
    tokenizer.model_max_length = limit;
  }
}

/**
 * `max_seq_length` of a folder's `sentence_bert_config.json` (its bytes): the length
 * sentence-transformers cuts texts at for this model (128 for paraphrase-multilingual-MiniLM-L12-v2,
 * whose tokenizer says 512), so vectors of long texts are the ones Python gives. A file that is not
 * JSON, or a length that is not a positive whole number, is EMBEDDER_ERROR naming the file.
 */
function sentenceTransformersLimit(file: string, bytes: Buffer): number | undefined {
  let length: unknown;
  try {
    length = (JSON.parse(bytes.toString('utf8')) as { max_seq_length?: unknown } | null)?.max_seq_length;
  } catch (error) {
    throw new MemloomError({ code: 'EMBEDDER_ERROR', backend: 'embeddings', message: `could not read ${file}: ${firstLine(error)}`, cause: error, details: { file } });
  }
  if (length === undefined || length === null) return undefined;
  if (typeof length !== 'number' || !Number.isInteger(length) || length <= 0) {
    throw new MemloomError({ code: 'EMBEDDER_ERROR', backend: 'embeddings', message: `${file}: max_seq_length must be a positive whole number, got ${JSON.stringify(length)}`, details: { file } });
  }
  return length;
}

/** A file's bytes, or undefined when there is none. */
function readIfPresent(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new MemloomError({ code: 'EMBEDDER_ERROR', backend: 'embeddings', message: `could not read ${file}: ${firstLine(error)}`, cause: error, details: { file } });
  }
}

async function probeDimension(extractor: FeatureExtractor, settings: Settings): Promise<number> {
  let output: { dims: number[] };
  try {
    output = await extractor(['dimension probe'], { pooling: settings.pooling, normalize: true });
  } catch (error) {
    throw new MemloomError({ code: 'EMBEDDER_ERROR', backend: 'embeddings', message: `${settings.label} failed its first run: ${firstLine(error)}`, cause: error });
  }
  const dimension = output.dims[output.dims.length - 1];
  if (output.dims.length !== 2 || !dimension) {
    throw new MemloomError({
      code: 'EMBEDDER_ERROR',
      backend: 'embeddings',
      message: `${settings.label} gave output of shape [${output.dims.join(', ')}]; a sentence embedding model gives [batch, dimension]`,
    });
  }
  return dimension;
}

async function embedBatches(extractor: FeatureExtractor, texts: string[], settings: Settings, dimension: number, id: string, signal: AbortSignal | undefined): Promise<number[][]> {
  const vectors: number[][] = [];
  for (let start = 0; start < texts.length; start += settings.batchSize) {
    // A forward pass cannot be stopped halfway; an aborted call stops before the next one, throwing the signal's reason.
    signal?.throwIfAborted();
    const batch = texts.slice(start, start + settings.batchSize);
    let rows: unknown;
    try {
      rows = (await extractor(batch, { pooling: settings.pooling, normalize: true })).tolist();
    } catch (error) {
      throw new MemloomError({ code: 'EMBEDDER_ERROR', backend: 'embeddings', message: `${id} failed: ${firstLine(error)}`, cause: error });
    }
    if (!Array.isArray(rows) || rows.length !== batch.length) {
      throw new MemloomError({ code: 'INVALID_EMBEDDING', backend: 'embeddings', message: `${id} returned ${Array.isArray(rows) ? rows.length : 'no'} rows for ${batch.length} texts` });
    }
    for (const row of rows) {
      if (!Array.isArray(row) || row.length !== dimension) {
        throw new MemloomError({ code: 'INVALID_EMBEDDING', backend: 'embeddings', message: `${id} returned a row of length ${Array.isArray(row) ? row.length : 0}; expected ${dimension}` });
      }
      vectors.push(row as number[]);
    }
  }
  return vectors;
}

async function loadRuntime(): Promise<TransformersRuntime> {
  try {
    return (await import('@huggingface/transformers')) as unknown as TransformersRuntime;
  } catch (error) {
    throw new MemloomError({
      code: 'MISSING_RESOURCE',
      backend: 'embeddings',
      message: 'the transformers.js embedder needs the optional peer dependency @huggingface/transformers: install it with your package manager (npm install @huggingface/transformers@4, or the same with pnpm add or yarn add)',
      details: { packages: ['@huggingface/transformers@4'] },
      cause: error,
    });
  }
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0] ?? text;
}

function invalid(message: string): MemloomError {
  return new MemloomError({ code: 'INVALID_OPTIONS', backend: 'embeddings', message: `transformers embedder: ${message}` });
}
