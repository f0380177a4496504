//! The cast an imported book proposes: a card for each recurring name the
//! prose gives a person or a place.
//!
//! A name is a run of capitalised words, after a courtesy title or not
//! ("Mr. Darcy", "Lady Catherine de Bourgh", "Longbourn"). A capitalised
//! word counts as a name only where the book does not also write it in
//! lower case more often than capitalised inside a sentence, so the
//! ordinary words that open sentences ("When", "Poor") are not names.
//!
//! The names of one person are merged: a shorter titled name into the
//! longer one it begins ("Lady Catherine" into "Lady Catherine de
//! Bourgh"), a full name into the one titled surname of its gender
//! ("Fitzwilliam Darcy" into "Mr. Darcy"), a lone given name into the full
//! name it begins ("Elizabeth" into "Elizabeth Bennet"), and a lone surname
//! into the one man of that name (a bare "Darcy" is Mr. Darcy, not Miss
//! Darcy). A gender comes from the titles, else from the subject pronouns
//! that follow the name at a sentence's start (the rule the checks read
//! genders by, [`gender::pronoun_after_name`]).
//!
//! What the text says tells persons from places: a title, a speech tag
//! ("said Elizabeth", "Jane replied") or a pronoun taking up the name makes
//! a person; "at Longbourn", "to Meryton", "in London", or a last word such
//! as "Street" or "Park" make a place. A name with no such evidence either
//! way ("Christmas", "English") is not proposed.

use std::collections::HashMap;

use crate::index::gender::{self, Gender};
use crate::prose::dictionary;

/// A person or a place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Character,
    Place,
}

/// A card the book proposes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proposed {
    pub kind: Kind,
    /// The fullest name the book gives.
    pub name: String,
    /// Its other names, most frequent first.
    pub aliases: Vec<String>,
    pub gender: Option<Gender>,
    /// How many times the book names it, by any of its names.
    pub occurrences: u32,
}

/// The fewest times a name must occur to be proposed.
const RECURRING: u32 = 3;

/// Titles that make the capitalised word after them a name, whatever else
/// the book does with that word ("Mrs. Long"), and the gender they give.
/// "St." starts a place's name or a saint's, and says nothing of either.
const TITLES: &[(&str, Option<Gender>)] = &[
    ("Mr", Some(Gender::He)),
    ("Mrs", Some(Gender::She)),
    ("Ms", Some(Gender::She)),
    ("Miss", Some(Gender::She)),
    ("Dr", None),
    ("Lady", Some(Gender::She)),
    ("Lord", Some(Gender::He)),
    ("Sir", Some(Gender::He)),
    ("Dame", Some(Gender::She)),
    ("Madame", Some(Gender::She)),
    ("Mme", Some(Gender::She)),
    ("Mademoiselle", Some(Gender::She)),
    ("Mlle", Some(Gender::She)),
    ("Monsieur", Some(Gender::He)),
    ("Captain", Some(Gender::He)),
    ("Colonel", Some(Gender::He)),
    ("General", Some(Gender::He)),
    ("Major", Some(Gender::He)),
    ("Professor", None),
    ("Aunt", Some(Gender::She)),
    ("Uncle", Some(Gender::He)),
    ("St", None),
];

/// The title that names no person.
const SAINT: &str = "St";

/// Titles written with a full stop.
const ABBREVIATED: &[&str] = &["Mr", "Mrs", "Ms", "Dr", "Mme", "Mlle", "St"];

/// Lower-case words that join the parts of a name ("Anne de Bourgh").
const PARTICLES: &[&str] = &[
    "de", "van", "von", "du", "da", "di", "del", "der", "le", "la",
];

