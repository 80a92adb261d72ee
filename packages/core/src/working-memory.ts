import { z } from 'zod';
import { formatZodIssues } from './config.js';
import { MemloomError } from './errors.js';

/** Seed 003's thresholds (environment names in parentheses). */
export const workingMemoryConfigSchema = z.object({
  /** Remind after more than this many rounds without an overview update (WM_MAX_ROUNDS). @default 5 */
  maxRounds: z.number().int().positive().default(5),
  /** Never remind before this many rounds (WM_MIN_ROUNDS); when given, at most maxRounds + 1, or maxRounds would never count. @default 3 */
  minRounds: z.number().int().positive().default(3),
  /** Context use (percent) past which the reminder comes after minRounds already (WM_TOKEN_THRESHOLD). @default 70 */
  tokenThresholdPercent: z.number().min(0).max(100).default(70),
  /** WM_ENABLE_REMINDER. @default true */
  enabled: z.boolean().default(true),
  /** Where the agent writes its overview; named in the reminder. @default 'overview.md' */
  overviewPath: z.string().min(1).default('overview.md'),
  /** Where finished work is archived; named in the reminder. @default 'detail/' */
  detailPath: z.string().min(1).default('detail/'),
});
export type WorkingMemoryConfig = z.output<typeof workingMemoryConfigSchema>;
export type WorkingMemoryConfigInput = z.input<typeof workingMemoryConfigSchema>;

/**
 * Read WM_MAX_ROUNDS, WM_MIN_ROUNDS, WM_TOKEN_THRESHOLD, WM_ENABLE_REMINDER.
 * A value the tracker would refuse is INVALID_CONFIG naming its variable; a
 * WM_MIN_ROUNDS past WM_MAX_ROUNDS + 1 is the tracker's to refuse (the other
 * may come from code).
 */
export function workingMemoryConfigFromEnv(env: Record<string, string | undefined>): WorkingMemoryConfigInput {
  const config: WorkingMemoryConfigInput = {};
  const number = (name: string, field: 'maxRounds' | 'minRounds' | 'tokenThresholdPercent', expected: string): number | undefined => {
    const raw = env[name];
    if (raw === undefined || raw === '') return undefined;
    const value = Number(raw);
    if (!workingMemoryConfigSchema.shape[field].safeParse(value).success) {
      throw new MemloomError({ code: 'INVALID_CONFIG', message: `${name} must be ${expected}, got ${JSON.stringify(raw)}`, details: { field: name } });
    }
    return value;
  };
  const maxRounds = number('WM_MAX_ROUNDS', 'maxRounds', 'a whole number of rounds, 1 or more');
  const minRounds = number('WM_MIN_ROUNDS', 'minRounds', 'a whole number of rounds, 1 or more');
  const tokenThreshold = number('WM_TOKEN_THRESHOLD', 'tokenThresholdPercent', 'a percentage from 0 to 100');
  if (maxRounds !== undefined) config.maxRounds = maxRounds;
  if (minRounds !== undefined) config.minRounds = minRounds;
  if (tokenThreshold !== undefined) config.tokenThresholdPercent = tokenThreshold;
  const enabled = env.WM_ENABLE_REMINDER;
  if (enabled !== undefined && enabled !== '') config.enabled = !/^(0|false|no|off)$/i.test(enabled);
  return config;
}

/** The context window is known: a number above 0 (undefined, 0, a negative or NaN value say nothing). */
function knownWindow(status: WorkingMemoryStatus): status is WorkingMemoryStatus & { tokensMax: number } {
  return status.tokensMax !== undefined && status.tokensMax > 0;
}

/** What the agent's context looks like this round. */
export interface WorkingMemoryStatus {
  tokensUsed: number;
  /** The context window, in tokens; undefined or 0 when unknown (no share of it is reckoned, so the token rule never reminds). */
  tokensMax?: number | undefined;
  messageCount: number;
  /** Size of the current overview, in bytes. */
  overviewBytes: number;
}

export interface WorkingMemoryCheck {
  remind: boolean;
  roundsSinceUpdate: number;
  /** Context use in percent; 0 when the context window is unknown. */
  tokensPercent: number;
  /** The reminder text when `remind` is true, else "". */
  reminder: string;
}

