//! `attribute-mismatch`: the prose gives a character an `eyes` or `hair`
//! colour that contradicts their card ("Kael's blue eyes" when the card says
//! `eyes: grey`).
//!
//! Only colour words that describe the eyes or hair count: before the noun
//! ("blue eyes", "long black hair"), as a compound ("blue-eyed"), or as the
//! whole complement ("his eyes were blue."); "his hair was grey with salt
//! dust" is dust, not a colour. Colours are compared as families, so
//! "dark" hair agrees with black, "silver" with grey and "hazel" eyes with
//! green or brown.
//!
//! The owner must be certain: a possessive name ("Kael's"), a name right
//! beside a compound ("the blue-eyed Kael"), or a pronoun ("his", "her") in
//! narration that `referents` resolves, across sentences, to one character
//! whose gender agrees (ambiguous pronouns say nothing). Quick fix: use the
//! card's value.

use super::referents::Referents;
use super::{Code, Diagnostic, FileEdit, Fix, FixKind, LazyProse, Severity};
use crate::index::{CardKind, FilePath, Mention, SourceFile, Workspace};
use crate::prose::{self, Prose, Sentence, Token};
use crate::text::TextRange;

const BLACK: u16 = 1;
const BROWN: u16 = 1 << 1;
const BLOND: u16 = 1 << 2;
const RED: u16 = 1 << 3;
const GREY: u16 = 1 << 4;
const WHITE: u16 = 1 << 5;
const BLUE: u16 = 1 << 6;
const GREEN: u16 = 1 << 7;
const AMBER: u16 = 1 << 8;
const VIOLET: u16 = 1 << 9;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Attribute {
    Eyes,
    Hair,
}

impl Attribute {
    fn key(self) -> &'static str {
        match self {
            Attribute::Eyes => "eyes",
            Attribute::Hair => "hair",
        }
    }

    fn of_noun(word: &str) -> Option<Attribute> {
        match word {
            "eyes" | "eye" => Some(Attribute::Eyes),
            "hair" | "locks" | "curls" | "braid" | "braids" | "plait" | "plaits" | "mane" => {
                Some(Attribute::Hair)
            }
            _ => None,
        }
    }

    fn of_compound(word: &str) -> Option<(Attribute, &str)> {
        if let Some(colours) = word.strip_suffix("-eyed") {
            return Some((Attribute::Eyes, colours));
        }
        word.strip_suffix("-haired")
            .map(|colours| (Attribute::Hair, colours))
    }
}

/// The colour families a word names for an attribute, or 0.
fn colour(attribute: Attribute, word: &str) -> u16 {
    match attribute {
        Attribute::Eyes => match word {
            "blue" | "azure" | "sapphire" | "cerulean" => BLUE,
            "green" | "emerald" | "jade" => GREEN,
            "grey" | "gray" | "silver" | "silvery" | "steel" | "slate" => GREY,
            "brown" | "chocolate" => BROWN,
            "hazel" => GREEN | BROWN | AMBER,
            "amber" | "golden" | "gold" | "tawny" | "honey" => AMBER | BROWN,
            "black" | "dark" | "ebony" | "onyx" => BLACK | BROWN,
            "violet" | "purple" | "lavender" => VIOLET | BLUE,
            _ => 0,
        },
        Attribute::Hair => match word {
            "black" | "raven" | "jet" | "ebony" => BLACK,
            "dark" => BLACK | BROWN,
            "brown" | "brunette" | "mousy" | "mousey" | "chocolate" => BROWN,
            "chestnut" | "auburn" | "copper" | "coppery" | "russet" => RED | BROWN,
            "red" | "ginger" | "scarlet" => RED,
            "blond" | "blonde" | "fair" | "golden" | "gold" | "flaxen" | "yellow" | "straw" => {
                BLOND
            }
            "sandy" => BLOND | BROWN | RED,
            "grey" | "gray" | "grizzled" | "steel" | "silver" | "silvery" | "silvered" => {
                GREY | WHITE
            }
            "white" | "snowy" => WHITE | GREY,
            _ => 0,
        },
    }
}

/// The union of the families of every colour word in `text` ("blue-grey").
fn colours_in(attribute: Attribute, text: &str) -> u16 {
    text.split(|c: char| !c.is_alphabetic())
        .map(|word| colour(attribute, &word.to_lowercase()))
        .fold(0, |families, word| families | word)
}

