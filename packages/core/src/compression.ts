import { keywords } from './text/keywords.js';
import { ENGLISH_STOPWORDS } from './text/stopwords.js';
import { statementTerms, isCoveredBy, type StatementTerms } from './text/statement-terms.js';
import { GROUPS, clauseSubjects, englishClauses, opensWithSelf, peopleNamed, type ClauseSubject } from './text/statement-subject.js';
import { hasCjk } from './text/tokenize.js';
import type { MemoryLevel } from './types.js';

/**
 * Deterministic text for each compressed level, used when no language model
 * is configured or the model fails. Seed 004's examples:
 *   full    "I am Zhang San, an AI engineer working in Beijing"
 *   summary "I am Zhang San, an AI engineer…"
 *   tag     "#Zhang #San #engineer #Beijing"
 *   trace   "Faded memory about: Zhang, engineer"
 *   archive "[archived] #Zhang #engineer"
 * The full text of every earlier level stays in the version history.
 */
export function compressDeterministic(content: string, to: MemoryLevel): string {
  const chinese = hasCjk(content);
  switch (to) {
    case 'full':
      return content;
    case 'summary':
      return summarize(content);
    case 'tag': {
      const words = keywords(content, 4);
      return words.length > 0 ? words.map((word) => `#${word}`).join(' ') : chinese ? '#记忆' : '#memory';
    }
    case 'trace': {
      const words = keywords(content, 2);
      if (chinese) return words.length > 0 ? `曾有关于${words.join('、')}的记忆` : '曾有相关记忆';
      return words.length > 0 ? `Faded memory about: ${words.join(', ')}` : 'Faded memory';
    }
    case 'archive': {
      const words = keywords(content, 2).map((word) => `#${word}`).join(' ');
      const label = chinese ? '[已归档]' : '[archived]';
      return words ? `${label} ${words}` : label;
    }
  }
}

/**
 * Merge new content into an old memory without a model: the new statement
 * leads, and sentences of the old one about other things are kept after it
 * ("I live in Paris. I have a dog." + "I live in Lyon now." →
 * "I live in Lyon now. I have a dog."), and those about someone else
 * (`aboutSomeoneElse`). `oldLevel` is the level of `oldContent`: a
 * compressed text (not `full`) is only a shadow of one, and the new
 * statement simply replaces it. A merge into a compressed memory passes the
 * text its compression hid, from the memory's history, as `full`.
 */
