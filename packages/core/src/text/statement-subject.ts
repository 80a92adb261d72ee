/**
 * Who a statement is about, read from its first words: `'I'` (the user), another person (`'he'`,
 * `'she'`, `'they'`, a relative or friend as `'sister'`, with a name when one follows it:
 * `'sister emma'`), or `'unknown'`. Only a few clear forms are known; any other start ("Coffee is my
 * favourite drink", "We moved", "现在我住在上海", "Emma works at Google") is `'unknown'`.
 */
export type StatementSubject = string;

const UNKNOWN = 'unknown';
const PRONOUNS: ReadonlySet<StatementSubject> = new Set(['he', 'she', 'they']);

// A relative or friend, as English and Chinese name them (one list for both), and the person each stands for.
const PEOPLE: Readonly<Record<string, string>> = {
  mother: 'mother', mom: 'mother', mum: 'mother', 妈妈: 'mother', 妈: 'mother', 母亲: 'mother',
  father: 'father', dad: 'father', 爸爸: 'father', 爸: 'father', 父亲: 'father',
  parents: 'parents', 父母: 'parents',
  sister: 'sister', 姐姐: 'sister', 姐: 'sister', 妹妹: 'sister', 妹: 'sister',
  brother: 'brother', 哥哥: 'brother', 哥: 'brother', 弟弟: 'brother', 弟: 'brother',
  wife: 'wife', 妻子: 'wife', 老婆: 'wife', 太太: 'wife',
  husband: 'husband', 丈夫: 'husband', 老公: 'husband', 先生: 'husband',
  partner: 'partner', girlfriend: 'girlfriend', 女朋友: 'girlfriend', 女友: 'girlfriend', boyfriend: 'boyfriend', 男朋友: 'boyfriend', 男友: 'boyfriend',
  son: 'son', 儿子: 'son', daughter: 'daughter', 女儿: 'daughter', kids: 'children', children: 'children', child: 'children', 孩子: 'children',
  grandmother: 'grandmother', grandma: 'grandmother', 奶奶: 'grandmother', 外婆: 'grandmother', 姥姥: 'grandmother',
  grandfather: 'grandfather', grandpa: 'grandfather', 爷爷: 'grandfather', 外公: 'grandfather', 姥爷: 'grandfather',
  friend: 'friend', 朋友: 'friend', colleague: 'colleague', coworker: 'colleague', 同事: 'colleague', boss: 'boss', 老板: 'boss',
  roommate: 'roommate', 室友: 'roommate', neighbour: 'neighbour', neighbor: 'neighbour', 邻居: 'neighbour',
};
// Longest first, so that 妈妈 is read before 妈.
const PEOPLE_WORDS = Object.keys(PEOPLE).sort((a, b) => b.length - a.length).join('|');

// "My (older) sister (Emma)", "Our son", "My wife's …"; "My wife and I …" is the user's too (ENGLISH_SELF).
const ENGLISH_PERSON = new RegExp(
  `^(?:[Mm]y|[Oo]ur)\\s+(?:(?:older|younger|elder|little|big|best|twin)\\s+)?(${PEOPLE_WORDS})(?:['’]s)?\\b(?!\\s+and\\b)(?:\\s+(\\p{Lu}\\p{Ll}+)\\b)?`,
  'u',
);
const ENGLISH_PRONOUN = /^(?:(he|his)|(she|her)|(they|their))\b/iu;
// "I", "I'm", "My name …", "Me too": the user (after ENGLISH_PERSON has had its say on "my").
const ENGLISH_SELF = /^(?:I|me|my|mine|myself)\b/iu;
// "我妈妈", "我的姐姐", "我们的孩子".
const CHINESE_PERSON = new RegExp(`^我(?:们)?的?(${PEOPLE_WORDS})`, 'u');
const CHINESE_PRONOUN = /^(?:(他)|(她))们?/u;
const CHINESE_SELF = /^我(?!们)/u;

/** The subject of a sentence: "He works at Google" → `'he'`, "我妈妈在医院工作" → `'mother'`, "I live in Paris" → `'I'`. */
export function subjectOf(sentence: string): StatementSubject {
  const text = sentence.trim().replace(/^["'“‘「『(]+/u, '');
  const person = ENGLISH_PERSON.exec(text) ?? CHINESE_PERSON.exec(text);
  if (person) {
    const who = PEOPLE[person[1] as string] as string;
    return person[2] ? `${who} ${person[2].toLowerCase()}` : who;
  }
  const english = ENGLISH_PRONOUN.exec(text);
  if (english) return english[1] ? 'he' : english[2] ? 'she' : 'they';
  const chinese = CHINESE_PRONOUN.exec(text);
  if (chinese) return chinese[0].endsWith('们') ? 'they' : chinese[1] ? 'he' : 'she';
  return ENGLISH_SELF.test(text) || CHINESE_SELF.test(text) ? 'I' : UNKNOWN;
}

/**
 * True when two subjects may be the same person: alike, or either unknown. "I" is no one else. A
 * pronoun may stand for anyone named ("My brother lives in Porto. He works at a bank."), but "he" is
 * not "she". "My sister" may be "my sister Emma", but "my sister Anna" is not her.
 */
export function sameSubject(a: StatementSubject, b: StatementSubject): boolean {
  if (a === UNKNOWN || b === UNKNOWN || a === b) return true;
  if (a === 'I' || b === 'I') return false;
  if (PRONOUNS.has(a) !== PRONOUNS.has(b)) return true;
  const [whoA, nameA] = a.split(' ');
  const [whoB, nameB] = b.split(' ');
  return whoA === whoB && (nameA === undefined || nameB === undefined);
}
