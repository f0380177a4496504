//! One sentence read for its references: whom its pronouns mean, its
//! subject and the focus it leaves, from the focus before it; and the key
//! under which a scene typed in keeps that reading.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use rustc_hash::FxHasher;

use super::{
    Focus, Gender, Named, SUBORDINATORS, agrees, is_first_person, person_noun_gender,
    pronoun_gender,
};
use crate::index::FilePath;
use crate::prose::{Prose, Sentence, lowercase};

/// One sentence, read for its references.
pub(super) struct SentenceReading<'a> {
    text: &'a str,
    prose: &'a Prose,
    range: std::ops::Range<usize>,
    named: &'a [Named],
    /// The unnamed people of the sentence's narration ("the man"), by token.
    persons: Vec<(usize, Option<Gender>)>,
}

/// What one sentence of narration says of who its pronouns mean, its
/// tokens counted from its first: the same wherever the sentence stands,
/// for the same text, names, point of view, genders and focus.
#[derive(Debug)]
pub(super) struct SentenceOutcome {
    /// A pronoun's token, from the sentence's first, and whom it means.
    pub(super) pronouns: Vec<(usize, Option<FilePath>)>,
    pub(super) subject: Option<FilePath>,
    /// The focus after the sentence.
    pub(super) focus: [Focus; 2],
}

/// The text from a sentence's first token to its last.
pub(super) fn sentence_text<'t>(text: &'t str, prose: &Prose, sentence: &Sentence) -> &'t str {
    let tokens = &prose.tokens[sentence.tokens.clone()];
    match (tokens.first(), tokens.last()) {
        (Some(first), Some(last)) => &text[first.range.start..last.range.end],
        _ => "",
    }
}

/// A key of all a sentence's reading reads besides its text: `world` (the
/// point of view and the genders), where its tokens are and what each is,
/// its names (their genders are in `world`) and the focus before it.
pub(super) fn sentence_key(
    world: u64,
    prose: &Prose,
    sentence: &Sentence,
    named: &[Named],
    focus: &[Focus; 2],
) -> u64 {
    let mut hasher = FxHasher::default();
    (world, focus).hash(&mut hasher);
    let tokens = &prose.tokens[sentence.tokens.clone()];
    let base = tokens.first().map_or(0, |token| token.range.start);
    for token in tokens {
        (
            token.range.start - base,
            token.range.len(),
            token.kind,
            token.quoted,
        )
            .hash(&mut hasher);
    }
    for name in named {
        (name.token - sentence.tokens.start, &name.card).hash(&mut hasher);
    }
    hasher.finish()
}

impl<'a> SentenceReading<'a> {
    pub(super) fn new(
        text: &'a str,
        prose: &'a Prose,
        sentence: &Sentence,
        named: &'a [Named],
    ) -> SentenceReading<'a> {
        let persons = sentence
            .tokens
            .clone()
            .filter(|&at| {
                let token = &prose.tokens[at];
                token.is_word() && !token.quoted
            })
            .filter_map(|at| {
                person_noun_gender(&lowercase(prose.tokens[at].text(text))).map(|noun| (at, noun))
            })
            .collect();
        SentenceReading {
            text,
            prose,
            range: sentence.tokens.clone(),
            named,
            persons,
        }
    }

    /// Whom the sentence's pronouns mean, its subject and the focus after
    /// it, from the focus before it.
    pub(super) fn outcome(
        &self,
        pov: Option<&FilePath>,
        known: &HashMap<FilePath, Option<Gender>>,
        focus: &[Focus; 2],
    ) -> SentenceOutcome {
        let (text, prose) = (self.text, self.prose);
        let subject_token = self.subject_token();
        let mut subject = subject_token
            .filter(|&token| !self.is_compound_subject(token))
            .and_then(|token| {
                self.named
                    .iter()
                    .find(|name| name.token == token)
                    .map(|name| name.card.clone())
            });
        let mut pronouns = Vec::new();
        let mut resolved_here: Vec<(Gender, FilePath)> = Vec::new();
        for index in self.range.clone() {
            let token = &prose.tokens[index];
            if !token.is_word() || token.quoted {
                continue;
            }
            let lower = lowercase(token.text(text));
            let resolved = if is_first_person(&lower) {
                pov.cloned()
            } else if let Some(gender) = pronoun_gender(&lower) {
                self.resolve(index, &lower, gender, subject.as_ref(), focus)
            } else {
                continue;
            };
            if subject.is_none() && subject_token == Some(index) {
                subject = resolved.clone();
            }
            if let (Some(gender), Some(card)) = (pronoun_gender(&lower), &resolved) {
                resolved_here.push((gender, card.clone()));
            }
            pronouns.push((index - self.range.start, resolved));
        }
        let subject_gender = subject
            .as_ref()
            .and_then(|card| known.get(card).copied().flatten());
        let mut focus = focus.clone();
        self.update_focus(subject.as_ref(), subject_gender, &resolved_here, &mut focus);
        SentenceOutcome {
            pronouns,
            subject,
            focus,
        }
    }
}

