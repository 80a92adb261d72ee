import { describeValue, MemloomError } from '../errors.js';
import { KERNEL_BASE64 } from './kernel-bytes.js';

/** One neighbour: the key it was stored under and its dot product with the query (cosine for unit vectors). */
export interface VectorHit {
  key: number;
  score: number;
}

/** The part of the WebAssembly API used here (core's TypeScript lib has no WebAssembly types). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: unknown };
}

interface Kernel {
  memory: WasmMemory;
  dots(query: number, rows: number, count: number, stride: number, out: number): void;
  dotsAt(query: number, rows: number, slots: number, count: number, stride: number, out: number): void;
  dotsScattered(query: number, rows: number, slots: number, count: number, stride: number, out: number): void;
  hammingsAt(query: number, codes: number, slots: number, count: number, codeBytes: number, out: number, histogram: number): void;
  within(query: number, codes: number, slots: number, count: number, codeBytes: number, cutoff: number, out: number): number;
  encode(vector: number, signs: number, work: number, length: number, stride: number, code: number, codeBits: number): void;
}

/** How `nearest` may search. */
export interface NearestOptions {
  /**
   * Accept an approximate answer when the scan would read at least the
   * index's `approximateFrom` vectors: a first pass compares short bit codes
   * and only the closest candidates are scored exactly (see the class
   * comment). Scores are always exact; a hit may be missed. @default false
   */
  approximate?: boolean;
}

export interface FlatVectorIndexOptions {
  /** Past it, adding a vector throws NOT_SUPPORTED (default and most: the 4 GiB of a WebAssembly memory). */
  maxBytes?: number;
  /** The fewest vectors a scan must read before an `approximate` search uses bit codes (`Infinity`: never). @default 5000 */
  approximateFrom?: number;
  /** The share of the scanned vectors an approximate search scores exactly (at least 256 and `limit`). @default 0.005 */
  approximateShare?: number;
}

const PAGE = 65_536;
/** wasm32 addresses 4 GiB at most. */
const MAX_BYTES = 65_536 * PAGE;
/** Rows are padded to a multiple of this many floats: the kernel reads 8 per step. */
const LANES = 8;
/** The key of the whole index among encoded groups. */
const WHOLE_INDEX = Symbol('whole index');
/** The fewest candidates an approximate search scores exactly. */
const MIN_CANDIDATES = 256;
/** An approximate search samples codes in runs of this many slots. */
const SAMPLE_RUN = 64;

let compiled: object | undefined;

