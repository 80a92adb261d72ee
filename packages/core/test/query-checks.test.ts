import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { assertDeleteScope, assertPutChange, assertRecordScope, assertQueryInput, assertQueryScope, assertUsableVector, assertValidVector, assertWellFormedRecord, createMemory, excerpt, hasLoneSurrogate, MemloomError } from '../src/index.js';
import { axisVector, createInMemoryStore, createRecord } from '../src/testing/index.js';
import { newIdProblem, validateId, versionOf } from '../src/records.js';
import type { MemoryChange, MemoryRecord } from '../src/index.js';

function failure(check: () => void): MemloomError {
  try {
    check();
  } catch (error) {
    if (MemloomError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a MemloomError, but the check passed');
}

describe('the checks stores make of a query as it arrives', () => {
  it('name the backend, the call and the field that is wrong', () => {
    const scope = failure(() => assertQueryScope({ scope: { user: 'bob' } }, 'list', 'sqlite'));
    expect(scope).toMatchObject({ code: 'INVALID_SCOPE', backend: 'sqlite', details: { field: 'user' } });
    expect(scope.message).toBe('[memloom] [sqlite] list: unknown scope field "user" (expected userId, agentId or sessionId)');
    const filter = failure(() => assertQueryScope({ filter: { tags: 'work' } }, 'count', 'markdown'));
    expect(filter).toMatchObject({ code: 'INVALID_INPUT', backend: 'markdown' });
    expect(filter.reason).toBe('count: filter.tags must be an array of strings, got "work"');
    expect(failure(() => assertQueryScope({ filter: { metadata: { k: { a: 1 } } } }, 'list', 'memory')).reason).toBe(
      'list: filter.metadata.k must be a string, a finite number or a boolean, got an object',
    );
    expect(failure(() => assertQueryScope(undefined, 'count', 'qdrant'))).toMatchObject({ code: 'INVALID_INPUT', backend: 'qdrant' });
  });

  it('quote the first 40 characters of a long text they refuse, cut before an emoji rather than through it', () => {
    const tags = `${'x'.repeat(39)}😀 and more`;
    const reason = failure(() => assertQueryScope({ filter: { tags } }, 'count', 'markdown')).reason;
    expect(reason).toBe(`count: filter.tags must be an array of strings, got "${'x'.repeat(39)}…"`);
    expect(hasLoneSurrogate(reason)).toBe(false);
    expect(failure(() => assertQueryScope({ scope: `${'y'.repeat(40)}😀` }, 'list', 'sqlite')).reason).toBe(`list: scope must be an object like { userId: "alice" }, got "${'y'.repeat(40)}…"`);
  });

  it('excerpt: the first characters of a text and "…", never ending on half of a UTF-16 pair', () => {
    expect(excerpt('short')).toBe('short');
    expect(excerpt('x'.repeat(40))).toBe('x'.repeat(40));
    expect(excerpt(`${'x'.repeat(40)}y`)).toBe(`${'x'.repeat(40)}…`);
    expect(excerpt(`${'x'.repeat(38)}😀y`)).toBe(`${'x'.repeat(38)}😀…`);
    expect(excerpt(`${'x'.repeat(39)}😀y`)).toBe(`${'x'.repeat(39)}…`);
    expect(excerpt('abcdef', 3)).toBe('abc…');
  });

  it('take every shape core itself sends', () => {
    assertQueryScope({}, 'list', 'sqlite');
    assertQueryScope({ scope: null, filter: null }, 'list', 'sqlite');
    assertQueryScope(
      {
        scope: { userId: 'alice', agentId: undefined, sessionId: 's1' },
        exactScope: true,
        filter: { category: ['fact', 'core'], type: 'user', level: 'full', source: ['user'], verified: false, tags: [], metadata: { a: 'x', b: 1.5, c: true }, ids: ['m1'] },
      },
      'vectorSearch',
      'sqlite',
    );
    assertDeleteScope({ sessionId: 's1' }, 'sqlite');
    assertQueryInput({ vector: [0, 0, 1e-300] }, 'vectorSearch', 'sqlite');
    assertQueryInput({ vector: new Float32Array([0, 1]) }, 'vectorSearch', 'sqlite');
  });

  it('refuse a deleteByScope that sets no scope field: it would delete every memory', () => {
    for (const scope of [{}, { userId: undefined }, undefined, null]) {
      expect(failure(() => assertDeleteScope(scope, 'markdown'))).toMatchObject({ code: 'INVALID_SCOPE', backend: 'markdown' });
    }
  });

  it('refuse a record whose text UTF-8 cannot hold, naming the field', () => {
    const memory = { id: 'm1', scope: { userId: 'alice' }, content: 'fine' };
    assertWellFormedRecord({ ...memory, content: 'a whole pair 😀 is fine' }, 'sqlite');
    expect(failure(() => assertWellFormedRecord({ ...memory, context: 'cut \uD83D' }, 'sqlite'))).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'context' } });
    expect(failure(() => assertWellFormedRecord({ ...memory, scope: { sessionId: '\uDC00' } }, 'sqlite'))).toMatchObject({ code: 'INVALID_SCOPE', details: { field: 'scope.sessionId' } });
    expect(failure(() => assertWellFormedRecord({ ...memory, id: 'm\uD800' }, 'sqlite'))).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'id' } });
  });
});

