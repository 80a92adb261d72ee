/**
 * LoCoMo loader and the project's retrieval metric (see the data folder's
 * README): every turn is ingested in order as one memory whose text is
 * `"<speaker>: <text>"` (plus the shared image's caption), timestamped with
 * its session's date, its `dia_id` kept as the memory's source. Each question
 * of category 1-4 is searched with its text; its recall@k is the share of its
 * evidence ids found among the sources of the top k results. Evidence ids are
 * read as `D<session>:<turn>` of a turn the conversation has; a question left
 * with none is not scored (see `EvidenceReport`).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Embedder } from '@memloom/core';

export const CATEGORY_NAMES: Readonly<Record<number, string>> = {
  1: 'multi-hop',
  2: 'temporal',
  3: 'open-domain',
  4: 'single-hop',
  5: 'adversarial',
};

export interface LocomoTurn {
  /** `D<session>:<n>`, the id evidence refers to. */
  diaId: string;
  speaker: string;
  text: string;
  /** Caption of the image the speaker shared, when there is one. */
  caption?: string;
  session: number;
  /** The session's date. */
  at: Date;
}

export interface LocomoQuestion {
  question: string;
  /** The ids of the turns that hold the answer, as `D<session>:<turn>` of turns the conversation has (see `EvidenceReport`). */
  evidence: string[];
  category: number;
}

/**
 * What reading the evidence lists changed, over the questions of categories
 * 1-4 (the ones the metric scores). The data writes a few ids otherwise than
 * `D<session>:<turn>` ("D1: 3", "D1:03", "D:11:26", two ids in one string) and
 * a few name no turn ("D", a turn number past the session's end): the first
 * are read as the id they mean, the second dropped, and a question left with
 * no id is not scored. The same for every row of a run.
 */
export interface EvidenceReport {
  /** Questions of categories 1-4. */
  questions: number;
  /** Of those, left with no evidence id that names a turn: excluded from scoring. */
  withoutEvidence: number;
  /** Evidence entries (strings) of those questions. */
  entries: number;
  /** Entries written otherwise than `D<session>:<turn>` and read as the id(s) they mean. */
  normalised: number;
  /** Ids naming no turn of the conversation, and entries holding no id at all: dropped. */
  dropped: number;
  /** Ids given twice for one question (after normalising): counted once. */
  repeated: number;
  /** Each entry normalised or dropped and each repeat, e.g. `conv-26 qa 12: "D8:6; D9:17" -> D8:6, D9:17`. */
  changes: string[];
}

export interface LocomoConversation {
  /** File name without `.json`, e.g. `conv-26`. */
  id: string;
  speakers: [string, string];
  /** In conversation order. */
  turns: LocomoTurn[];
  /** Every question of the file, adversarial ones included. */
  questions: LocomoQuestion[];
  /** What reading the evidence of its questions of categories 1-4 changed. */
  evidence: EvidenceReport;
}

/** Load every `conv-*.json` of a LoCoMo folder, sorted by name, checking the shape as it goes. */
export async function loadLocomo(dir: string): Promise<LocomoConversation[]> {
  const names = (await readdir(dir)).filter((name) => /^conv-.*\.json$/.test(name)).sort();
  if (names.length === 0) throw new Error(`no conv-*.json files in ${dir}`);
  const conversations: LocomoConversation[] = [];
  for (const name of names) {
    const raw: unknown = JSON.parse(await readFile(join(dir, name), 'utf8'));
    conversations.push(parseConversation(name.replace(/\.json$/, ''), raw));
  }
  return conversations;
}

/** The memory text of one turn, as the metric defines it. */
export function turnText(turn: LocomoTurn): string {
  const text = `${turn.speaker}: ${turn.text}`;
  return turn.caption ? `${text} [shared an image: ${turn.caption}]` : text;
}

