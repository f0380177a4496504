//! Who speaks each paragraph of dialogue, precision first: a line the
//! reading is not sure of goes to nobody, since the checks act on it.
//!
//! - **Attribution**: a name, "he"/"she" or "I" beside a verb of speech in
//!   any of its forms (`"…," Kael said`, `said Kael`, `Kael asked, "…"`,
//!   `replied he`). A pronoun goes to the one agreeing character named as a
//!   subject earlier in its paragraph, else to the one of the exchange's
//!   two speakers it agrees with, else to the one the paragraph before
//!   named; "I" is the scene's point of view. "his wife", "his lady" or
//!   "her husband" in the speaker's place is the spouse by the period's
//!   titles: "his" read as a pronoun is (else the one the quotation names),
//!   and Mr. Bennet's wife is the card "Mrs. Bennet". A verb of speech whose
//!   speaker the reading cannot name ("cried a young Lucas") ends the
//!   exchange rather than let the turns guess.
//! - **Beat**: the one character acting in the narration before the
//!   quotation (`Kael shrugged. "…"`); after it, the actor is usually the
//!   listener.
//! - **Addressed**: after a line that called someone there by name ("Mara,
//!   sit down"), an unattributed line is theirs.
//! - **Turn-taking**: in an exchange between two speakers, an unattributed
//!   line falls to the one who spoke before the last. A paragraph of
//!   narration, a heading, or an attribution in a memory ends the exchange.
//!
//! Each line carries its conversation, so that a check can report a slip
//! once. `dead-character`, `presence`, `unknown-speaker`, `secret`, the
//! presence chart, `control-room speakers` and the editor's hints read the
//! speakers from here. Measured against third-party gold speakers with
//! `scripts/eval-speakers`.

use super::appearance::{Appearance, appearance, mention_tokens};
use super::speech;
use crate::index::gender::{Gender, pronoun_gender};
use crate::index::{CardKind, Catalog, FilePath, Mention, SourceFile, Workspace};
use crate::prose::{self, Prose, TokenKind, dictionary};
use crate::syntax::BlockKind;
use crate::text::TextRange;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Speaker {
    /// A character with a card.
    Card(FilePath),
    /// A capitalised word in a speaker's place that is no name, no known
    /// word and no near miss of a name: someone without a card.
    Unknown(TextRange),
    /// Nobody the reading can name: the checks act on no one here.
    Nobody,
}

/// How a line's speaker was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// A speech verb names the speaker: `"…," Kael said`, `said Kael`.
    Attributed,
    /// The one character acting in the paragraph's narration.
    Beat,
    /// The exchange's other speaker: the one who spoke before the last.
    TurnTaking,
    /// A pronoun in the speaker's place (`"…," he said`, `replied she`),
    /// given to the one character in the conversation it agrees with.
    Pronoun,
    /// "I" in the speaker's place: the point-of-view character.
    Narrator,
    /// Unattributed, after a line that called this character by name.
    Addressed,
    /// The same speech going on: the paragraph before left its quotation
    /// open (a long speech in several paragraphs).
    Continued,
    /// Not found (or a line said in a memory, not here and now).
    Unfound,
}

impl How {
    /// How the editor's hint says it was found, after the speaker's name
    /// ("— Darcy (by turn)"); nothing for an attribution.
    pub fn hint(self) -> Option<&'static str> {
        match self {
            How::Attributed => None,
            How::Beat => Some("by action"),
            How::TurnTaking => Some("by turn"),
            How::Pronoun => Some("by pronoun"),
            How::Narrator => Some("narrator"),
            How::Addressed => Some("addressed"),
            How::Continued => Some("continued"),
            How::Unfound => None,
        }
    }

    /// The name `control-room speakers` and the editor's hints give it.
    pub fn as_str(self) -> &'static str {
        match self {
            How::Attributed => "attributed",
            How::Beat => "beat",
            How::TurnTaking => "turn",
            How::Pronoun => "pronoun",
            How::Narrator => "narrator",
            How::Addressed => "addressed",
            How::Continued => "continued",
            How::Unfound => "none",
        }
    }
}