export function mergeDeterministic(oldContent: string, newContent: string, oldLevel: MemoryLevel, maxLength: number): string {
  const fresh = newContent.trim();
  const old = oldContent.trim();
  if (oldLevel !== 'full' || old === fresh) return fresh;
  // Negations and emoji count here ("I don't like coffee" is news to "I like coffee").
  const freshTerms = statementTerms(fresh);
  const oldTerms = statementTerms(old);
  if (isCoveredBy(oldTerms, freshTerms)) return fresh;
  const read = sentenceReader();
  const oldSentences = splitSentences(old).map(read);
  const freshSentences = splitSentences(fresh).map(read);
  const freshSubjects = new Set([...freshSentences.flatMap((sentence) => sentence.subjects), ...peopleNamed(fresh)]);
  const freshKnown = !freshSubjects.has('unknown');
  if (freshKnown ? saysAllOf(oldTerms, oldSentences, freshTerms, freshSentences) : isCoveredBy(freshTerms, oldTerms)) return old.length <= maxLength ? old : fresh;

  // An old sentence or clause that speaks of the same things as the new text is superseded by it; one
  // about something else, or someone else (`aboutSomeoneElse`), is kept after it. The new text is about
  // the subject of each of its clauses and anyone it names ("I visit my mom now"); one with a clause of
  // unknown subject may be about anyone, and then no old subject is read.
  // An old text that names someone the new text is about is not someone else's, even when it is read as
  // the user's: "My girlfriend Mia lives with me in Boston" beside "My girlfriend Mia lives in New York now".
  const keptBeside = (terms: StatementTerms, subjects: () => readonly ClauseSubject[], text: string) =>
    terms.terms.size > 0 &&
    (sharedShare(terms, freshTerms) < 0.3 || (freshKnown && aboutSomeoneElse(subjects(), freshSubjects) && !namesAnyOf(text, freshSubjects)));
  const extra = oldSentences.flatMap((sentence) => {
    const kept = keptBeside(sentence.terms, () => sentence.subjects, sentence.text);
    // A sentence kept is kept whole; of one superseded, a Chinese sentence keeps its clauses about other things.
    if (kept || !hasCjk(sentence.text)) return kept ? [sentence.text] : [];
    const clauses = keptClauses(sentence, keptBeside);
    return clauses.length > 0 ? [clauses.join('').replace(CLAUSE_END, '')] : [];
  });
  let merged = fresh;
  for (const sentence of extra) {
    // A sentence end between the two, when the new text has none ("I do not eat meat. I am vegetarian"),
    // looked for in the last characters only, so that a long merge does not read its text again and again.
    const ended = /[.!?。！？…]["'”’)\]」』》]*$/u.test(merged.slice(-32));
    const separator = hasCjk(sentence) && hasCjk(merged) ? (ended ? '' : '。') : ended ? ' ' : '. ';
    const next = `${merged}${separator}${sentence}`;
    if (next.length > maxLength) break;
    merged = next;
  }
  return merged;
}

/**
 * Split after sentence-ending punctuation (Latin and CJK), keeping it, and at
 * line breaks. A "." ends a sentence only before whitespace or the end of the
 * text, so "1.85", "bob@example.com" and "www.example.com" stay whole.
 */
export function splitSentences(text: string): string[] {
  return (text.match(SENTENCE) ?? []).map((sentence) => sentence.trim()).filter(Boolean);
}

// Characters that are not sentence ends (a "." followed by anything but whitespace, "." or the end), then the ends.
// A "." after a common abbreviation ("St. Louis", "Dr. Li", "Acme Inc. hired me", "e.g. tea") does not end one either.
const SENTENCE = /(?:[^.!?。！？\n]|\.(?![\s.]|$)|(?<=\b(?:Mr|Mrs|Ms|Dr|Prof|St|Mt|Jr|Sr|Inc|Ltd|Co|Corp|vs|etc|e\.g|i\.e|approx|Ave|Rd))\.(?=\s+\S))+[.!?。！？]*/gu;

// Clauses end at punctuation; a Latin ",", "." or ":" only before whitespace or the end ("1.85", "bob@example.com", "10:30").
const CLAUSE = /(?:[^,.;:!?，。；：！？、\n]|[,.:](?!\s|$))+[,.;:!?，。；：！？、\n]*/gu;

// The clauses a merge keeps apart: as CLAUSE, but the items of a list ("猫、狗和兔子") stay together.
const MERGE_CLAUSE = /(?:[^,.;:!?，。；：！？\n]|[,.:](?!\s|$))+[,.;:!?，。；：！？\n]*/gu;

// Clause punctuation left at the end of the clauses kept from a sentence.
const CLAUSE_END = /[\s,;:，；：、]+$/u;

/**
 * The first words of a Chinese clause that does not stand on its own: a condition, a cause, a concession,
 * a time or place it starts from ("从2019年开始", "如果下雨", "因为下雨"), or a clause going on from the one
 * before ("但是…", "也不喝酒", "所以…"). Kept without the clause it leans on, it would say something else.
 * A clause that starts with a time word ("目前在北京工作", "现在…", "当前…") does stand on its own. 从事, 就职 and
 * 就读 are verbs ("从事AI研究", "就职于腾讯"), and so is 当 unless the clause is "当时…" or ends as "当…时/的时候/
 * 以后/之后/后/以前/之前/前" ("当过兵", "当老师有一段时间了" stand on their own; "当我们结婚后" does not).
 */
const LEANING_CLAUSE =
  /^(?:自从|从(?!事)|如果|要是|假如|因为|由于|虽然|尽管|但|可是|不过|而|并且|也|还|就(?!职|读)|才|所以|因此|然后|或者|直到|当时|当(?=.*(?<!小)(?:时候?|以后|之后|后|以前|之前|前)[\s,;:!?.，；：、。！？]*$)|除了)/u;

function summarize(content: string): string {
  const text = content.trim();
  const characters = Array.from(text);
  if (characters.length <= 12) return text;
  const target = Math.min(160, Math.ceil(characters.length * 0.7));
  // Cut at the last clause boundary before the target, else at a word boundary.
  const clauses = text.match(CLAUSE) ?? [text];
  let summary = '';
  for (const clause of clauses) {
    if (Array.from(summary + clause).length > target) break;
    summary += clause;
  }
  // A first clause far shorter than the target ("Well, …") keeps too little.
  if (Array.from(summary).length < target / 2) {
    const head = characters.slice(0, target).join('');
    const space = head.lastIndexOf(' ');
    summary = space > target / 2 ? head.slice(0, space) : head;
    // Do not end on "for a" or "to the".
    const words = summary.split(' ');
    while (words.length > 1 && ENGLISH_STOPWORDS.has((words[words.length - 1] ?? '').toLowerCase())) words.pop();
    summary = words.join(' ');
  }
  summary = summary.replace(/[\s,.;:!?，。；：！？、]+$/u, '');
  return summary.length < text.length ? `${summary}…` : summary;
}

/** A sentence as the merge reads it: its clauses, the subject and the terms of each (`clauseSubjects`), and its terms. */
interface ReadSentence {
  text: string;
  clauses: string[];
  subjects: ClauseSubject[];
  clauseTerms: StatementTerms[];
  terms: StatementTerms;
}

/**
 * A Chinese sentence's terms are those of its clauses, each clause read once (a word never runs over a
 * comma). Everything is read only when asked for: most sentences are kept or superseded by their terms
 * alone; of the new text's sentences, the subjects are needed, and their clauses' terms only when
 * `saysAllOf` reads clause by clause. `termsOf` reads a text's terms.
 */
function readSentence(text: string, termsOf: (text: string) => StatementTerms): ReadSentence {
  const chinese = hasCjk(text);
  const clauses = chinese ? (text.match(MERGE_CLAUSE) ?? [text]) : englishClauses(text);
  let clauseTerms: StatementTerms[] | undefined;
  let subjects: ClauseSubject[] | undefined;
  let terms: StatementTerms | undefined;
  return {
    text,
    clauses,
    get subjects() {
      return (subjects ??= clauseSubjects(clauses));
    },
    get clauseTerms() {
      return (clauseTerms ??= clauses.map(termsOf));
    },
    get terms() {
      return (terms ??= chinese ? unionOf(this.clauseTerms) : termsOf(text));
    },
  };
}

/** `readSentence`, each distinct sentence and clause read once: a long text may say the same short one many times ("我，我，…", "I. I. …"). */
function sentenceReader(): (text: string) => ReadSentence {
  const termsOf = once(statementTerms);
  return once((text) => readSentence(text, termsOf));
}

function once<T>(read: (text: string) => T): (text: string) => T {
  const done = new Map<string, T>();
  return (text) => {
    let value = done.get(text);
    if (value === undefined) done.set(text, (value = read(text)));
    return value;
  };
}

function unionOf(all: readonly StatementTerms[]): StatementTerms {
  const union: StatementTerms = { terms: new Set(), negations: new Set() };
  for (const each of all) {
    for (const term of each.terms) union.terms.add(term);
    for (const negation of each.negations) union.negations.add(negation);
  }
  return union;
}

/** The share of `terms` that `other` has too: "I work at Google" shares 2/3 of its terms with "I work at Meta now". */
function sharedShare(terms: StatementTerms, other: StatementTerms): number {
  let shared = 0;
  for (const term of terms.terms) if (other.terms.has(term)) shared++;
  return shared / terms.terms.size;
}

/**
 * True when the old text already says all the new one says (`isCoveredBy`), each clause of the new text
 * read against the old sentences that may be about the same person (`aboutSomeoneElse`). "My sister Emma
 * lives in Lisbon. My brother lives in Porto." does not say "My sister Emma lives in Porto now": Porto is
 * only in the brother's sentence. Nor does "My friends live in Rome" say "I live in Rome". The caller reads
 * a new text with a clause of unknown subject ("Emma is happy") by words alone, against the whole old text.
 */
function saysAllOf(oldTerms: StatementTerms, oldSentences: readonly ReadSentence[], freshTerms: StatementTerms, freshSentences: readonly ReadSentence[]): boolean {
  if (!isCoveredBy(freshTerms, oldTerms)) return false;
  // The old sentences that may be about each subject, and their terms, gathered once per subject.
  const sentencesAbout = new Map<ClauseSubject, { all: boolean; terms: Set<string> }>();
  const aboutSubject = (subject: ClauseSubject) => {
    let about = sentencesAbout.get(subject);
    if (!about) {
      about = { all: true, terms: new Set() };
      for (const sentence of oldSentences) {
        // A sentence of the user's that opens with them and names the relative says the relative's facts too:
        // "I live in Lyon with my sister, who is a nurse" says "My sister is a nurse".
        const withThem = opensWithSelf(sentence.clauses[0] ?? '') && namesAnyOf(sentence.text, new Set([subject]));
        if (withThem || !aboutSomeoneElse(sentence.subjects, new Set([subject]))) for (const term of sentence.terms.terms) about.terms.add(term);
        else about.all = false;
      }
      sentencesAbout.set(subject, about);
    }
    return about;
  };
  // The people each clause of the new text of a known subject may be about: "I live in Denver with my wife
  // Jess" is read against the user's sentences and the wife's; "He works at Siemens" against every old
  // sentence but the user's own, since he may be anyone the old text names.
  const namedIn = once(peopleNamed);
  const peopleIn = (sentence: ReadSentence, index: number): ClauseSubject[] => {
    const subject = sentence.subjects[index] as ClauseSubject;
    return subject === 'unknown' ? [] : [subject, ...namedIn(sentence.clauses[index] as string)];
  };
  // When every old sentence may be about everyone these clauses are about, the old text says them, as
  // `isCoveredBy` found, and the clauses need not be read one by one.
  const clauseIndexes = (sentence: ReadSentence) => sentence.clauses.map((_, index) => index);
  const allAbout = (sentence: ReadSentence, index: number) => peopleIn(sentence, index).every((person) => aboutSubject(person).all);
  const distinct = [...new Set(freshSentences)];
  if (distinct.every((sentence) => clauseIndexes(sentence).every((index) => allAbout(sentence, index)))) return true;
  return distinct.every((sentence) =>
    clauseIndexes(sentence).every((index) => {
      const about = peopleIn(sentence, index).map((person) => aboutSubject(person).terms);
      return about.length === 0 || [...(sentence.clauseTerms[index] as StatementTerms).terms].every((term) => about.some((terms) => terms.has(term)));
    }),
  );
}

/** True when every clause of a sentence is about someone known who is not the user: "My mom lives in Porto", "He works at Google". */
function isAnothers(subjects: readonly ClauseSubject[]): boolean {
  return subjects.every((subject) => subject !== 'I' && subject !== 'unknown');
}

/**
 * True when an old sentence or clause is about someone else than the new text, so that the new one does
 * not supersede it however many terms they share: "He works at Google as an engineer" beside "I work at
 * Meta now", "我妈妈在医院工作" beside "我在腾讯工作", "My brother lives in Porto" beside "My sister Emma lives
 * in Porto now", and the other way round "I work at Google" beside "My wife works at a hospital now". A
 * pronoun may stand for anyone the new text names, so a he/she sentence is someone else's only beside a
 * text all the user's own. "My boss is Anna now" or "My mom's lasagna is great" name no one the rule knows
 * and supersede as before. A clause with "I" in it is the user's ("My mom is in the hospital and I visit her": the mother's, then the user's).
 */
function aboutSomeoneElse(subjects: readonly ClauseSubject[], freshSubjects: ReadonlySet<ClauseSubject>): boolean {
  const fresh = [...freshSubjects];
  if (subjects.length === 0 || fresh.length === 0 || fresh.some((subject) => subject === 'unknown')) return false;
  if (subjects.every((subject) => subject === 'I')) return !freshSubjects.has('I');
  if (!isAnothers(subjects)) return false;
  if (subjects.includes('pronoun')) return fresh.every((subject) => subject === 'I');
  return !freshSubjects.has('pronoun') && subjects.every((subject) => fresh.every((other) => !samePeople(subject, other)));
}

/** True when two subjects may be the same people: "my parents" are "my mom and dad", "my kids" "my son and daughter". */
function samePeople(one: ClauseSubject, other: ClauseSubject): boolean {
  return one === other || GROUPS[one]?.includes(other) === true || GROUPS[other]?.includes(one) === true;
}

/** True when a text names, anywhere, one of the people (not a he/she) the new text is about. */
function namesAnyOf(text: string, people: ReadonlySet<ClauseSubject>): boolean {
  for (const person of peopleNamed(text)) {
    if (person !== 'pronoun' && [...people].some((other) => samePeople(person, other))) return true;
  }
  return false;
}

/**
 * The clauses of a superseded Chinese sentence the merge keeps, since a Chinese clause reads on its own, its
 * subject left out: "我叫张三，是一名AI工程师，目前在北京工作" + "我是AI工程师张三" keeps "目前在北京工作", and "我住在杭州，
 * 我妈妈住在苏州" + "我现在住在苏州" keeps "我妈妈住在苏州". (A sentence that shares less than 30 % of its terms with the
 * new text is kept whole, its stale clauses too: "我在阿里巴巴工作，我老婆在腾讯工作" stays beside "我在字节跳动工作", as it
 * did before the subject rules.) Not a clause that leans on one left out (LEANING_CLAUSE:
 * "从2019年开始", "如果下雨"); a list ("猫、狗和兔子") is one clause. An English clause ("working in Beijing") does not
 * read on its own: it goes with its sentence.
 */
function keptClauses(sentence: ReadSentence, keptBeside: (terms: StatementTerms, subjects: () => readonly ClauseSubject[], text: string) => boolean): string[] {
  return sentence.clauses.filter((clause, index) => {
    const terms = sentence.clauseTerms[index] as StatementTerms;
    return !LEANING_CLAUSE.test(clause.trim()) && keptBeside(terms, () => [sentence.subjects[index] as ClauseSubject], clause);
  });
}