/**
 * Seed 003: counts rounds since the agent last wrote its working-memory
 * overview and, from round `minRounds` on, reminds it after more than
 * `maxRounds` rounds, or after more than `minRounds` when context use passes
 * `tokenThresholdPercent`. A round is a round of the conversation: a new user
 * message. Call `checkRound` before each model call with the round's key (the
 * latest user message) and `markUpdated` when the overview is written.
 */
export class WorkingMemoryTracker {
  readonly config: WorkingMemoryConfig;
  private rounds = 0;
  /** The key of the round counted last (`checkRound`). */
  private lastRound: string | undefined;

  /** `backend` names who refuses bad options (an adapter that takes them from its user). */
  constructor(config: WorkingMemoryConfigInput = {}, backend = 'core') {
    const parsed = workingMemoryConfigSchema.safeParse(config);
    if (!parsed.success) {
      throw new MemloomError({ code: 'INVALID_OPTIONS', backend, message: `invalid working memory options: ${formatZodIssues(parsed.error)}` });
    }
    const { minRounds, maxRounds } = parsed.data;
    // minRounds up to maxRounds + 1 agree (3 and 2: both say round 3); past it, maxRounds would never count.
    // Only when minRounds was given (alone or with maxRounds): maxRounds alone below the default minRounds
    // (WM_MAX_ROUNDS=1) keeps its meaning of old, a reminder from round minRounds.
    if (config.minRounds !== undefined && minRounds > maxRounds + 1) {
      throw new MemloomError({
        code: 'INVALID_OPTIONS',
        backend,
        message: `invalid working memory options: minRounds (WM_MIN_ROUNDS) is ${minRounds}, so no reminder before round ${minRounds}, but maxRounds (WM_MAX_ROUNDS) is ${maxRounds}, a reminder after round ${maxRounds}: lower minRounds to at most ${maxRounds + 1} or raise maxRounds to at least ${minRounds - 1}`,
        details: { field: 'minRounds', minRounds, maxRounds },
      });
    }
    this.config = parsed.data;
  }

  get roundsSinceUpdate(): number {
    return this.rounds;
  }

  /** The overview was just written: start counting again. */
  markUpdated(): void {
    this.rounds = 0;
  }

  /**
   * Count a round and say whether to remind. `round` names the round, e.g. the latest user
   * message (its id): a call with the key of the call before counts nothing (an agent calls the
   * model several times per user message, for its tool calls) but is checked again with the new
   * status, so an overview written in between ends the reminder at once. Without `round`, every
   * call is a new round.
   */
  checkRound(status: WorkingMemoryStatus, round?: string): WorkingMemoryCheck {
    if (round === undefined || round !== this.lastRound) {
      this.lastRound = round;
      this.rounds++;
    }
    const tokensPercent = knownWindow(status) ? (status.tokensUsed / status.tokensMax) * 100 : 0;
    const { enabled, minRounds, maxRounds, tokenThresholdPercent } = this.config;
    const remind =
      enabled &&
      this.rounds >= minRounds &&
      (this.rounds > maxRounds || (tokensPercent > tokenThresholdPercent && this.rounds > minRounds));
    return {
      remind,
      roundsSinceUpdate: this.rounds,
      tokensPercent,
      reminder: remind ? this.reminderText(status, tokensPercent) : '',
    };
  }

  /** The reminder: rounds, token use, message count, overview size and what to do. */
  reminderText(status: WorkingMemoryStatus, tokensPercent: number): string {
    return [
      '<!--',
      'WORKING MEMORY UPDATE NEEDED',
      '',
      `You have not updated your working memory for ${this.rounds} rounds.`,
      'Current context:',
      knownWindow(status)
        ? `- Token use: ${Math.round(tokensPercent)}% (${status.tokensUsed} / ${status.tokensMax})`
        : `- Token use: ${status.tokensUsed} tokens (context window unknown)`,
      `- Messages in history: ${status.messageCount}`,
      `- Working memory size: ${(status.overviewBytes / 1024).toFixed(2)} KB`,
      '',
      'What to do:',
      `1. Summarize finished tasks and archive them to ${this.config.detailPath}`,
      '2. Update the status and progress of the current task',
      '3. Delete outdated information; keep recent decisions and open questions',
      `4. Move detailed discussion to ${this.config.detailPath}`,
      '',
      `Write the updated overview to: ${this.config.overviewPath}`,
      'You will see the updated content on the next request.',
      '-->',
    ].join('\n');
  }
}