/// Capitalised words that are never a name of their own.
const NOT_NAMES: &[&str] = &[
    "i",
    "o",
    "oh",
    "ah",
    "god",
    "heaven",
    "heavens",
    "lord",
    "christmas",
    "easter",
    "michaelmas",
    "sunday",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "chapter",
    "volume",
    "book",
    "part",
    // Peoples and tongues: "an English lady", "said the Frenchman".
    "english",
    "englishman",
    "englishwoman",
    "englishmen",
    "british",
    "irish",
    "scotch",
    "scottish",
    "welsh",
    "french",
    "frenchman",
    "frenchwoman",
    "frenchmen",
    "german",
    "germans",
    "italian",
    "italians",
    "spanish",
    "spaniard",
    "dutch",
    "russian",
    "russians",
    "american",
    "americans",
    "european",
    "europeans",
    "indian",
    "indians",
    "african",
    "chinese",
    "japanese",
    "greek",
    "greeks",
    "roman",
    "latin",
    "jew",
    "jews",
    "jewish",
    "christian",
    "christians",
    "catholic",
    "protestant",
    "negro",
    "mohammedan",
    "moslem",
    "muslim",
    "hindu",
    "creole",
];

/// Verbs of a speech tag: "said Elizabeth", "Jane replied".
const SPEECH: &[&str] = &[
    "said",
    "says",
    "replied",
    "cried",
    "asked",
    "answered",
    "exclaimed",
    "returned",
    "continued",
    "observed",
    "added",
    "whispered",
    "shouted",
    "called",
    "repeated",
    "murmured",
    "muttered",
    "remarked",
    "rejoined",
    "resumed",
];

/// Words before a place's name: "at Longbourn", "to Meryton".
const TOWARDS: &[&str] = &[
    "at", "in", "into", "to", "from", "near", "towards", "toward", "through", "within",
];

/// Last words that make a name a place: "Gracechurch Street".
const PLACE_WORDS: &[&str] = &[
    "street", "park", "hall", "house", "lodge", "square", "lane", "road", "abbey", "castle",
    "court", "manor", "place", "farm", "inn", "church", "cottage", "mill", "bridge", "river",
    "island", "hill", "wood", "woods", "forest", "station", "hotel", "gardens", "terrace", "row",
    "avenue", "city", "town", "village", "palace", "bay", "harbour", "harbor", "valley",
];

/// The cards the book's `texts` (its scenes) propose, persons first, each
/// kind by how often it is named, most first.
pub fn propose(texts: &[&str]) -> Vec<Proposed> {
    let words: Vec<Vec<Word>> = texts.iter().map(|text| tokenize(text)).collect();
    let case = Casing::count(texts, &words);
    let mut forms = Forms::default();
    for (text, words) in texts.iter().zip(&words) {
        for run in runs(text, words, &case) {
            forms.add(text, words, &run);
        }
    }
    forms.mark();
    let mut proposed: Vec<Proposed> = merge(&forms.forms)
        .into_iter()
        .filter_map(|members| proposal(&forms.forms, &members))
        .collect();
    proposed.sort_by(|a, b| {
        (a.kind, std::cmp::Reverse(a.occurrences), &a.name).cmp(&(
            b.kind,
            std::cmp::Reverse(b.occurrences),
            &b.name,
        ))
    });
    proposed
}

/// A word of the text: `text[start..end]`, without a possessive's "'s".
#[derive(Clone, Copy, Debug)]
struct Word {
    start: usize,
    end: usize,
    possessive: bool,
    /// It starts a sentence, a paragraph or a quotation.
    initial: bool,
}

impl Word {
    fn text<'t>(&self, text: &'t str) -> &'t str {
        &text[self.start..self.end]
    }

    fn capitalised(&self, text: &str) -> bool {
        let word = self.text(text);
        let mut chars = word.chars();
        chars.next().is_some_and(char::is_uppercase)
            && (word.chars().count() == 1 || chars.any(char::is_lowercase))
    }
}

/// The words of `text`: letters, with an apostrophe or hyphen inside.
fn tokenize(text: &str) -> Vec<Word> {
    let mut words = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if !c.is_alphabetic() {
            continue;
        }
        let mut end = start + c.len_utf8();
        while let Some(&(at, c)) = chars.peek() {
            let joins = matches!(c, '\'' | '’' | '-')
                && text[at + c.len_utf8()..]
                    .chars()
                    .next()
                    .is_some_and(char::is_alphabetic);
            if c.is_alphabetic() || joins {
                end = at + c.len_utf8();
                chars.next();
            } else {
                break;
            }
        }
        let word = &text[start..end];
        let (end, possessive) = match word.strip_suffix("'s").or_else(|| word.strip_suffix("’s"))
        {
            Some(stem) if !stem.is_empty() => (start + stem.len(), true),
            _ => (end, false),
        };
        // "I'm", "I'll": a pronoun, not a name; "4th": a number.
        let contraction = word.starts_with("I'") || word.starts_with("I’");
        let numbered = text[..start].ends_with(|c: char| c.is_ascii_digit());
        if contraction || numbered {
            continue;
        }
        words.push(Word {
            start,
            end,
            possessive,
            initial: starts_sentence(&text[..start]),
        });
    }
    words
}