/// One paragraph of dialogue and who speaks it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// The paragraph's first quotation mark.
    pub quote: TextRange,
    /// The paragraph.
    pub paragraph: TextRange,
    /// Which conversation of the scene the line belongs to: lines whose
    /// turns follow one another share it (a scene break, narration or an
    /// unknown speaker starts another).
    pub conversation: usize,
    pub speaker: Speaker,
    pub how: How,
}

/// The speakers of a scene's dialogue, paragraph by paragraph.
pub(super) fn lines(workspace: &Workspace, file: &SourceFile, prose: &Prose) -> Vec<Line> {
    let text = &*file.text;
    let mentions = workspace.mentions(&file.path);
    let catalog = workspace.catalog();
    let names = catalog.name_words();
    let pov = file
        .scene()
        .and_then(|scene| scene.pov.as_ref())
        .and_then(|pov| catalog.resolve_card(&pov.text, &[CardKind::Character]))
        .map(|card| card.path.clone());
    let mut found = Vec::new();
    // The last two distinct speakers of the exchange, the latest last.
    let mut exchange: Vec<FilePath> = Vec::new();
    // The characters the last paragraph's narration named as subjects.
    // (Looking further back, three paragraphs or the whole scene's cast,
    // was measured on PDNC: each gains recall at a precision below 0.75.)
    let mut recent: Vec<FilePath> = Vec::new();
    // Whom the last line of dialogue called by name ("…, Mr. Bennet, …").
    let mut addressed: Option<FilePath> = None;
    // The speaker of the last paragraph, when it left its quotation open.
    let mut continues: Option<FilePath> = None;
    let mut conversation = 0;
    for block in &file.syntax.blocks {
        if !matches!(block.kind, BlockKind::Paragraph) {
            exchange.clear();
            recent.clear();
            addressed = None;
            continues = None;
            continue;
        }
        let tokens = prose.token_at(block.range.start)..prose.token_at(block.range.end);
        let in_block = mentions_in(mentions, block.range);
        let narrated = narrated_subjects(text, prose, &in_block);
        let Some(quote) = tokens.clone().find(|&at| prose.tokens[at].quoted) else {
            recent = narrated.iter().map(|(_, card)| card.clone()).collect();
            // Narration ends the exchange. (Letting a one-sentence
            // interruption keep it was measured on PDNC: +0.8 points of
            // recall for -1.5 of precision; so was keeping its speakers as
            // a pronoun's last resort: pronouns' precision 0.79 -> 0.68.)
            exchange.clear();
            addressed = None;
            continues = None;
            continue;
        };
        let line = match attributed(text, prose, &in_block, tokens.clone()) {
            Attribution::Speaker(card) => Some((Speaker::Card(card), How::Attributed)),
            Attribution::Pronoun(at, gender) => {
                let before: Vec<FilePath> = narrated
                    .iter()
                    .filter(|(start, _)| *start < at)
                    .map(|(_, card)| card.clone())
                    .collect();
                antecedent(workspace, [&before, &exchange, &recent], gender)
                    .map(|card| (Speaker::Card(card), How::Pronoun))
            }
            Attribution::FirstPerson => {
                pov.clone().map(|card| (Speaker::Card(card), How::Narrator))
            }
            Attribution::Spouse(at, gender) => {
                let context = Context {
                    narrated: &narrated,
                    recent: &recent,
                    exchange: &exchange,
                    in_block: &in_block,
                };
                spouse_speaker(prose, workspace, &context, at, gender)
                    .map(|card| (Speaker::Card(card), How::Attributed))
            }
            Attribution::Exempt => None,
            // Someone speaks whom no card names: a stranger, or nobody known.
            Attribution::Unresolved => unknown_speaker(text, prose, names, tokens.clone())
                .map(|word| (Speaker::Unknown(word), How::Attributed)),
            Attribution::None => unknown_speaker(text, prose, names, tokens.clone())
                .map(|word| (Speaker::Unknown(word), How::Attributed))
                .or_else(|| {
                    continues
                        .take()
                        .map(|card| (Speaker::Card(card), How::Continued))
                })
                .or_else(|| {
                    let opening = prose.tokens[quote].range.start;
                    let before: Vec<&Mention> = in_block
                        .iter()
                        .copied()
                        .filter(|mention| mention.range.end <= opening)
                        .collect();
                    beat(text, prose, &before).map(|card| (Speaker::Card(card), How::Beat))
                })
                .or_else(|| match (addressed.take(), exchange.as_slice()) {
                    (Some(called), [.., last]) if called != *last => {
                        Some((Speaker::Card(called), How::Addressed))
                    }
                    (_, [before, _last]) => Some((Speaker::Card(before.clone()), How::TurnTaking)),
                    _ => None,
                }),
        };
        let (speaker, how) = line.unwrap_or((Speaker::Nobody, How::Unfound));
        if exchange.is_empty() {
            conversation += 1;
        }
        match &speaker {
            Speaker::Card(card) => {
                if exchange.last() != Some(card) {
                    exchange.retain(|other| other != card);
                    exchange.push(card.clone());
                    if exchange.len() > 2 {
                        exchange.remove(0);
                    }
                }
            }
            Speaker::Unknown(_) | Speaker::Nobody => exchange.clear(),
        }
        // Called by name, and there to answer: one of the conversation, or
        // named in its narration just before. ("Fagin," said Mr. Brownlow,
        // "what of him?" calls nobody.)
        let present = |card: &FilePath| {
            exchange.contains(card)
                || narrated.iter().any(|(_, named)| named == card)
                || recent.contains(card)
        };
        addressed = in_block
            .iter()
            .find(|mention| is_vocative(text, prose, mention))
            .map(|mention| mention.card.clone())
            .filter(|card| !matches!(&speaker, Speaker::Card(speaking) if speaking == card))
            .filter(present);
        let left_open = tokens
            .clone()
            .rev()
            .map(|at| prose.tokens[at].kind)
            .find(|kind| matches!(kind, TokenKind::OpenQuote | TokenKind::CloseQuote))
            == Some(TokenKind::OpenQuote);
        continues = match &speaker {
            Speaker::Card(card) if left_open => Some(card.clone()),
            _ => None,
        };
        found.push(Line {
            quote: prose.tokens[quote].range,
            paragraph: block.range,
            conversation,
            speaker,
            how,
        });
        recent = narrated.iter().map(|(_, card)| card.clone()).collect();
    }
    found
}