describe('assertPutChange: the checks every store makes of a put, in one order', () => {
  const AT = '2024-03-01T09:00:00.000Z';
  const put = (fields: Partial<MemoryRecord> = {}, expectedRevision = 0): Extract<MemoryChange, { op: 'put' }> => {
    const memory = { ...createRecord({ id: 'm1', content: 'likes tea', scope: { userId: 'alice' }, atIso: AT }, { importance: 1, category: 'fact', type: 'user' }), ...fields };
    return { op: 'put', memory, vector: axisVector(4, 0), expectedRevision, version: versionOf(null, memory, { trigger: 'manual_edit', action: 'create', reason: 'test', atIso: AT }) };
  };
  const badNumbering = { revision: 3 };
  const badScope = { scope: null as never };
  const badContext = { context: '' };
  const badMetadata = { metadata: { when: new Map() } as never };

  it('passes a well-made put, and refuses its numbering, scope, context and metadata, naming the backend', () => {
    expect(() => assertPutChange(put(), 'sqlite')).not.toThrow();
    expect(failure(() => assertPutChange(put(badNumbering), 'sqlite'))).toMatchObject({ code: 'INVALID_INPUT', backend: 'sqlite', reason: 'memory m1: revision 3 and version 3 must both be 1' });
    expect(failure(() => assertPutChange(put(badScope), 'qdrant'))).toMatchObject({ code: 'INVALID_SCOPE', backend: 'qdrant' });
    expect(failure(() => assertPutChange(put(badContext), 'markdown')).reason).toMatch(/^memory m1: context must be a non-empty string/);
    expect(failure(() => assertPutChange(put(badMetadata), 'memory'))).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'metadata.when' } });
    expect(failure(() => assertPutChange({ ...put(), version: undefined as never }, 'sqlite')).reason).toBe('a put needs a memory and a version');
  });

  it('checks in a fixed order: numbering, scope, context, metadata', () => {
    expect(failure(() => assertPutChange(put({ ...badNumbering, ...badScope, ...badContext, ...badMetadata }), 'sqlite')).reason).toMatch(/revision 3/);
    expect(failure(() => assertPutChange(put({ ...badScope, ...badContext, ...badMetadata }), 'sqlite')).code).toBe('INVALID_SCOPE');
    expect(failure(() => assertPutChange(put({ ...badContext, ...badMetadata }), 'sqlite')).reason).toMatch(/context/);
  });

  const rewrite = (fields: Partial<MemoryRecord> = {}) => put({ revision: 2, ...fields }, 1);

  it('refuses a NEW id holding a control character or a bidi control, naming it by code point without printing it, before the other checks', () => {
    const controls: Array<[string, string]> = [
      ['\u0000', 'U+0000'],
      ['\t', 'U+0009'],
      ['\u001b', 'U+001B'],
      ['\u007f', 'U+007F'],
      ['\u009b', 'U+009B'],
      ['\u061c', 'U+061C'],
      ['\u200e', 'U+200E'],
      ['\u200f', 'U+200F'],
      ['\u202a', 'U+202A'],
      ['\u202e', 'U+202E'],
      ['\u2066', 'U+2066'],
      ['\u2069', 'U+2069'],
    ];
    for (const [control, codePoint] of controls) {
      const id = `m${control}1`;
      const error = failure(() => assertPutChange(put({ id, ...badNumbering }), 'sqlite'));
      expect(error, codePoint).toMatchObject({ code: 'INVALID_INPUT', backend: 'sqlite', details: { field: 'id' } });
      expect(error.reason, codePoint).toContain(`${codePoint} at index 1`);
      expect(error.message.includes(control), codePoint).toBe(false);
      // One rule for every new id: the stores' creating puts and the CLI's import lines.
      expect(newIdProblem(id), codePoint).toBe(error.reason);
    }
    for (const id of ['', '   ', 'x'.repeat(257), 7, undefined]) {
      const error = failure(() => assertPutChange(put({ id: id as never }), 'qdrant'));
      expect(error, String(id)).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'id' } });
      expect(error.reason).toBe(newIdProblem(id));
    }
    expect(newIdProblem('x'.repeat(300))).toBe('a memory id must be at most 256 characters long; this one is 300');
    expect(newIdProblem('x'.repeat(256))).toBeUndefined();
    // Other characters are the store's to keep: letters of any script, emoji, a joiner, spaces and punctuation.
    for (const id of ['茶-m1', 'm\u{1F600}', 'family \u{1F468}\u200d\u{1F469}', 'a:b/c.d']) {
      expect(() => assertPutChange(put({ id }), 'sqlite')).not.toThrow();
      expect(validateId(id)).toBe(id);
    }
  });

  it('lets a put rewrite a memory a store holds with such an id (written before the rule), and the facade look it up', () => {
    for (const id of ['ticket\t42', 'm\u001b[2J', 'm\u202e1']) {
      expect(() => assertPutChange(rewrite({ id }), 'sqlite'), JSON.stringify(id)).not.toThrow();
      expect(validateId(id)).toBe(id);
    }
    // A rewrite's id is still a string, and the other checks still run, in their order.
    expect(failure(() => assertPutChange(rewrite({ id: 7 as never }), 'sqlite'))).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'id' } });
    expect(failure(() => assertPutChange(rewrite({ id: 'ticket\t42', ...badScope }), 'sqlite')).code).toBe('INVALID_SCOPE');
    // Lookups keep the old rule: non-blank, at most 256 characters.
    for (const id of ['', '   ', 'x'.repeat(257)]) expect(failure(() => validateId(id)).code).toBe('INVALID_INPUT');
  });

  it('refuses a blank scope value (INVALID_SCOPE naming the field), as the facade refuses it in a query', () => {
    for (const scope of [{ userId: '' }, { userId: 'alice', agentId: ' \t ' }, { sessionId: '\n' }]) {
      const field = Object.keys(scope).at(-1);
      expect(failure(() => assertPutChange(put({ scope }), 'sqlite')), JSON.stringify(scope)).toMatchObject({ code: 'INVALID_SCOPE', backend: 'sqlite', details: { field } });
      expect(failure(() => assertRecordScope({ id: 'm1', scope }, 'markdown')).reason).toMatch(new RegExp(`^memory m1: scope\\.${field} must not be blank`));
    }
    expect(() => assertRecordScope({ id: 'm1', scope: { userId: ' alice ', agentId: undefined } }, 'sqlite')).not.toThrow();
  });

  it('lets a put rewrite a memory a store holds with a blank scope value (written before the rule), checking the shape only', () => {
    const scope = { userId: 'alice', agentId: '' };
    expect(() => assertPutChange(rewrite({ scope }), 'sqlite')).not.toThrow();
    expect(() => assertRecordScope({ id: 'm1', scope }, 'sqlite', false)).not.toThrow();
    expect(failure(() => assertPutChange(rewrite({ scope: { userId: 5 } as never }), 'sqlite')).code).toBe('INVALID_SCOPE');
  });

  it('leaves what only some stores refuse to them: text with a lone UTF-16 half, unreadable times, the vector', () => {
    const change = { ...put({ content: 'cut \uD83D', createdAt: '2024-02-30T00:00:00.000Z' }), vector: [Number.NaN] };
    expect(() => assertPutChange(change, 'memory')).not.toThrow();
  });

  it('runs in the in-memory store on every put of a batch before any revision is compared', async () => {
    const store = createInMemoryStore();
    await store.apply([put()]);
    // The first put is stale (CONFLICT alone); the second is a record no store keeps.
    const refused = await store.apply([put({ content: 'stale' }), put({ id: 'm2', ...badScope })]).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'INVALID_SCOPE' });
    expect((await store.get('m1'))?.content).toBe('likes tea');
  });

  it('refuses in the in-memory store a stale put for its vector, as the other stores do: bad input whatever the revision', async () => {
    const store = createInMemoryStore();
    await store.open({ dimension: 4, embedderId: 'test/embedder' });
    await store.apply([put()]);
    const stale = (vector: number[]) => ({ ...put({ content: 'stale' }), vector });
    expect(await store.apply([stale([Number.NaN, 0, 0, 1])]).catch((error: unknown) => error)).toMatchObject({ code: 'INVALID_INPUT' });
    expect(await store.apply([stale([0, 0, 0, 0])]).catch((error: unknown) => error)).toMatchObject({ code: 'INVALID_INPUT' });
    expect(await store.apply([stale([1, 0])]).catch((error: unknown) => error)).toMatchObject({ code: 'DIMENSION_MISMATCH' });
    expect(await store.apply([stale(axisVector(4, 1))]).catch((error: unknown) => error)).toMatchObject({ code: 'CONFLICT' });
    expect((await store.get('m1'))?.content).toBe('likes tea');
  });
});