/// Whether a word after `before` starts a sentence, a paragraph or a
/// quotation (a capital there says nothing of a name).
fn starts_sentence(before: &str) -> bool {
    let mut quoted = false;
    let mut newlines = 0;
    for c in before.chars().rev() {
        match c {
            '\n' => {
                newlines += 1;
                if newlines == 2 {
                    return true;
                }
            }
            ' ' | '\t' | '\r' | '\u{a0}' => {}
            '“' | '‘' | '"' | '\'' | '(' | '[' | '*' | '_' => quoted |= matches!(c, '“' | '"'),
            '.' | '!' | '?' => return !after_title(before),
            _ => return quoted && !c.is_alphanumeric(),
        }
    }
    true
}

/// Whether `before` ends with a title's abbreviation ("Mr.").
fn after_title(before: &str) -> bool {
    let trimmed = before.trim_end_matches([' ', '\u{a0}', '.']);
    let last = trimmed
        .rsplit(|c: char| !c.is_alphabetic())
        .next()
        .unwrap_or_default();
    ABBREVIATED.contains(&last)
}

/// How the book writes each word: capitalised inside a sentence, and in
/// lower case.
struct Casing(HashMap<String, [u32; 2]>);

impl Casing {
    fn count(texts: &[&str], words: &[Vec<Word>]) -> Casing {
        let mut counts: HashMap<String, [u32; 2]> = HashMap::new();
        for (text, words) in texts.iter().zip(words) {
            for word in words {
                let lower = word.text(text).to_lowercase();
                if word.capitalised(text) {
                    if !word.initial {
                        counts.entry(lower).or_default()[0] += 1;
                    }
                } else if word.text(text).starts_with(char::is_lowercase) {
                    counts.entry(lower).or_default()[1] += 1;
                }
            }
        }
        Casing(counts)
    }

    /// A capitalised word the book treats as a name: capitalised inside
    /// sentences at least twice as often as it is written in lower case.
    fn name_like(&self, word: &str) -> bool {
        let lower = word.to_lowercase();
        if NOT_NAMES.contains(&lower.as_str()) || word.chars().count() < 2 {
            return false;
        }
        let [capitalised, lowercase] = self.0.get(&lower).copied().unwrap_or_default();
        capitalised >= 1 && lowercase * 2 <= capitalised
    }
}

impl Casing {
    /// A word the book never writes in lower case.
    fn never_lower(&self, word: &str) -> bool {
        word.chars().count() >= 2
            && self
                .0
                .get(&word.to_lowercase())
                .is_none_or(|[_, lowercase]| *lowercase == 0)
    }
}

/// A name in the text: its title, and the words of the name itself.
struct Run {
    title: Option<usize>,
    /// Indexes into the text's words.
    first: usize,
    last: usize,
}

fn title_of(word: &str) -> Option<usize> {
    TITLES.iter().position(|(title, _)| *title == word)
}

/// One space between two words: a space, a no-break space, or the line
/// break of a paragraph wrapped by hand.
fn one_space(gap: &str) -> bool {
    matches!(gap, " " | "\u{a0}" | "\n" | "\r\n")
}

