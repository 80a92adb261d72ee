import { describe, expect, it } from 'vitest';
import { mergeDeterministic } from '../src/index.js';

const merge = (old: string, fresh: string) => mergeDeterministic(old, fresh, 'full', 2000);

// [old memory, new statement, what the merged text must keep, what it must not keep]
type Row = [string, string, string[], string[]];

function check([old, fresh, keep, drop]: Row): void {
  const merged = merge(old, fresh);
  for (const text of keep) expect(merged, `keeps "${text}"`).toContain(text);
  for (const text of drop) expect(merged, `drops "${text}"`).not.toContain(text);
}

describe("deterministic merge: a fact about another person is not superseded by the user's (failed before)", () => {
  it.each<Row>([
    // The 30 % rule alone dropped these: they share most of their terms with the new text.
    ['She works at a bank in Leeds.', 'I work at a bank in York now.', ['She works at a bank in Leeds', 'York'], []],
    ['My grandma lives in a village near Porto.', 'I live in a village near Braga now.', ['grandma lives in a village near Porto', 'Braga'], []],
    ['My brother lives in Madrid. He works at a bank.', 'I work at Google now.', ['He works at a bank', 'Google'], []],
    ['Our kids go to school in Lyon.', 'I go to work in Lyon now.', ['kids go to school in Lyon', 'I go to work'], []],
    ['我爸爸在工厂上班。', '我现在在工厂上班。', ['我爸爸在工厂上班', '我现在在工厂上班'], []],
    ['我喜欢咖啡。我弟弟喜欢喝茶。', '我现在喜欢喝茶。', ['弟弟喜欢喝茶', '我现在喜欢喝茶'], ['咖啡']],
    // A Chinese sentence superseded as a whole keeps its clause about someone else, and only that one.
    ['我住在杭州，我妈妈住在苏州。', '我现在住在苏州。', ['我妈妈住在苏州'], ['杭州']],
    // Every term of the new text was in the old one, so the old text stayed and the user's news was lost.
    ['My neighbour Paul has a red car.', 'I have a red car now.', ['Paul has a red car', 'I have a red car'], []],
    ['My cousins live in Oslo.', 'I live in Oslo now.', ['cousins live in Oslo', 'I live in Oslo now'], []],
    ['我室友养了一只猫。', '我养了一只猫。', ['室友养了一只猫', '我养了一只猫'], []],
    ['我同事住在杭州。', '我住在杭州了。', ['同事住在杭州', '我住在杭州了'], []],
    // Nor the user's by another's.
    ['I work at Google. My wife works at a bank.', 'My wife works at a hospital now.', ['I work at Google', 'hospital'], ['bank']],
  ])('%s + %s', (...row) => check(row));
});

describe('deterministic merge: the old text stays only when it says the new one about the same person (failed before)', () => {
  it.each<Row>([
    // Porto was only in the brother's sentence: Emma's move is news.
    ['My sister Emma lives in Lisbon. My brother lives in Porto.', 'My sister Emma lives in Porto now.', ['Emma lives in Porto', 'brother lives in Porto'], ['Lisbon']],
    ['My daughter plays the violin. My son plays football.', 'My son plays the violin now.', ['son plays the violin', 'daughter plays the violin'], ['football']],
  ])('%s + %s', (...row) => check(row));
});

describe('deterministic merge: a Chinese sentence kept for its other clauses is kept whole, as before', () => {
  it.each<Row>([
    // Its clauses are not read one by one: the new text may add to the user's clause ("我去过东京" beside "我去过巴黎").
    // So the stale 阿里巴巴 stays with the wife's clause, as it did before these rules.
    ['我在阿里巴巴工作，我老婆在腾讯工作。', '我现在在字节跳动工作。', ['我现在在字节跳动工作。我在阿里巴巴工作，我老婆在腾讯工作。'], []],
    ['我去过巴黎，我老公去过伦敦。', '我去过东京。', ['巴黎', '伦敦', '东京'], []],
    ['我叫李四，在银行工作，我女儿在上小学。', '我现在在保险公司工作。', ['李四', '女儿在上小学', '保险公司'], []],
  ])('%s + %s', (...row) => check(row));
});

