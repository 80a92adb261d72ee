import { isEmptyScope, MemloomError, validateScope, type Scope } from '@memloom/core';

/**
 * What a LangChain run tells us about who is talking: the `context` passed to
 * `agent.invoke(input, { context })` and the `configurable` part of its config.
 */
export interface RunInfo {
  context?: unknown;
  configurable?: Record<string, unknown>;
}

/**
 * Where memories live for a run. A fixed scope (`{ userId: 'alice' }`), or a
 * function of the run. Fields of a fixed scope win over the run's fields;
 * a function decides alone.
 */
export type ScopeOption = Scope | ((run: RunInfo) => Scope | undefined | Promise<Scope | undefined>);

/** Keys read from `runtime.context` (first) and `config.configurable`, per scope field. */
const RUN_KEYS: Record<keyof Scope, readonly string[]> = {
  userId: ['userId', 'user_id'],
  agentId: ['agentId', 'agent_id'],
  sessionId: ['sessionId', 'session_id'],
};

/**
 * The scope of a run: `userId`, `agentId` and `sessionId` from
 * `runtime.context`, then from `config.configurable` (snake_case accepted),
 * then the fixed option on top. Throws INVALID_SCOPE when nothing names an
 * owner, so one user's memories never land in a shared, unscoped pile.
 */
export async function resolveScope(option: ScopeOption | undefined, run: RunInfo, what: string): Promise<Scope> {
  let scope: Scope;
  if (typeof option === 'function') {
    scope = validateScope((await option(run)) ?? {}, undefined, 'langchain');
  } else {
    scope = { ...scopeFromRun(run), ...validateScope(option ?? {}, undefined, 'langchain') };
    scope = validateScope(scope, undefined, 'langchain');
  }
  if (isEmptyScope(scope)) {
    throw new MemloomError({
      code: 'INVALID_SCOPE',
      backend: 'langchain',
      message:
        `${what} needs to know whose memories to use: pass { context: { userId } } to invoke(), ` +
        'set configurable.userId, or give the scope option',
    });
  }
  return scope;
}

/** The thread of a run (`configurable.thread_id`), used to scope session-level records. */
export function threadOf(run: RunInfo): string | undefined {
  const thread = run.configurable?.thread_id;
  return typeof thread === 'string' && thread.trim() !== '' ? thread : undefined;
}

function scopeFromRun(run: RunInfo): Scope {
  const scope: Scope = {};
  const sources = [asRecord(run.context), run.configurable ?? {}];
  for (const field of Object.keys(RUN_KEYS) as (keyof Scope)[]) {
    for (const source of sources) {
      const value = RUN_KEYS[field].map((key) => source[key]).find((candidate) => typeof candidate === 'string' && candidate !== '');
      if (typeof value === 'string') {
        scope[field] = value;
        break;
      }
    }
  }
  return scope;
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}
