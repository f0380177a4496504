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
use crate::prose::{Prose, Sentence, lowercase};
use crate::text::line_memo::LineMemo;

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
            let gender = catalog.gender(card)?;
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

/// One sentence, read for its references.
struct SentenceReading<'a> {
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
struct SentenceOutcome {
    /// A pronoun's token, from the sentence's first, and whom it means.
    pronouns: Vec<(usize, Option<FilePath>)>,
    subject: Option<FilePath>,
    /// The focus after the sentence.
    focus: [Focus; 2],
}

/// The text from a sentence's first token to its last.
fn sentence_text<'t>(text: &'t str, prose: &Prose, sentence: &Sentence) -> &'t str {
    let tokens = &prose.tokens[sentence.tokens.clone()];
    match (tokens.first(), tokens.last()) {
        (Some(first), Some(last)) => &text[first.range.start..last.range.end],
        _ => "",
    }
}

/// A key of all a sentence's reading reads besides its text: `world` (the
/// point of view and the genders), where its tokens are and what each is,
/// its names and the focus before it.
fn sentence_key(
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
        (name.token - sentence.tokens.start, &name.card, name.gender).hash(&mut hasher);
    }
    hasher.finish()
}

impl<'a> SentenceReading<'a> {
    fn new(
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
    fn outcome(
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
        if super::speech::is_speech_verb(&self.lower(first)) {
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::index::SourceFile;

    const KAEL: &str =
        "---\ntype: character\nname: Kael Maren\naliases: [Kael]\ngender: male\n---\n";
    const TOMAS: &str = "---\ntype: character\nname: Tomas\n---\n\nThe old saltmaster. He keeps the lamps; his hands shake.\n";
    const IRIA: &str = "---\ntype: character\nname: Iria Vell\naliases: [Iria, Miss Vell]\n---\n";

    /// Each narration pronoun of `scene` and the name of the card it means.
    fn resolved(scene: &str) -> Vec<(String, Option<String>)> {
        let mut workspace = Workspace::new(Path::new("/nowhere"));
        let paths = workspace.config().paths.clone();
        let files = [
            ("Compendium/Characters/CHAR-kael-maren.md", KAEL),
            ("Compendium/Characters/CHAR-tomas.md", TOMAS),
            ("Compendium/Characters/CHAR-iria-vell.md", IRIA),
            ("Story/Scenes/SCN-one.md", scene),
        ];
        workspace.insert_files(
            files
                .iter()
                .map(|(path, text)| SourceFile::parse((*path).into(), (*text).into(), &paths))
                .collect(),
        );
        let file = workspace.file("Story/Scenes/SCN-one.md").unwrap().clone();
        let prose = file.analyse_prose();
        let referents = Referents::resolve(&workspace, &file, &prose);
        let mut found: Vec<(usize, String, Option<String>)> = referents
            .pronouns
            .iter()
            .map(|(&index, card)| {
                let word = prose.tokens[index].text(&file.text).to_owned();
                let name = card.as_ref().map(|card| {
                    let card = workspace.catalog().card(card).unwrap().card().unwrap();
                    card.display_name().to_owned()
                });
                (index, word, name)
            })
            .collect();
        found.sort();
        found
            .into_iter()
            .map(|(_, word, name)| (word, name))
            .collect()
    }

    fn one(word: &str, name: Option<&str>) -> (String, Option<String>) {
        (word.to_owned(), name.map(str::to_owned))
    }

    #[test]
    fn a_pronoun_before_the_one_name_of_its_sentence_means_the_previous_subject() {
        let found = resolved(
            "---\ncharacters: [Kael, Tomas]\n---\n\nTomas stood by the fire. His eyes were grey as he watched Kael.\n",
        );
        assert_eq!(
            found,
            vec![one("His", Some("Tomas")), one("he", Some("Tomas"))]
        );
    }

    #[test]
    fn genders_come_from_the_card_its_titles_or_its_summary() {
        // Tomas is "he" by his summary, Iria "she" by her title "Miss Vell".
        let found =
            resolved("---\n---\n\nTomas looked at Iria, and her lamp went out. He swore.\n");
        assert_eq!(
            found,
            vec![one("her", Some("Iria Vell")), one("He", Some("Tomas"))]
        );
    }

    #[test]
    fn two_agreeing_names_an_unnamed_person_or_dialogue_resolve_nothing() {
        let found = resolved(
            "---\n---\n\nKael handed Tomas his knife. A man came in. He sat. \"He is late,\" Iria said.\n",
        );
        assert_eq!(found, vec![one("his", None), one("He", None)]);
    }

    #[test]
    fn him_is_never_the_subject_of_its_own_clause_and_a_leading_clause_looks_ahead() {
        let found = resolved(
            "---\n---\n\nKael came in. Tomas greeted him. When she saw the lamp, Iria laughed.\n",
        );
        assert_eq!(
            found,
            vec![
                one("him", Some("Kael Maren")),
                one("she", Some("Iria Vell"))
            ]
        );
    }

    #[test]
    fn the_point_of_view_character_is_the_focus_at_the_start_and_in_first_person() {
        let found =
            resolved("---\npov: Iria\n---\n\n# One\n\nShe climbed the wall. My lamp, I thought.\n");
        assert_eq!(
            found,
            vec![
                one("She", Some("Iria Vell")),
                one("My", Some("Iria Vell")),
                one("I", Some("Iria Vell"))
            ]
        );
    }

    /// The scene being typed in reads each sentence from the memo when its
    /// text, names, genders, point of view and focus are as they were: after
    /// every edit (a name, a pronoun's gender, a sentence or heading added
    /// or cut, the point of view, a card's gender) it resolves as a fresh
    /// reading does.
    #[test]
    fn a_scene_typed_in_resolves_its_pronouns_from_the_memo_as_afresh() {
        let mut closed = Workspace::new(Path::new("/nowhere"));
        let paths = closed.config().paths.clone();
        let scene_path = "Story/Scenes/SCN-typed.md";
        let card = |path: &str, text: &str| SourceFile::parse(path.into(), text.into(), &paths);
        closed.insert_files(vec![
            card("Compendium/Characters/CHAR-kael-maren.md", KAEL),
            card("Compendium/Characters/CHAR-tomas.md", TOMAS),
            card("Compendium/Characters/CHAR-iria-vell.md", IRIA),
        ]);
        let mut open = closed.clone();
        open.set_typing(Some(scene_path.into()));
        let sentences = [
            "Kael stood by the fire.",
            "His eyes were grey as he watched Tomas.",
            "When Iria came, her hands shook.",
            "She said nothing.",
            "He looked at her and she looked away.",
            "The man at the door coughed; he was cold.",
            "Tomas and Kael walked on.",
            "I saw him there.",
            "“He knows,” said Iria, and she turned.",
            "Then he laughed.",
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |below: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % below as u64) as usize
        };
        let mut body: Vec<String> = (0..12)
            .map(|at| sentences[at % sentences.len()].to_owned())
            .collect();
        let mut pov = "Kael";
        for step in 0..150 {
            match next(7) {
                0 => body.insert(
                    next(body.len() + 1),
                    sentences[next(sentences.len())].to_owned(),
                ),
                1 if body.len() > 1 => {
                    body.remove(next(body.len()));
                }
                2 => {
                    let at = next(body.len());
                    body[at] = body[at].replace("He ", "She ").replace(" he ", " she ");
                }
                3 => {
                    let at = next(body.len());
                    body[at] = body[at].replace("Kael", "Tomas").replace("Iria", "Kael");
                }
                4 => body.insert(next(body.len() + 1), "\n## Later\n".to_owned()),
                5 => pov = ["Kael", "Iria", "Tomas", "Nobody"][next(4)],
                _ => {
                    let gender = ["male", "female", "unknown"][next(3)];
                    let tomas =
                        TOMAS.replace("name: Tomas\n", &format!("name: Tomas\ngender: {gender}\n"));
                    for workspace in [&mut closed, &mut open] {
                        workspace.insert_file(card("Compendium/Characters/CHAR-tomas.md", &tomas));
                    }
                }
            }
            let mut text = format!("---\npov: {pov}\n---\n\n");
            for (at, sentence) in body.iter().enumerate() {
                text.push_str(sentence);
                text.push_str(if at % 3 == 2 { "\n\n" } else { " " });
            }
            for workspace in [&mut closed, &mut open] {
                workspace.insert_file(card(scene_path, &text));
            }
            let resolve = |workspace: &Workspace| {
                let file = workspace.file(scene_path).unwrap().clone();
                Referents::resolve(workspace, &file, &file.analyse_prose())
            };
            let fresh = resolve(&closed);
            assert!(
                fresh.pronouns.values().any(Option::is_some),
                "step {step}: {text}"
            );
            assert_eq!(resolve(&open), fresh, "step {step}: {text}");
        }
    }
}