describe('deterministic merge: what the subject rules leave as before', () => {
  it.each<Row>([
    // An update of the user's own fact, or of the same person's.
    ['I live in Paris. I have a dog.', 'I live in Lyon now.', ['Lyon', 'I have a dog'], ['Paris']],
    ['I like tea.', 'I like coffee now.', ['coffee'], ['tea']],
    ['My sister lives in Porto.', 'My sister lives in Braga now.', ['Braga'], ['Porto']],
    ['She is a nurse in Leeds.', 'She is a doctor in Leeds now.', ['doctor'], ['nurse']],
    ['He works at a bank.', 'He works at Google now.', ['Google'], ['bank']],
    ['My brother works at a bank. He lives in Madrid.', 'My brother works at Google now.', ['Google', 'He lives in Madrid'], ['bank']],
    ['我妈妈住在上海。', '我妈妈现在住在苏州。', ['苏州'], ['上海']],
    // A clause with "I" in it is the user's, whoever the sentence starts with.
    ['My dad is in a care home and I call him every Sunday.', 'I call my dad in the care home every Friday now.', ['Friday'], ['Sunday']],
    ['我妈妈说我太瘦了。', '我妈妈现在说我太胖了。', ['太胖'], ['太瘦']],
    // "My boss" and "My mom's lasagna" name no one the rule knows: superseded by their terms, as before.
    ['My boss is Tom. He works in Berlin.', 'My boss is Anna now. She works in Munich.', ['Anna', 'Munich'], ['Tom', 'Berlin']],
    ["My mom's lasagna is my favourite dish.", 'My favourite dish is sushi now.', ['sushi'], ['lasagna']],
    ['我妈妈的红烧肉最好吃。', '我觉得火锅最好吃。', ['火锅'], ['红烧肉']],
    // The new text names the person of the old fact: not someone else's.
    ['My wife works at a bank.', 'I work at Google now, like my wife.', ['Google'], ['bank']],
    // A recap of the old facts keeps their details.
    ['I live in Paris with my wife Anna. I have a dog named Rex.', 'I live in Paris and have a dog.', ['Anna', 'Rex'], []],
    ['I live in Paris with my wife Anna. I have a dog named Rex.', 'I live in Paris with my dog.', ['Anna', 'Rex'], []],
    ['我养了一只狗，叫旺财。我住在成都。', '我住在成都，养了一只狗。', ['旺财', '成都'], []],
    ['My wife works at a bank.', 'My wife and I work at a bank now.', ['My wife and I work at a bank now'], ['My wife works']],
    // A clause that goes on from another keeps it ("在那里", "也…").
    ['我去过西安，在那里吃了很多面。', '我去过重庆。', ['我去过西安，在那里吃了很多面', '重庆'], []],
    ['我在阿里巴巴工作，也喜欢打篮球。', '我在腾讯工作。', ['篮球', '腾讯'], []],
  ])('%s + %s', (...row) => check(row));
});

// The review of the first version of these rules (findings E1-E3, Z1-Z3): each row failed with it.
describe('deterministic merge: a summary that names a relative keeps that relative\'s own facts (E1)', () => {
  it.each<Row>([
    ['I live in Austin. My husband Tom is a chef.', 'I live in Austin with my husband Tom.', ['chef'], []],
    ['我住在杭州，养了一只狗叫旺财。我爸爸也住在杭州。', '我和我爸爸都住在杭州，我养了一只狗。', ['旺财'], []],
  ])('%s + %s', (...row) => check(row));
});

describe('deterministic merge: a relative\'s sentence that says "me" is superseded by that relative\'s update (E2)', () => {
  it.each<Row>([
    ['My son lives with me in Leeds.', 'My son lives in York now.', ['York'], ['Leeds']],
    ['I go running with my neighbour Sam on Sundays.', 'My neighbour Sam goes running on Mondays now.', ['Mondays'], ['Sundays']],
  ])('%s + %s', (...row) => check(row));
});

describe('deterministic merge: parents are mother and father, children son and daughter (E3)', () => {
  it.each<Row>([
    ['My parents live in Porto.', 'My mom and dad live in Faro now.', ['Faro'], ['Porto']],
    ['My children study in Paris.', 'My son and daughter study in Berlin now.', ['Berlin'], ['Paris']],
  ])('%s + %s', (...row) => check(row));
});

describe('deterministic merge: 我 as an object does not make a clause the user\'s (Z2)', () => {
  it.each<Row>([
    ['我老婆比我小两岁，在银行上班。', '我现在在保险公司上班。', ['银行上班', '保险公司'], []],
    ['他是我大学同学，在华为工作。', '我现在在华为工作。', ['同学，在华为工作', '我现在在华为工作'], []],
  ])('%s + %s', (...row) => check(row));
});