/// The names in one text.
fn runs(text: &str, words: &[Word], case: &Casing) -> Vec<Run> {
    // Only a space (or a title's full stop and a space) between two words
    // of one name.
    let adjacent = |a: &Word, b: &Word| {
        !a.possessive && {
            let gap = &text[a.end..b.start];
            match gap.strip_prefix('.') {
                Some(space) => one_space(space) && title_of(a.text(text)).is_some(),
                None => one_space(gap),
            }
        }
    };
    // The last word of the name whose first word is `first`: the
    // capitalised names and particles that follow it.
    let extend = |first: usize| {
        let mut last = first;
        while let Some(next) = words.get(last + 1) {
            if !adjacent(&words[last], next) {
                break;
            }
            let part = next.text(text);
            let joins = if PARTICLES.contains(&part) {
                words.get(last + 2).is_some_and(|after| {
                    adjacent(next, after)
                        && after.capitalised(text)
                        && case.name_like(after.text(text))
                })
            } else {
                next.capitalised(text) && case.name_like(part) && title_of(part).is_none()
            };
            if !joins {
                break;
            }
            last += if PARTICLES.contains(&part) { 2 } else { 1 };
        }
        last
    };
    let mut found = Vec::new();
    let mut at = 0;
    while at < words.len() {
        let word = &words[at];
        let raw = word.text(text);
        let title = title_of(raw);
        let named = |first: usize| {
            words
                .get(first)
                .is_some_and(|next| next.capitalised(text) && next.end - next.start >= 2)
        };
        // A title names someone only with a name after it ("Mr. Darcy",
        // "Miss de Bourgh"); alone ("the Colonel") it is no one's name.
        let after_title = title.is_some() && {
            let next = words.get(at + 1);
            next.is_some_and(|next| adjacent(word, next))
                && (named(at + 1)
                    || next.is_some_and(|next| PARTICLES.contains(&next.text(text)))
                        && named(at + 2)
                        && adjacent(&words[at + 1], &words[at + 2]))
        };
        if title.is_some() && !after_title {
            at += 1;
            continue;
        }
        let first = if title.is_some() { at + 1 } else { at };
        let head = &words[first];
        if title.is_some() && PARTICLES.contains(&head.text(text)) {
            let last = extend(first + 1);
            found.push(Run { title, first, last });
            at = last + 1;
            continue;
        }
        // A word seen only where a sentence starts is a name's first when
        // a name follows it, the book never writes it in lower case and it
        // is no English word ("Fitzwilliam Darcy", not "Poor Jane").
        let opens_name = || {
            head.initial
                && case.never_lower(head.text(text))
                && !dictionary::is_common_word(head.text(text))
                && words.get(first + 1).is_some_and(|next| {
                    adjacent(head, next)
                        && next.capitalised(text)
                        && case.name_like(next.text(text))
                })
        };
        let starts = head.capitalised(text)
            && head.end - head.start >= 2
            && (title.is_some() || case.name_like(head.text(text)) || opens_name())
            && !NOT_NAMES.contains(&head.text(text).to_lowercase().as_str());
        if !starts {
            at += 1;
            continue;
        }
        let last = extend(first);
        found.push(Run { title, first, last });
        at = last + 1;
    }
    found
}

/// One way the book writes a name, and what its occurrences say.
#[derive(Clone, Debug, Default)]
struct Form {
    title: Option<usize>,
    /// The name's words, without the title.
    core: Vec<String>,
    count: u32,
    /// Speech tags naming it.
    speech: u32,
    /// Subject pronouns taking it up: he, she.
    pronouns: [u32; 2],
    /// Prepositions of place before it.
    towards: u32,
    /// A family or a set of sisters: "the Bennets", "the Miss Lucases".
    collective: bool,
    /// A name that stands for someone: not a collective, and not a full
    /// name written once whose last word is a name of its own ("in London
    /// Lydia…": two names side by side). Only such a name takes others in,
    /// or names a card.
    whole: bool,
}

impl Form {
    fn text(&self) -> String {
        match self.title {
            Some(title) => {
                let title = TITLES[title].0;
                let stop = if ABBREVIATED.contains(&title) {
                    "."
                } else {
                    ""
                };
                format!("{title}{stop} {}", self.core.join(" "))
            }
            None => self.core.join(" "),
        }
    }

    fn title_gender(&self) -> Option<Gender> {
        self.title.and_then(|title| TITLES[title].1)
    }

    /// A title only a person has ("Mr.", not "St.").
    fn person_title(&self) -> bool {
        self.title.is_some_and(|title| TITLES[title].0 != SAINT)
    }
}

#[derive(Default)]
struct Forms {
    forms: Vec<Form>,
    index: HashMap<(Option<usize>, Vec<String>), usize>,
}

