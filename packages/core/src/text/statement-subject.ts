import { hasCjk } from './tokenize.js';

/**
 * Whom a clause of a statement is about, as the offline merge reads it: the user (`'I'`), a relative
 * or friend named by the user's own word for them (`'mother'`, `'sister'`), someone named only by a
 * pronoun (`'pronoun'`: he, she, they, his, her), an old woman or man the user does not name as kin
 * (`'old woman'`, `'old man'`: 楼下的老婆婆), the user among others (`'we'`), or `'unknown'`. Only
 * a few clear forms are known, and any other start is `'unknown'` ("Emma works at Google", "My boss is
 * Anna", "My mom's lasagna is my favourite").
 */
export type ClauseSubject = 'I' | 'pronoun' | 'we' | 'unknown' | Relative;
type Relative = string;

// A relative or friend, as English and Chinese name them, and the person each stands for.
const PEOPLE: Readonly<Record<string, Relative>> = {
  mother: 'mother', mom: 'mother', mum: 'mother', 妈妈: 'mother', 妈: 'mother', 老妈: 'mother', 母亲: 'mother', 媽媽: 'mother', 媽: 'mother', 母親: 'mother',
  father: 'father', dad: 'father', 爸爸: 'father', 爸: 'father', 老爸: 'father', 老爹: 'father', 父亲: 'father', 父親: 'father',
  parents: 'parents', 父母: 'parents', 爸妈: 'parents', 爸媽: 'parents',
  'mother-in-law': 'mother-in-law', 婆婆: 'mother-in-law', 岳母: 'mother-in-law', 'father-in-law': 'father-in-law', 公公: 'father-in-law', 岳父: 'father-in-law',
  sister: 'sister', 姐姐: 'sister', 大姐: 'sister', 姐: 'sister', 妹妹: 'sister', 妹: 'sister',
  brother: 'brother', 哥哥: 'brother', 大哥: 'brother', 哥: 'brother', 弟弟: 'brother', 弟: 'brother',
  wife: 'wife', 妻子: 'wife', 老婆: 'wife', 太太: 'wife', 媳妇: 'wife', 媳婦: 'wife', 爱人: 'spouse', 愛人: 'spouse', 老伴: 'spouse', spouse: 'spouse', 对象: 'partner', 對象: 'partner', partner: 'partner',
  husband: 'husband', 丈夫: 'husband', 老公: 'husband', 先生: 'husband',
  girlfriend: 'girlfriend', 女朋友: 'girlfriend', 女友: 'girlfriend', boyfriend: 'boyfriend', 男朋友: 'boyfriend', 男友: 'boyfriend',
  son: 'son', 儿子: 'son', 兒子: 'son', daughter: 'daughter', 女儿: 'daughter', 女兒: 'daughter', 闺女: 'daughter', 閨女: 'daughter', kid: 'children', child: 'children', children: 'children', 孩子: 'children',
  grandmother: 'grandmother', grandma: 'grandmother', 奶奶: 'grandmother', 外婆: 'grandmother', 姥姥: 'grandmother',
  grandfather: 'grandfather', grandpa: 'grandfather', 爷爷: 'grandfather', 爺爺: 'grandfather', 外公: 'grandfather', 姥爷: 'grandfather', 姥爺: 'grandfather',
  aunt: 'aunt', 阿姨: 'aunt', 姑姑: 'aunt', 姨妈: 'aunt', 舅妈: 'aunt', 婶婶: 'aunt', 姨媽: 'aunt', 舅媽: 'aunt', 嬸嬸: 'aunt',
  uncle: 'uncle', 叔叔: 'uncle', 舅舅: 'uncle', 伯伯: 'uncle', 姑父: 'uncle', 姨父: 'uncle',
  cousin: 'cousin', 表哥: 'cousin', 表姐: 'cousin', 表弟: 'cousin', 表妹: 'cousin', 堂哥: 'cousin', 堂姐: 'cousin', 堂弟: 'cousin', 堂妹: 'cousin',
  friend: 'friend', 朋友: 'friend', 闺蜜: 'friend', 閨蜜: 'friend', colleague: 'colleague', coworker: 'colleague', 同事: 'colleague',
  roommate: 'roommate', 室友: 'roommate', neighbour: 'neighbour', neighbor: 'neighbour', 邻居: 'neighbour', 鄰居: 'neighbour',
};
/**
 * The people a word for several stands for: "my parents" are "my mom and dad", "my kids" "my son and
 * daughter", "我爱人" a wife or a husband.
 */