describe('deterministic merge: more words for relatives, and a clause that starts with one (Z3)', () => {
  it.each<Row>([
    ['我爱人在医院工作。', '我现在在医院工作。', ['我爱人在医院工作', '我现在在医院工作'], []],
    ['我媽媽住在台北。', '我現在住在台北。', ['媽媽住在台北', '我現在住在台北'], []],
    ['老婆在银行上班。', '我现在在银行上班。', ['老婆在银行上班', '我现在在银行上班'], []],
  ])('%s + %s', (...row) => check(row));
});

// The final review of these rules: each row failed with the version first landed.
describe('deterministic merge: a new he/she clause is read against the old sentences about others too', () => {
  it.each<Row>([
    // "He" may be the brother: the old text says it all and is kept, details and order included.
    ['My brother Tom lives in Berlin. He works at Siemens as an engineer.', 'He works at Siemens.', ['My brother Tom lives in Berlin. He works at Siemens as an engineer.'], []],
    ['我哥哥住在柏林。他在西门子当高级工程师。', '他在西门子当工程师。', ['我哥哥住在柏林。他在西门子当高级工程师。'], []],
  ])('%s + %s', (...row) => check(row));
});

describe('deterministic merge: 我 with a relative, and what a relative says of the user', () => {
  it.each<Row>([
    // "老婆和我" is the user's news too: the user's old fact is superseded.
    ['我住在北京。', '老婆和我现在住在上海。', ['上海'], ['北京']],
    ['我在北京工作。', '爸妈和我现在都在上海工作。', ['上海'], ['北京']],
    // Reported speech is of no one known: superseded by its terms, as before these rules.
    ['我喜欢喝咖啡。', '我老婆说我现在喜欢喝茶了。', ['喝茶'], ['咖啡']],
  ])('%s + %s', (...row) => check(row));
});

describe('deterministic merge: more words for relatives, and "I" that is not the user', () => {
  it.each<Row>([
    ['我姐姐住在北京。', '我大姐现在住在上海了。', ['上海'], ['北京']],
    ['我女儿在北京上小学。', '我闺女现在在上海上小学了。', ['上海'], ['北京']],
    ['我舅媽住在台北。', '我現在住在台北。', ['舅媽住在台北', '我現在住在台北'], []],
    // "Type I" is not the user: the update of the father's diagnosis supersedes the old one.
    ['Dad has Type I diabetes.', 'My dad has type 2 diabetes, not type 1.', ['type 2'], ['Type I']],
  ])('%s + %s', (...row) => check(row));
});

describe("deterministic merge: a sentence of the user's that names a relative says that relative's facts", () => {
  it.each<Row>([
    // The old text says all the new one does: it is kept, "I live in Lyon" with it.
    ['I live in Lyon with my sister, who is a nurse.', 'My sister is a nurse.', ['I live in Lyon'], []],
  ])('%s + %s', (...row) => check(row));
});

// The last reread: each row failed before it.
describe('deterministic merge: a new text with a clause of unknown subject is read by its words, as before these rules', () => {
  it.each<Row>([
    // "Emma is happy" may be about anyone: the old text has every word of the new one and is kept.
    ['My friends live in Rome. Emma is happy.', 'Emma is happy. I live in Rome now.', ['My friends live in Rome. Emma is happy.'], []],
    ['My sister Emma lives in Lisbon. My brother lives in Porto. Tom is here.', 'Tom is here. My sister Emma lives in Porto now.', ['brother lives in Porto'], []],
  ])('%s + %s', (...row) => check(row));
});

describe('deterministic merge: a relative named after "and" or 和 is named', () => {
  it.each<Row>([
    ['My dad lives in Porto.', 'My mom and dad live in Faro now.', ['Faro'], ['Porto']],
    ['我爸爸住在上海。', '我妈妈和爸爸现在住在苏州。', ['苏州'], ['上海']],
  ])('%s + %s', (...row) => check(row));
});

describe('deterministic merge: 对象 alone is a word, not a partner', () => {
  it.each<Row>([
    ['对象存储用的是阿里云。', '我现在用腾讯云的对象存储。', ['腾讯云'], ['阿里云']],
  ])('%s + %s', (...row) => check(row));
});