/// The mentions within `range`; `mentions` are in text order, so the
/// range's are one run of them.
fn mentions_in(mentions: &[Mention], range: TextRange) -> Vec<&Mention> {
    let from = mentions.partition_point(|mention| mention.range.start < range.start);
    let to = mentions.partition_point(|mention| mention.range.start < range.end);
    mentions[from..to.max(from)]
        .iter()
        .filter(|mention| range.contains_range(mention.range))
        .collect()
}

/// The characters a paragraph's narration names as a subject, in order,
/// with where each is named.
fn narrated_subjects(text: &str, prose: &Prose, mentions: &[&Mention]) -> Vec<(usize, FilePath)> {
    mentions
        .iter()
        .filter(|mention| {
            // A name inside a word ("SCN-Kael") is no subject.
            mention_tokens(prose, mention.range)
                .is_some_and(|(first, _)| !prose.tokens[first].quoted)
                && is_subject(text, prose, mention)
        })
        .map(|mention| (mention.range.start, mention.card.clone()))
        .collect()
}

/// Who a pronoun of `gender` in a speaker's place means: the one agreeing
/// character named as a subject earlier in its paragraph; else the one of
/// the exchange's two speakers who agrees; else the one agreeing character
/// the paragraph before named. The first group with an agreeing character
/// decides: two agreeing there, and nobody is certain. A character
/// whose gender is not known agrees with either pronoun.
fn antecedent(workspace: &Workspace, groups: [&[FilePath]; 3], gender: Gender) -> Option<FilePath> {
    for group in groups {
        let mut agreeing: Vec<&FilePath> = group
            .iter()
            .filter(|card| {
                workspace
                    .gender(card)
                    .is_some_and(|known| known.is_none_or(|known| known == gender))
            })
            .collect();
        agreeing.sort();
        agreeing.dedup();
        match agreeing.as_slice() {
            [] => continue,
            [one] => return Some((*one).clone()),
            _ => return None,
        }
    }
    None
}