function wasmApi(): WasmApi | undefined {
  return (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
}

function kernelModule(): object {
  if (compiled) return compiled;
  const bytes = Uint8Array.from(atob(KERNEL_BASE64), (char) => char.charCodeAt(0));
  const wasm = wasmApi();
  if (!wasm || !wasm.validate(bytes)) {
    throw new MemloomError({
      code: 'NOT_SUPPORTED',
      message: 'this JavaScript runtime has no WebAssembly SIMD, which the in-memory vector index needs',
    });
  }
  compiled = new wasm.Module(bytes);
  return compiled;
}

/** True when this runtime can run the index (WebAssembly with SIMD: Node 16.4+, Deno, Bun, current browsers). */
export function flatVectorIndexSupported(): boolean {
  try {
    kernelModule();
    return true;
  } catch {
    return false;
  }
}

/**
 * An exact nearest-neighbour index in process memory: float32 vectors in one
 * WebAssembly memory, compared with the query by a SIMD scan of every vector
 * (or of one group's vectors). No approximation: the answer is what a scan in
 * plain JavaScript gives, about six times faster (100,000 vectors of 484
 * dimensions in about 10 ms on one core). Memory: 4 bytes per dimension
 * (rounded up to a multiple of 8) per vector, plus 8 bytes, plus its bit code
 * (below: 64 bytes at 484 dimensions).
 *
 * Keys are integers (a store's row ids); a group (a user, say) lets a search
 * scan that group's vectors only. Vectors should be unit length for the
 * scores to be cosines; the index stores them as given.
 *
 * Approximate search (`nearest(..., { approximate: true })`, only when the
 * scan would read `approximateFrom` vectors or more): each vector also gets a
 * bit code, the signs of its randomized Hadamard transform (one bit per
 * dimension, rounded up to a power of two, from 128 to 2,048: 64 bytes at 484
 * dimensions), made at the first approximate search that reads it. Two
 * vectors' codes differ in about angle / 180 degrees of their bits, so the
 * vectors whose codes differ least from the query's are the likely nearest
 * ones: the search counts the differing bits of every code (30 times fewer
 * bytes than the vectors at 484 dimensions; a sample of the codes first sets
 * the cut-off, so one pass keeps the closest), then scores exactly the
 * `approximateShare` closest codes. The scores returned are exact; a true
 * neighbour may be missed.
 */
export class FlatVectorIndex {
  readonly dimension: number;
  private readonly stride: number;
  private readonly kernel: Kernel;
  /** Slots hold rows; a free slot's key is -1. */
  private keys = new Float64Array(0);
  private groups: (string | undefined)[] = [];
  private readonly slotOf = new Map<number, number>();
  private readonly free: number[] = [];
  /** Each group's slots, in a list the kernel reads as it is. */
  private readonly members = new Map<string, SlotList>();
  /** Where each slot sits in its group's list. */
  private positions = new Int32Array(0);
  private capacity = 0;
  /** Slots ever used: the whole-index scan reads these. */
  private used = 0;

  /** Bit codes: `codeBits` per vector, stored after the rows; `coded[slot]` is 1 when the slot's code is up to date. */
  private readonly codeBits: number;
  private readonly codeBytes: number;
  private coded = new Uint8Array(0);
  /** Slots set since codes were last made (some may have been set again, or freed, since). */
  private uncoded: number[] = [];
  /** The random signs of the code's Hadamard transform, and its length. */
  private readonly signs: Float32Array;
  private readonly transformLength: number;
  /**
   * The groups (WHOLE_INDEX: the index) whose every slot got a code at their first approximate
   * search. Empty until the first one: until then no codes are made, and none wait.
   */
  private readonly encodedGroups = new Set<string | symbol>();

  /** The most memory it may take, in bytes (vectors and scratch space). */
  readonly maxBytes: number;
  readonly approximateFrom: number;
  readonly approximateShare: number;

  constructor(dimension: number, options: FlatVectorIndexOptions = {}) {
    if (!Number.isInteger(dimension) || dimension <= 0) {
      throw new MemloomError({ code: 'INVALID_INPUT', message: `a vector index needs a positive integer dimension, got ${describeValue(dimension)}` });
    }
    const maxBytes = options.maxBytes ?? MAX_BYTES;
    if (typeof maxBytes !== 'number' || !(maxBytes > 0)) {
      throw new MemloomError({ code: 'INVALID_INPUT', message: `maxBytes must be a positive number, got ${describeValue(maxBytes)}` });
    }
    const approximateFrom = options.approximateFrom ?? 5_000;
    if (approximateFrom !== Infinity && !(Number.isInteger(approximateFrom) && approximateFrom >= 1)) {
      throw new MemloomError({ code: 'INVALID_INPUT', message: `approximateFrom must be a positive integer or Infinity, got ${describeValue(approximateFrom)}` });
    }
    const approximateShare = options.approximateShare ?? 0.005;
    if (typeof approximateShare !== 'number' || !(approximateShare > 0 && approximateShare <= 1)) {
      throw new MemloomError({ code: 'INVALID_INPUT', message: `approximateShare must be a number in (0, 1], got ${describeValue(approximateShare)}` });
    }
    this.maxBytes = Math.min(maxBytes, MAX_BYTES);
    this.approximateFrom = approximateFrom;
    this.approximateShare = approximateShare;
    this.dimension = dimension;
    this.stride = Math.ceil(dimension / LANES) * LANES;
    // The transform needs a power of two; at most 2,048 bits are kept (longer codes cost more to compare than they add).
    const transformLength = Math.max(128, 2 ** Math.ceil(Math.log2(dimension)));
    this.codeBits = Math.min(2048, transformLength);
    this.codeBytes = this.codeBits / 8;
    this.transformLength = transformLength;
    this.signs = randomSigns(transformLength);
    const module = kernelModule();
    const instance = new (wasmApi() as WasmApi).Instance(module);
    this.kernel = instance.exports as unknown as Kernel;
  }

  /** How many vectors it holds. */
  get size(): number {
    return this.slotOf.size;
  }

  /** Bytes of memory it holds (vectors, scratch space and padding). */
  get bytes(): number {
    return this.kernel.memory.buffer.byteLength;
  }

  has(key: number): boolean {
    return this.slotOf.has(key);
  }

  /** Store (or replace) the vector under `key`, in `group` when given. */
  set(key: number, vector: ArrayLike<number>, group?: string): void {
    if (!Number.isSafeInteger(key) || key < 0) {
      throw new MemloomError({ code: 'INVALID_INPUT', message: `a vector index key must be a non-negative integer, got ${describeValue(key)}` });
    }
    if (vector.length !== this.dimension) {
      throw new MemloomError({
        code: 'DIMENSION_MISMATCH',
        message: `a vector of dimension ${vector.length} does not fit an index of dimension ${this.dimension}`,
        details: { expected: this.dimension, actual: vector.length },
      });
    }
    for (let index = 0; index < vector.length; index++) {
      if (!Number.isFinite(vector[index])) {
        throw new MemloomError({ code: 'INVALID_INPUT', message: `the vector for key ${key} holds a value that is not a finite number at index ${index}` });
      }
    }
    let slot = this.slotOf.get(key);
    if (slot === undefined) {
      slot = this.free.pop() ?? this.newSlot();
      this.slotOf.set(key, slot);
      this.keys[slot] = key;
    } else {
      this.leaveGroup(slot);
    }
    // The padding too: a new slot may lie where an earlier search kept its scratch numbers.
    this.placeRow(slot * this.stride * 4, vector);
    if (this.encodedGroups.size > 0) {
      this.coded[slot] = 0;
      this.uncoded.push(slot);
      // Many changes and no approximate search to make their codes: make them all at the next one instead.
      if (this.uncoded.length > this.used) {
        this.uncoded = [];
        this.coded.fill(0);
        this.encodedGroups.clear();
      }
    }
    this.groups[slot] = group;
    if (group !== undefined) {
      let list = this.members.get(group);
      if (!list) this.members.set(group, (list = new SlotList()));
      this.positions[slot] = list.add(slot);
    }
  }

  delete(key: number): boolean {
    const slot = this.slotOf.get(key);
    if (slot === undefined) return false;
    this.slotOf.delete(key);
    this.leaveGroup(slot);
    this.groups[slot] = undefined;
    // The row stays as it is: scans skip a free slot by its key, and `set` rewrites it whole.
    this.keys[slot] = -1;
    this.free.push(slot);
    return true;
  }

  /**
   * The `limit` stored vectors with the largest dot product with `query`,
   * best first (ties: smaller key first); inside `group` only when given.
   */
  nearest(query: ArrayLike<number>, limit: number, group?: string, options: NearestOptions = {}): VectorHit[] {
    if (query.length !== this.dimension) {
      throw new MemloomError({
        code: 'DIMENSION_MISMATCH',
        message: `a query of dimension ${query.length} does not fit an index of dimension ${this.dimension}`,
        details: { expected: this.dimension, actual: query.length },
      });
    }
    if (limit <= 0) return [];
    const slots = group === undefined ? undefined : (this.members.get(group)?.view() ?? new Int32Array(0));
    const count = slots ? slots.length : this.used;
    if (count === 0) return [];
    if (options.approximate && count >= this.approximateFrom) return this.approximateNearest(query, limit, group, slots ?? this.usedSlots());
    // Scratch space past the rows and codes: the query, the slot list, the scores.
    const queryAt = this.scratchAt();
    const slotsAt = queryAt + this.stride * 4;
    const scoresAt = slotsAt + (slots ? count * 4 : 0);
    this.reserve(scoresAt + count * 4);
    this.placeRow(queryAt, query);
    const buffer = this.kernel.memory.buffer;
    if (slots) {
      new Int32Array(buffer, slotsAt, count).set(slots);
      this.kernel.dotsAt(queryAt, 0, slotsAt, count, this.stride, scoresAt);
    } else {
      this.kernel.dots(queryAt, 0, count, this.stride, scoresAt);
    }
    return this.best(new Float32Array(buffer, scoresAt, count), slots, limit);
  }

  /**
   * Score exactly the slots whose codes differ least from the query's (the
   * share asked for, at least MIN_CANDIDATES and `limit`) and return the best
   * `limit` of those. A sample of the codes sets a cut-off that lets about
   * twice that many through, one pass over every code keeps those within it
   * (with their distances), and the closest of those are scored.
   */
  private approximateNearest(query: ArrayLike<number>, limit: number, group: string | undefined, slots: Int32Array): VectorHit[] {
    const count = slots.length;
    const wanted = Math.min(count, Math.max(limit, MIN_CANDIDATES, Math.ceil(count * this.approximateShare)));
    const sampleSize = Math.min(count, Math.max(1024, Math.ceil(count / 16)));
    const bins = this.codeBits + 1;
    // Scratch: the transform's signs and work space, the query and its code, the slot list, the
    // sample's slots and distances, their histogram, the (slot, distance) pairs kept, the candidates.
    const signsAt = this.scratchAt();
    const workAt = signsAt + this.transformLength * 4;
    const queryAt = workAt + this.transformLength * 4;
    const codeAt = queryAt + this.stride * 4;
    const slotsAt = codeAt + this.codeBytes;
    const sampleAt = slotsAt + count * 4;
    const sampleDistancesAt = sampleAt + sampleSize * 4;
    const histogramAt = sampleDistancesAt + sampleSize * 4;
    const pairsAt = histogramAt + bins * 4;
    const candidatesAt = pairsAt + count * 8;
    try {
      this.reserve(candidatesAt + count * 4);
    } catch (error) {
      // Past maxBytes: the exact scan, whose scratch space every growth keeps room for, answers instead.
      if (MemloomError.hasCode(error, 'NOT_SUPPORTED')) return this.nearest(query, limit, group);
      throw error;
    }
    const buffer = this.kernel.memory.buffer;
    new Float32Array(buffer, signsAt, this.transformLength).set(this.signs);
    this.encodePending(group, slots, signsAt, workAt);
    this.placeRow(queryAt, query);
    this.kernel.encode(queryAt, signsAt, workAt, this.transformLength, this.stride, codeAt, this.codeBits);
    new Int32Array(buffer, slotsAt, count).set(slots);

    // The sample: runs of SAMPLE_RUN slots spread evenly over the list (codes read one after another cost a
    // fraction of codes read far apart), or the whole list when it is that small.
    const sample = new Int32Array(buffer, sampleAt, sampleSize);
    const runs = Math.ceil(sampleSize / SAMPLE_RUN);
    for (let index = 0; index < sampleSize; index++) {
      const run = Math.floor(index / SAMPLE_RUN);
      sample[index] = slots[sampleSize === count ? index : Math.floor((run * count) / runs) + (index % SAMPLE_RUN)] as number;
    }
    const histogram = new Int32Array(buffer, histogramAt, bins);
    histogram.fill(0);
    this.kernel.hammingsAt(codeAt, this.codesAt(), sampleAt, sampleSize, this.codeBytes, sampleDistancesAt, histogramAt);
    let { cutoff } = covering(histogram, Math.ceil((2 * wanted * sampleSize) / count));

    // Every code within the cut-off; a sample that set it too tight is made up for by widening it.
    let kept = this.kernel.within(codeAt, this.codesAt(), slotsAt, count, this.codeBytes, cutoff, pairsAt);
    while (kept < wanted && cutoff < this.codeBits) {
      cutoff = Math.min(this.codeBits, cutoff + 8);
      kept = this.kernel.within(codeAt, this.codesAt(), slotsAt, count, this.codeBytes, cutoff, pairsAt);
    }

    // The `wanted` closest of those, in slot order.
    const pairs = new Int32Array(buffer, pairsAt, kept * 2);
    const candidates = new Int32Array(buffer, candidatesAt, Math.min(kept, wanted));
    histogram.fill(0);
    for (let index = 1; index < pairs.length; index += 2) histogram[pairs[index] as number]!++;
    const { cutoff: last, below } = covering(histogram, candidates.length);
    let atLast = candidates.length - below;
    let taken = 0;
    for (let index = 0; index < pairs.length && taken < candidates.length; index += 2) {
      const distance = pairs[index + 1] as number;
      if (distance < last || (distance === last && atLast-- > 0)) candidates[taken++] = pairs[index] as number;
    }

    // Exact scores for the candidates (the query is still in place), rows far apart in memory.
    this.kernel.dotsScattered(queryAt, 0, candidatesAt, taken, this.stride, slotsAt);
    return this.best(new Float32Array(buffer, slotsAt, taken), candidates.subarray(0, taken), limit);
  }

  /**
   * Make the codes a search of `slots` needs: every slot of the group (or of
   * the whole index) at its first approximate search, and the slots set since
   * codes were last made.
   */
  private encodePending(group: string | undefined, slots: Int32Array, signsAt: number, workAt: number): void {
    const key = group ?? WHOLE_INDEX;
    if (!this.encodedGroups.has(key)) {
      this.encodeSlots(slots, signsAt, workAt);
      this.encodedGroups.add(key);
    }
    const pending = this.uncoded;
    this.uncoded = [];
    this.encodeSlots(pending, signsAt, workAt);
  }

  /** Codes for `slots` (those without one), with the transform's signs and work space at `signsAt` and `workAt`. */
  private encodeSlots(slots: ArrayLike<number>, signsAt: number, workAt: number): void {
    const codesAt = this.codesAt();
    const rowBytes = this.stride * 4;
    for (let index = 0; index < slots.length; index++) {
      const slot = slots[index] as number;
      if (this.coded[slot] === 1 || (this.keys[slot] as number) < 0) continue;
      this.kernel.encode(slot * rowBytes, signsAt, workAt, this.transformLength, this.stride, codesAt + slot * this.codeBytes, this.codeBits);
      this.coded[slot] = 1;
    }
  }

  /** Write `values` (of the index's dimension) as a row at byte `at`, its padding zeroed. */
  private placeRow(at: number, values: ArrayLike<number>): void {
    const floats = new Float32Array(this.kernel.memory.buffer, at, this.stride);
    floats.set(values);
    floats.fill(0, this.dimension);
  }

  /** Every slot that holds a vector, for an approximate search over the whole index. */
  private usedSlots(): Int32Array {
    const slots = new Int32Array(this.size);
    let taken = 0;
    for (let slot = 0; slot < this.used; slot++) if ((this.keys[slot] as number) >= 0) slots[taken++] = slot;
    return slots;
  }

  /** Where the codes start: right after the rows. */
  private codesAt(capacity = this.capacity): number {
    return capacity * this.stride * 4;
  }

  /** Where a search's scratch space starts: after the rows and the codes. */
  private scratchAt(): number {
    return this.codesAt() + this.capacity * this.codeBytes;
  }

  /** The best `limit` scores, kept in a min-heap on the way through. */
  private best(scores: Float32Array, slots: Int32Array | undefined, limit: number): VectorHit[] {
    const heap: VectorHit[] = [];
    const worse = (a: VectorHit, b: VectorHit): boolean => a.score < b.score || (a.score === b.score && a.key > b.key);
    for (let index = 0; index < scores.length; index++) {
      const key = this.keys[slots ? (slots[index] as number) : index] as number;
      if (key < 0) continue;
      const score = scores[index] as number;
      if (heap.length === limit) {
        const top = heap[0] as VectorHit;
        if (score < top.score || (score === top.score && key > top.key)) continue;
        heap[0] = { key, score };
        siftDown(heap, worse);
      } else {
        heap.push({ key, score });
        siftUp(heap, worse);
      }
    }
    return heap.sort((a, b) => b.score - a.score || a.key - b.key);
  }

  private leaveGroup(slot: number): void {
    const group = this.groups[slot];
    if (group === undefined) return;
    const list = this.members.get(group) as SlotList;
    const moved = list.remove(this.positions[slot] as number);
    if (moved !== undefined) this.positions[moved] = this.positions[slot] as number;
    if (list.size === 0) this.members.delete(group);
  }

  /** Make room for `count` vectors in all, so that adding them does not grow the memory step by step. */
  reserveFor(count: number): void {
    if (count > this.capacity) this.growTo(count);
  }

  private newSlot(): number {
    if (this.used === this.capacity) this.growTo(Math.max(64, Math.ceil(this.capacity * 1.25)));
    return this.used++;
  }

  /** Room for `capacity` rows and codes, and the scratch space of a scan over all of them. */
  private growTo(capacity: number): void {
    const rowBytes = this.stride * 4;
    // Rows and codes; the query and its code; a slot and a score per row.
    this.reserve(this.codesAt(capacity) + capacity * this.codeBytes + rowBytes + this.codeBytes + capacity * 8);
    // Rows already stored stay where they are; the codes move up past the new rows, the scratch space past them.
    const oldCodesAt = this.codesAt();
    new Uint8Array(this.kernel.memory.buffer).copyWithin(this.codesAt(capacity), oldCodesAt, oldCodesAt + this.capacity * this.codeBytes);
    const coded = new Uint8Array(capacity);
    coded.set(this.coded);
    this.coded = coded;
    const keys = new Float64Array(capacity).fill(-1);
    keys.set(this.keys);
    this.keys = keys;
    const positions = new Int32Array(capacity);
    positions.set(this.positions);
    this.positions = positions;
    this.capacity = capacity;
  }

  private reserve(bytes: number): void {
    const memory = this.kernel.memory;
    if (bytes <= memory.buffer.byteLength) return;
    if (bytes > this.maxBytes) {
      throw new MemloomError({
        code: 'NOT_SUPPORTED',
        message: `the in-memory vector index is full: ${Math.ceil(bytes / 1024 / 1024)} MiB would pass its limit of ${Math.floor(this.maxBytes / 1024 / 1024)} MiB (${this.size} vectors of dimension ${this.dimension})`,
        details: { maxBytes: this.maxBytes, neededBytes: bytes },
      });
    }
    const pages = Math.ceil(bytes / PAGE) - memory.buffer.byteLength / PAGE;
    try {
      memory.grow(pages);
    } catch (error) {
      throw new MemloomError({
        code: 'NOT_SUPPORTED',
        message: `the in-memory vector index could not grow to ${Math.ceil(bytes / 1024 / 1024)} MiB`,
        cause: error,
      });
    }
  }
}

/**
 * The smallest distance `cutoff` whose count with all smaller ones reaches `wanted` (the largest
 * distance when none does), and `below`, how many are smaller than it.
 */
function covering(histogram: Int32Array, wanted: number): { cutoff: number; below: number } {
  let cutoff = 0;
  let below = 0;
  while (cutoff < histogram.length - 1 && below + (histogram[cutoff] as number) < wanted) below += histogram[cutoff++] as number;
  return { cutoff, below };
}

/** `count` signs, +1 or -1, the same in every process (xorshift32 from a fixed seed). */
function randomSigns(count: number): Float32Array {
  const signs = new Float32Array(count);
  let state = 0x9e3779b9;
  for (let index = 0; index < count; index++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    signs[index] = state & 1 ? 1 : -1;
  }
  return signs;
}

/** A growable list of slots; removing one moves the last into its place. */
class SlotList {
  private slots = new Int32Array(16);
  size = 0;

  /** Append a slot; returns its position. */
  add(slot: number): number {
    if (this.size === this.slots.length) {
      const grown = new Int32Array(this.slots.length * 2);
      grown.set(this.slots);
      this.slots = grown;
    }
    this.slots[this.size] = slot;
    return this.size++;
  }

  /** Remove the slot at `position`; returns the slot moved into it, if any. */
  remove(position: number): number | undefined {
    const last = this.slots[--this.size] as number;
    if (position === this.size) return undefined;
    this.slots[position] = last;
    return last;
  }

  view(): Int32Array {
    return this.slots.subarray(0, this.size);
  }
}

function siftUp(heap: VectorHit[], worse: (a: VectorHit, b: VectorHit) => boolean): void {
  let index = heap.length - 1;
  while (index > 0) {
    const parent = (index - 1) >> 1;
    if (!worse(heap[index] as VectorHit, heap[parent] as VectorHit)) break;
    [heap[index], heap[parent]] = [heap[parent] as VectorHit, heap[index] as VectorHit];
    index = parent;
  }
}

function siftDown(heap: VectorHit[], worse: (a: VectorHit, b: VectorHit) => boolean): void {
  let index = 0;
  for (;;) {
    const left = index * 2 + 1;
    const right = left + 1;
    let smallest = index;
    if (left < heap.length && worse(heap[left] as VectorHit, heap[smallest] as VectorHit)) smallest = left;
    if (right < heap.length && worse(heap[right] as VectorHit, heap[smallest] as VectorHit)) smallest = right;
    if (smallest === index) return;
    [heap[index], heap[smallest]] = [heap[smallest] as VectorHit, heap[index] as VectorHit];
    index = smallest;
  }
}