/** The evidence reports of several conversations added up (a run's data). */
export function evidenceReport(conversations: readonly LocomoConversation[]): EvidenceReport {
  const total = emptyEvidenceReport();
  for (const { evidence } of conversations) {
    total.questions += evidence.questions;
    total.withoutEvidence += evidence.withoutEvidence;
    total.entries += evidence.entries;
    total.normalised += evidence.normalised;
    total.dropped += evidence.dropped;
    total.repeated += evidence.repeated;
    total.changes.push(...evidence.changes);
  }
  return total;
}

function emptyEvidenceReport(): EvidenceReport {
  return { questions: 0, withoutEvidence: 0, entries: 0, normalised: 0, dropped: 0, repeated: 0, changes: [] };
}

/** One line for a printed report: how the evidence was read. */
export function describeEvidence(report: EvidenceReport): string {
  const scored = report.questions - report.withoutEvidence;
  const changes = report.changes.length > 0 ? `: ${report.changes.join('; ')}` : '';
  return (
    `evidence (the same for every row): ${scored} of ${report.questions} questions of categories 1-4 scored, ${report.withoutEvidence} without evidence excluded; ` +
    `of ${report.entries} evidence entries, ${report.normalised} normalised, ${report.dropped} dropped (naming no turn), ${report.repeated} repeated${changes}`
  );
}

/** Questions that count for retrieval: categories 1-4 with at least one evidence id. */
export function scoredQuestions(conversation: LocomoConversation): LocomoQuestion[] {
  return conversation.questions.filter((question) => question.category >= 1 && question.category <= 4 && question.evidence.length > 0);
}

/** Share of `evidence` found among the sources of the first `k` results (each result may carry several sources). */
export function recallAt(evidence: readonly string[], resultSources: readonly (readonly string[])[], k: number): number {
  if (evidence.length === 0) return 0;
  const found = new Set<string>();
  for (const sources of resultSources.slice(0, k)) for (const source of sources) found.add(source);
  return evidence.filter((id) => found.has(id)).length / evidence.length;
}

export interface RecallSummary {
  questions: number;
  /** Mean recall per k, e.g. `{ 5: 0.52, 10: 0.61 }`. */
  overall: Record<number, number>;
  /** Per category name, mean recall per k and the question count. */
  byCategory: Record<string, { questions: number; recall: Record<number, number> }>;
  /**
   * Per conversation (file name without `.json`), mean recall per k and the
   * question count: how far a lead over another row holds from one
   * conversation to the next, which the overall mean hides.
   */
  byConversation: Record<string, { questions: number; recall: Record<number, number> }>;
}

/** Accumulates per-question recall into overall and per-category means. */
export class RecallTally {
  private readonly rows: { category: number; conversation: string; recall: Record<number, number> }[] = [];

  constructor(readonly ks: readonly number[]) {}

  add(question: LocomoQuestion, resultSources: readonly (readonly string[])[], conversation = ''): void {
    const recall: Record<number, number> = {};
    for (const k of this.ks) recall[k] = recallAt(question.evidence, resultSources, k);
    this.rows.push({ category: question.category, conversation, recall });
  }

  summary(): RecallSummary {
    const byCategory: RecallSummary['byCategory'] = {};
    for (const category of [...new Set(this.rows.map((row) => row.category))].sort()) {
      const rows = this.rows.filter((row) => row.category === category);
      byCategory[CATEGORY_NAMES[category] ?? String(category)] = { questions: rows.length, recall: this.mean(rows) };
    }
    const byConversation: RecallSummary['byConversation'] = {};
    for (const conversation of new Set(this.rows.map((row) => row.conversation))) {
      const rows = this.rows.filter((row) => row.conversation === conversation);
      byConversation[conversation] = { questions: rows.length, recall: this.mean(rows) };
    }
    return { questions: this.rows.length, overall: this.mean(this.rows), byCategory, byConversation };
  }

