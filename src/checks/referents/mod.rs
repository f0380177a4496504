//! Who a pronoun means: owner resolution across sentences, as a reader does it.
//!
//! The checks that give a fact to a character ("his eyes were blue", "he felt
//! afraid", "she drew the key") ask here who "he" or "she" is. The answer is
//! the antecedent a reader would pick, or none: "ambiguous" is an honest
//! answer that silences a check rather than guessing.
//!
//! - **Agreement.** A character's gender comes from the card (`gender`, `sex`
//!   or `pronouns`), else from the courtesy titles of its names ("Mr. Darcy",
//!   "Miss Eliza Bennet"), else from the pronouns of its summary. A character
//!   of unknown gender agrees with both.
//! - **Within the sentence.** One agreeing character named before the
//!   pronoun is its antecedent; two, or an unnamed person ("the man", "a
//!   stranger") of that gender, make it ambiguous. "him" never means the
//!   subject of its own clause ("Tomas greeted him").
//! - **Across sentences.** With no agreeing name before it, a pronoun means
//!   the focus of its gender: the subject of the latest sentence that had
//!   one ("Tomas waited. When Kael came, his eyes were red" gives "his" to
//!   Kael only through the leading "When … ," clause; "Tomas stood by the
//!   fire. His eyes were grey as he watched Kael" gives it to Tomas), else
//!   the one agreeing character that sentence named. At the start of a scene
//!   and after a heading the focus is the scene's point-of-view character, as
//!   close third person reads.
//! - **First person.** "I", "me", "my" in narration are the point-of-view
//!   character.
//! - Dialogue is not narration: pronouns inside quotes are never resolved,
//!   and names inside quotes are nobody's antecedent.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use rustc_hash::FxHasher;

use crate::index::{CardKind, FilePath, Mention, SourceFile, Workspace};
use crate::prose::Prose;
use crate::text::line_memo::LineMemo;

mod sentence;
#[cfg(test)]
mod tests;

use sentence::{SentenceOutcome, SentenceReading, sentence_key, sentence_text};

pub(super) use crate::index::gender::{Gender, pronoun_gender};

fn is_first_person(lower: &str) -> bool {
    matches!(lower, "i" | "me" | "my" | "mine" | "myself")
}

/// Person nouns that bring someone of one gender into a sentence.
fn person_noun_gender(lower: &str) -> Option<Option<Gender>> {
    const HE: &[&str] = &[
        "man",
        "men",
        "boy",
        "father",
        "brother",
        "son",
        "husband",
        "gentleman",
        "lord",
        "king",
    ];
    const SHE: &[&str] = &[
        "woman", "women", "girl", "mother", "sister", "daughter", "wife", "lady", "queen", "maid",
    ];
    static NOUNS: std::sync::OnceLock<rustc_hash::FxHashMap<&'static str, Option<Gender>>> =
        std::sync::OnceLock::new();
    let nouns = NOUNS.get_or_init(|| {
        let with = |words: &'static [&'static str], gender| words.iter().map(move |w| (*w, gender));
        // The gendered lists are read last, so they win over the plain one.
        with(PERSON_NOUNS, None)
            .chain(with(SHE, Some(Gender::She)))
            .chain(with(HE, Some(Gender::He)))
            .collect()
    });
    nouns.get(lower).copied()
}

/// Words that bring another person into a sentence.
pub(super) const PERSON_NOUNS: &[&str] = &[
    "man",
    "men",
    "woman",
    "women",
    "boy",
    "boys",
    "girl",
    "girls",
    "child",
    "children",
    "stranger",
    "strangers",
    "guard",
    "guards",
    "soldier",
    "soldiers",
    "someone",
    "somebody",
    "mother",
    "father",
    "sister",
    "brother",
    "son",
    "daughter",
    "wife",
    "husband",
    "friend",
    "lady",
    "gentleman",
    "lord",
    "king",
    "queen",
    "servant",
    "maid",
    "others",
    "another",
    "everyone",
    "people",
    "figure",
    "rider",
    "captain",
    "old",
];

/// Words that open a clause before the main one ("When he came, …").
const SUBORDINATORS: &[&str] = &[
    "when", "as", "while", "before", "after", "though", "although", "if", "once", "until",
    "because", "since", "whenever",
];

/// A character named in narration.
#[derive(Clone, Debug)]
struct Named {
    /// The first token of the name.
    token: usize,
    card: FilePath,
    gender: Option<Gender>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
enum Focus {
    #[default]
    None,
    One(FilePath),
    Ambiguous,
}

fn agrees(gender: Option<Gender>, with: Gender) -> bool {
    gender.is_none_or(|gender| gender == with)
}

/// The characters a scene's pronouns and sentences refer to.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Referents {
    /// Token index of a pronoun in narration → the character it means
    /// (`None`: ambiguous or nobody).
    pronouns: HashMap<usize, Option<FilePath>>,
    /// For each sentence, its subject when it is certainly a character.
    subjects: Vec<Option<FilePath>>,
    /// The genders of the characters the scene names.
    genders: HashMap<FilePath, Option<Gender>>,
}