/// The colour families `text` names for a card's `key` (`eyes` or `hair`),
/// and the first colour word in it; 0 and `None` for another key or no
/// colour. For readers outside this check (the knowledge base's decisions).
pub(crate) fn colour_families(key: &str, text: &str) -> (u16, Option<String>) {
    let attribute = match key {
        "eyes" => Attribute::Eyes,
        "hair" => Attribute::Hair,
        _ => return (0, None),
    };
    let first = text
        .split(|c: char| !c.is_alphabetic())
        .find(|word| colour(attribute, &word.to_lowercase()) != 0)
        .map(str::to_lowercase);
    (colours_in(attribute, text), first)
}

/// A colour given to someone's eyes or hair, before its owner is known.
struct Description {
    attribute: Attribute,
    colours: TextRange,
    families: u16,
    owner: Owner,
}

enum Owner {
    /// The word (a possessive name or a pronoun) before the described noun.
    Determiner(usize),
    /// A compound next to a name: the token of the compound.
    Beside(usize),
}

/// The attribute mismatches of a scene (`check_file` asks only of scenes).
pub(super) fn check(
    workspace: &Workspace,
    file: &SourceFile,
    lazy: &LazyProse,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let text = &*file.text;
    let referents = lazy.referents(workspace);
    let prose = lazy.get();
    let mentions = workspace.mentions(&file.path);
    let catalog = workspace.catalog();
    for sentence in &prose.sentences {
        let tokens = prose.sentence_tokens(sentence);
        if !tokens.iter().any(|token| {
            token.is_word() && {
                let word = token.text(text);
                Attribute::of_noun(word).is_some() || Attribute::of_compound(word).is_some()
            }
        }) {
            continue;
        }
        for description in descriptions(text, prose, sentence) {
            let Some(card_path) = owner(workspace, file, mentions, prose, referents, &description)
            else {
                continue;
            };
            let Some(card) = catalog.card(&card_path).and_then(|file| file.card()) else {
                continue;
            };
            let Some(value) = card.attribute(description.attribute.key()) else {
                continue;
            };
            let canon = colours_in(description.attribute, &value.text);
            if canon == 0 || canon & description.families != 0 {
                continue;
            }
            let key = description.attribute.key();
            let written = description.colours.slice(text);
            let name = card.display_name();
            diagnostics.push(
                Diagnostic::new(
                    file,
                    description.colours,
                    Severity::Warning,
                    Code::AttributeMismatch,
                    format!(
                        "{name}'s {key} {verb} {} on the card, but {written} here",
                        value.text,
                        verb = if key == "hair" { "is" } else { "are" },
                    ),
                )
                .with_related(
                    &card_path,
                    value.range,
                    format!("{name}'s card: {key}: {}", value.text),
                )
                .with_fix(Fix {
                    title: format!("Use the card's value: “{}”", value.text),
                    edits: vec![FileEdit {
                        path: file.path.clone(),
                        range: description.colours,
                        new_text: value.text.clone(),
                    }],
                    kind: FixKind::Correction,
                }),
            );
        }
    }
}

/// Every eye or hair colour described in a sentence.
fn descriptions(text: &str, prose: &Prose, sentence: &Sentence) -> Vec<Description> {
    let start = sentence.tokens.start;
    let tokens = prose.sentence_tokens(sentence);
    let word = |index: usize| -> Option<String> {
        let token = tokens.get(index)?;
        token.is_word().then(|| token.text(text).to_lowercase())
    };
    let mut found = Vec::new();
    for (index, token) in tokens.iter().enumerate() {
        if !token.is_word() {
            continue;
        }
        let lower = crate::prose::lowercase(token.text(text));
        if let Some((attribute, colours)) = Attribute::of_compound(&lower) {
            let families = colours_in(attribute, colours);
            if families != 0 {
                let range = TextRange::new(token.range.start, token.range.start + colours.len());
                found.push(Description {
                    attribute,
                    colours: range,
                    families,
                    owner: Owner::Beside(start + index),
                });
            }
            continue;
        }
        let Some(attribute) = Attribute::of_noun(&lower) else {
            continue;
        };
        // Walk back over colours and other modifiers to the determiner.
        let mut colour_tokens: Vec<usize> = Vec::new();
        let mut determiner = None;
        let mut modifiers = 0;
        let mut closed = false;
        let mut back = index;
        while back > 0 && index - back < 5 {
            back -= 1;
            let Some(before) = word(back) else { break };
            if is_determiner(&before, tokens[back].text(text)) {
                determiner = Some(back);
                break;
            }
            if colours_in(attribute, &before) != 0 {
                // Only the colours next to each other describe the noun.
                if !closed {
                    colour_tokens.push(back);
                }
            } else if before != "and" || colour_tokens.is_empty() {
                closed = !colour_tokens.is_empty();
                // "long black hair", "blue, tired eyes": at most two other words.
                modifiers += 1;
                if modifiers > 2 {
                    break;
                }
            }
        }
        let Some(determiner) = determiner else {
            continue;
        };
        if colour_tokens.is_empty() {
            // "his eyes were blue."
            colour_tokens = complement_colours(text, tokens, index, attribute);
        }
        if colour_tokens.is_empty() {
            continue;
        }
        let first = *colour_tokens.iter().min().expect("not empty");
        let last = *colour_tokens.iter().max().expect("not empty");
        let range = TextRange::new(tokens[first].range.start, tokens[last].range.end);
        let families = colour_tokens
            .iter()
            .map(|&index| colours_in(attribute, tokens[index].text(text)))
            .fold(0, |all, one| all | one);
        found.push(Description {
            attribute,
            colours: range,
            families,
            owner: Owner::Determiner(start + determiner),
        });
    }
    found
}