describe('deterministic merge: a clause said again in its place with an addition is kept (failed before)', () => {
  it.each<Row>([
    // Said again in its place with 也 only, the old clause stays, though the words alone would supersede it.
    ['我在学校当老师，我老婆开花店，我们住在成都。', '我在学校当老师，我老婆也开网店，我们住在成都。', ['开花店', '开网店'], []],
    ['我在工厂上班，我老婆在镇上开了一家超市，我们住在保定。', '我在工厂上班，我老婆也在网上开了一家服装店，我们住在保定。', ['镇上开了一家超市', '服装店'], []],
  ])('keeps: %s + %s', (...row) => check(row));

  it.each<Row>([
    // What adds replaces nothing; nor a clause about someone else in that place, nor one with no news word.
    ['我在学校当老师，我老婆在商场开了一家小花店，我们住在成都。', '我在学校当老师，我老婆现在也做外卖，我们住在成都。', ['小花店', '做外卖'], []],
    ['我在学校当老师，我老婆在商场开了一家小花店，我们住在成都。', '我在学校当老师，我儿子现在做外卖，我们住在成都。', ['小花店', '做外卖'], []],
    ['我在学校当老师，我老婆在商场开了一家小花店，我们住在成都。', '我在学校当老师，我老婆做外卖，我们住在成都。', ['小花店', '做外卖'], []],
    // A clause in its place with a news word and no word in common is kept, as before: the words cannot tell a new
    // job ("现在改做外卖了") from another fact ("最近身体不太好"). (A rule that superseded it was tried and dropped.)
    ['我在学校当老师，我老婆在商场开了一家小花店，我们住在成都。', '我在学校当老师，我老婆现在改做外卖了，我们住在成都。', ['小花店', '做外卖'], []],
    ['我在医院当护士，我老公开出租车，我们住在沈阳。', '我在医院当护士，我老公最近身体不太好，我们住在沈阳。', ['开出租车', '身体不太好'], []],
    // 又 and 还 as "still" or "repay" do not add: the old clause goes by its words.
    ['我在医院当护士，我老公在电厂上班，我们住在沈阳。', '我在医院当护士，我老公又跳槽到物流公司了，我们住在沈阳。', ['物流公司'], ['电厂']],
    ['我在还房贷，每个月还五千。', '我在还房贷，每个月还四千。', ['四千'], ['五千']],
  ])('as before: %s + %s', (...row) => check(row));

  it('ends the clauses it keeps of a sentence as the sentence ended', () => {
    expect(merge('我妈妈住在苏州，我住在杭州。', '我现在住在苏州。')).toBe('我现在住在苏州。我妈妈住在苏州。');
    expect(merge('我住在杭州，我妈妈住在苏州！我有一只猫。', '我现在住在苏州。')).toBe('我现在住在苏州。我妈妈住在苏州！我有一只猫。');
    expect(merge('I live in Paris. I have a dog.', 'I live in Lyon now')).toBe('I live in Lyon now. I have a dog.');
  });
});