/// What the reading knows around a line: the narration's subjects in its
/// paragraph, the last paragraph's, the exchange's speakers, the mentions.
struct Context<'a> {
    narrated: &'a [(usize, FilePath)],
    recent: &'a [FilePath],
    exchange: &'a [FilePath],
    in_block: &'a [&'a Mention],
}

/// Who "his wife" at token `at` is, the spouse being of `gender`: "his" is
/// whom the narration last made a subject, else whom the line's quotation
/// names ("“My dear Mr. Bennet,” said his lady"); the spouse is theirs by
/// title ([`spouse`]).
fn spouse_speaker(
    prose: &Prose,
    workspace: &Workspace,
    context: &Context<'_>,
    at: usize,
    gender: Gender,
) -> Option<FilePath> {
    let start = prose.tokens[at].range.start;
    let before: Vec<FilePath> = context
        .narrated
        .iter()
        .filter(|(begins, _)| *begins < start)
        .map(|(_, card)| card.clone())
        .collect();
    let called: Vec<FilePath> = context
        .in_block
        .iter()
        .filter(|mention| {
            mention_tokens(prose, mention.range)
                .is_some_and(|(first, _)| prose.tokens[first].quoted)
        })
        .map(|mention| mention.card.clone())
        .collect();
    let partner = gender.other();
    antecedent(
        workspace,
        [&before, context.recent, context.exchange],
        partner,
    )
    .or_else(|| antecedent(workspace, [&called, &[], &[]], partner))
    .and_then(|partner| spouse(workspace.catalog(), &partner, gender))
}

/// Words for a spouse after "his" or "her", with the gender of the spouse.
const SPOUSES: &[(&str, Gender)] = &[
    ("wife", Gender::She),
    ("lady", Gender::She),
    ("husband", Gender::He),
];

/// The spouse's gender when the tokens at `at` are "his wife", "her
/// husband" (the possessive agreeing with the partner: "his lady").
fn spouse_of(text: &str, prose: &Prose, at: usize) -> Option<Gender> {
    let possessive = prose.tokens.get(at)?;
    let noun = prose.tokens.get(at + 1)?;
    if !possessive.is_word() || !noun.is_word() || possessive.quoted {
        return None;
    }
    let partner = match &*crate::prose::lowercase(possessive.text(text)) {
        "his" => Gender::He,
        "her" => Gender::She,
        _ => return None,
    };
    let noun = crate::prose::lowercase(noun.text(text));
    SPOUSES
        .iter()
        .find(|(word, gender)| *word == noun && *gender == partner.other())
        .map(|(_, gender)| *gender)
}

/// The spouse of `partner` by the courtesy titles of the period: "Mr.
/// Bennet"'s wife is the card named "Mrs. Bennet", and hers is "Mr.
/// Bennet". A partner whose name has no such title has no spouse known.
fn spouse(catalog: &Catalog, partner: &FilePath, gender: Gender) -> Option<FilePath> {
    let name = catalog.card(partner)?.card()?.display_name();
    let (title, rest) = name.split_once(' ')?;
    let spouse_titles: &[&str] = match (title.trim_end_matches('.'), gender) {
        ("Mr", Gender::She) => &["Mrs.", "Mrs"],
        ("Mrs", Gender::He) => &["Mr.", "Mr"],
        _ => return None,
    };
    spouse_titles.iter().find_map(|title| {
        catalog
            .resolve_card(&format!("{title} {rest}"), &[CardKind::Character])
            .map(|card| card.path.clone())
    })
}

/// Whether a name in a quotation calls someone: set apart by punctuation
/// on both sides (`"Yes, Mr. Bennet, I do."`, `"Lizzy!"`).
fn is_vocative(text: &str, prose: &Prose, mention: &Mention) -> bool {
    let start = mention
        .title()
        .map_or(mention.range.start, |title| title.start);
    let Some((first, last)) = mention_tokens(prose, mention.range) else {
        return false;
    };
    let first = prose.token_at(start).min(first);
    if !prose.tokens[first].quoted || mention.possessive {
        return false;
    }
    let apart = |token: Option<&crate::prose::Token>| {
        token.is_none_or(|token| !token.is_word() && !token.is_punct(text, '-'))
    };
    apart(first.checked_sub(1).map(|at| &prose.tokens[at])) && apart(prose.tokens.get(last + 1))
}

