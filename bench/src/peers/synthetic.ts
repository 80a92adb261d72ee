/**
 * Synthetic memories for the latency bench's larger sizes: embedding 100,000
 * texts with the default embedder would take about an hour here, so the
 * memories already stored are made up (seeded, the same for memloom and mem0)
 * and written through each system's own write path with their vectors given.
 * Texts read like chat turns; vectors are random unit vectors of the
 * embedder's dimension, so their content and vector do not agree: they cost
 * what real memories cost to scan, not what they would rank.
 */

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

/** mulberry32: small, seeded, the same sequence in every process. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` synthetic memories, generated lazily (100,000 vectors of 1,536 floats would hold 600 MB at once). */
export function* syntheticMemories(count: number, dimension: number, nowMs: number, seed = 1): Generator<SyntheticMemory> {
  const next = seededRandom(seed);
  for (let index = 0; index < count; index++) {
    const name = NAMES[Math.floor(next() * NAMES.length)] as string;
    const words = Array.from({ length: 8 + Math.floor(next() * 10) }, () => WORDS[Math.floor(WORDS.length * next() ** 2)] as string);
    yield {
      id: `synthetic-${String(index).padStart(7, '0')}`,
      text: `${name}: ${words.join(' ')} (note ${index})`,
      vector: unitVector(dimension, next),
      at: new Date(nowMs - next() * 200 * 86_400_000).toISOString(),
    };
  }
}

function unitVector(dimension: number, next: () => number): Float32Array {
  const vector = new Float32Array(dimension);
  let norm = 0;
  for (let index = 0; index < dimension; index += 2) {
    // Box-Muller: two normal draws per pair of uniforms.
    const radius = Math.sqrt(-2 * Math.log(1 - next()));
    const angle = 2 * Math.PI * next();
    vector[index] = radius * Math.cos(angle);
    if (index + 1 < dimension) vector[index + 1] = radius * Math.sin(angle);
  }
  for (const value of vector) norm += value * value;
  const scale = 1 / Math.sqrt(norm);
  for (let index = 0; index < dimension; index++) vector[index] = (vector[index] as number) * scale;
  return vector;
}