describe('deterministic merge: a new text that only adds ("also", "too", 也, 还) supersedes nothing (failed before)', () => {
  it.each<Row>([
    ["I'm allergic to peanuts.", "I'm also allergic to shellfish.", ['peanuts', 'shellfish'], []],
    ['I play tennis on Sundays.', 'I play chess on Sundays too.', ['tennis', 'chess'], []],
    ['我对花生过敏。', '我也对海鲜过敏。', ['花生', '海鲜'], []],
    ['我养了一只猫。', '我还养了一只狗。', ['猫', '狗'], []],
    // A value that is not a number nor said of someone else in the old text is added: a second language, a second dog.
    ['I speak French.', 'I also speak Spanish.', ['French', 'Spanish'], []],
    ['I have a dog named Max.', 'I also have a dog named Bella.', ['Max', 'Bella'], []],
    ['我养了两只猫，一只叫年糕，一只叫汤圆。', '我还养了一只猫叫汤圆。', ['两只猫', '年糕', '汤圆'], []],
  ])('%s + %s', (...row) => check(row));

  it.each<Row>([
    // But an old sentence of the same subject it says again with another number, or with a name the old text says of
    // someone else ("also" as the mum does), goes; the mum's stays.
    ['My mum lives in Leeds. My dad lives in York.', 'My dad also lives in Leeds.', ['My mum lives in Leeds', 'My dad also lives in Leeds'], ['York']],
    ['I sleep about 6 hours a night.', 'I sleep about 8 hours a night as well.', ['8 hours'], ['6 hours']],
    ['I go to the gym three times a week.', 'I go to the gym five times a week as well.', ['five times'], ['three times']],
    ['My rent is 900 pounds a month.', 'My rent is 1000 pounds a month too.', ['1000'], ['900']],
    ['我每周跑三次步。', '我每周也跑五次步。', ['五次'], ['三次']],
    // "Also" opening a clause goes on from what was said before: not an addition.
    ['My daughter Emma is in year 3 at Oakfield Primary.', 'Also my daughter Emma is in year 4 at Oakfield Primary.', ['year 4'], ['year 3']],
    ['I work at Google as a software engineer.', 'Also I work at Spotify as a software engineer.', ['Spotify'], ['Google']],
    // 还 as "still", "left" or "repay" and 也 as "only" do not add; nor a clause that closes with 了.
    ['我还有三年毕业。', '我还有两年毕业。', ['两年'], ['三年']],
    ['我房贷每个月还八千。', '我房贷每个月还六千。', ['六千'], ['八千']],
    ['我每周跑三次步。', '我每周也就跑一次步。', ['一次'], ['三次']],
    ['我老婆去年调到上海工作了，我在杭州上班。', '我也调到上海上班了。', ['我也调到上海上班了'], ['杭州']],
  ])('says again with another value: %s + %s', (...row) => check(row));

  it('does not repeat an old sentence or clause it says again', () => {
    expect(merge("I love cooking. I'm vegetarian.", 'I also love cooking Italian food.')).toBe("I also love cooking Italian food. I'm vegetarian.");
    expect(merge("I'm a vegetarian and I love cooking.", 'I also love cooking Italian food.')).toBe("I also love cooking Italian food. I'm a vegetarian.");
    expect(merge('我喜欢爬山和游泳。', '我还喜欢游泳。')).toBe('我喜欢爬山和游泳。');
    expect(merge('我养了两只猫，一只叫年糕，一只叫汤圆。', '我还养了一只猫叫汤圆。')).toBe('我还养了一只猫叫汤圆。我养了两只猫，一只叫年糕。');
  });

  it('reads "too" at the end of a long run of spaces in linear time', { timeout: 20_000 }, () => {
    // A pattern tried during this change (",?\\s*too…$") read the run again from each of its spaces: minutes at this length.
    const fresh = `I like${' '.repeat(200_000)}tea too.`;
    expect(mergeDeterministic('I like coffee.', fresh, 'full', 300_000)).toBe(`${fresh} I like coffee.`);
  });

  it.each<Row>([
    // With a news word, or beside a clause that does not add, it is news as before.
    ['I am vegetarian. My husband eats meat.', 'My husband is vegetarian now too.', ['vegetarian now'], ['eats meat']],
    ['我们一家住在武汉，养了一只猫。', '我们一家搬到长沙了，还养着那只猫。', ['长沙'], ['武汉']],
    ['我住在北京。', '我还住在北京，不过换了工作。', ['换了工作'], []],
    // With 也 and 现在 in its place, the clause is news as the words say ("I now work in Shanghai too").
    ['我老婆在上海工作，我在苏州工作。', '我老婆在上海工作，我现在也在上海工作。', ['我现在也在上海工作'], ['苏州']],
  ])('as before: %s + %s', (...row) => check(row));
});

describe('deterministic merge: a he/she sentence after one that names one person or pet is about them (failed before)', () => {
  it.each<Row>([
    ['I have a dog named Bella. She weighs 20 kg.', 'I think Bella weighs 25 kg now.', ['25 kg'], ['20 kg']],
    ['I have a friend called Tom. He works at a bank.', 'I heard Tom works at an insurance firm now.', ['insurance'], ['bank']],
    ['我有个朋友叫小丽。她在银行工作。', '我听说小丽现在在保险公司工作。', ['保险公司'], ['银行']],
  ])('%s + %s', (...row) => check(row));

  it.each<Row>([
    // Not when the name is the user's own, nor when the new text does not name them.
    ['我叫李娜，住在上海。她是我的好朋友小美，在医院当医生。', '我叫李娜，现在住在北京，在医院当护士。', ['小美，在医院当医生', '北京'], []],
    ["I'm called Anna. She is my best friend and works at a bank.", "I'm called Anna and I work at a bank now.", ['She is my best friend'], []],
    ['I have a dog named Bella. She weighs 20 kg.', 'I weigh 70 kg now.', ['She weighs 20 kg', '70 kg'], []],
    // Nor when they are only named in it, not what a clause of it is about, or a clause is about the user.
    ['My wife is called Sarah. She works as a nurse at Leeds General.', 'I work as a nurse at Leeds General now, I work with Sarah.', ['She works as a nurse'], []],
    ['My husband is called Tom. He works at the Jaguar plant in Coventry.', 'I work at the Jaguar plant in Coventry now, I drive in with Tom.', ['He works at the Jaguar plant'], []],
    ['My daughter is called May. She starts school in September.', 'I start my new job in May.', ['She starts school'], []],
    ['I have a dog named Bella. She sleeps on the sofa.', 'I sleep on the sofa now because Bella snores.', ['She sleeps on the sofa'], []],
    ['我有个表弟叫阿杰。他在深圳做程序员。', '我有个表弟叫阿杰。我现在也在深圳做程序员了。', ['他在深圳做程序员'], []],
  ])('keeps: %s + %s', (...row) => check(row));
});

