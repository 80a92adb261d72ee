import { scopeKey, type Scope } from '@memloom/core';
import { memoryDirectory, scopeFolder } from './scope-path.js';
import type { ScopeState } from './world.js';

/** The empty in-process state of a scope, before any of its files are read. */
export function newScopeState(root: string, scope: Scope): ScopeState {
  const folder = scopeFolder(scope);
  return {
    key: scopeKey(scope),
    scope: { ...scope },
    directory: memoryDirectory(root, scope),
    displayPath: folder ? `${folder}/memory` : 'memory',
    files: new Map(),
    access: new Map(),
    accessLines: 0,
    accessSignature: undefined,
    vectors: new Map(),
    vectorRecords: -1,
    vectorSignature: undefined,
    vectorSize: 0,
    deletions: new Map(),
    deletionSignature: undefined,
  };
}