describe('one rule for what a vector may be, for the embedder check and the store check alike', () => {
  it('takes an array, a Float32Array or a Float64Array of finite numbers, and refuses other typed arrays, a DataView and array-likes', () => {
    for (const vector of [[0.5, 1], new Float32Array([0.5, 1]), new Float64Array([0.5, 1])]) {
      assertValidVector(vector, 2, 'embedder e');
      assertUsableVector(vector, 'the vector of memory m1', 'sqlite');
    }
    const others: Array<[string, unknown]> = [
      ['Uint8Array data', new Uint8Array([1, 2])],
      ['Int8Array data', new Int8Array([1, 2])],
      ['DataView data', new DataView(new ArrayBuffer(2))],
      ['an object', { length: 2, 0: 1, 1: 2 }],
    ];
    for (const [shown, vector] of others) {
      expect(failure(() => assertValidVector(vector, 2, 'embedder e')), shown).toMatchObject({
        code: 'INVALID_EMBEDDING',
        reason: `embedder e returned ${shown} where a vector of 2 numbers (an array, a Float32Array or a Float64Array) was expected`,
      });
      expect(failure(() => assertUsableVector(vector, 'the vector of memory m1', 'sqlite')), shown).toMatchObject({ code: 'INVALID_INPUT', backend: 'sqlite' });
    }
  });

  it('takes a Float32Array or a Float64Array made in another realm (a vm context, a native addon), and refuses its other typed arrays', async () => {
    const fromOtherRealm = (code: string): unknown => vm.runInNewContext(code);
    for (const code of ['new Float32Array([0.6, 0.8])', 'new Float64Array([0.6, 0.8])', '[0.6, 0.8]']) {
      const vector = fromOtherRealm(code);
      expect(vector instanceof Float32Array || vector instanceof Float64Array || vector instanceof Array, code).toBe(false);
      assertValidVector(vector, 2, 'embedder e');
      assertUsableVector(vector, 'the vector of memory m1', 'sqlite');
    }
    const others: Array<[string, unknown]> = [
      ['Uint8Array data', fromOtherRealm('new Uint8Array([1, 2])')],
      ['DataView data', fromOtherRealm('new DataView(new ArrayBuffer(2))')],
      // An object that only says it is one.
      ['an object', { [Symbol.toStringTag]: 'Float32Array', length: 2, 0: 1, 1: 2 }],
    ];
    for (const [shown, vector] of others) {
      expect(failure(() => assertValidVector(vector, 2, 'embedder e')), shown).toMatchObject({ code: 'INVALID_EMBEDDING', reason: expect.stringContaining(`returned ${shown} where`) });
      expect(failure(() => assertUsableVector(vector, 'the vector of memory m1', 'sqlite')), shown).toMatchObject({ code: 'INVALID_INPUT', backend: 'sqlite' });
    }
    // Through the facade: an embedder that answers with another realm's Float32Array.
    const embedder = { id: 'other-realm', dimension: 4, embed: async (texts: readonly string[]) => texts.map(() => fromOtherRealm('new Float32Array([0.5, 0.5, 0.5, 0.5])') as number[]) };
    const memory = createMemory({ store: createInMemoryStore(), embedder });
    const { memory: added } = await memory.add('I drink tea', { scope: { userId: 'alice' } });
    expect(await memory.store.getVector(added.id)).toEqual([0.5, 0.5, 0.5, 0.5]);
  });

  it('name the first value that is not a finite number, and where it is', () => {
    const vector = new Float32Array([1, Number.NaN]);
    expect(failure(() => assertValidVector(vector, 2, 'embedder e')).reason).toBe('embedder e returned a vector with a non-finite value (NaN) at index 1');
    expect(failure(() => assertUsableVector([1, 'x'.repeat(100)], 'the query vector', 'qdrant')).reason).toBe(`the query vector holds a value that is not a finite number ("${'x'.repeat(40)}…") at index 1`);
  });
});
