import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { MemloomError } from '@memloom/core';

/** English word vectors (GloVe-derived, SIF-weighted, int8): see data/README.md and scripts/build-word-vectors.mjs. */
export interface WordVectorTable {
  dimension: number;
  size: number;
  indexOf: ReadonlyMap<string, number>;
  /** One float32 scale per word. */
  scales: Float32Array;
  /** size × dimension int8 values; word i's vector is scales[i] · values[i·dimension …]. */
  values: Int8Array;
}

/** Chinese headword → vocabulary indexes of its English glosses (CC-CEDICT-derived). */
export interface GlossTable {
  /** Headword → [first link, link count]. */
  linksOf: ReadonlyMap<string, readonly [number, number]>;
  /** Each link: vocabulary index in the low 24 bits, the sense's rank (0 = first sense) above. */
  links: Uint32Array;
}

const DATA = new URL('../data/', import.meta.url);
let wordVectors: WordVectorTable | undefined;
let glosses: GlossTable | undefined;

/** Read data/word-vectors.bin.gz once per process (about 40 ms). */
export function loadWordVectors(): WordVectorTable {
  if (wordVectors) return wordVectors;
  const bytes = readData('word-vectors.bin.gz', 'MLWV');
  const dimension = bytes.readUInt32LE(8);
  const size = bytes.readUInt32LE(12);
  const wordLength = bytes.readUInt32LE(16);
  let offset = 24;
  const words = bytes.toString('utf8', offset, offset + wordLength).split('\n');
  offset += align(wordLength);
  const scales = new Float32Array(copyOut(bytes, offset, size * 4));
  offset += size * 4;
  const values = new Int8Array(copyOut(bytes, offset, size * dimension));
  if (words.length !== size || values.length !== size * dimension) throw corrupt('word-vectors.bin.gz');
  const indexOf = new Map<string, number>();
  words.forEach((word, index) => indexOf.set(word, index));
  wordVectors = { dimension, size, indexOf, scales, values };
  return wordVectors;
}

/** Read data/zh-glosses.bin.gz once per process. */
export function loadGlosses(): GlossTable {
  if (glosses) return glosses;
  const bytes = readData('zh-glosses.bin.gz', 'MLZG');
  const headwordCount = bytes.readUInt32LE(12);
  const headwordLength = bytes.readUInt32LE(16);
  const linkCount = bytes.readUInt32LE(20);
  let offset = 24;
  const headwords = bytes.toString('utf8', offset, offset + headwordLength).split('\n');
  offset += align(headwordLength);
  const counts = bytes.subarray(offset, offset + headwordCount);
  offset += align(headwordCount);
  const links = new Uint32Array(copyOut(bytes, offset, linkCount * 4));
  if (headwords.length !== headwordCount || links.length !== linkCount) throw corrupt('zh-glosses.bin.gz');
  const linksOf = new Map<string, readonly [number, number]>();
  let next = 0;
  headwords.forEach((headword, index) => {
    const count = counts[index] as number;
    linksOf.set(headword, [next, count]);
    next += count;
  });
  if (next !== linkCount) throw corrupt('zh-glosses.bin.gz');
  glosses = { linksOf, links };
  return glosses;
}

function readData(name: string, magic: string): Buffer {
  let bytes: Buffer;
  try {
    bytes = gunzipSync(readFileSync(new URL(name, DATA)));
  } catch (error) {
    throw new MemloomError({
      code: 'MISSING_RESOURCE',
      backend: 'embeddings',
      message: `word-vector embedder: cannot read ${new URL(name, DATA).pathname} (it ships in @memloom/embeddings/data; reinstall the package)`,
      cause: error,
    });
  }
  if (bytes.toString('latin1', 0, 4) !== magic || bytes.readUInt32LE(4) !== 1) throw corrupt(name);
  return bytes;
}

/** `length` bytes from `offset`, copied into an ArrayBuffer of their own (aligned for a typed array). */
function copyOut(bytes: Buffer, offset: number, length: number): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset + offset, bytes.byteOffset + offset + length) as ArrayBuffer;
}

function align(length: number): number {
  return length + ((4 - (length % 4)) % 4);
}

function corrupt(name: string): MemloomError {
  return new MemloomError({ code: 'MISSING_RESOURCE', backend: 'embeddings', message: `word-vector embedder: data/${name} is corrupt; reinstall @memloom/embeddings` });
}