impl Forms {
    fn add(&mut self, text: &str, words: &[Word], run: &Run) {
        // "Miss De Bourgh" is "Miss de Bourgh".
        let core: Vec<String> = words[run.first..=run.last]
            .iter()
            .enumerate()
            .map(|(at, word)| {
                let part = word.text(text);
                let lower = part.to_lowercase();
                if at + run.first < run.last && PARTICLES.contains(&lower.as_str()) {
                    lower
                } else {
                    part.to_owned()
                }
            })
            .collect();
        let key = (run.title, core);
        let at = *self.index.entry(key.clone()).or_insert_with(|| {
            self.forms.push(Form {
                title: key.0,
                core: key.1,
                ..Form::default()
            });
            self.forms.len() - 1
        });
        let start = words[run.title.map_or(run.first, |_| run.first - 1)].start;
        let end_word = &words[run.last];
        let previous = run
            .title
            .map_or(run.first, |_| run.first - 1)
            .checked_sub(1)
            .map(|index| &words[index]);
        let next = words.get(run.last + 1);
        let form = &mut self.forms[at];
        form.count += 1;
        let lower = |word: &Word| word.text(text).to_lowercase();
        let spoken_before = previous.is_some_and(|word| {
            SPEECH.contains(&lower(word).as_str()) && text[word.end..start].trim().is_empty()
        });
        let spoken_after = next.is_some_and(|word| {
            !end_word.possessive
                && SPEECH.contains(&lower(word).as_str())
                && text[end_word.end..word.start].trim().is_empty()
        });
        if spoken_before || spoken_after {
            form.speech += 1;
        }
        if !end_word.possessive {
            if let Some(gender) = gender::pronoun_after_name(&text[..start], &text[end_word.end..])
            {
                form.pronouns[gender as usize] += 1;
            }
            if previous.is_some_and(|word| {
                TOWARDS.contains(&word.text(text)) && one_space(&text[word.end..start])
            }) {
                form.towards += 1;
            }
        }
    }
}

impl Forms {
    /// Marks the plurals of other names ("Bennets" beside "Mr. Bennet",
    /// "Miss Lucases" beside "Miss Lucas"), then the whole names.
    fn mark(&mut self) {
        let singular = |form: &Form| -> Vec<(Option<usize>, Vec<String>)> {
            let last = form.core.last().map(String::as_str).unwrap_or_default();
            [last.strip_suffix("es"), last.strip_suffix('s')]
                .into_iter()
                .flatten()
                .filter(|stem| stem.chars().count() >= 2)
                .map(|stem| {
                    let mut core = form.core.clone();
                    *core.last_mut().expect("a name has a word") = stem.to_owned();
                    (form.title, core)
                })
                .collect()
        };
        let surnames: std::collections::HashSet<&str> = self
            .forms
            .iter()
            .filter_map(|form| form.core.last().map(String::as_str))
            .collect();
        let collective: Vec<bool> = self
            .forms
            .iter()
            .map(|form| {
                singular(form).iter().any(|(title, core)| {
                    self.index.contains_key(&(*title, core.clone()))
                        || (title.is_none()
                            && core.len() == 1
                            && surnames.contains(core[0].as_str()))
                })
            })
            .collect();
        for (form, collective) in self.forms.iter_mut().zip(collective) {
            form.collective = collective;
        }
        let lone_count = |word: &str| {
            self.index
                .get(&(None, vec![word.to_owned()]))
                .map_or(0, |&at| self.forms[at].count)
        };
        let whole: Vec<bool> = self
            .forms
            .iter()
            .map(|form| {
                !form.collective
                    && (form.count >= 2
                        || form.core.len() >= 2 && lone_count(&form.core[form.core.len() - 1]) < 2)
            })
            .collect();
        for (form, whole) in self.forms.iter_mut().zip(whole) {
            form.whole = whole;
        }
    }
}

/// The forms of one person or place, as indexes into the forms.
type Members = Vec<usize>;

