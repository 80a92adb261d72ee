/**
 * Synthetic memories for the latency bench's larger sizes: embedding 100,000
 * texts with the default embedder would take about an hour here, so the
 * memories already stored are made up (seeded, the same for memloom and mem0)
 * and written through each system's own write path with their vectors given.
 * Texts read like chat turns; vectors are random unit vectors of the
 * embedder's dimension, so their content and vector do not agree: they cost
 * what real memories cost to scan, not what they would rank.
 */

import { seededRandom } from '@memloom/core/testing';
import { unitVector } from '../store-data.js';

export interface SyntheticMemory {
  id: string;
  text: string;
  vector: Float32Array;
  /** ISO date within the 200 days before `nowMs`. */
  at: string;
}

const NAMES = ['Alex', 'Sam', 'Jordan', 'Taylor', 'Morgan', 'Casey', 'Riley', 'Jamie'];
const WORDS = `
coffee tea breakfast lunch dinner meeting project deadline budget report client travel flight hotel train
city beach mountain hiking running swimming cycling football tennis music guitar piano concert movie book
novel author poem garden flower tree dog cat bird horse doctor nurse teacher engineer designer manager
office remote laptop phone email calendar schedule birthday wedding holiday vacation family sister brother
mother father daughter son friend neighbour colleague team startup company salary promotion interview
allergy peanut vegetarian recipe pasta pizza sushi curry salad soup bread cheese chocolate painting photo
yoga gym dentist medicine sleep morning evening weekend spring summer autumn winter rain snow camera museum
`
  .split(/\s+/)
  .filter(Boolean);

/** `count` synthetic memories, generated lazily (100,000 vectors held at once would take hundreds of MB). */
export function* syntheticMemories(count: number, dimension: number, nowMs: number, seed = 1): Generator<SyntheticMemory> {
  const next = seededRandom(seed);
  for (let index = 0; index < count; index++) {
    const name = NAMES[Math.floor(next() * NAMES.length)] as string;
    const words = Array.from({ length: 8 + Math.floor(next() * 10) }, () => WORDS[Math.floor(WORDS.length * next() ** 2)] as string);
    yield {
      id: `synthetic-${String(index).padStart(7, '0')}`,
      text: `${name}: ${words.join(' ')} (note ${index})`,
      vector: unitVector(next, dimension),
      at: new Date(nowMs - next() * 200 * 86_400_000).toISOString(),
    };
  }
}
