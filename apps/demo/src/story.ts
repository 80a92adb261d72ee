import type { Memory } from '@memloom/core';
import type { FakeClock } from '@memloom/core/testing';
import { heading, printDecision, printMemories, printReport } from './print.js';

export interface StoryStep {
  day: number;
  say?: string;
  maintain?: boolean;
  note: string;
}

/** Seed 004's timeline, day 1 to day 105, told by a user who writes Chinese. */
export const SEED_004_STORY: StoryStep[] = [
  { day: 1, say: '我叫张三，是一名AI工程师，目前在北京工作', note: 'three memories are created' },
  { day: 1, say: '我喜欢喝咖啡，每天早上一杯拿铁', note: '' },
  { day: 1, say: '我养了一只橘猫，名字叫小橘', note: '' },
  { day: 10, maintain: true, note: 'passive compression: full -> summary, timestamps kept' },
  { day: 15, say: '我是AI工程师张三', note: 'the engineer topic comes back: merged with the full text the summary hid, refreshed, upgraded' },
  { day: 40, maintain: true, note: 'compression continues by age since the last update' },
  { day: 45, say: '我现在更喜欢喝茶了，偶尔喝咖啡', note: 'coffee again, but changed: keep both tracks' },
  { day: 100, maintain: true, note: 'old memories fade to traces' },
  { day: 105, say: '我下周要去东京出差', note: 'a new topic: an independent memory (the nearest old one still gets seed 004\'s low boost, +0.1 weight)' },
];

export async function tellStory(memory: Memory, clock: FakeClock, steps: StoryStep[], scope: { userId: string }): Promise<void> {
  const start = Date.parse('2024-01-01T10:00:00.000Z');
  for (const step of steps) {
    clock.set(start + (step.day - 1) * 86_400_000);
    if (step.note) heading(`Day ${step.day} (${clock.iso().slice(0, 10)}): ${step.note}`);
    if (step.say) printDecision('user says', step.say, await memory.add(step.say, { scope }));
    if (step.maintain) {
      printReport(await memory.maintain());
      printMemories(await memory.list({ scope }));
    }
  }
}
