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

mod merge;
mod names;

use std::collections::HashMap;

use self::merge::{Members, merge};
use self::names::{
    ABBREVIATED, Casing, PARTICLES, Run, SAINT, TITLES, Word, one_space, runs, tokenize,
};
use crate::index::gender::{self, Gender};
use crate::prose::verbs::is_speech_verb;

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

/// One way the book writes a name, and what its occurrences say.
#[derive(Clone, Debug, Default)]
pub(super) struct Form {
    pub(super) title: Option<usize>,
    /// The name's words, without the title.
    pub(super) core: Vec<String>,
    pub(super) count: u32,
    /// Speech tags naming it.
    pub(super) speech: u32,
    /// Subject pronouns taking it up: he, she.
    pub(super) pronouns: [u32; 2],
    /// Prepositions of place before it.
    pub(super) towards: u32,
    /// A family or a set of sisters: "the Bennets", "the Miss Lucases".
    pub(super) collective: bool,
    /// A name that stands for someone: not a collective, and not a full
    /// name written once whose last word is a name of its own ("in London
    /// Lydia…": two names side by side). Only such a name takes others in,
    /// or names a card.
    pub(super) whole: bool,
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

    pub(super) fn title_gender(&self) -> Option<Gender> {
        self.title.and_then(|title| TITLES[title].1)
    }

    /// A title only a person has ("Mr.", not "St.").
    pub(super) fn person_title(&self) -> bool {
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
            is_speech_verb(&lower(word)) && text[word.end..start].trim().is_empty()
        });
        let spoken_after = next.is_some_and(|word| {
            !end_word.possessive
                && is_speech_verb(&lower(word))
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