export const GROUPS: Readonly<Record<string, readonly Relative[]>> = {
  parents: ['mother', 'father'],
  children: ['son', 'daughter'],
  spouse: ['wife', 'husband'],
  partner: ['wife', 'husband', 'spouse', 'girlfriend', 'boyfriend'],
};
// Longest first, so that 妈妈 is read before 妈.
const PEOPLE_WORDS = Object.keys(PEOPLE).sort((a, b) => b.length - a.length).join('|');

// "I", "I'm", "me", "myself" anywhere in an English clause: "My mom is in the hospital and I visit her" is the user's too.
// Not the numeral of "Type I", "World War I", "Phase I" nor the I of "I-95".
const ENGLISH_SELF =
  /(?<![\p{L}\p{N}'’])(?:(?<!(?:[Tt]ype|Class|Phase|War|Part|Grade|Chapter|Level|Stage)\s+)I(?!-)(?:['’](?:m|ve|d|ll))?|[Mm]e|[Mm]yself)(?![\p{L}\p{N}'’])/u;
// "My (older) sister", "Our kids", "My Mom": a relative, in any case and in the plural.
const ENGLISH_RELATIVE = `(?:my|our)\\s+(?:(?:older|younger|elder|little|big|best|twin)\\s+)?(${PEOPLE_WORDS})s?`;
// One at the start of a clause, not as a possessive ("My mom's lasagna") nor in "My sister-in-law", whom the list does not name.
const ENGLISH_PERSON = new RegExp(`^${ENGLISH_RELATIVE}(?![\\p{L}\\p{N}'’-])`, 'iu');
const MY_OR_OUR = /(?:my|our)\s/iu;
const ENGLISH_PERSON_ANYWHERE = new RegExp(`(?<![\\p{L}\\p{N}])${ENGLISH_RELATIVE}(?:\\s+and\\s+(?:my\\s+)?(${PEOPLE_WORDS})s?)?(?![\\p{L}\\p{N}-])`, 'giu');
// "He works at Google", "Her husband works at a bank": someone else, but who is not said.
const ENGLISH_PRONOUN = /^(?:he|she|they|his|her|their)(?:['’](?:s|d|ll|re|ve))?(?![\p{L}\p{N}'’])/iu;
// A word that goes on as another after a relative's is not that relative: "我哥伦比亚大学毕业", "我老公司" and
// "我朋友圈" are the user's (USER_WORD_AFTER); "我姐夫", "我弟媳" and "我爷爷奶奶" are relatives the list does not name.
// Nor is 老婆婆 ("an old woman") 老婆, nor 老公公 ("an old man") 老公 (老公公司, 老公公积金, 老公公交… are the husband's): NOT_ANOTHER.
const USER_WORD_AFTER = '[伦司寓园交圈]';
const HUSBANDS_WORDS = '司|积金|交|务员|众号|园|安|费|款|斤|里';
const NOT_ANOTHER = `婆|公(?!${HUSBANDS_WORDS})`;
const NOT_THE_RELATIVE = `[伦司寓园交圈夫媳嫂娘妈爸哥弟姐妹爷奶姥]|${NOT_ANOTHER}`;
// A Chinese word for a relative of two characters or more, which names them without 我 too: "老婆在银行上班", "爸妈住在上海".
const CHINESE_WORDS = Object.keys(PEOPLE).filter((word) => /^\p{Script=Han}{2,}$/u.test(word) && !/^(?:对象|對象)$/u.test(word)).sort((a, b) => b.length - a.length).join('|');
// "我妈妈", "我的姐姐", "我朋友们", "老婆" at the start of a Chinese clause; not a possessive ("我妈妈的红烧肉最好吃").
const CHINESE_PERSON = new RegExp(`^(?:我们?的?(${PEOPLE_WORDS})|(${CHINESE_WORDS}))们?(?!${NOT_THE_RELATIVE}|的)`, 'u');
const CHINESE_PERSON_ANYWHERE = new RegExp(`我们?的?(${PEOPLE_WORDS})(?:[和跟与與]我?的?(${PEOPLE_WORDS}))?(?!${USER_WORD_AFTER}|${NOT_ANOTHER})`, 'gu');
// 我 on its own as the subject: at the start of a Chinese clause, or after a time word or a link ("今天我开始…", "所以我…",
// "我哥伦比亚大学毕业"); not 我们 nor 我(的)+a relative, nor 我 as an object ("他是我大学同学", "我老婆比我小三岁").
const CHINESE_LEAD = '(?:今天|昨天|明天|现在|目前|最近|以前|之前|后来|去年|今年|明年|平时|每天|周末|其实|所以|但是|但|而且|然后|因为|不过|可是|[0-9一二三四五六七八九十两]+年(?:前|后)?)[，,\\s]*';
// Nor 我 before a person the list does not name ("我老板", "我老师", "我娘"): whose clause that is, is not known.
const OTHER_PERSON = '娘|老板|老闆|老师|老師|同学|同學|领导|領導|上司|经理|經理';
// Nor 我俩 ("the two of us"), which is 'we'.
const CHINESE_SELF = new RegExp(`^(?:${CHINESE_LEAD})*我(?!们|們|俩|倆|的?(?:${OTHER_PERSON})|的?(?:${PEOPLE_WORDS})(?!${USER_WORD_AFTER}))`, 'u');
// After a relative: "老婆和我现在住在上海" is the user's too; "我妈说我现在在学校工作了" reports what the user is told, whose
// news it is not known.
const WITH_ME = /^[和跟与與同]我(?!们|們)/u;
const TELLS_ME = /^[^，,。]*?(?:说|說|觉得|覺得|认为|認為|告诉|告訴|让|讓)我/u;
const CHINESE_PRONOUN = /^(?:他|她)/u;
// 它 and 牠 ("it"), a pronoun only right after a pet or person is named (`clauseSubject`'s `afterName`): "我家的狗叫豆豆。
// 它很喜欢吃肉。"; else "it" may be anything ("我买了一辆车。它是白色的。").
const CHINESE_IT = /^(?:它|牠)(?![们們])/u;
// 老婆婆 ("an old woman") and 老公公 ("an old man") opening a clause, maybe after whose or where ("楼下的老婆婆",
// "隔壁的老公公", "我家楼下的老婆婆"): someone else, neither the wife nor the husband nor the user. Not after 我的 or 我家的,
// nor before a word that starts with 公 (NOT_ANOTHER's and 公考, 公开, 公寓, 公路, 公共, 公婆): "我的老公公考上岸了" is the husband's.
const OLD_STRANGER = new RegExp(`^(?![我咱][们們]?家?的)(?:[^\\s，,。！？!?；;：:]{1,8}的)?(老婆|老公)(?:婆|公(?!${HUSBANDS_WORDS}|考|开|開|寓|路|共|婆))`, 'u');
// He, she, they in any case, and 他, 她 (not in 其他 "other"), anywhere in a text.
const PRONOUN_ANYWHERE = /(?<![\p{L}\p{N}'’])(?:he|she|him|her|hers|his|they|them|their)(?![\p{L}\p{N}'’])|(?<!其)[他她]/iu;
// "We", "我们", "我俩": the user among others. Such a clause is no one person's, and does not go on from the one before it.
const WE = /^(?:we|our|us)(?![\p{L}\p{N}'’])|^(?:我们|我們|咱们|咱們|我俩|我倆|咱俩|咱倆)/iu;
// Where an English sentence's clauses part: "My mom is in the hospital and I visit her" has two.
// A space run is matched from its start only (?<!\s), so that a long run is not read again from each space.
const ENGLISH_CLAUSE_BREAK = /[,;]\s+|(?<!\s)\s+(?:and|but|while|so|because)\s+/iu;

// A pronoun opening a sentence, and 们 after a Chinese one (they): `pronounOpening`.
const PRONOUN_OPENING = /^\s*(?:(he|him|his|she|her|hers|it|its|they|them|their)(?![\p{L}\p{N}])|(他|她|它|牠)([们們])?)/iu;
const PRONOUNS: Readonly<Record<string, string>> = { he: 'he', him: 'he', his: 'he', 他: 'he', she: 'she', her: 'she', hers: 'she', 她: 'she', it: 'it', its: 'it', 它: 'it', 牠: 'it' };

/** The pronoun a sentence opens with, as he, she, it or they: "She's a beagle" → she, "It is grey" and "它们三岁了" → it and they, "I am" → -. */
export function pronounOpening(text: string): string | undefined {
  const opening = PRONOUN_OPENING.exec(text);
  if (!opening) return undefined;
  const word = (opening[1] ?? opening[2]) as string;
  return opening[3] !== undefined ? 'they' : (PRONOUNS[word.toLowerCase()] ?? 'they');
}

/** True when a sentence opens with 它 or 牠 ("it"), not 它们 ("they"). */
export function opensWithIt(sentence: string): boolean {
  return CHINESE_IT.test(sentence.trimStart());
}

/**
 * True when a clause opens with the user, "I" or 我: "I live in Lyon with my sister" is the user's, the sister
 * only with them; "My son drives to work with me" opens with the son.
 */
export function opensWithSelf(clause: string): boolean {
  const text = clause.trim().replace(/^["'“‘「『(]+/u, '');
  return /^I(?:['’](?:m|ve|d|ll))?(?![\p{L}\p{N}'’-])/u.test(text) || CHINESE_SELF.test(text);
}

/**
 * The subject of one clause: "I work at Meta" → `'I'`, "我妈妈在医院工作" → `'mother'`, "He works at Google" → `'pronoun'`;
 * "它三岁了" → `'pronoun'` only `afterName`.
 */
export function clauseSubject(clause: string, afterName = false): ClauseSubject {
  const text = clause.trim().replace(/^(?:and|but|while|so)\s+/iu, '').replace(/^["'“‘「『(]+/u, '');
  if (ENGLISH_SELF.test(text)) return 'I';
  const englishPerson = ENGLISH_PERSON.exec(text);
  if (englishPerson) return PEOPLE[(englishPerson[1] as string).toLowerCase()] as Relative;
  if (ENGLISH_PRONOUN.test(text)) return 'pronoun';
  const stranger = OLD_STRANGER.exec(text);
  if (stranger) return stranger[1] === '老婆' ? 'old woman' : 'old man';
  const chinesePerson = CHINESE_PERSON.exec(text);
  if (chinesePerson) {
    const rest = text.slice(chinesePerson[0].length);
    if (WITH_ME.test(rest)) return 'I';
    if (TELLS_ME.test(rest)) return 'unknown';
    return PEOPLE[(chinesePerson[1] ?? chinesePerson[2]) as string] as Relative;
  }
  if (CHINESE_PRONOUN.test(text) || (afterName && CHINESE_IT.test(text))) return 'pronoun';
  if (CHINESE_SELF.test(text)) return 'I';
  return WE.test(text) ? 'we' : 'unknown';
}

/**
 * The subject of each clause of a sentence, a clause with none known going on from the one before it:
 * "我奶奶九十岁了，住在乡下" → grandmother, grandmother; "I live in Lisbon and work as a nurse" → I, I;
 * "我老婆是老师，我是程序员，我们住在北京" → wife, I, unknown.
 */
export function clauseSubjects(clauses: readonly string[], afterName = false): ClauseSubject[] {
  let before: ClauseSubject = 'unknown';
  return clauses.map((clause) => {
    const own = clauseSubject(clause, afterName);
    before = own === 'we' ? 'unknown' : own === 'unknown' ? before : own;
    return before;
  });
}

/**
 * The people a text names anywhere, not only as a subject: "I visit my mom every morning" names
 * `'mother'`, "I work with him now" and "我和她一起住" a `'pronoun'`. A fact about one of them is not
 * someone else's beside this text.
 */
export function peopleNamed(text: string): Set<ClauseSubject> {
  const named = new Set<ClauseSubject>();
  // Each form needs "my"/"our" or 我: most clauses have neither, and are not searched for a word of the list.
  if (MY_OR_OUR.test(text)) for (const match of text.matchAll(ENGLISH_PERSON_ANYWHERE)) for (const word of [match[1], match[2]]) if (word) named.add(PEOPLE[word.toLowerCase()] as Relative);
  if (text.includes('我')) for (const match of text.matchAll(CHINESE_PERSON_ANYWHERE)) for (const word of [match[1], match[2]]) if (word) named.add(PEOPLE[word] as Relative);
  if (PRONOUN_ANYWHERE.test(text)) named.add('pronoun');
  return named;
}

/** An English sentence's clauses, for their subjects: "My mom is in the hospital and I visit her" → two. */
export function englishClauses(sentence: string): string[] {
  return sentence.split(ENGLISH_CLAUSE_BREAK).filter((clause) => clause.trim() !== '');
}

// One person or pet a sentence names: "a dog named Bella", "called Max", "my sister Emma", "Bella is my dog", "一只狗叫贝拉";
// not the user ("I'm called Anna", "我叫李娜"), nor what follows 叫 as a question, a negation, a person or a particle
// ("叫什么", "叫做什么", "叫不出", "叫他", "叫了"), but for a particle said twice, a pet's or child's name ("叫了了", "叫又又").
const NAMED =
  /(?<![\p{L}\p{N}'’])(?<!\bI(?:['’]m|\s+am)\s+)(?:named|called|[Mm]y\s+\p{Ll}+)\s+(\p{Lu}\p{Ll}+)(?![\p{L}\p{N}'’])|^(\p{Lu}\p{Ll}+)\s+is\s+my\s|(?<!我)(?:名叫|叫做|叫)(?![做什甚啥怎哪谁誰不没沒别別我你您他她它牠])(?!([人了过過着著的得是在也都就又还還很这這那])(?!\3))(\p{Script=Han}{2})/gu;

// A word every form of NAMED has.
const MAY_NAME = /named|called|my\s|叫/iu;

// A sentence whose subject is the one it names: "My sister Emma lives in Leeds", "My friend is named Sarah", "我妹妹叫小丽".
const NAMES_ITS_SUBJECT = new RegExp(`^\\s*(?:[Mm]y|[Oo]ur)\\s+\\p{Ll}+\\s+(?:(?:is|was)\\s+(?:named|called)\\s+)?\\p{Lu}|^\\s*我[们們]?的?(?:${PEOPLE_WORDS})(?:名叫|叫做|叫)`, 'u');

/** True when a sentence names its own subject (`NAMES_ITS_SUBJECT`), not one it is about: "My son has a hamster called Nibbles" → false. */
export function namesItsSubject(sentence: string): boolean {
  return NAMES_ITS_SUBJECT.test(sentence);
}

/** The one person or pet a sentence names (`NAMED`), when it names exactly one. */
export function namedBefore(sentence: string): string | undefined {
  // Most sentences have none of its words, and are not searched (the merge reads every sentence after a name).
  if (!MAY_NAME.test(sentence)) return undefined;
  const names = new Set([...sentence.matchAll(NAMED)].map((match) => (match[1] ?? match[2] ?? match[4]) as string));
  return names.size === 1 ? [...names][0] : undefined;
}

// What may come before the subject of a clause: "I think", "I heard (that)", 我觉得, 听说.
const REPORTED = /^[\s"'“‘(]*(?:(?:I\s+(?:think|thought|heard|hear|guess|know|believe|reckon)(?:\s+that)?|and|but|so|oh)\s+|我?(?:觉得|覺得|听说|聽說|认为|認為|知道))*/iu;

/**
 * True when a clause is about the one a name names: it opens with the name, maybe after "I think" or 听说 ("I think
 * Bella weighs 25 kg now", "我听说小丽现在…"); not "I work with Sarah", "I start my job in May", nor a possessive
 * ("Tom's wife is a doctor", "Bella's puppy weighs 5 kg": about someone else).
 */
export function aboutName(clause: string, name: string): boolean {
  const rest = clause.replace(REPORTED, '');
  if (!rest.startsWith(name)) return false;
  return hasCjk(name) || !/^[\p{L}\p{N}'’]/u.test(rest.slice(name.length));
}
