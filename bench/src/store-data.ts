import { timeOrderedId, type Embedder, type MemoryChange, type MemoryRecord } from '@memloom/core';
import { createRecord, seededRandom } from '@memloom/core/testing';

/**
 * Vectors are random unit vectors of this dimension (no embedder runs in the
 * store bench): the default embedder's, so a scan costs what it costs users
 * (a test in bench/test keeps the two equal).
 */
export const DIMENSION = 484;
export const USERS = 100;
export const EMBEDDER_ID = `bench/random-unit-${DIMENSION}`;
/** The instant the data set is generated against; ages run back from here. */
export const NOW_MS = Date.UTC(2025, 5, 1);
const DAY_MS = 86_400_000;

/** A random unit vector (normal draws, normalized), from a seeded generator. */
export function unitVector(next: () => number, dimension = DIMENSION): Float32Array {
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
  for (let index = 0; index < dimension; index++) vector[index]! *= scale;
  return vector;
}

const WORDS = `
coffee tea breakfast lunch dinner meeting project deadline budget report client travel flight hotel train
city beach mountain hiking running swimming cycling football tennis music guitar piano concert movie book
novel author poem garden flower tree dog cat bird horse doctor nurse teacher engineer designer manager
office remote laptop phone email calendar schedule birthday wedding holiday vacation family sister brother
mother father daughter son friend neighbour colleague team startup company salary promotion interview
allergy peanut gluten vegetarian vegan recipe pasta pizza sushi curry salad soup bread cheese chocolate
wine beer juice water yoga gym doctor dentist medicine sleep morning evening weekend monday friday spring
summer autumn winter rain snow sunny cold warm language french spanish german chinese japanese python
typescript database server cloud deploy release bug feature review design user customer support ticket
invoice payment bank loan rent apartment house car bicycle bus subway airport museum gallery painting
photo camera video podcast newsletter blog article research paper thesis exam course lesson homework
`.split(/\s+/).filter(Boolean);

/** A word by Zipf-like rank: common words often, rare words seldom. */
function word(next: () => number): string {
  const rank = Math.floor(WORDS.length * next() ** 2.2);
  return WORDS[Math.min(WORDS.length - 1, rank)]!;
}

export interface Dataset {
  records: MemoryRecord[];
  vectors: Float32Array[];
}

/**
 * A random id shaped like `crypto.randomUUID()`'s (version 4): ids in no
 * relation to the order memories were written in, as a store has them when
 * its ids came from elsewhere (an import, an older memloom, a caller's own
 * `generateId`).
 */
export function uuidLike(next: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(next() * 16).toString(16));
  hex[12] = '4';
  hex[16] = (8 + Math.floor(next() * 4)).toString(16);
  const text = hex.join('');
  return `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20)}`;
}

/**
 * How the memories were written:
 * - `written` (the default): as `add` leaves them in a store, oldest first, each with the
 *   time-ordered id (`timeOrderedId`, UUID version 7) it gives at that time;
 * - `shuffled`: in no order of age, with random version 4 ids (`uuidLike`): a store filled by
 *   importing history in no particular order, or whose ids came from elsewhere.
 */
export type WriteOrder = 'written' | 'shuffled';

/**
 * `size` memories, USERS users with size / USERS each, ages spread over 200
 * days, in the order `order` writes them. The contents, vectors, users and
 * ages are the same in both orders.
 */
export function dataset(size: number, seed = 1, order: WriteOrder = 'written'): Dataset {
  const next = seededRandom(seed);
  // Ids from a generator of their own: the contents and vectors stay those of earlier runs.
  const nextId = seededRandom(seed + 7919);
  const records: MemoryRecord[] = [];
  const vectors: Float32Array[] = [];
  for (let index = 0; index < size; index++) {
    const length = 8 + Math.floor(next() * 10);
    const words = Array.from({ length }, () => word(next));
    const at = new Date(NOW_MS - next() * 200 * DAY_MS).toISOString();
    const roll = next();
    records.push(
      benchRecord({
        id: uuidLike(nextId),
        content: `${words.join(' ')} (note ${index})`,
        category: roll < 0.8 ? 'fact' : roll < 0.95 ? 'episode' : 'core',
        scope: { userId: userOf(index) },
        at,
        sources: [`turn-${index}`],
        tags: next() < 0.1 ? ['pinned'] : [],
      }),
    );
    vectors.push(unitVector(next));
  }
  if (order === 'shuffled') return { records, vectors };
  // Oldest first, each id made at its memory's time, as `add` makes them.
  const byAge = records.map((_, index) => index).sort((a, b) => records[a]!.createdAt.localeCompare(records[b]!.createdAt) || a - b);
  const randomBytes = (bytes: Uint8Array) => bytes.forEach((_, index) => (bytes[index] = Math.floor(nextId() * 256)));
  return {
    records: byAge.map((index) => ({ ...records[index]!, id: timeOrderedId(Date.parse(records[index]!.createdAt), randomBytes) })),
    vectors: byAge.map((index) => vectors[index]!),
  };
}

export function userOf(index: number): string {
  return `user-${(index % USERS).toString().padStart(3, '0')}`;
}

/** A fresh full memory as `add` makes one (core's own `createRecord`: weight and importance 1, user-stated), written at `at`. */
export function benchRecord(fields: {
  id: string;
  content: string;
  scope: MemoryRecord['scope'];
  at: string;
  sources: string[];
  category?: MemoryRecord['category'];
  tags?: string[];
}): MemoryRecord {
  const { at, ...rest } = fields;
  return createRecord({ ...rest, atIso: at }, { importance: 1, category: 'fact', type: 'user' });
}

/** The change that writes a new memory with its vector, as an import does. */
export function createChange(memory: MemoryRecord, vector: Float32Array | number[], reason = 'bench load'): MemoryChange {
  return {
    op: 'put',
    memory,
    vector: Array.isArray(vector) ? vector : Array.from(vector),
    expectedRevision: 0,
    version: { memoryId: memory.id, version: 1, at: memory.createdAt, trigger: 'import', action: 'create', reason, before: null, after: memory },
  };
}

export interface Query {
  text: string;
  vector: Float32Array;
  userId: string;
}

/** Queries: 2-3 words each with a random unit vector and a user to scope to. */
export function queries(count: number, seed = 7): Query[] {
  const next = seededRandom(seed);
  return Array.from({ length: count }, () => ({
    text: Array.from({ length: 2 + Math.floor(next() * 2) }, () => WORDS[Math.floor(next() * WORDS.length)]!).join(' '),
    vector: unitVector(next),
    userId: userOf(Math.floor(next() * USERS)),
  }));
}

/** An embedder that returns the vector chosen for a text (queries, contents), random for any other. */
export function lookupEmbedder(chosen: Map<string, Float32Array>): Embedder {
  let fallback = seededRandom(99);
  return {
    id: EMBEDDER_ID,
    dimension: DIMENSION,
    async embed(texts) {
      return texts.map((text) => Array.from(chosen.get(text) ?? unitVector(fallback)));
    },
    async close() {
      fallback = seededRandom(99);
    },
  };
}
