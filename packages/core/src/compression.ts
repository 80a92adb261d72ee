import { keywords } from './text/keywords.js';
import { firstGraphemes } from './text/graphemes.js';
import { ENGLISH_STOPWORDS } from './text/stopwords.js';
import { statementTerms, isCoveredBy, type StatementTerms } from './text/statement-terms.js';
import { GROUPS, aboutName, clauseSubject, clauseSubjects, englishClauses, namedBefore, namesItsSubject, opensWithIt, opensWithSelf, peopleNamed, pronounOpening, type ClauseSubject } from './text/statement-subject.js';
import { hasCjk, tokenize } from './text/tokenize.js';
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
  const read = sentenceReader();
  const freshSentences = splitSentences(fresh).map(read);
  const freshSubjects = new Set([...freshSentences.flatMap((sentence) => sentence.subjects), ...peopleNamed(fresh)]);
  const freshKnown = !freshSubjects.has('unknown');
  // A new text that only adds, "also" or "too" (`addsOnly`), supersedes nothing: see below.
  const addition = addsOnly(freshSentences);
  // The new text says all the old one says, but for one that only adds about someone else than an old sentence is
  // about: "I work at Google." + "My wife also works at Google." keeps both.
  const covered = isCoveredBy(oldTerms, freshTerms);
  if (covered && !(addition && freshKnown)) return fresh;
  const oldSentences = splitSentences(old).map(read);
  if (covered && !oldSentences.some((sentence) => aboutSomeoneElse(sentence.subjects, freshSubjects))) return fresh;
  // The old text says all the new one says, unless the new one, of known subjects, has a count or news word the
  // old lacks, which the terms leave out ("…metformin twice a day" + "…metformin once a day now":
  // `holdsWordOldLacks`); one with a clause of unknown subject ("Emma is happy") may be about anyone.
  const says = (terms: StatementTerms, sentences: readonly ReadSentence[]) => (freshKnown ? saysAllOf(oldTerms, oldSentences, terms, sentences) : isCoveredBy(terms, oldTerms));
  const saidAlready = says(freshTerms, freshSentences);
  const newsToOld = freshKnown && holdsWordOldLacks(fresh, old);
  // The old text when it fits, for a new text it already says.
  const oldText = old.length <= maxLength ? old : fresh;
  if (saidAlready && !newsToOld) return oldText;

  // An old sentence or clause that speaks of the same things as the new text is superseded by it; one
  // about something else, or someone else (`aboutSomeoneElse`), is kept after it. The new text is about
  // the subject of each of its clauses and anyone it names ("I visit my mom now"); one with a clause of
  // unknown subject may be about anyone, and then no old subject is read.
  // An old text that names someone the new text is about is not someone else's, even when it is read as
  // the user's: "My girlfriend Mia lives with me in Boston" beside "My girlfriend Mia lives in New York now".
  // A new text that only adds, "also" or "too" (`addsOnly`), supersedes nothing: "I'm allergic to
  // peanuts." + "I'm also allergic to shellfish." keeps both. But for an old sentence it says again, or says
  // again with another value (`revalued`): "I love cooking." + "I also love cooking Italian food.", "My dad
  // lives in York." + "My dad also lives in Leeds." (like the mum), "I sleep 6 hours." + "I sleep 8 hours too."
  // One that adds only what the old text says already, its addition words aside, says nothing new: "我喜欢爬山和
  // 游泳。" + "我还喜欢游泳。", "I love cooking and baking." + "I love baking as well.".
  if (addition && !saidAlready && !newsToOld) {
    const plain = fresh.replace(ADDITION_WORDS, '');
    if (says(statementTerms(plain), splitSentences(plain).map(read))) return oldText;
  }
  // A number that counts a new thing ("a 5-year-old", 一个五岁的孩子: `COUNTED_THING`) is no new value: "I have a
  // 3-year-old." + "I also have a 5-year-old." keeps both.
  let freshValues: Set<string> | undefined;
  const addedTo = (terms: StatementTerms, text: string) =>
    addition && !revalued(terms, valueTerms(text), freshTerms, (freshValues ??= valueTerms(fresh.replace(COUNTED_THING, ' '))), oldTerms);
  // A he/she sentence right after one that names a single person or pet, or after a run of he/she sentences that
  // follows one (`namesFollowed`), is about them when the new text is about them too, a clause of it about them and
  // none about the user: "I have a dog named Bella. She is a beagle. She weighs 20 kg." + "I think Bella weighs 25 kg
  // now." (`namedBefore`, `aboutName`); not "I work with Sarah now" nor "I sleep on the sofa now because Bella snores".
  // 它 ("it") right after a name is about the one named too (`subjectsAfterName`): "我家的狗叫豆豆。它很喜欢吃肉。" stays
  // beside "我现在很喜欢吃肉。". But not when the new text may be about it too, naming it or saying 它 or 我家/我的 (our
  // pet?): then the old 它 sentences are superseded by the words they share, as any ("我家狗狗叫旺财。它今年三岁。" +
  // "我家狗狗叫旺财，今年四岁了。" → the new text).
  const freshClauses = freshSentences.flatMap((sentence) => sentence.clauses);
  // Read once per sentence: a clause asks for its sentence's subjects, and a sentence may have thousands of clauses.
  const afterName = once(subjectsAfterName);
  const nameIn = once(namedBefore);
  // Each name and the names followed found once: a long text may follow one name long.
  let followed: (string | undefined)[] | undefined;
  const nameFollowed = (index: number) => (followed ??= namesFollowed(oldSentences, afterName, nameIn))[index];
  // The same, read from the sentence before when it names one (the name a sentence right after one follows), so that
  // the whole text is not read for a run (`namesFollowed`) when it needs not be.
  const followedName = (index: number) => (index > 0 ? nameIn((oldSentences[index - 1] as ReadSentence).text) : undefined) ?? nameFollowed(index);
  const readsItAsNamed = once((name: string) => !fresh.includes(name) && !MAY_BE_A_PET.test(fresh));
  const subjectsOf = (sentence: ReadSentence, index: number) => {
    const name = nameFollowed(index);
    return name === undefined || !readsItAsNamed(name) ? sentence.subjects : afterName(sentence);
  };
  const freshAbout = once((name: string) => {
    const about = freshClauses.map((clause) => aboutName(clause, name));
    return about.includes(true) && freshClauses.every((clause, at) => about[at] === true || clauseSubject(clause) !== 'I');
  });
  const aboutNamed = (index: number) => {
    const name = nameFollowed(index);
    return name !== undefined && afterName(oldSentences[index] as ReadSentence).includes('pronoun') && freshAbout(name);
  };
  // An old clause that a new one says again but for its number, of the same one (`renumbered`), is stale: "I am
  // three." + "I am four now.", "我养了一只狗叫豆豆，它三岁了。" + "豆豆已经四岁了。". Whom a clause is about (`oneAbout`): the
  // user or a relative it opens with ("subject I"), or for one that opens with a pronoun, the name a clause before it in
  // its sentence names, or the sentence before it (`nameFollowed`), with the pronoun ("name he Rex": a new "she" clause is
  // not about Rex), else the pronoun ("pronoun he"). Read only for a
  // new text of a few clauses with a number, that does not only add (`revalued` reads that one), and an old sentence of
  // a few clauses (`MOST_NUMBERED_CLAUSES`): a long one is not read clause by clause.
  const oneAbout = (clause: string, name: () => string | undefined): string | undefined => {
    const pronoun = pronounOpening(clause);
    if (pronoun === undefined) {
      const subject = clauseSubject(clause);
      return subject === 'unknown' || subject === 'pronoun' || subject === 'we' ? undefined : `subject ${subject}`;
    }
    // A pronoun's clause is about a name or the pronoun, which only a new clause that opens with neither the user nor a
    // relative may be about: the name, which may be costly to find, is not looked for otherwise.
    if (!freshNumbered().some((fresh) => fresh.mayFollow)) return undefined;
    const named = name();
    return named !== undefined ? `name ${pronoun} ${named}` : `pronoun ${pronoun}`;
  };
  // The new clauses with a number, and whom each may be about: its subject, the name it opens with, or the one its
  // pronoun follows in its sentence or the sentence before, or, when the new text names no one, anyone of that pronoun.
  let numbered: NumberedClause[] | undefined;
  const freshNumbered = () => (numbered ??= addition || freshSentences.length > 8 ? [] : numberedClauses(freshSentences));
  // The terms of the new clauses about one, with the name they open with left out; the old clauses' terms, read once.
  const freshNumberedAbout = once((about: string) =>
    freshNumbered()
      .filter((fresh) => fresh.about(about))
      .map((fresh) => numberedTerms(about.startsWith('name ') ? fresh.clause.replaceAll(aboutsName(about), ' ') : fresh.clause)),
  );
  // An old clause's terms are read as its sentence's were (`read`, once per text): most clauses leave nothing out.
  const numberedOf = once((clause: string) => numberedTerms(clause, (text) => read(text).terms));
  // The one name the clauses before each clause of a sentence name, read once per sentence and only when asked for.
  const namesBefore = once((sentence: ReadSentence) => namesBeforeClauses(sentence.clauses, nameIn));
  const renumberedIn = (sentence: ReadSentence, index: number): number[] => {
    const stale: number[] = [];
    if (sentence.clauses.length > MOST_NUMBERED_CLAUSES || freshNumbered().length === 0) return stale;
    for (const [at, clause] of sentence.clauses.entries()) {
      if (!mayBeRenumbered(clause)) continue;
      const about = oneAbout(clause, () => (at === 0 ? followedName(index) : namesBefore(sentence)[at]));
      const fresh = about === undefined ? [] : freshNumberedAbout(about);
      if (fresh.length === 0) continue;
      const terms = numberedOf(clause);
      if (fresh.some((other) => renumbered(terms, other))) stale.push(at);
    }
    return stale;
  };
  const keptBeside = (terms: StatementTerms, subjects: () => readonly ClauseSubject[], text: string, named = () => false, sharing = 0.3) =>
    terms.terms.size > 0 &&
    (addedTo(terms, text) || sharedShare(terms, freshTerms) < sharing || (freshKnown && aboutSomeoneElse(subjects(), freshSubjects) && !namesAnyOf(text, freshSubjects) && !named()));
  // The new sentences an old one may be said again in (`addedInPlace`): those of a new text of a few sentences; a
  // long new text is not read clause by clause against each old sentence.
  const distinctFresh = [...new Set(freshSentences)];
  const inPlace = distinctFresh.length <= 8 ? distinctFresh : [];
  const keptOf = (sentence: ReadSentence, index: number): string[] => {
    const named = () => aboutNamed(index);
    const subjects = () => subjectsOf(sentence, index);
    const kept = keptBeside(sentence.terms, subjects, sentence.text, named);
    // A sentence kept but for clauses the new text says again with another number keeps its other clauses, when they
    // read on their own (a Chinese one does not lean on the one before, an English one names its subject), each English
    // one as a sentence: "I have a dog named Rex, he is three." + "Rex is four now." keeps "I have a dog named Rex.",
    // without the "and", "but" or "while" it opened with ("I am 30, and I live in Leeds." keeps "I live in Leeds."); an
    // English one that "so" or "because" joins leans on the clause left out: that sentence is kept whole.
    // (Read for a sentence kept, and a Chinese one, which may keep clauses: `keptClauses`.)
    const stale = kept || hasCjk(sentence.text) ? renumberedIn(sentence, index) : [];
    if (kept && stale.length > 0) {
      const rest = sentence.clauses.filter((_, at) => !stale.includes(at));
      if (rest.length === 0) return [];
      if (hasCjk(sentence.text)) {
        if (!rest.some((clause) => LEANING_CLAUSE.test(clause.trim()))) return [endedAs(rest.join('').replace(CLAUSE_END, ''), sentence.text, '')];
      } else if (!LEANING_CONJUNCTION.test(sentence.text)) {
        const standing = rest.map((clause) => clause.trim().replace(OPENING_CONJUNCTION, ''));
        if (standing.every((clause) => clauseSubject(clause) !== 'unknown' && !NOUN_PHRASE.test(clause))) return standing.map((clause) => asSentence(clause, sentence.text));
      }
      return [sentence.text];
    }
    // A sentence kept is kept whole, but one of whose clauses a new text that only adds says again: then it keeps
    // its other clauses ("I'm a vegetarian and I love cooking." + "I also love cooking Italian food." keeps "I'm a
    // vegetarian."). Of one superseded, a Chinese sentence keeps its clauses about other things,
    // and ends as the sentence did ("我老公开出租车。", not "我老公开出租车"). An English one goes whole, but when the
    // new text only says it again with another count or news word: then it keeps those of its clauses that share
    // no word with the new text, or are someone else's, and name their subject (`standingClauses`).
    if (kept && !(addition && saysAClauseAgain(sentence, freshTerms))) return [sentence.text];
    if (!hasCjk(sentence.text)) return saidAlready || addition ? standingClauses(sentence, (terms, subjects, text) => keptBeside(terms, subjects, text, named, Number.MIN_VALUE)) : [];
    const clauses = keptClauses(sentence, subjects, (terms, subjects, text) => keptBeside(terms, subjects, text, named), inPlace, stale);
    if (clauses.length === 0) return [];
    const text = clauses.join('').replace(CLAUSE_END, '');
    return [endedAs(text, sentence.text, '')];
  };
  // A he/she (他, 她, 它…) sentence kept after the one that names whom it follows went opens with the name instead of the pronoun
  // (`withName`), when neither the new text nor what is kept of that sentence names them, so that it does not follow
  // someone else: "Priya is my manager. She is very supportive." + "Anna is my manager now." → "Anna is my manager now.
  // Priya is very supportive.". Only the first one kept: the rest of the run follows it. Not after a naming sentence about
  // someone else than the one it names, as `namesFollowed`.
  let nameShown = true;
  const extra = oldSentences.flatMap((sentence, index) => {
    const kept = keptOf(sentence, index);
    const first = kept[0];
    const name = first !== undefined && !nameShown && NAMEABLE_PRONOUN.test(first) ? followedName(index) : undefined;
    const shown = first !== undefined && name !== undefined && !fresh.includes(name) ? [withName(first, name), ...kept.slice(1)] : kept;
    if (kept.length > 0) nameShown = true;
    const naming = nameIn(sentence.text);
    // Not after a sentence about someone else than the one it names ("My son has a hamster called Nibbles. He…").
    if (naming !== undefined) nameShown = kept.some((text) => text.includes(naming)) || !aboutNamedOrUser(sentence);
    return shown;
  });
  let merged = fresh;
  let last = fresh;
  for (const sentence of extra) {
    // A sentence end between the two, when the new text has none ("I do not eat meat. I am vegetarian"),
    // looked for at the end of the text added last, so that a long merge does not read its text again and again.
    const ended = SENTENCE_END.test(last);
    const separator = hasCjk(sentence) && hasCjk(merged) ? (ended ? '' : '。') : ended ? ' ' : '. ';
    const next = `${merged}${separator}${sentence}`;
    if (next.length > maxLength) break;
    merged = next;
    last = sentence;
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
// Only from where a run of them starts (the look-behind): tried at every place of a long run, it took time with the run's square.
const CLAUSE_END = /(?<![\s,;:，；：、])[\s,;:，；：、]+$/u;
// The punctuation that ends a sentence, closing quotes and brackets with it.
const SENTENCE_END = /[.!?。！？…]+["'”’)\]」』》]*$/u;

/** `text` (part of `sentence`) ending as the sentence ends, with `fallback` when the sentence has no end. */
function endedAs(text: string, sentence: string, fallback: string): string {
  return SENTENCE_END.test(text) ? text : text + (SENTENCE_END.exec(sentence)?.[0] ?? fallback);
}

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
    // Between graphemes: a flag or a joined emoji is never cut in two.
    const head = firstGraphemes(text, target);
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

function once<K, T>(read: (key: K) => T): (key: K) => T {
  const done = new Map<K, T>();
  return (key) => {
    let value = done.get(key);
    if (value === undefined) done.set(key, (value = read(key)));
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

/**
 * The name each sentence follows: that of the sentence before it when it names one person or pet (`namedBefore`),
 * or the one a run goes on from, of sentences that open with the pronoun the first one after the name opens with and
 * name no one else. "I have a dog named Bella. She is a beagle. She weighs 20 kg." → -, Bella, Bella; "…named Bella.
 * My mum loves her. She weighs 20 kg." → -, Bella, -; "…named Sarah. She has a brother. He works at a bank." → -,
 * Sarah, -. `subjectsAfter` reads a sentence's subjects after a name (`subjectsAfterName`), once per sentence.
 */
function namesFollowed(
  sentences: readonly ReadSentence[],
  subjectsAfter: (sentence: ReadSentence) => readonly ClauseSubject[],
  nameIn: (text: string) => string | undefined,
): (string | undefined)[] {
  // Each distinct sentence read once: a long text may say the same one many times.
  const peopleIn = once(peopleNamed);
  // An English "it" is no subject the clauses read (`clauseSubject`): a sentence that opens with it and names no one
  // goes on with the run too ("I have a cat named Mochi. It is grey. It is 2 years old.").
  const onlyPronouns = (sentence: ReadSentence, own: string) =>
    subjectsAfter(sentence).every((subject) => subject === 'pronoun' || (own === 'it' && subject === 'unknown')) &&
    [...peopleIn(sentence.text)].every((person) => person === 'pronoun');
  let name: string | undefined;
  // The pronoun the run goes on with, that of the first sentence after the name; and whether a run may go on at all: not
  // after a sentence about someone else than the one it names ("My son has a hamster called Nibbles. He feeds him…": the
  // next "He" may be the son).
  let pronoun: string | undefined;
  let runs = false;
  return sentences.map((sentence) => {
    const own = pronounOpening(sentence.text);
    const followed = name !== undefined && (pronoun === undefined || own === pronoun) ? name : undefined;
    const named = nameIn(sentence.text);
    if (named !== undefined) {
      [name, pronoun] = [named, undefined];
      runs = aboutNamedOrUser(sentence);
    } else if (followed !== undefined && runs && own !== undefined && own !== 'they' && onlyPronouns(sentence, own)) pronoun = own;
    else [name, pronoun] = [undefined, undefined];
    return followed;
  });
}

/** True when a naming sentence is about the user or the one it names, not someone else ("My son has a hamster called Nibbles"). */
function aboutNamedOrUser(sentence: ReadSentence): boolean {
  return sentence.subjects.every((subject) => subject === 'I' || subject === 'unknown') || namesItsSubject(sentence.text);
}

/** The subjects of a sentence right after a name: those it has, 它 and 牠 ("it") read as he and she (`clauseSubjects`). */
function subjectsAfterName(sentence: ReadSentence): readonly ClauseSubject[] {
  return opensWithIt(sentence.text) ? clauseSubjects(sentence.clauses, true) : sentence.subjects;
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
 * new text is kept whole, its stale clauses too: "我在阿里巴巴工作，我老婆在腾讯工作" stays whole beside "我在字节跳动工作", as it
 * did before the subject rules.) Not a clause that leans on one left out (LEANING_CLAUSE:
 * "从2019年开始", "如果下雨"); a list ("猫、狗和兔子") is one clause; and always one the new text says again in its
 * place with an addition (`addedInPlace`); never one the new text says again with another number (`stale`, its indexes:
 * `renumbered`). An English clause ("working in Beijing") does not read on its own: it
 * goes with its sentence, but for `standingClauses`.
 */
function keptClauses(
  sentence: ReadSentence,
  subjects: () => readonly ClauseSubject[],
  keptBeside: (terms: StatementTerms, subjects: () => readonly ClauseSubject[], text: string) => boolean,
  freshSentences: readonly ReadSentence[],
  stale: readonly number[],
): string[] {
  return sentence.clauses.filter((clause, index) => {
    if (stale.includes(index) || LEANING_CLAUSE.test(clause.trim())) return false;
    if (freshSentences.some((fresh) => addedInPlace(sentence, fresh, index))) return true;
    return keptBeside(sentence.clauseTerms[index] as StatementTerms, () => [subjects()[index] as ClauseSubject], clause);
  });
}

/**
 * True when a new text (`freshTerms`) says again one clause of a sentence of several, and the others read on their
 * own (an English one names its subject, a Chinese one does not lean on the one before: `LEANING_CLAUSE`).
 */
function saysAClauseAgain(sentence: ReadSentence, freshTerms: StatementTerms): boolean {
  if (sentence.clauses.length < 2) return false;
  const again = sentence.clauseTerms.map((terms) => terms.terms.size > 0 && isCoveredBy(terms, freshTerms));
  const chinese = hasCjk(sentence.text);
  return (
    again.includes(true) &&
    sentence.clauses.every((clause, index) => again[index] === true || (chinese ? !LEANING_CLAUSE.test(clause.trim()) : clauseSubject(clause) !== 'unknown'))
  );
}

/**
 * The clauses of a superseded English sentence the merge keeps, each as a sentence: those that name their own
 * subject ("I", "my husband", "he"; `clauseSubject`) and that `keptBeside` keeps. "I take
 * metformin twice a day and I'm allergic to penicillin." + "I take metformin once a day now." keeps "I'm allergic
 * to penicillin."; "I love spicy food but my husband hates it." + "My husband loves spicy food now too." keeps "I
 * love spicy food.". A clause that leans on its sentence's subject ("…, goes to Oakwood Elementary and takes
 * ballet") does not read on its own, and goes with its sentence.
 */
function standingClauses(sentence: ReadSentence, keptBeside: (terms: StatementTerms, subjects: () => readonly ClauseSubject[], text: string) => boolean): string[] {
  if (sentence.clauses.length < 2) return [];
  return sentence.clauses
    .filter((clause, index) => clauseSubject(clause) !== 'unknown' && !NOUN_PHRASE.test(clause) && keptBeside(sentence.clauseTerms[index] as StatementTerms, () => [sentence.subjects[index] as ClauseSubject], clause))
    .map((clause) => asSentence(clause, sentence.text));
}

// "and", "but" or "while" opening an English clause (", and I live in Leeds"), left out of one kept as a sentence; "so"
// or "because" joining two, which a clause kept leans on ("I am 30, so I can rent a car"): `mergeDeterministic`.
const OPENING_CONJUNCTION = /^(?:and|but|while)\s+/iu;
const LEANING_CONJUNCTION = /(?:[,;]\s*|(?<!\s)\s+)(?:so|because)\s/iu;

// He or she opening a sentence, his or her, and 他, 她, 它, 牠 (not "they", nor 它们, 他俩): `withName`. Not the English
// "it", which may be about anything ("Priya is my manager. It is a small team."), nor "he'd" or "she'd" ("had" or "would"?).
const NAMEABLE_PRONOUN = /^(?:(?:he|she|(his|her))(?![\p{L}\p{N}]|['’]d(?![\p{L}\p{N}]))(['’]ll(?![\p{L}\p{N}]))?|[他她它牠](?![们們俩倆]))/iu;

/**
 * A sentence that opens with he, she (他, 她, 它…), with `name` in its place ("She is kind" → "Priya is kind", "Her team…"
 * → "Priya's team…", "She'll retire" → "Priya will retire").
 */
function withName(sentence: string, name: string): string {
  return sentence.replace(NAMEABLE_PRONOUN, (_, possessive: string | undefined, will: string | undefined) =>
    possessive !== undefined ? `${name}'s` : will !== undefined ? `${name} will` : name,
  );
}

/** A clause of an English sentence as a sentence of its own: opened with a capital, ended as its sentence was. */
function asSentence(clause: string, sentence: string): string {
  const text = clause.trim().replace(CLAUSE_END, '');
  return endedAs(text.charAt(0).toUpperCase() + text.slice(1), sentence, '.');
}

// Words that say a clause is news: "现在", "已经…了", "now", "no longer", "these days".
const CHANGE = /现在|如今|目前|已经|不再|再也|这些天|这阵子|最近|(?<![\p{L}\p{N}'’])(?:now|nowadays|currently|no longer|any ?more|these days|lately|recently)(?![\p{L}\p{N}'’])/iu;
// Words that say a clause adds to what was said: "也", "还", "又", "also", "too", "as well" (taken out of a new
// text to see whether it says anything more than the old one: `ADDITION_WORDS`).
const ADDITION_WORDS = /[也还又還]|(?<![\p{L}\p{N}'’])(?:also|too|as well)(?![\p{L}\p{N}'’])/giu;
// The same, for a clause that supersedes nothing: 也 not in 也许 ("maybe") nor as "only" (也就, 也只); 还 not as
// "still", "not yet", "left" or "repay" (还是, 还在, 还没, 还住, 还剩, 还差, 还欠, 还有三年, 每个月还, 房贷还…); 又 not at all
// ("我又搬家了" is news); "too" only at the end of a clause ("too much" is not "also").
// "Also" opening a clause ("Also I work at Spotify", "And also…") only goes on from what was said before: not an
// addition (`ADDED_OPENING`).
const ADDED_NEWS =
  /也(?!许|許|就|只)|(?<!每个?月|房贷|贷款|欠款)[还還](?!是|在|没|沒|不|住|要|得|剩|差|欠|完|清|有[0-9一二两三四五六七八九十半几]+个?(?:年|月|周|星期|天|小时|分钟))|(?<![\p{L}\p{N}'’])(?:also|as well)(?![\p{L}\p{N}'’])|(?<![\p{L}\p{N}'’])too[\s.!?,;]*$/iu;
const ADDED_OPENING = /^[\s"'“‘(]*(?:(?:and|oh|but|plus|so)[\s,]+)?also(?![\p{L}\p{N}'’])/iu;

/**
 * True when the new sentence says the old one again clause by clause but for the clause at `index`, and says in
 * its place something more of the same person with an addition word and no news word (`addsTo`):
 * "我在工厂上班，我老婆在镇上开了一家超市，我们住在保定" + "我在工厂上班，我老婆还在网上开了一家服装店，我们住在保定" keeps
 * the supermarket, though the words alone would supersede it. Not "我老公又跳槽到物流公司了" (又 is news) nor
 * "每个月还四千" (还 is "repay").
 */
function addedInPlace(old: ReadSentence, fresh: ReadSentence, index: number): boolean {
  if (fresh.clauses.length !== old.clauses.length || old.clauses.length < 2) return false;
  const subject = old.subjects[index] as ClauseSubject;
  if (subject === 'unknown' || subject === 'pronoun' || subject === 'we' || fresh.subjects[index] !== subject) return false;
  if (!addsTo(fresh.clauses[index] as string)) return false;
  const restates = (other: number) => isCoveredBy(old.clauseTerms[other] as StatementTerms, fresh.clauseTerms[other] as StatementTerms);
  // An addition that says the old clause again ("我老公还在电厂上班" for "我老公在电厂上班") adds nothing to keep it for.
  return !restates(index) && old.clauses.every((_, other) => other === index || restates(other));
}

/**
 * True when every clause of the new text adds to what was said, with no news word ("I'm also allergic to
 * shellfish", "我也对海鲜过敏": `ADDED_NEWS`, not `CHANGE`): such a text supersedes nothing. "My husband is
 * vegetarian now too" and "我们搬到长沙了，还养着那只柯基" do.
 */
function addsOnly(freshSentences: readonly ReadSentence[]): boolean {
  return freshSentences.length > 0 && freshSentences.every((sentence) => sentence.clauses.every(addsTo));
}

/** True when a clause adds, with no news word: `ADDED_NEWS`, and not `CHANGE` nor a closing 了 ("我也调到上海上班了" is news). */
function addsTo(clause: string): boolean {
  return ADDED_NEWS.test(clause.replace(ADDED_OPENING, '')) && !CHANGE.test(clause) && !/了[\s。！？!?，,.…]*$/u.test(clause);
}

// A value in a text: a number ("6", "three", "twice"), or a word with a capital inside a sentence (a place, an
// employer, a name).
const NUMBER_WORDS = 'one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|thousand|twice|thrice';
// (The capital is matched before the look back over the space before it, so that a long space run is read once.)
const VALUE = /\p{N}[\p{N}.,:]*|\p{Lu}(?<=[\p{L}\p{N},;:]\s+\p{Lu})[\p{L}\p{N}'’-]*/gu;
const NUMBER_WORD = new RegExp(`(?<![\\p{L}\\p{N}])(?:${NUMBER_WORDS})(?![\\p{L}\\p{N}])`, 'giu');
const NUMBER_TERMS: ReadonlySet<string> = new Set(tokenize(NUMBER_WORDS.replaceAll('|', ' ')));
// A number after "a" or 一 and a measure word counts a thing, as "a 5-year-old", "一个五岁的孩子": another thing, not
// another value of one said before (`revalued`); but not after is, am, are, was, 's, 'm, where it says an age ("I'm a
// 30-year-old engineer").
const COUNTED_THING = new RegExp(`(?<![\\p{L}\\p{N}'’])(?<!(?:\\bis|\\bam|\\bare|\\bwas|\\bwere|['’](?:s|m|re))\\s+)an?\\s+(?:\\p{N}[\\p{N}.,:]*|(?:${NUMBER_WORDS})(?![\\p{L}\\p{N}]))|一[个個只隻条條辆輛套间間位名件台臺][零一二三四五六七八九十百千万两\\p{N}]+`, 'giu');

// 它 and 牠 ("it"), and 我家, 我的 ("my family's", "my"): a new text that says one may be about the pet an old 它 follows.
const MAY_BE_A_PET = /它|牠|我[们們]?(?:的|家)/u;

// A clause that is only a noun phrase, a possessive and a word, maybe after a number or a word for age ("our two
// kids", "and my wife", "her little brother"): no clause of its own, though its subject is known (`standingClauses`).
const NOUN_PHRASE = new RegExp(
  `^\\s*(?:(?:and|but|while|so)\\s+)?(?:my|our|his|her|their)\\s+(?:(?:\\p{N}+|${NUMBER_WORDS}|older|younger|elder|little|big|best|twin)\\s+)?[\\p{L}'’-]+[\\s.,;:!?]*$`,
  'iu',
);

// A Chinese number, maybe with its measure word, in simplified or traditional characters: "三", "八千", "三次", "两年",
// "兩歲"; not 一 alone ("一只猫" is "a cat").
const CHINESE_NUMBER = /^[零一二三四五六七八九十百千万萬两兩]+[个個次年月天岁歲斤杯块塊元]?$/u;

/** True when a term is a number: "6", "three", "八千", "三次". */
function isNumber(term: string): boolean {
  return /^\p{N}/u.test(term) || NUMBER_TERMS.has(term) || (CHINESE_NUMBER.test(term) && !/^一.?$/u.test(term));
}

/**
 * The terms of the values in a text (`VALUE`, `NUMBER_WORD`, `CHINESE_NUMBER`): "York" and "3" in "My dad lives in
 * York, in a house with 3 rooms", "三次" in "我每周跑三次步".
 */
function valueTerms(text: string): Set<string> {
  const values = [...text.matchAll(VALUE), ...text.matchAll(NUMBER_WORD)].flatMap((match) => tokenize(match[0]));
  return new Set(hasCjk(text) ? [...values, ...tokenize(text).filter(isNumber)] : values);
}

/**
 * True when a new text that only adds says an old sentence again (`terms`, its values `values`), or says it
 * again but for its values, with a value of its own: half the old terms or more, the rest all values, and a
 * new number, or a name the old text says of something else. "I sleep about 6 hours a night." + "I sleep about
 * 8 hours a night as well."; "My mum lives in Leeds. My dad lives in York." + "My dad also lives in Leeds." (as
 * the mum does). "I'm allergic to peanuts." + "I'm also allergic to shellfish." adds, and so does "I have a dog
 * named Max." + "I also have a dog named Bella.".
 */
function revalued(terms: StatementTerms, values: ReadonlySet<string>, freshTerms: StatementTerms, freshValues: ReadonlySet<string>, oldTerms: StatementTerms): boolean {
  const missing = [...terms.terms].filter((term) => !freshTerms.terms.has(term));
  if (missing.length === 0) return true;
  if (missing.length * 2 > terms.terms.size || !missing.every((term) => values.has(term))) return false;
  return [...freshValues].some((term) => freshTerms.terms.has(term) && !terms.terms.has(term) && (isNumber(term) || oldTerms.terms.has(term)));
}

// Count, negation and news words the terms leave out as stopwords ("once", "not", "now"…), which make a new text
// news to an old one that says all its other words ("I take metformin twice a day" + "I take metformin once a day
// now"; "My husband loves spicy food now too" beside "…my husband hates it"). Not "again", "some", "more", "most",
// "all": a restatement says them without news ("I bake bread every weekend, some for the neighbours" must not drop
// "for my family").
const COUNT_OR_NEWS = /(?<![\p{L}\p{N}'’])(?:once|twice|no|not|nor|never|only|now)(?![\p{L}\p{N}'’])/giu;

/** True when the new text has a count or news word (`COUNT_OR_NEWS`) the old one lacks. */
function holdsWordOldLacks(fresh: string, old: string): boolean {
  const oldWords = new Set([...old.matchAll(COUNT_OR_NEWS)].map((match) => match[0].toLowerCase()));
  return [...fresh.matchAll(COUNT_OR_NEWS)].some((match) => !oldWords.has(match[0].toLowerCase()));
}

// What a clause's number is compared without (`renumbered`): news words ("now", 已经, 已經), as `CHANGE` and in traditional
// characters, "years old" (an age is said with it or without it: "It is 2 years old." + "Mochi is 3 now.") and a Chinese
// pronoun opening the clause (whom the clause is about is read apart: "牠兩歲了" + "咪咪已經三歲了").
// Read in one pass, with the numbers that count a thing (`COUNTED_THING`): `LEFT_OUT`.
const NEWS_WORD = `${CHANGE.source}|現在|已經|這些天|這陣子`;
const CHINESE_PRONOUN_OPENING = '^\\s*[他她它牠]';
const YEARS_OLD = "(?<![\\p{L}\\p{N}'’])(?:years?|yrs?)[\\s-]+old(?![\\p{L}\\p{N}'’])";
const LEFT_OUT = new RegExp([CHINESE_PRONOUN_OPENING, COUNTED_THING.source, NEWS_WORD, YEARS_OLD].map((part) => `(?:${part})`).join('|'), 'giu');
// A word each part of `LEFT_OUT` has, looked for first: most clauses have none, and are read as they are.
const MAY_LEAVE_OUT = /^\s*[他她它牠]|\ban?\s|一|现在|如今|目前|已经|不再|再也|这些天|这阵子|最近|現在|已經|這些天|這陣子|now|currently|longer|more|these days|lately|recently|old/iu;
// A digit, an English number word or a Chinese numeral: a clause without one says no number (`renumbered`).
const MAY_HOLD_NUMBER = new RegExp(`\\p{N}|[零二三四五六七八九十百千万萬两兩]|(?<![\\p{L}])(?:${NUMBER_WORDS})(?![\\p{L}])`, 'iu');

// A clause about the past: what it says stays true ("It was in 2019.", "He was 25 then.", "我那时二十五岁").
const PAST = /当时|那时|那年|當時|那時|(?<![\p{L}\p{N}'’])(?:was|were|then|at the time|back then|when|used to|ago)(?![\p{L}\p{N}'’])/iu;

/**
 * True when a clause may say a number (`MAY_HOLD_NUMBER`) that may be renumbered, so that most are not read for
 * `renumbered`: not one about the past (`PAST`), which a new value does not make stale.
 */
function mayBeRenumbered(clause: string): boolean {
  return MAY_HOLD_NUMBER.test(clause) && !PAST.test(clause);
}

// The most new clauses with a number that old clauses are read against (`numberedClauses`), and the most clauses of an
// old sentence read for them: a long text is not read clause by clause against another.
const MOST_NUMBERED_CLAUSES = 16;

/** A clause of a new text with a number: whom it may be about (`numberedClauses`). */
interface NumberedClause {
  clause: string;
  /** True when it may be about the one ("subject I", "name he Rex", "pronoun he"). */
  about: (one: string) => boolean;
  /** True when it may be about a name or a pronoun: it opens with one, or with no subject known ("Rex is four now"). */
  mayFollow: boolean;
}

/**
 * The clauses of a new text with a number (`mayBeRenumbered`) that do not add (`addsTo`), and whom each may be about
 * (`about`, as the merge's `oneAbout` names them: "subject I", "name he Rex", "pronoun he"): its subject, the name it
 * opens with, the name its pronoun follows in its sentence or the sentence before, or, when the new text names no one,
 * anyone; a pronoun clause only one of its pronoun (he; she; it, 它 and 牠 as one; 他 is he, 她 she). None for a new text of more than `MOST_NUMBERED_CLAUSES` of them.
 */
function numberedClauses(sentences: readonly ReadSentence[]): NumberedClause[] {
  const sentenceNames = sentences.map((sentence) => namedBefore(sentence.text));
  const namesNoOne = sentenceNames.every((name) => name === undefined);
  const found: NumberedClause[] = [];
  for (const [index, sentence] of sentences.entries()) {
    const clauseNames = namesBeforeClauses(sentence.clauses, namedBefore);
    const before = index > 0 ? sentenceNames[index - 1] : undefined;
    for (const [at, clause] of sentence.clauses.entries()) {
      if (mayBeRenumbered(clause) && !addsTo(clause)) {
        if (found.length === MOST_NUMBERED_CLAUSES) return [];
        const pronoun = pronounOpening(clause);
        const subject = clauseSubject(clause);
        const name = pronoun === undefined ? undefined : at > 0 ? clauseNames[at] : before;
        // A pronoun clause follows a name only of its pronoun: "He is 4 now" is not about Mia, whom "she" followed.
        const about = (one: string) =>
          one === `subject ${subject}` ||
          (one.startsWith('name ') &&
            (aboutName(clause, aboutsName(one)) || (pronoun !== undefined && one.startsWith(`name ${pronoun} `) && (aboutsName(one) === name || namesNoOne)))) ||
          (one === `pronoun ${pronoun}` && namesNoOne);
        found.push({ clause, about, mayFollow: pronoun !== undefined || subject === 'unknown' });
      }
    }
  }
  return found;
}

/** The one name the clauses before each clause name (`namedBefore`, read by `nameIn`), if they name one. */
function namesBeforeClauses(clauses: readonly string[], nameIn: (text: string) => string | undefined): (string | undefined)[] {
  const names = new Set<string>();
  return clauses.map((clause) => {
    const before = names.size === 1 ? [...names][0] : undefined;
    const name = nameIn(clause);
    if (name !== undefined) names.add(name);
    return before;
  });
}

/** The name of whom a numbered clause is about, "name he Rex" → "Rex" (`numberedClauses`). */
function aboutsName(about: string): string {
  return about.slice(about.indexOf(' ', 5) + 1);
}

/** A clause's terms for `renumbered`: its numbers, and its other words. */
interface NumberedTerms {
  numbers: Set<string>;
  words: Set<string>;
}

/**
 * True when an old clause says a new one again but for its number: both say a number the other lacks, and their
 * other terms are the same, once news words, "years old", a number that counts a thing ("a 5-year-old": `COUNTED_THING`)
 * and the name the new clause opens with are left out (`numberedTerms`). "I am three" and "I am four now"; "he is
 * three" and "Rex is four now"; "它三岁了" and "豆豆已经四岁了"; not "I have 2 cats" and "I have 3 dogs".
 */
function renumbered(before: NumberedTerms, after: NumberedTerms): boolean {
  return (
    before.numbers.size > 0 &&
    after.numbers.size > 0 &&
    differs(before.numbers, after.numbers) &&
    differs(after.numbers, before.numbers) &&
    oneKind([...before.numbers, ...after.numbers]) &&
    !differs(before.words, after.words) &&
    !differs(after.words, before.words)
  );
}

/**
 * The terms of a clause (read by `termsOf`), numbers apart from the rest (`isNumber`), news words, "years old", counted
 * things and a Chinese pronoun opening it left out.
 */
function numberedTerms(clause: string, termsOf: (text: string) => StatementTerms = statementTerms): NumberedTerms {
  const { terms } = termsOf(MAY_LEAVE_OUT.test(clause) ? clause.replace(LEFT_OUT, ' ') : clause);
  const numbered: NumberedTerms = { numbers: new Set(), words: new Set() };
  for (const term of terms) (isNumber(term) ? numbered.numbers : numbered.words).add(term);
  return numbered;
}

// A year, "2019", "2019年": no count nor age ("It was in 2019." is not "Mochi is 5 now." again).
const YEAR = /^(?:1[89]|20)\d\d年?$/u;

/** True when the numbers are all years, or none is (`renumbered`). */
function oneKind(numbers: readonly string[]): boolean {
  const years = numbers.filter((number) => YEAR.test(number)).length;
  return years === 0 || years === numbers.length;
}

/** True when `one` has a term `other` lacks. */
function differs(one: ReadonlySet<string>, other: ReadonlySet<string>): boolean {
  for (const term of one) if (!other.has(term)) return true;
  return false;
}