/// A possessive name or pronoun, or an article (which owns nothing we can name).
fn is_determiner(lower: &str, written: &str) -> bool {
    matches!(
        lower,
        "his" | "her" | "their" | "its" | "my" | "your" | "our" | "the" | "a" | "an" | "whose"
    ) || (prose::is_possessive(written) && prose::is_capitalised(written))
}

/// Colours that complete "eyes were …" up to the end of the clause.
fn complement_colours(
    text: &str,
    tokens: &[Token],
    noun: usize,
    attribute: Attribute,
) -> Vec<usize> {
    let word = |index: usize| -> Option<String> {
        let token = tokens.get(index)?;
        token.is_word().then(|| token.text(text).to_lowercase())
    };
    let Some(verb) = word(noun + 1) else {
        return Vec::new();
    };
    if !matches!(
        verb.as_str(),
        "was" | "were" | "is" | "are" | "looked" | "seemed"
    ) {
        return Vec::new();
    }
    let mut index = noun + 2;
    if word(index).is_some_and(|adverb| adverb.ends_with("ly") || adverb == "still") {
        index += 1;
    }
    let mut colours = Vec::new();
    while let Some(candidate) = word(index) {
        if colours_in(attribute, &candidate) != 0 {
            colours.push(index);
        } else if candidate == "and" && !colours.is_empty() {
            // "black and grey" goes on; "black and wet" ends at the "and".
            if word(index + 1).is_none_or(|next| colours_in(attribute, &next) == 0) {
                return colours;
            }
        } else {
            break;
        }
        index += 1;
    }
    // The clause must end there: "grey with salt dust" is not a colour.
    match word(index) {
        Some(next) if next != "and" && next != "but" => Vec::new(),
        _ => colours,
    }
}

/// The character a description certainly belongs to.
fn owner(
    workspace: &Workspace,
    file: &SourceFile,
    mentions: &[Mention],
    prose: &Prose,
    referents: &Referents,
    description: &Description,
) -> Option<FilePath> {
    let text = &*file.text;
    let catalog = workspace.catalog();
    let is_character = |path: &FilePath| {
        catalog
            .card(path)
            .and_then(|file| file.card())
            .is_some_and(|card| card.kind == CardKind::Character)
    };
    let mention_at = |token: &Token| {
        mentions.iter().find(|mention| {
            token.range.contains_range(mention.range) && is_character(&mention.card)
        })
    };
    match description.owner {
        Owner::Beside(index) => {
            // "the blue-eyed Kael" or "Kael, blue-eyed, …".
            let after = prose.tokens.get(index + 1).filter(|token| token.is_word());
            let before = prose.tokens[..index]
                .iter()
                .rev()
                .take(2)
                .find(|token| token.is_word());
            after
                .and_then(mention_at)
                .or_else(|| before.and_then(mention_at))
                .filter(|mention| !mention.possessive)
                .map(|mention| mention.card.clone())
        }
        Owner::Determiner(index) => {
            let token = &prose.tokens[index];
            let word = token.text(text);
            if prose::is_possessive(word) {
                let name_end = prose::without_possessive(text, token.range).end;
                return mentions
                    .iter()
                    .find(|mention| {
                        mention.possessive
                            && mention.range.end == name_end
                            && is_character(&mention.card)
                    })
                    .map(|mention| mention.card.clone());
            }
            referents.of_pronoun(index).cloned()
        }
    }
}