describe('deterministic merge: 我俩 is the two of us, 老婆婆 an old woman (failed before)', () => {
  it.each<Row>([
    // 我俩 read as the user's own was someone else's beside the wife's news, and stayed.
    ['我俩住在北京。', '我老婆现在住在上海。', ['上海'], ['北京']],
    // 我老婆婆 named the wife, so the user's sentence was not someone else's beside the wife's news.
    ['我在超市上班，常去看我老婆婆。', '我老婆现在在超市上班了。', ['常去看我老婆婆', '我老婆现在在超市上班了'], []],
  ])('%s + %s', (...row) => check(row));

  it.each<Row>([
    // 老公公 is an old man, but 我老公公积金, 公交, 公务员 are the husband's: the user's clause is someone else's.
    ['我老公公积金每个月交两千，我交一千五。', '我老公公积金现在每个月交三千了。', ['我交一千五', '三千'], []],
    ['我老公公交上班，我开车上班。', '我老公公交卡丢了，现在骑电动车上班。', ['我开车上班'], []],
  ])('as before: %s + %s', (...row) => check(row));
});

describe('deterministic merge: a count or news word the old text lacks makes the new one news (failed before)', () => {
  it.each<Row>([
    ['I have type 2 diabetes and I take metformin twice a day.', 'I have type 2 diabetes and I take metformin once a day now.', ['once a day'], ['twice']],
    ['I visit my parents twice a month.', 'I visit my parents once a month now.', ['once a month'], ['twice']],
    // Of the sentence it supersedes, a clause that names its subject and shares no word with it stays.
    ["I take metformin twice a day and I'm allergic to penicillin.", 'I take metformin once a day now.', ['once a day', "I'm allergic to penicillin."], ['twice']],
    ['I love spicy food but my husband hates it.', 'My husband loves spicy food now too.', ['My husband loves spicy food', 'I love spicy food.'], ['hates']],
  ])('%s + %s', (...row) => check(row));

  it.each<Row>([
    // A guard (it passed before too): a he's/she's sentence is someone else's, as a he/she one is, so the user's
    // news does not supersede the cat's.
    ["Our cat is called Luna. She's on thyroid tablets from the vet twice a day.", "I'm on thyroid tablets twice a day now.", ["She's on thyroid tablets"], []],
  ])('as before: %s + %s', (...row) => check(row));
});

describe('deterministic merge: words a restatement says without news do not supersede (from the last review)', () => {
  it.each<Row>([
    // "some", "mostly", "more", "again" are no news: the old text, which says everything, stays.
    ['I bake sourdough bread every weekend for my family and neighbours.', 'I bake sourdough bread every weekend, some for the neighbours.', ['for my family'], []],
    ['I collect vinyl records, mostly jazz and soul from the 60s and 70s.', 'I collect vinyl records, mostly jazz, some soul.', ['60s and 70s'], []],
    ["I'm training for the London marathon in April with my running club.", "I'm training for the marathon again.", ['London', 'April'], []],
    // A possessive name is someone else's: the he/she sentence about the named one stays.
    ['My brother is named Tom. He is a doctor in Leeds.', "I heard Tom's wife is a doctor in Leeds now.", ['He is a doctor in Leeds'], []],
    ['I have a dog named Bella. She weighs 20 kg.', "I think Bella's puppy weighs 5 kg now.", ['She weighs 20 kg'], []],
  ])('%s + %s', (...row) => check(row));
});