impl SentenceReading<'_> {
    fn lower(&self, index: usize) -> std::borrow::Cow<'_, str> {
        lowercase(self.prose.tokens[index].text(self.text))
    }

    /// The token that opens the sentence's narration: its first word outside
    /// quotes, past a leading "Then" or "But"; in `"…," said Kael` the name.
    fn subject_token(&self) -> Option<usize> {
        let mut words = self
            .range
            .clone()
            .filter(|&index| {
                let token = &self.prose.tokens[index];
                token.is_word() && !token.quoted
            })
            .peekable();
        let mut first = words.next()?;
        if matches!(
            &*self.lower(first),
            "then" | "but" | "and" | "so" | "yet" | "now"
        ) {
            first = words.next()?;
        }
        if crate::prose::verbs::is_speech_verb(&self.lower(first)) {
            return words.next();
        }
        Some(first)
    }

    /// Whether the name at `token` is one of a pair or list ("Brannoc and
    /// Kael walked"): then the sentence has no single subject.
    fn is_compound_subject(&self, token: usize) -> bool {
        (token + 1..(token + 5).min(self.range.end)).any(|at| {
            self.prose.tokens[at].is_word()
                && self.lower(at) == "and"
                && self.named.iter().any(|name| name.token == at + 1)
        })
    }

    /// Whether the sentence opens with a subordinate clause that holds `index`.
    fn in_leading_clause(&self, index: usize) -> bool {
        let Some(first) = self.range.clone().find(|&at| {
            let token = &self.prose.tokens[at];
            token.is_word() && !token.quoted
        }) else {
            return false;
        };
        if !SUBORDINATORS.contains(&&*self.lower(first)) {
            return false;
        }
        !self
            .range
            .clone()
            .take_while(|&at| at < index)
            .any(|at| self.prose.tokens[at].is_punct(self.text, ','))
    }

    /// Whether an unnamed person of this gender stands in the sentence before `index`.
    fn person_before(&self, index: usize, gender: Gender) -> bool {
        self.persons
            .iter()
            .any(|(at, noun)| *at < index && agrees(*noun, gender))
    }

    fn distinct_agreeing<'n>(
        &self,
        names: impl Iterator<Item = &'n Named>,
        gender: Gender,
        except: Option<&FilePath>,
    ) -> Vec<&'n FilePath> {
        let mut cards: Vec<&FilePath> = Vec::new();
        for name in names {
            if agrees(name.gender, gender)
                && Some(&name.card) != except
                && !cards.contains(&&name.card)
            {
                cards.push(&name.card);
            }
        }
        cards
    }

    fn resolve(
        &self,
        index: usize,
        lower: &str,
        gender: Gender,
        subject: Option<&FilePath>,
        focus: &[Focus; 2],
    ) -> Option<FilePath> {
        // "Tomas greeted him": an object pronoun is not its clause's subject.
        let except = (lower == "him").then_some(subject).flatten();
        let before = self.distinct_agreeing(
            self.named.iter().filter(|name| name.token < index),
            gender,
            except,
        );
        if self.person_before(index, gender) {
            return None;
        }
        let focused = &focus[gender as usize];
        match before.as_slice() {
            // One name before it: the antecedent, unless a reader's focus is
            // on someone else and the name is not the sentence's subject
            // ("His anxiety for Jane was evident … as she believed"), or
            // the focus is already ambiguous.
            [one] => {
                return match focused {
                    Focus::None => Some((*one).clone()),
                    Focus::One(other) if other == *one => Some((*one).clone()),
                    _ if subject == Some(*one) => Some((*one).clone()),
                    _ => None,
                };
            }
            [] => {}
            _ => return None,
        }
        if self.in_leading_clause(index) {
            let after = self.distinct_agreeing(
                self.named.iter().filter(|name| name.token > index),
                gender,
                None,
            );
            if let [one] = after.as_slice() {
                return Some((*one).clone());
            }
        }
        match &focus[gender as usize] {
            Focus::One(card) if Some(card) != except => Some(card.clone()),
            _ => None,
        }
    }

    /// After the sentence: its subject becomes the focus of its gender; a
    /// pronoun the sentence resolved keeps its character in focus; another
    /// character named only in passing ("Had Lydia's marriage been …")
    /// makes the focus of that gender ambiguous, as do two names or an
    /// unnamed person.
    fn update_focus(
        &self,
        subject: Option<&FilePath>,
        subject_gender: Option<Gender>,
        resolved: &[(Gender, FilePath)],
        focus: &mut [Focus; 2],
    ) {
        for gender in [Gender::He, Gender::She] {
            let slot = &mut focus[gender as usize];
            if let Some(card) = subject
                && agrees(subject_gender, gender)
            {
                *slot = Focus::One(card.clone());
                continue;
            }
            let others = self.distinct_agreeing(self.named.iter(), gender, subject);
            let realised = resolved
                .iter()
                .find(|(of, _)| *of == gender)
                .map(|(_, card)| card);
            match (others.as_slice(), realised) {
                ([], Some(card)) => *slot = Focus::One(card.clone()),
                ([one], Some(card)) if *one == card => *slot = Focus::One(card.clone()),
                ([one], None) if *slot == Focus::None => *slot = Focus::One((*one).clone()),
                ([one], None) if *slot == Focus::One((*one).clone()) => {}
                ([], None) if self.person_before(self.range.end, gender) => {
                    *slot = Focus::Ambiguous
                }
                ([], None) => {}
                _ => *slot = Focus::Ambiguous,
            }
        }
    }
}