/// The forms grouped by whom they name. A lone surname shared by several
/// people none of whom stands out ("Grant" beside "Dr. Grant" and "Mrs.
/// Grant") is nobody's, and left out.
fn merge(forms: &[Form]) -> Vec<Members> {
    let mut owner: Vec<usize> = (0..forms.len()).collect();
    let mut order: Vec<usize> = (0..forms.len())
        .filter(|&at| !forms[at].collective)
        .collect();
    order.sort_by_key(|&at| std::cmp::Reverse(forms[at].core.len()));
    titled_into_longer(forms, &mut owner, &order);
    full_names(forms, &mut owner, &order);
    let nobody = lone_words(forms, &mut owner);
    let mut groups: HashMap<usize, Members> = HashMap::new();
    for at in (0..forms.len()).filter(|&at| !nobody[at]) {
        groups.entry(root(&owner, at)).or_default().push(at);
    }
    let mut groups: Vec<Members> = groups.into_values().collect();
    groups.sort();
    groups
}

/// The group form `at` belongs to now.
fn root(owner: &[usize], mut at: usize) -> usize {
    while owner[at] != at {
        at = owner[at];
    }
    at
}

/// The group of the one candidate, or of the one named at least twice as
/// often as any other.
fn pick(forms: &[Form], owner: &[usize], candidates: &[usize]) -> Option<usize> {
    let mut totals: Vec<(usize, u32)> = Vec::new();
    for &candidate in candidates {
        let group = root(owner, candidate);
        match totals.iter_mut().find(|(at, _)| *at == group) {
            Some((_, total)) => *total += forms[candidate].count,
            None => totals.push((group, forms[candidate].count)),
        }
    }
    totals.sort_by_key(|(_, total)| std::cmp::Reverse(*total));
    match totals.as_slice() {
        [(one, _)] => Some(*one),
        [(first, most), (_, next), ..] if *most >= next * 2 => Some(*first),
        _ => None,
    }
}

/// The forms that keep `keep`.
fn all(forms: &[Form], keep: impl Fn(usize) -> bool) -> Vec<usize> {
    (0..forms.len()).filter(|&at| keep(at)).collect()
}

/// A form's gender by its title, else by the pronouns that take it up or
/// take up its given name alone (one is enough where none of the other
/// gender stands beside it).
fn gender_of(forms: &[Form], at: usize) -> Option<Gender> {
    let form = &forms[at];
    form.title_gender().or_else(|| {
        let mut pronouns = form.pronouns;
        let given = forms.iter().position(|other| {
            other.title.is_none() && other.core.len() == 1 && other.core[0] == form.core[0]
        });
        if let Some(given) = given.filter(|_| form.core.len() >= 2) {
            pronouns[0] += forms[given].pronouns[0];
            pronouns[1] += forms[given].pronouns[1];
        }
        match pronouns {
            [he, 0] if he >= 1 => Some(Gender::He),
            [0, she] if she >= 1 => Some(Gender::She),
            _ => None,
        }
    })
}

/// A titled name into the longer one with the same title it begins:
/// "Lady Catherine" into "Lady Catherine de Bourgh".
fn titled_into_longer(forms: &[Form], owner: &mut [usize], order: &[usize]) {
    for &at in order {
        let form = &forms[at];
        if form.title.is_none() {
            continue;
        }
        let longer = all(forms, |other| {
            forms[other].whole
                && forms[other].title == form.title
                && forms[other].core.len() > form.core.len()
                && forms[other].core.starts_with(&form.core)
        });
        if let Some(into) = pick(forms, owner, &longer) {
            owner[at] = into;
        }
    }
}

/// A full name into its titled forms ("Miss Elizabeth Bennet"), or into the
/// one titled surname of its gender when no one else of that gender bears
/// the surname ("Fitzwilliam Darcy" and "Mr. Fitzwilliam Darcy" into "Mr.
/// Darcy", but neither "Elizabeth Bennet" nor "Lydia Bennet" into "Miss
/// Bennet").
fn full_names(forms: &[Form], owner: &mut [usize], order: &[usize]) {
    for &at in order {
        let form = &forms[at];
        if form.core.len() < 2 || root(owner, at) != at {
            continue;
        }
        if form.title.is_none() {
            let same = all(forms, |other| {
                forms[other].whole && forms[other].title.is_some() && forms[other].core == form.core
            });
            if let Some(into) = pick(forms, owner, &same) {
                owner[at] = into;
                continue;
            }
        }
        let Some(gender) = gender_of(forms, at) else {
            continue;
        };
        let surname = &form.core[form.core.len() - 1];
        let namesakes = all(forms, |other| {
            forms[other].core.len() >= 2
                && &forms[other].core[forms[other].core.len() - 1] == surname
                && forms[other].core[0] != form.core[0]
                && gender_of(forms, other) != Some(gender.other())
        });
        let titled = all(forms, |other| {
            forms[other].whole
                && forms[other].person_title()
                && forms[other].core.len() == 1
                && &forms[other].core[0] == surname
                && forms[other].title_gender() == Some(gender)
        });
        if let ([into], []) = (titled.as_slice(), namesakes.as_slice()) {
            owner[at] = root(owner, *into);
        }
    }
}