describe('deterministic merge: a sentence opening "My dog Bella" names Bella (from the reread)', () => {
  it.each<Row>([
    // ("is a beagle" shares a third of its terms with the new text and goes by words, as it did before.)
    ['My dog Bella is a beagle. She weighs 20 kg.', 'I think Bella weighs 25 kg now.', ['25 kg'], ['20 kg']],
    ['My brother Tom lives in Leeds. He works at a bank.', 'I heard Tom works at an insurance firm now.', ['insurance firm', 'Leeds'], ['at a bank']],
  ])('%s + %s', (...row) => check(row));
});

describe('deterministic merge: the losses noticed at the last stop (failed before)', () => {
  it.each<Row>([
    // A number that counts another thing ("a 5-year-old", 一个五岁的) is no new value of the old one: the addition keeps it.
    ['I have a 3-year-old.', 'I also have a 5-year-old.', ['3-year-old', '5-year-old'], []],
    ['I have a 2-bedroom flat in Leeds.', 'I also have a 1-bedroom flat in York.', ['2-bedroom', '1-bedroom'], []],
    ['我有一套两居室的房子。', '我也有一套三居室的房子。', ['两居室', '三居室'], []],
    // An addition about someone else that says all the old text says keeps the old text, someone else's.
    ['I work at Google.', 'My wife also works at Google.', ['I work at Google', 'My wife also works at Google'], []],
    // A noun phrase split off at "and" is no clause to keep on its own.
    ['I live in Leeds with my wife and our two kids.', 'I live in Leeds with my wife now.', ['with my wife now'], ['Our two kids', 'our two kids']],
    // A run of he/she sentences after the naming one is about the one named.
    ['I have a dog named Bella. She is a beagle. She weighs 20 kg.', 'I think Bella weighs 25 kg now.', ['25 kg', 'She is a beagle'], ['20 kg']],
    ['我有个朋友叫小丽。她很爱笑。她在银行工作。', '我听说小丽现在在保险公司工作。', ['保险公司', '她很爱笑'], ['银行']],
    // 叫什么 names no one: the friend named before it is the he/she sentence's.
    ['我有个同事叫小张，我老是忘了他的英文名叫什么。他在市场部上班。', '我听说小张现在在销售部上班。', ['销售部'], ['市场部']],
    // 它 and 牠 right after a pet is named are about the pet, as he and she are: beside the user's news they stay.
    ['我家的狗叫豆豆。它很喜欢吃肉。', '我现在很喜欢吃肉。', ['它很喜欢吃肉', '我现在很喜欢吃肉'], []],
    ['我有一隻貓叫咪咪。牠很喜歡吃魚。', '我現在很喜歡吃魚。', ['牠很喜歡吃魚', '我現在很喜歡吃魚'], []],
    // 楼下的老婆婆 is someone else, not the wife.
    ['楼下的老婆婆每天在公园跳舞。', '我老婆现在每天在公园跳舞。', ['楼下的老婆婆每天在公园跳舞', '我老婆现在每天在公园跳舞'], []],
    ['隔壁的老公公在工厂上班。', '我老公现在在工厂上班。', ['隔壁的老公公在工厂上班', '我老公现在在工厂上班'], []],
  ])('%s + %s', (...row) => check(row));

  it.each<Row>([
    // (It passed before: the Chinese terms of the two differ.)
    ['我在腾讯上班。', '我老婆也在腾讯上班。', ['我在腾讯上班', '我老婆也在腾讯上班'], []],
    // The same subject's addition that says it again adds nothing.
    ['My wife works at Google.', 'My wife also works at Google.', ['My wife also works at Google'], ['My wife works at Google']],
    // A clause with a verb stays on its own, as before.
    ["I take metformin twice a day and my husband takes insulin.", 'I take metformin once a day now.', ['My husband takes insulin.'], ['twice']],
    // Another person named between ends the run: the he/she sentence after the mum's is not read as Bella's.
    ['I have a dog named Bella. My mum loves her. She weighs 20 kg.', 'I think Bella weighs 25 kg now.', ['She weighs 20 kg', 'My mum loves her'], []],
    // A 它 sentence about the pet the new text is about goes, as a he/she one does.
    ['我家的狗叫豆豆。它三岁了。', '我觉得豆豆现在四岁了。', ['四岁'], ['三岁']],
    // 我老公 stays the husband.
    ['我老公在工厂上班。', '我老公现在在医院上班。', ['医院'], ['工厂']],
  ])('as before: %s + %s', (...row) => check(row));
});