  private mean(rows: readonly { recall: Record<number, number> }[]): Record<number, number> {
    const means: Record<number, number> = {};
    for (const k of this.ks) means[k] = rows.length === 0 ? 0 : rows.reduce((sum, row) => sum + (row.recall[k] ?? 0), 0) / rows.length;
    return means;
  }
}

/**
 * Something that can be measured: it ingests a conversation's turns, then
 * answers questions with ranked results, each carrying the turn ids it came
 * from. One retriever is created per conversation.
 */
export interface LocomoRetriever {
  /**
   * Called before the ingest timer starts: whatever a first embedding loads
   * (the default's word-vector table, a model) is loaded here, so that the
   * first conversation's ingest time is the ingest's own.
   */
  warmUp?(): Promise<void>;
  /** The id of the embedder it stores and searches with, when it embeds. */
  readonly embedderId?: string;
  ingest(turns: readonly LocomoTurn[]): Promise<void>;
  search(question: string, k: number): Promise<string[][]>;
  /** Memories held after ingest (fewer than turns when some were merged). */
  size(): Promise<number>;
  close?(): Promise<void>;
}

/**
 * What every retriever that embeds shares: the id of the embedder it stores and searches with, and
 * a `warmUp` that embeds once with it (loading what a first embedding loads), then runs `then`.
 */
export function embedderWarmUp(embedder: Embedder, then?: () => Promise<void>): Pick<LocomoRetriever, 'embedderId' | 'warmUp'> {
  return {
    embedderId: embedder.id,
    async warmUp() {
      await embedder.embed(['warm up'], { purpose: 'document' });
      await then?.();
    },
  };
}

export interface LocomoRun extends RecallSummary {
  memories: number;
  turns: number;
  /** Time in the retrievers' `warmUp`, before each ingest timer: in neither ingestMs nor searchMs. */
  warmUpMs: number;
  ingestMs: number;
  searchMs: number;
}

/** Run the metric over conversations with a fresh retriever for each. */
export async function runLocomo(
  conversations: readonly LocomoConversation[],
  createRetriever: (conversation: LocomoConversation) => Promise<LocomoRetriever> | LocomoRetriever,
  ks: readonly number[] = [5, 10],
): Promise<LocomoRun> {
  const tally = new RecallTally(ks);
  const maxK = Math.max(...ks);
  let memories = 0;
  let turns = 0;
  let warmUpMs = 0;
  let ingestMs = 0;
  let searchMs = 0;
  for (const conversation of conversations) {
    const retriever = await createRetriever(conversation);
    let started = performance.now();
    await retriever.warmUp?.();
    warmUpMs += performance.now() - started;
    started = performance.now();
    await retriever.ingest(conversation.turns);
    ingestMs += performance.now() - started;
    turns += conversation.turns.length;
    memories += await retriever.size();
    started = performance.now();
    for (const question of scoredQuestions(conversation)) tally.add(question, await retriever.search(question.question, maxK), conversation.id);
    searchMs += performance.now() - started;
    await retriever.close?.();
  }
  return { ...tally.summary(), memories, turns, warmUpMs, ingestMs, searchMs };
}