impl Referents {
    /// The character the pronoun at token `index` means, when certain.
    pub fn of_pronoun(&self, index: usize) -> Option<&FilePath> {
        self.pronouns.get(&index)?.as_ref()
    }

    /// The character the sentence at `index` (into `Prose::sentences`) is about.
    pub fn subject(&self, sentence: usize) -> Option<&FilePath> {
        self.subjects.get(sentence)?.as_ref()
    }

    /// Resolves every pronoun of a scene's narration.
    pub fn resolve(workspace: &Workspace, file: &SourceFile, prose: &Prose) -> Referents {
        let text = &*file.text;
        let catalog = workspace.catalog();
        let mut genders: HashMap<FilePath, Option<Gender>> = HashMap::new();
        let mut gender_of = |card: &FilePath| -> Option<Option<Gender>> {
            let gender = workspace.gender(card)?;
            genders.insert(card.clone(), gender);
            Some(gender)
        };
        let pov = file
            .scene()
            .and_then(|scene| scene.pov.as_ref())
            .and_then(|pov| catalog.resolve_card(&pov.text, &[CardKind::Character]))
            .map(|card| card.path.clone());
        let pov_gender = pov.as_ref().and_then(&mut gender_of).flatten();
        let named = named_characters(workspace.mentions(&file.path), prose, &mut gender_of);
        let known = genders;
        let mut referents = Referents::default();
        let start_focus = || -> [Focus; 2] {
            let mut focus = [Focus::None, Focus::None];
            if let Some(card) = &pov {
                for gender in [Gender::He, Gender::She] {
                    if agrees(pov_gender, gender) {
                        focus[gender as usize] = Focus::One(card.clone());
                    }
                }
            }
            focus
        };
        let mut focus = start_focus();
        let mut next_named = 0;
        // The scene being typed in keeps each sentence's reading, by its
        // text and all else the reading reads: typing reads one sentence
        // again, and those after it whose focus it changed.
        static MEMO: LineMemo<SentenceOutcome> = LineMemo::new();
        let mut memo = workspace
            .is_typed_in(&file.path)
            .then(|| MEMO.reading(&file.path));
        let world = memo.as_ref().map_or(0, |_| {
            let mut genders: Vec<(&FilePath, Option<Gender>)> =
                known.iter().map(|(card, gender)| (card, *gender)).collect();
            genders.sort_unstable();
            let mut hasher = FxHasher::default();
            (&pov, pov_gender, genders).hash(&mut hasher);
            hasher.finish()
        });
        for sentence in &prose.sentences {
            if sentence.heading {
                focus = start_focus();
                referents.subjects.push(None);
                continue;
            }
            while named
                .get(next_named)
                .is_some_and(|name| name.token < sentence.tokens.start)
            {
                next_named += 1;
            }
            let in_sentence = &named[next_named
                ..next_named
                    + named[next_named..]
                        .iter()
                        .take_while(|name| name.token < sentence.tokens.end)
                        .count()];
            let read = || {
                let reading = SentenceReading::new(text, prose, sentence, in_sentence);
                reading.outcome(pov.as_ref(), &known, &focus)
            };
            let outcome = match &mut memo {
                Some(memo) => {
                    let key = sentence_key(world, prose, sentence, in_sentence, &focus);
                    memo.line(sentence_text(text, prose, sentence), key, read)
                }
                None => Arc::new(read()),
            };
            let start = sentence.tokens.start;
            for (offset, card) in &outcome.pronouns {
                referents.pronouns.insert(start + offset, card.clone());
            }
            referents.subjects.push(outcome.subject.clone());
            focus = outcome.focus.clone();
        }
        referents.genders = known;
        referents
    }
}

/// The characters named in narration (not inside quotes), by first token.
fn named_characters(
    mentions: &[Mention],
    prose: &Prose,
    gender_of: &mut impl FnMut(&FilePath) -> Option<Option<Gender>>,
) -> Vec<Named> {
    let mut named = Vec::new();
    for mention in mentions {
        let Some(gender) = gender_of(&mention.card) else {
            continue;
        };
        let token = prose.token_at(mention.range.start);
        let Some(found) = prose.tokens.get(token) else {
            continue;
        };
        if found.quoted || found.range.start != mention.range.start {
            continue;
        }
        named.push(Named {
            token,
            card: mention.card.clone(),
            gender,
        });
    }
    named
}
