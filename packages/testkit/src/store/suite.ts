import { describe } from 'vitest';
import { badInputCases } from './bad-input.js';
import { useStore } from './context.js';
import { concurrencyCases } from './concurrency.js';
import { crudCases } from './crud.js';
import type { StoreSuiteOptions } from './fixtures.js';
import { historyCases } from './history.js';
import { reindexCases } from './reindex.js';
import { scopingCases } from './scoping.js';
import { searchCases } from './search.js';

/**
 * The conformance suite every memloom store passes: CRUD and versions,
 * search ordering and filters, scope isolation (hostile ids included),
 * GDPR deletes, bad input, concurrency, and re-index when the store
 * declares it. Call it from the store's own test file; it registers
 * vitest cases.
 */
export function testMemoryStore(options: StoreSuiteOptions): void {
  describe(`memloom store conformance: ${options.name}`, () => {
    const context = useStore(options);
    crudCases(context);
    searchCases(context);
    scopingCases(context);
    historyCases(context);
    badInputCases(context);
    concurrencyCases(context);
    reindexCases(context);
  });
}