// ---------------------------------------------------------------------------

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** `"1:56 pm on 8 May, 2023"` → a UTC date. */
export function parseSessionDate(text: string): Date {
  const match = /^\s*(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$/i.exec(text);
  const month = match ? MONTHS.indexOf((match[5] as string).toLowerCase()) : -1;
  if (!match || month < 0) throw new Error(`unreadable session date: ${JSON.stringify(text)}`);
  let hour = Number(match[1]) % 12;
  if ((match[3] as string).toLowerCase() === 'pm') hour += 12;
  return new Date(Date.UTC(Number(match[6]), month, Number(match[4]), hour, Number(match[2])));
}

function parseConversation(id: string, raw: unknown): LocomoConversation {
  if (!isRecord(raw)) throw new Error(`${id}: not a JSON object`);
  const speakerA = raw.speaker_a;
  const speakerB = raw.speaker_b;
  if (typeof speakerA !== 'string' || typeof speakerB !== 'string') throw new Error(`${id}: speaker_a / speaker_b missing`);

  const sessions = Object.keys(raw)
    .map((key) => /^session_(\d+)$/.exec(key))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => Number(match[1]))
    .sort((a, b) => a - b);
  const turns: LocomoTurn[] = [];
  for (const session of sessions) {
    const list = raw[`session_${session}`];
    const date = raw[`session_${session}_date_time`];
    if (!Array.isArray(list)) continue;
    if (typeof date !== 'string') throw new Error(`${id}: session_${session} has no date`);
    const at = parseSessionDate(date);
    for (const [index, item] of list.entries()) {
      if (!isRecord(item) || typeof item.speaker !== 'string' || typeof item.dia_id !== 'string' || typeof item.text !== 'string') {
        throw new Error(`${id}: session_${session} turn ${index} lacks speaker, dia_id or text`);
      }
      const caption = typeof item.blip_caption === 'string' && item.blip_caption.trim() ? item.blip_caption.trim() : undefined;
      turns.push({ diaId: item.dia_id, speaker: item.speaker, text: item.text, session, at, ...(caption ? { caption } : {}) });
    }
  }

  if (!Array.isArray(raw.qa)) throw new Error(`${id}: qa is not a list`);
  const turnIds = new Set(turns.map((turn) => turn.diaId));
  const report = emptyEvidenceReport();
  const questions = raw.qa.map((item, index): LocomoQuestion => {
    if (!isRecord(item) || typeof item.question !== 'string' || typeof item.category !== 'number') {
      throw new Error(`${id}: qa ${index} lacks question or category`);
    }
    const entries = Array.isArray(item.evidence) ? item.evidence.filter((value): value is string => typeof value === 'string') : [];
    const scored = item.category >= 1 && item.category <= 4;
    // Adversarial questions are read the same way, but only the scored ones are counted.
    const evidence = readEvidence(entries, turnIds, `${id} qa ${index}`, scored ? report : emptyEvidenceReport());
    if (scored) {
      report.questions++;
      if (evidence.length === 0) report.withoutEvidence++;
    }
    return { question: item.question, category: item.category, evidence };
  });
  return { id, speakers: [speakerA, speakerB], turns, questions, evidence: report };
}

/**
 * The turn ids a question's evidence entries name, each once, in order:
 * `D<session>:<turn>` however it is written (spaces, leading zeros, a stray
 * colon as in "D:11:26", several in one string as in "D8:6; D9:17"), kept
 * only when the conversation has that turn. Adds what it changed to `report`.
 */
function readEvidence(entries: readonly string[], turnIds: ReadonlySet<string>, where: string, report: EvidenceReport): string[] {
  const ids: string[] = [];
  for (const entry of entries) {
    report.entries++;
    const read = [...entry.matchAll(/D\s*:?\s*(\d+)\s*:\s*(\d+)/g)].map((match) => `D${Number(match[1])}:${Number(match[2])}`);
    const kept = read.filter((candidate) => turnIds.has(candidate));
    const missing = read.filter((candidate) => !turnIds.has(candidate));
    if (read.length === 0) {
      report.dropped++;
      report.changes.push(`${where}: ${JSON.stringify(entry)} dropped (no turn id)`);
      continue;
    }
    if (read.length !== 1 || read[0] !== entry) {
      report.normalised++;
      report.changes.push(`${where}: ${JSON.stringify(entry)} -> ${read.join(', ')}`);
    }
    if (missing.length > 0) {
      report.dropped += missing.length;
      report.changes.push(`${where}: ${missing.join(', ')} dropped (no such turn)`);
    }
    for (const candidate of kept) {
      if (ids.includes(candidate)) {
        report.repeated++;
        report.changes.push(`${where}: ${candidate} repeated`);
      } else ids.push(candidate);
    }
  }
  return ids;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