describe('deterministic merge: a new text that names the pet supersedes the old 它 sentences (kept beside it before)', () => {
  it.each<Row>([
    // The new text names the pet (叫旺财, 叫咪咪, 叫小黑, 我家狗狗旺财): its 它 sentences are the same one's as the new text.
    ['我家狗狗叫旺财，是只土狗。它今年三岁。它每天要遛两次。', '我家狗狗叫旺财，它今年四岁了，每天要遛两次。', ['四岁', '是只土狗'], ['三岁', '它每天要遛两次']],
    ['我养了一只猫叫咪咪。它三岁了。它不爱吃猫粮。', '我养了一只猫叫咪咪，它四岁了，不爱吃猫粮。', ['四岁'], ['三岁', '它不爱吃猫粮']],
    ['我家的狗叫小黑。牠今年十歲。牠每天要遛兩次。', '我家的狗叫小黑，牠今年十一歲了，每天要遛兩次。', ['十一歲'], ['十歲。', '牠每天要遛兩次']],
    ['我家狗狗叫旺财。它今年三岁。', '我家狗狗叫旺财，今年四岁了。', ['四岁'], ['三岁']],
    ['我家狗狗叫旺财。它今年三岁。', '我家狗狗旺财今年四岁了。', ['四岁'], ['三岁']],
    // Nor one that says 我家 without the name: it may be the pet.
    ['我家狗狗叫旺财。它今年三岁。', '我家狗狗今年四岁了。', ['四岁'], ['三岁']],
  ])('%s + %s', (...row) => check(row));

  it.each<Row>([
    // The English analogue, as before: its he sentence that says the same as the new text goes. (The stale "He is
    // three." stays: it shares no word with "he is four now"; a known loss.)
    ['Our dog is called Rex. He is three. He loves the park.', 'Our dog is called Rex, he is four now and loves the park.', ['four'], ['He loves the park']],
  ])('as before: %s + %s', (...row) => check(row));
});

describe('deterministic merge: the reviews of the change (failed before)', () => {
  it.each<Row>([
    // "a 29-year-old" after is, am, 's, 'm says an age, not another thing counted: the addition supersedes it.
    ["I'm a 29-year-old software engineer in Berlin.", "I'm a 30-year-old software engineer who also freelances in Berlin.", ['30-year-old'], ['29-year-old']],
    ['My son is a 7-year-old who loves Lego.', 'My son is an 8-year-old who also loves Minecraft.', ['8-year-old'], ['7-year-old']],
    ['Max is a 3-year-old beagle.', 'Max is a 4-year-old beagle who also loves swimming.', ['4-year-old'], ['3-year-old']],
    // A run goes on only with the pronoun it started with: "He" after "She" is another person, "They" others.
    ['My friend is named Sarah. She has a brother. He works at a bank.', 'I heard Sarah works at an insurance firm now.', ['insurance firm', 'He works at a bank'], []],
    ['我有个朋友叫小丽。她有个弟弟。他在银行上班。', '我听说小丽现在在保险公司上班。', ['保险公司', '他在银行上班'], []],
    ['I have a dog named Bella. She had puppies. They are 2 months old.', 'I think Bella is 2 months old now.', ['Bella is 2 months old now', 'They are 2 months old'], []],
    // Nor after a sentence about someone else than the one it names: the second "He" may be the son, "She" the sister.
    ['My son has a hamster called Nibbles. He feeds him every morning. He is 8 years old.', 'I think Nibbles is 2 years old now.', ['Nibbles is 2 years old', 'He is 8 years old'], []],
    ['My sister has a cat called Mochi. She adores her. She lives in Leeds.', 'I think Mochi lives in York now.', ['Mochi lives in York', 'She lives in Leeds'], []],
    // A pet's name that opens with a particle said twice is a name: its 它 sentence is the pet's, beside the user's news.
    ['我家的狗叫了了。它很喜欢吃肉。', '我现在很喜欢吃肉。', ['它很喜欢吃肉', '我现在很喜欢吃肉'], []],
  ])('%s + %s', (...row) => check(row));

  it.each<Row>([
    // A run of the same pronoun is still the name's.
    ['My friend is named Sarah. She is funny. She works at a bank.', 'I heard Sarah works at an insurance firm now.', ['insurance firm', 'She is funny'], ['at a bank']],
    ['我妹妹叫小丽。她很爱笑。她在银行工作。', '我听说小丽现在在保险公司工作。', ['保险公司', '她很爱笑'], ['银行']],
  ])('as before: %s + %s', (...row) => check(row));
});