/// A lone word into the titled name it completes ("Fitzwilliam" into
/// "Colonel Fitzwilliam"; a bare "Darcy" into Mr. Darcy, the one man of
/// the name), else into the full name it begins ("Elizabeth"), else into
/// the one person whose surname it is. Answers, for each form, whether it
/// is nobody's: a word several people share, none standing out.
fn lone_words(forms: &[Form], owner: &mut [usize]) -> Vec<bool> {
    let mut nobody = vec![false; forms.len()];
    for at in 0..forms.len() {
        let form = &forms[at];
        if form.title.is_some() || form.core.len() != 1 || form.collective {
            continue;
        }
        let word = &form.core[0];
        let titled = all(forms, |other| {
            forms[other].whole && forms[other].person_title() && forms[other].core == form.core
        });
        let men: std::collections::BTreeSet<usize> = titled
            .iter()
            .filter(|&&other| forms[other].title_gender() == Some(Gender::He))
            .map(|&other| root(owner, other))
            .collect();
        let given = all(forms, |other| {
            forms[other].whole && forms[other].core.len() >= 2 && &forms[other].core[0] == word
        });
        let surname = all(forms, |other| {
            other != at && forms[other].whole && forms[other].core.last() == Some(word)
        });
        let into = if men.len() == 1 {
            men.first().copied()
        } else if !titled.is_empty() {
            pick(forms, owner, &titled)
        } else if !given.is_empty() {
            pick(forms, owner, &given)
        } else {
            pick(forms, owner, &surname)
        };
        nobody[at] =
            into.is_none() && !(titled.is_empty() && given.is_empty() && surname.is_empty());
        if let Some(into) = into {
            owner[at] = into;
        }
    }
    nobody
}

