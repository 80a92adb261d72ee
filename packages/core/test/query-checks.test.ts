import { describe, expect, it } from 'vitest';
import { assertDeleteScope, assertQueryInput, assertQueryScope, assertWellFormedRecord, MemloomError } from '../src/index.js';

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