/// Words after which a name still begins its clause as its subject.
const CLAUSE_OPENERS: &[&str] = &[
    "and",
    "but",
    "then",
    "when",
    "while",
    "as",
    "so",
    "till",
    "until",
    "before",
    "after",
    "though",
    "although",
    "yet",
    "now",
    "where",
    "whereupon",
    "once",
];

/// Whether a mention is its clause's subject, as far as the words before it
/// tell: first in its sentence, after a punctuation mark or a closing
/// quotation mark, or after a word that opens a clause; never a possessive.
fn is_subject(text: &str, prose: &Prose, mention: &Mention) -> bool {
    if mention.possessive {
        return false;
    }
    let start = mention
        .title()
        .map_or(mention.range.start, |title| title.start);
    let first = prose.token_at(start);
    let Some(before) = first.checked_sub(1) else {
        return true;
    };
    if prose
        .sentence_of(first)
        .is_some_and(|sentence| sentence.tokens.start == first)
    {
        return true;
    }
    let token = &prose.tokens[before];
    if !token.is_word() {
        return true;
    }
    CLAUSE_OPENERS.contains(&&*crate::prose::lowercase(token.text(text)))
}

enum Attribution {
    Speaker(FilePath),
    /// "he" or "she" in the speaker's place, where it starts.
    Pronoun(usize, Gender),
    /// "I" in the speaker's place.
    FirstPerson,
    /// "his wife", "her husband" in the speaker's place: the possessive's
    /// token and the gender of the one who speaks.
    Spouse(usize, Gender),
    /// A verb of speech beside the quotation whose speaker is no name the
    /// reading knows ("cried a young Lucas", "her sister added"): someone
    /// speaks, and the exchange's turns do not say who.
    Unresolved,
    /// An attribution in a memory or a hypothesis: nobody speaks here and now.
    Exempt,
    None,
}

/// The attribution of the paragraph's dialogue: the first name, pronoun or
/// "I" outside the quotation marks that stands beside a verb of speech.
fn attributed(
    text: &str,
    prose: &Prose,
    mentions: &[&Mention],
    tokens: std::ops::Range<usize>,
) -> Attribution {
    let mut mentions = mentions.iter().peekable();
    for at in tokens.clone() {
        let token = &prose.tokens[at];
        if let Some(mention) = mentions.next_if(|mention| mention.range.start <= token.range.start)
        {
            let Some((first, last)) = mention_tokens(prose, mention.range) else {
                continue;
            };
            if prose.tokens[first].quoted || !speech::is_speaker(text, prose, first, last) {
                continue;
            }
            return match appearance(text, prose, mention.range, mention.possessive) {
                Some(Appearance::Speaks) => Attribution::Speaker(mention.card.clone()),
                _ => Attribution::Exempt,
            };
        }
        if token.quoted || !token.is_word() {
            continue;
        }
        let word = token.text(text);
        if let Some(gender) = spouse_of(text, prose, at)
            && speech::is_speaker(text, prose, at, at + 1)
        {
            return Attribution::Spouse(at, gender);
        }
        let person = match word {
            "I" => Attribution::FirstPerson,
            _ => match pronoun_gender(&crate::prose::lowercase(word)) {
                Some(gender) if matches!(word, "he" | "she" | "He" | "She") => {
                    Attribution::Pronoun(token.range.start, gender)
                }
                _ => continue,
            },
        };
        if speech::is_speaker(text, prose, at, at) {
            return person;
        }
    }
    if has_speech_tag(text, prose, tokens) {
        return Attribution::Unresolved;
    }
    Attribution::None
}

/// Whether a verb of speech follows a closing quotation mark within a few
/// words, with no punctuation between (`"…," her sister added`, `"…,"
/// cried a young Lucas`).
fn has_speech_tag(text: &str, prose: &Prose, tokens: std::ops::Range<usize>) -> bool {
    tokens.clone().any(|at| {
        prose.tokens[at].kind == TokenKind::CloseQuote
            && prose.tokens[at + 1..tokens.end]
                .iter()
                .skip_while(|token| token.is_punct(text, ','))
                .take(4)
                .take_while(|token| token.is_word())
                .any(|token| crate::prose::verbs::is_speech_verb(token.text(text)))
    })
}