/// The card a group of forms proposes, if it recurs and the text says
/// whether it is a person or a place.
fn proposal(forms: &[Form], members: &Members) -> Option<Proposed> {
    let sum = |get: fn(&Form) -> u32| members.iter().map(|&at| get(&forms[at])).sum::<u32>();
    let occurrences = sum(|form| form.count);
    if occurrences < RECURRING || members.iter().any(|&at| forms[at].collective) {
        return None;
    }
    let titled = sum(|form| if form.person_title() { form.count } else { 0 });
    let [he, she] = [sum(|form| form.pronouns[0]), sum(|form| form.pronouns[1])];
    let person = titled + sum(|form| form.speech) + he + she;
    let place_word = members.iter().any(|&at| {
        let core = &forms[at].core;
        (forms[at].title.is_some() && !forms[at].person_title())
            || core.len() >= 2
                && PLACE_WORDS.contains(&core[core.len() - 1].to_lowercase().as_str())
    });
    let towards = sum(|form| form.towards);
    let kind = if titled > 0 {
        Kind::Character
    } else if place_word || (towards >= 2 && towards > person * 2) {
        Kind::Place
    } else if person >= 2 {
        Kind::Character
    } else {
        return None;
    };
    let mut by_count: Vec<usize> = members.clone();
    by_count.sort_by_key(|&at| (std::cmp::Reverse(forms[at].count), forms[at].text()));
    // The name: the longest; a full name as the book writes it without a
    // title, a lone word with its title ("Mr. Bennet", not "Bennet").
    let longest = by_count.iter().copied().max_by_key(|&at| {
        let form = &forms[at];
        (
            form.whole,
            form.core.len(),
            form.title.is_none() == (form.core.len() >= 2),
            form.count,
        )
    })?;
    let name = forms[longest].text();
    let aliases = by_count
        .iter()
        .map(|&at| forms[at].text())
        .filter(|text| *text != name)
        .collect();
    let titles: Vec<Gender> = members
        .iter()
        .filter_map(|&at| forms[at].title_gender())
        .collect();
    let gender = match kind {
        Kind::Place => None,
        Kind::Character if !titles.is_empty() => titles
            .iter()
            .all(|gender| *gender == titles[0])
            .then(|| titles[0]),
        Kind::Character if he >= 2 && she * 4 <= he => Some(Gender::He),
        Kind::Character if she >= 2 && he * 4 <= she => Some(Gender::She),
        Kind::Character => None,
    };
    Some(Proposed {
        kind,
        name,
        aliases,
        gender,
        occurrences,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A proposed card as a tuple: kind, name, aliases, gender, occurrences.
    type Card = (Kind, String, Vec<String>, Option<Gender>, u32);

    fn cast(texts: &[&str]) -> Vec<Card> {
        propose(texts)
            .into_iter()
            .map(|card| {
                (
                    card.kind,
                    card.name,
                    card.aliases,
                    card.gender,
                    card.occurrences,
                )
            })
            .collect()
    }

    #[test]
    fn a_titled_surname_a_full_name_and_a_bare_surname_are_one_man_and_his_sister_is_another() {
        let book = "Mr. Darcy came in. \"No,\" said Darcy. Fitzwilliam Darcy left. He was tired.\n\n\
                    Miss Darcy smiled at Ada. \"Yes,\" said Miss Darcy. She waited for Darcy.\n\n\
                    Ada looked up. She saw Miss Darcy and Mr. Darcy.";
        let cards = cast(&[book]);
        assert!(
            cards.contains(&(
                Kind::Character,
                "Mr. Darcy".into(),
                vec!["Darcy".into(), "Fitzwilliam Darcy".into()],
                Some(Gender::He),
                5
            )),
            "{cards:#?}"
        );
        assert!(
            cards.contains(&(
                Kind::Character,
                "Miss Darcy".into(),
                vec![],
                Some(Gender::She),
                3
            )),
            "{cards:#?}"
        );
    }

    #[test]
    fn a_given_name_joins_the_full_name_and_the_pronouns_after_it_give_a_gender() {
        let book = "Ada Quill kept the light. Ada climbed. She was cold.\n\n\
                    Ada slept. She dreamed of nothing.\n\n\
                    \"Come,\" said Ada. Then the sea rose.";
        assert_eq!(
            cast(&[book]),
            [(
                Kind::Character,
                "Ada Quill".into(),
                vec!["Ada".into()],
                Some(Gender::She),
                4
            )]
        );
    }

    #[test]
    fn places_are_told_from_persons_by_what_the_text_says() {
        let book = "They rode to Meryton. At Meryton the Rain fell. She walked to Meryton and waited at the inn.\n\n\
                    The Rain fell on Gracechurch Street. Gracechurch Street was wet. \
                    Gracechurch Street was dark.\n\n\
                    \"Well,\" said Kitty. Kitty laughed. \"No,\" cried Kitty.";
        let cards = cast(&[book]);
        let kinds: Vec<(Kind, &str)> = cards
            .iter()
            .map(|(kind, name, ..)| (*kind, name.as_str()))
            .collect();
        assert_eq!(
            kinds,
            [
                (Kind::Character, "Kitty"),
                (Kind::Place, "Gracechurch Street"),
                (Kind::Place, "Meryton")
            ]
        );
    }

    #[test]
    fn ordinary_words_that_open_sentences_and_the_calendar_are_not_names() {
        let book = "When it rained, they waited. When it stopped, they left. \
                    when indeed. Poor thing. On Monday, at Christmas, on Monday, at Christmas, \
                    in Christmas week and on Monday they went.";
        assert_eq!(cast(&[book]), []);
    }

    #[test]
    fn a_name_said_twice_is_not_proposed() {
        assert_eq!(
            cast(&["\"Go,\" said Ada. \"No,\" said Ada. The rest was quiet."]),
            []
        );
    }
}
