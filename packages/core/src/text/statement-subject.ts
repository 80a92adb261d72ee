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
// English words are matched in any case ("My Mom"), and in the plural ("My friends" → friend).
const PEOPLE: Readonly<Record<string, string>> = {
  mother: 'mother', mom: 'mother', mum: 'mother', 妈妈: 'mother', 妈: 'mother', 母亲: 'mother',
  father: 'father', dad: 'father', 爸爸: 'father', 爸: 'father', 父亲: 'father',
  parents: 'parents', 父母: 'parents', 爸妈: 'parents',
  sister: 'sister', 姐姐: 'sister', 姐: 'sister', 妹妹: 'sister', 妹: 'sister',
  brother: 'brother', 哥哥: 'brother', 哥: 'brother', 弟弟: 'brother', 弟: 'brother',
  wife: 'wife', 妻子: 'wife', 老婆: 'wife', 太太: 'wife',
  husband: 'husband', 丈夫: 'husband', 老公: 'husband', 先生: 'husband',
  partner: 'partner', girlfriend: 'girlfriend', 女朋友: 'girlfriend', 女友: 'girlfriend', boyfriend: 'boyfriend', 男朋友: 'boyfriend', 男友: 'boyfriend',
  son: 'son', 儿子: 'son', daughter: 'daughter', 女儿: 'daughter', kids: 'children', kid: 'children', children: 'children', child: 'children', 孩子: 'children',
  grandmother: 'grandmother', grandma: 'grandmother', 奶奶: 'grandmother', 外婆: 'grandmother', 姥姥: 'grandmother',
  grandfather: 'grandfather', grandpa: 'grandfather', 爷爷: 'grandfather', 外公: 'grandfather', 姥爷: 'grandfather',
  grandparents: 'grandparents',
  aunt: 'aunt', 阿姨: 'aunt', 姑姑: 'aunt', 姨妈: 'aunt', 舅妈: 'aunt', 婶婶: 'aunt',
  uncle: 'uncle', 叔叔: 'uncle', 舅舅: 'uncle', 伯伯: 'uncle', 姑父: 'uncle', 姨父: 'uncle',
  cousin: 'cousin', 表哥: 'cousin', 表姐: 'cousin', 表弟: 'cousin', 表妹: 'cousin', 堂哥: 'cousin', 堂姐: 'cousin', 堂弟: 'cousin', 堂妹: 'cousin',
  niece: 'niece', nephew: 'nephew', grandson: 'grandson', granddaughter: 'granddaughter',
  friend: 'friend', 朋友: 'friend', colleague: 'colleague', coworker: 'colleague', 同事: 'colleague', boss: 'boss', 老板: 'boss',
  roommate: 'roommate', 室友: 'roommate', neighbour: 'neighbour', neighbor: 'neighbour', 邻居: 'neighbour',
};
// Longest first, so that 妈妈 is read before 妈.
const PEOPLE_WORDS = Object.keys(PEOPLE).sort((a, b) => b.length - a.length).join('|');

const ENGLISH_QUALIFIER = '(?:(?:older|younger|elder|little|big|best|twin)\\s+)?';
// "My (older) sister", "Our son", "My wife's …", "My Mom", "My friends" (any case, a plural as the singular);
// not "My sister-in-law" (ENGLISH_OTHER_RELATIVE).
const ENGLISH_PERSON = new RegExp(`^(?:my|our)\\s+${ENGLISH_QUALIFIER}(${PEOPLE_WORDS})s?(?:['’]s)?\\b(?!-)`, 'iu');
// The name after one ("My sister Emma").
const ENGLISH_NAME = /^\s+(\p{Lu}\p{Ll}+)\b/u;
// "My wife and I …" is the user's, "My son and daughter …" no one person's.
const ENGLISH_AND = /^\s+and\s+(?:(I|me)\b)?/iu;
// "My stepmother", "My sister-in-law", "My half-brother", "My great-aunt": someone the list does not name.
const ENGLISH_OTHER_RELATIVE = /^(?:my|our)\s+(?:step[a-z]+|half-[a-z]+|great-[a-z-]+|[a-z]+-in-laws?)\b/iu;
// "His wife", "Her boss": someone of his or hers, not he or she ("Her name is Emma" is hers).
const ENGLISH_THEIR_PERSON = new RegExp(`^(?:his|her|their)\\s+${ENGLISH_QUALIFIER}(?:${PEOPLE_WORDS})s?\\b`, 'iu');
const ENGLISH_PRONOUN = /^(?:(he|his)|(she|her)|(they|their))\b/iu;
// "I", "I'm", "My name …", "Me too": the user (after the rules above have had their say on "my").
const ENGLISH_SELF = /^(?:I|me|my|mine|myself)\b/iu;
// "我妈妈", "我的姐姐", "我们的孩子", "我朋友们". A word that goes on as another is not the relative: "我哥伦比亚大学毕业",
// "我老公司", "我朋友圈" are the user's; "我姐夫", "我弟媳", "我爷爷奶奶" are relatives the rule does not name.
const CHINESE_PERSON = new RegExp(`^我们?的?(${PEOPLE_WORDS})们?(?![伦司寓园交圈夫媳嫂娘妈爸哥弟姐妹爷奶姥])`, 'u');
const CHINESE_OTHER_RELATIVE = new RegExp(`^我们?的?(?:${PEOPLE_WORDS})[夫媳嫂娘妈爸哥弟姐妹爷奶姥]`, 'u');
const CHINESE_PRONOUN = /^(?:(他)|(她))们?/u;
const CHINESE_SELF = /^我(?!们)/u;

/** The subject of a sentence: "He works at Google" → `'he'`, "我妈妈在医院工作" → `'mother'`, "I live in Paris" → `'I'`. */
export function subjectOf(sentence: string): StatementSubject {
  const text = sentence.trim().replace(/^["'“‘「『(]+/u, '');
  const english = ENGLISH_PERSON.exec(text);
  if (english) {
    const rest = text.slice(english[0].length);
    const name = ENGLISH_NAME.exec(rest);
    const and = ENGLISH_AND.exec(name ? rest.slice(name[0].length) : rest);
    if (and) return and[1] ? 'I' : UNKNOWN;
    return person(english[1] as string, name?.[1]);
  }
  const chinese = CHINESE_PERSON.exec(text);
  if (chinese) return person(chinese[1] as string);
  if (ENGLISH_OTHER_RELATIVE.test(text) || ENGLISH_THEIR_PERSON.test(text) || CHINESE_OTHER_RELATIVE.test(text)) return UNKNOWN;
  const pronoun = ENGLISH_PRONOUN.exec(text);
  if (pronoun) return pronoun[1] ? 'he' : pronoun[2] ? 'she' : 'they';
  const chinesePronoun = CHINESE_PRONOUN.exec(text);
  if (chinesePronoun) return chinesePronoun[0].endsWith('们') ? 'they' : chinesePronoun[1] ? 'he' : 'she';
  return ENGLISH_SELF.test(text) || CHINESE_SELF.test(text) ? 'I' : UNKNOWN;
}

function person(word: string, name?: string): StatementSubject {
  const who = PEOPLE[word.toLowerCase()] as string;
  return name ? `${who} ${name.toLowerCase()}` : who;
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
