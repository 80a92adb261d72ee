import { describe, expect, it } from 'vitest';
import { WorkingMemoryTracker, workingMemoryConfigFromEnv } from '../src/index.js';

const status = (tokensPercent = 10) => ({ tokensUsed: tokensPercent * 1000, tokensMax: 100_000, messageCount: 12, overviewBytes: 2048 });

describe('seed 003 working-memory reminders', () => {
  it('reminds only after more than 5 rounds without an update (scenario 2)', () => {
    const tracker = new WorkingMemoryTracker();
    const reminders = [1, 2, 3, 4, 5, 6].map(() => tracker.checkRound(status()).remind);
    expect(reminders).toEqual([false, false, false, false, false, true]);
    expect(tracker.roundsSinceUpdate).toBe(6);
  });

  it('stops reminding after the overview is updated (scenario 1)', () => {
    const tracker = new WorkingMemoryTracker();
    for (let round = 0; round < 7; round++) tracker.checkRound(status());
    tracker.markUpdated();
    expect(tracker.checkRound(status()).remind).toBe(false);
    expect(tracker.roundsSinceUpdate).toBe(1);
  });

  it('reminds after 3 rounds when context use passes 70% (scenario 3)', () => {
    const tracker = new WorkingMemoryTracker();
    const results = [45, 52, 68, 73].map((percent) => tracker.checkRound(status(percent)).remind);
    expect(results).toEqual([false, false, false, true]);
  });

  it('does not remind at exactly 70% context use, only past it (P-W04/05/08)', () => {
    const atThreshold = new WorkingMemoryTracker();
    expect([10, 10, 10, 70].map((percent) => atThreshold.checkRound(status(percent)).remind)).toEqual([false, false, false, false]);
    const past = new WorkingMemoryTracker();
    expect([10, 10, 10, 71].map((percent) => past.checkRound(status(percent)).remind)).toEqual([false, false, false, true]);
  });

  it('never reminds before round 3, however full the context', () => {
    const tracker = new WorkingMemoryTracker();
    expect(tracker.checkRound(status(99)).remind).toBe(false);
    expect(tracker.checkRound(status(99)).remind).toBe(false);
    expect(tracker.checkRound(status(99)).remind).toBe(false);
  });

  it('counts a round per user message: more model calls with the same round key count once, checked again each time', () => {
    const tracker = new WorkingMemoryTracker();
    // One user message, the model calls six times (tool calls): one round, no reminder.
    const firstTurn = [1, 2, 3, 4, 5, 6].map(() => tracker.checkRound(status(), 'message-1'));
    expect(firstTurn.map((check) => [check.roundsSinceUpdate, check.remind])).toEqual(Array.from({ length: 6 }, () => [1, false]));
    for (const key of ['message-2', 'message-3', 'message-4', 'message-5']) tracker.checkRound(status(), key);
    expect(tracker.checkRound(status(), 'message-5').remind).toBe(false);
    const sixth = tracker.checkRound(status(), 'message-6');
    expect([sixth.roundsSinceUpdate, sixth.remind]).toEqual([6, true]);
    // The overview written during the round: its next model call has no reminder, the next message is round 1.
    tracker.markUpdated();
    expect(tracker.checkRound(status(), 'message-6')).toMatchObject({ roundsSinceUpdate: 0, remind: false });
    expect(tracker.checkRound(status(), 'message-7')).toMatchObject({ roundsSinceUpdate: 1, remind: false });
  });

  it('re-checks the token rule within a round with the status of the call', () => {
    const tracker = new WorkingMemoryTracker();
    for (const key of ['m1', 'm2', 'm3', 'm4']) tracker.checkRound(status(10), key);
    expect(tracker.checkRound(status(10), 'm4').remind).toBe(false);
    // Tool results filled the context within round 4: past 70%, round 4 > minRounds.
    expect(tracker.checkRound(status(80), 'm4')).toMatchObject({ roundsSinceUpdate: 4, remind: true });
  });

  it('says the context window is unknown instead of a share of 0 tokens, and never reminds for a share it cannot reckon', () => {
    const unknown = { tokensUsed: 136, messageCount: 11, overviewBytes: 0 };
    const tracker = new WorkingMemoryTracker();
    let check = tracker.checkRound(unknown);
    // 0, a negative or NaN window say nothing either.
    for (const tokensMax of [0, -5, Number.NaN, 0, -1]) check = tracker.checkRound({ ...unknown, tokensMax });
    expect(check.remind).toBe(true);
    expect(check.reminder).toContain('- Token use: 136 tokens (context window unknown)\n');
    expect(check.reminder).not.toMatch(/%|\/ 0\)/);
    expect(check.tokensPercent).toBe(0);
    // The early reminder (more than minRounds, context past the threshold) needs a known window, even at a threshold of 0.
    const early = new WorkingMemoryTracker({ tokenThresholdPercent: 0 });
    expect([1, 2, 3, 4, 5].map(() => early.checkRound(unknown).remind)).toEqual([false, false, false, false, false]);
    const known = new WorkingMemoryTracker({ tokenThresholdPercent: 0 });
    expect([1, 2, 3, 4].map(() => known.checkRound({ ...unknown, tokensMax: 1000 }).remind)).toEqual([false, false, false, true]);
  });

  it('takes a context window of 0 as unknown: no share of it, so the early (token) reminder never comes', () => {
    const tracker = new WorkingMemoryTracker({ tokenThresholdPercent: 0 });
    const checks = [1, 2, 3, 4, 5].map(() => tracker.checkRound({ tokensUsed: 136, tokensMax: 0, messageCount: 11, overviewBytes: 0 }));
    expect(checks.map((check) => check.remind)).toEqual([false, false, false, false, false]);
    expect(checks.map((check) => check.tokensPercent)).toEqual([0, 0, 0, 0, 0]);
  });

  it('reminds from round minRounds on when maxRounds is below it: maxRounds 2, minRounds 3 (P-W06)', () => {
    const tracker = new WorkingMemoryTracker({ maxRounds: 2, minRounds: 3 });
    expect([1, 2, 3].map(() => tracker.checkRound(status()).remind)).toEqual([false, false, true]);
  });

  it('refuses minRounds past maxRounds + 1, where maxRounds would never count (INVALID_OPTIONS naming both and their WM_* variables)', () => {
    for (const [options, shown] of [
      [{ maxRounds: 2, minRounds: 4 }, 'minRounds (WM_MIN_ROUNDS) is 4, so no reminder before round 4, but maxRounds (WM_MAX_ROUNDS) is 2'],
      [{ maxRounds: 1, minRounds: 3 }, 'minRounds (WM_MIN_ROUNDS) is 3, so no reminder before round 3, but maxRounds (WM_MAX_ROUNDS) is 1'],
      [{ minRounds: 7 }, 'lower minRounds to at most 6 or raise maxRounds to at least 6'],
    ] as const) {
      expect(() => new WorkingMemoryTracker(options), JSON.stringify(options)).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTIONS', backend: 'core', details: expect.objectContaining({ field: 'minRounds' }), message: expect.stringContaining(shown) }),
      );
    }
    // Up to maxRounds + 1 they agree: the reminder comes at round minRounds, the round after maxRounds.
    expect(new WorkingMemoryTracker({ maxRounds: 4, minRounds: 5 }).config.minRounds).toBe(5);
    expect(new WorkingMemoryTracker({ maxRounds: 2 }).config.minRounds).toBe(3);
    // maxRounds alone below the default minRounds keeps its old meaning: WM_MAX_ROUNDS=1 reminds from round 3.
    const alone = new WorkingMemoryTracker(workingMemoryConfigFromEnv({ WM_MAX_ROUNDS: '1' }));
    expect([1, 2, 3, 4].map(() => alone.checkRound(status()).remind)).toEqual([false, false, true, true]);
    // From the environment, the same error names the variables to change.
    expect(() => new WorkingMemoryTracker(workingMemoryConfigFromEnv({ WM_MAX_ROUNDS: '2', WM_MIN_ROUNDS: '6' }))).toThrow(/minRounds \(WM_MIN_ROUNDS\) is 6, .* maxRounds \(WM_MAX_ROUNDS\) is 2/);
  });

  it('refuses a WM_* number the tracker would refuse when reading it, naming the variable (INVALID_CONFIG)', () => {
    for (const [env, name] of [
      [{ WM_MAX_ROUNDS: '-1' }, 'WM_MAX_ROUNDS'],
      [{ WM_MAX_ROUNDS: '2.5' }, 'WM_MAX_ROUNDS'],
      [{ WM_MIN_ROUNDS: '0' }, 'WM_MIN_ROUNDS'],
      [{ WM_TOKEN_THRESHOLD: '120' }, 'WM_TOKEN_THRESHOLD'],
    ] as const) {
      expect(() => workingMemoryConfigFromEnv(env), name).toThrow(
        expect.objectContaining({ code: 'INVALID_CONFIG', details: { field: name }, message: expect.stringMatching(new RegExp(`${name} must be .*, got "${Object.values(env)[0]}"$`)) }),
      );
    }
  });

  it('states rounds, token use, message count, overview size and what to do', () => {
    const tracker = new WorkingMemoryTracker({ overviewPath: 'notes/overview.md', detailPath: 'notes/detail/' });
    let check = tracker.checkRound(status(65));
    for (let round = 0; round < 5; round++) check = tracker.checkRound(status(65));
    expect(check.remind).toBe(true);
    expect(check.reminder).toContain('You have not updated your working memory for 6 rounds.');
    expect(check.reminder).toContain('Token use: 65% (65000 / 100000)');
    expect(check.reminder).toContain('Messages in history: 12');
    expect(check.reminder).toContain('Working memory size: 2.00 KB');
    expect(check.reminder).toContain('archive them to notes/detail/');
    expect(check.reminder).toContain('Write the updated overview to: notes/overview.md');
    expect(check.reminder.startsWith('<!--')).toBe(true);
  });

  it('takes thresholds from configuration and from WM_* environment variables', () => {
    const env = workingMemoryConfigFromEnv({ WM_MAX_ROUNDS: '2', WM_MIN_ROUNDS: '1', WM_TOKEN_THRESHOLD: '50', WM_ENABLE_REMINDER: 'true' });
    expect(env).toEqual({ maxRounds: 2, minRounds: 1, tokenThresholdPercent: 50, enabled: true });
    const tracker = new WorkingMemoryTracker(env);
    expect([1, 2, 3].map(() => tracker.checkRound(status()).remind)).toEqual([false, false, true]);
    const disabled = new WorkingMemoryTracker(workingMemoryConfigFromEnv({ WM_ENABLE_REMINDER: 'false' }));
    for (let round = 0; round < 10; round++) expect(disabled.checkRound(status(99)).remind).toBe(false);
    for (const off of ['0', 'false', 'no', 'off', 'OFF']) expect(workingMemoryConfigFromEnv({ WM_ENABLE_REMINDER: off }).enabled, off).toBe(false);
    for (const on of ['1', 'true', 'yes', 'on']) expect(workingMemoryConfigFromEnv({ WM_ENABLE_REMINDER: on }).enabled, on).toBe(true);
    expect(() => workingMemoryConfigFromEnv({ WM_MAX_ROUNDS: 'many' })).toThrow(/WM_MAX_ROUNDS/);
    expect(() => new WorkingMemoryTracker({ maxRounds: 0 })).toThrow(/maxRounds/);
  });
});