/// The character acting in the paragraph's narration: `Kael shrugged. "…"`.
fn beat(text: &str, prose: &Prose, mentions: &[&Mention]) -> Option<FilePath> {
    let mut acting = mentions.iter().filter(|mention| {
        matches!(
            appearance(text, prose, mention.range, mention.possessive),
            Some(Appearance::Acts(_))
        )
    });
    let first = acting.next()?;
    // Two characters acting: the line is not certainly either's.
    acting
        .all(|other| other.card == first.card)
        .then(|| first.card.clone())
}

/// A capitalised word in a speaker's place (`"…," Maud said`, `said Maud`)
/// that no card names, is no common word in lower case ("Mother", "Wren")
/// and is near no name.
fn unknown_speaker(
    text: &str,
    prose: &Prose,
    names: &crate::index::names::NameWords,
    tokens: std::ops::Range<usize>,
) -> Option<TextRange> {
    tokens.into_iter().find_map(|at| {
        let token = &prose.tokens[at];
        if !token.is_word() || token.quoted {
            return None;
        }
        let word = prose::strip_possessive(token.text(text));
        let unknown = prose::is_capitalised(word)
            && !word.contains(['-', '\'', '’'])
            && !names.is_known(word)
            && !dictionary::is_common_word(word)
            && names.nearest(word).is_empty();
        // "said Captain Rhys": a title before the name belongs to it.
        let titled = at
            .checked_sub(1)
            .filter(|&before| {
                let title = &prose.tokens[before];
                title.is_word()
                    && prose::is_capitalised(title.text(text))
                    && names.is_known(title.text(text))
            })
            .unwrap_or(at);
        (unknown && speech::is_speaker(text, prose, titled, at))
            .then(|| TextRange::new(token.range.start, token.range.start + word.len()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(root: &std::path::Path, name: &str, gender: &str) {
        let path = root.join(format!(
            "Compendium/Characters/CHAR-{}.md",
            name.to_lowercase().replace(['.', ' '], "-")
        ));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            path,
            format!("---\ntype: character\nname: {name}\ngender: {gender}\n---\n\n# {name}\n"),
        )
        .unwrap();
    }

    /// The speaker and how, paragraph by paragraph, of one scene told by
    /// Nell among Anna, Mara, Tom, and Mr. and Mrs. Grey.
    fn read(body: &str) -> Vec<(String, &'static str)> {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (name, gender) in [
            ("Anna", "female"),
            ("Mara", "female"),
            ("Tom", "male"),
            ("Nell", "female"),
            ("Mr. Grey", "male"),
            ("Mrs. Grey", "female"),
        ] {
            card(root, name, gender);
        }
        let scene = "Story/Scenes/SCN-kitchen.md";
        std::fs::create_dir_all(root.join("Story/Scenes")).unwrap();
        std::fs::write(
            root.join(scene),
            format!("---\ntitle: Kitchen\npov: Nell\n---\n\n{body}"),
        )
        .unwrap();
        let workspace = Workspace::load(root);
        let file = workspace.file(scene).unwrap();
        crate::checks::speaker_lines(&workspace, scene)
            .into_iter()
            .map(|line| {
                let who = match line.speaker {
                    Speaker::Card(card) => workspace
                        .catalog()
                        .card(&card)
                        .and_then(|file| file.card())
                        .unwrap()
                        .display_name()
                        .to_owned(),
                    Speaker::Unknown(word) => format!("?{}", word.slice(&file.text)),
                    Speaker::Nobody => "-".to_owned(),
                };
                (who, line.how.as_str())
            })
            .collect()
    }

    fn lines(expected: &[(&str, &'static str)]) -> Vec<(String, &'static str)> {
        expected
            .iter()
            .map(|(who, how)| ((*who).to_owned(), *how))
            .collect()
    }

    #[test]
    fn a_pronoun_in_the_speakers_place_goes_to_the_one_character_it_agrees_with() {
        let found = read(
            "Anna put down the cup. \"Where were you?\" she asked.\n\n\
             \"Out,\" said Tom.\n\n\
             \"You are late,\" replied she.\n\n\
             \"I know,\" he said.\n",
        );
        assert_eq!(
            found,
            lines(&[
                ("Anna", "pronoun"),
                ("Tom", "attributed"),
                ("Anna", "pronoun"),
                ("Tom", "pronoun")
            ])
        );
    }

    #[test]
    fn a_name_inside_the_last_word_of_a_scene_no_longer_panics() {
        // The fuzz case was a scene of the one word "SCN-Kael": the name
        // inside a hyphenated word was looked for in the token after it.
        let found = read("\"Come in,\" said Tom.\n\nThey had sent for Mara-Anna");
        assert_eq!(found, lines(&[("Tom", "attributed")]));
    }

    #[test]
    fn his_wife_in_the_speakers_place_is_the_card_of_his_name_with_her_title() {
        let found = read(
            "\"My dear Mr. Grey,\" said his lady to him one day, \"the house is let.\"\n\n\
             Mr. Grey put down his paper.\n\n\
             \"Is it?\" cried his wife. \"And you say nothing!\"\n\n\
             Mrs. Grey looked at Tom.\n\n\
             \"Tom,\" said her husband, \"has no wife.\"\n",
        );
        assert_eq!(
            found,
            lines(&[
                ("Mrs. Grey", "attributed"),
                ("Mrs. Grey", "attributed"),
                ("Mr. Grey", "attributed")
            ])
        );
    }

    #[test]
    fn a_pronoun_two_characters_agree_with_goes_to_nobody() {
        let found = read(
            "\"Where were you?\" Anna asked.\n\n\
             \"Out,\" said Mara.\n\n\
             \"You are late,\" said she.\n",
        );
        assert_eq!(
            found,
            lines(&[
                ("Anna", "attributed"),
                ("Mara", "attributed"),
                ("-", "none")
            ])
        );
    }

    #[test]
    fn i_in_the_speakers_place_is_the_point_of_view() {
        let found =
            read("\"Where were you?\" Anna asked.\n\n\"Out,\" I said.\n\n\"Late again.\"\n");
        assert_eq!(
            found,
            lines(&[
                ("Anna", "attributed"),
                ("Nell", "narrator"),
                ("Anna", "turn")
            ])
        );
    }

    #[test]
    fn a_line_after_one_that_calls_a_character_by_name_is_theirs() {
        let found = read(
            "Mara stood by the door.\n\n\
             \"Mara, sit down,\" said Anna.\n\n\
             \"No.\"\n",
        );
        assert_eq!(
            found,
            lines(&[("Anna", "attributed"), ("Mara", "addressed")])
        );
        // A name called who is not there ("Tom, of all people!") gives the
        // next line to nobody.
        let found = read(
            "Mara stood by the door.\n\n\
             \"Tom, of all people,\" said Anna.\n\n\
             \"No.\"\n",
        );
        assert_eq!(found, lines(&[("Anna", "attributed"), ("-", "none")]));
    }

    #[test]
    fn an_attribution_to_someone_unnamed_ends_the_turns() {
        let found = read(
            "\"Where were you?\" Anna asked.\n\n\
             \"Out,\" said Tom.\n\n\
             \"Who is there?\" cried a stranger at the door.\n\n\
             \"Nobody.\"\n",
        );
        assert_eq!(
            found,
            lines(&[
                ("Anna", "attributed"),
                ("Tom", "attributed"),
                ("-", "none"),
                ("-", "none")
            ])
        );
    }

    #[test]
    fn a_speech_whose_quotation_stays_open_goes_on_in_the_next_paragraph() {
        let found = read(
            "\"Where were you?\" Tom asked.\n\n\
             \"It was long ago,\" said Anna. \"We were young.\n\n\
             \"And then the war came.\"\n\n\
             \"I know.\"\n",
        );
        assert_eq!(
            found,
            lines(&[
                ("Tom", "attributed"),
                ("Anna", "attributed"),
                ("Anna", "continued"),
                ("Tom", "turn"),
            ])
        );
    }

    #[test]
    fn an_action_after_the_quotation_is_no_beat() {
        let found = read("\"Yes.\" Tom shook his head.\n\nTom shrugged. \"No.\"\n");
        assert_eq!(found, lines(&[("-", "none"), ("Tom", "beat")]));
    }
}
