//! Finding the names in a book's text: its words, how the book writes each
//! (capitalised inside sentences, in lower case), and the runs of
//! capitalised words, after a courtesy title or not, that are names.

use std::collections::HashMap;

use crate::index::gender::Gender;
use crate::prose::dictionary;

/// Titles that make the capitalised word after them a name, whatever else
/// the book does with that word ("Mrs. Long"), and the gender they give.
/// "St." starts a place's name or a saint's, and says nothing of either.
pub(super) const TITLES: &[(&str, Option<Gender>)] = &[
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
pub(super) const SAINT: &str = "St";

/// Titles written with a full stop.
pub(super) const ABBREVIATED: &[&str] = &["Mr", "Mrs", "Ms", "Dr", "Mme", "Mlle", "St"];

/// Lower-case words that join the parts of a name ("Anne de Bourgh").
pub(super) const PARTICLES: &[&str] = &[
    "de", "van", "von", "du", "da", "di", "del", "der", "le", "la",
];

/// Capitalised words that are never a name of their own.
pub(super) const NOT_NAMES: &[&str] = &[
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

/// A word of the text: `text[start..end]`, without a possessive's "'s".
#[derive(Clone, Copy, Debug)]
pub(super) struct Word {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) possessive: bool,
    /// It starts a sentence, a paragraph or a quotation.
    pub(super) initial: bool,
}

impl Word {
    pub(super) fn text<'t>(&self, text: &'t str) -> &'t str {
        &text[self.start..self.end]
    }

    pub(super) fn capitalised(&self, text: &str) -> bool {
        let word = self.text(text);
        let mut chars = word.chars();
        chars.next().is_some_and(char::is_uppercase)
            && (word.chars().count() == 1 || chars.any(char::is_lowercase))
    }
}

/// The words of `text`: letters, with an apostrophe or hyphen inside.
pub(super) fn tokenize(text: &str) -> Vec<Word> {
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
pub(super) fn starts_sentence(before: &str) -> bool {
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
pub(super) struct Casing(HashMap<String, [u32; 2]>);

impl Casing {
    pub(super) fn count(texts: &[&str], words: &[Vec<Word>]) -> Casing {
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
    pub(super) fn name_like(&self, word: &str) -> bool {
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
pub(super) struct Run {
    pub(super) title: Option<usize>,
    /// Indexes into the text's words.
    pub(super) first: usize,
    pub(super) last: usize,
}

pub(super) fn title_of(word: &str) -> Option<usize> {
    TITLES.iter().position(|(title, _)| *title == word)
}

/// One space between two words: a space, a no-break space, or the line
/// break of a paragraph wrapped by hand.
pub(super) fn one_space(gap: &str) -> bool {
    matches!(gap, " " | "\u{a0}" | "\n" | "\r\n")
}

/// The names in one text.
pub(super) fn runs(text: &str, words: &[Word], case: &Casing) -> Vec<Run> {
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
