//! What a decision, a card, the Story Bible or a promoted fact claims, in
//! the few forms the text says plainly enough to compare: a character's
//! eye or hair colour, life or death, and age; who the protagonist is;
//! which scenes a beat happens in; how many of a thing a world rule counts.
//! Two claims about the same subject disagree when their values cannot both
//! be true (colours of no shared family, scenes with none in common…).

use crate::checks::colour_families;
use crate::index::bible::BibleKind;
use crate::index::{CardKind, FilePath, LifeStatus, SourceFile, Workspace};
use crate::kb::Decision;
use crate::text::TextRange;

/// What a claim is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Subject {
    /// A character's `eyes` or `hair`.
    Colour(FilePath, &'static str),
    /// Any other field of a card's front matter (`rank`, `home`…), by key.
    Field(FilePath, String),
    Life(FilePath),
    Age(FilePath),
    Protagonist,
    /// A beat of the beat sheet, by its title.
    Beat(&'static str),
    /// How many of a thing (the noun, singular, lower case) a world rule
    /// (its name, normalised) counts.
    Count(String, String),
}

/// What a claim says of its subject.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Value {
    /// Colour families (see `checks::colour_families`) and the word said.
    Colour(u16, String),
    Dead(bool),
    Years(u32),
    Card(FilePath),
    Scenes(Vec<String>),
    /// The number, and the word that says it (`nine`, `9`).
    Number(u32, String),
    /// Words, compared lower case and without a leading article, and as
    /// they were written.
    Text(String, String),
}

impl Value {
    /// Whether two values of one subject can both be true.
    pub(super) fn agrees(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Colour(a, _), Value::Colour(b, _)) => a & b != 0,
            (Value::Scenes(a), Value::Scenes(b)) => a.iter().any(|id| b.contains(id)),
            (Value::Number(a, _), Value::Number(b, _)) => a == b,
            // "captain of the guard" agrees with "captain".
            (Value::Text(a, _), Value::Text(b, _)) => {
                a == b || contains_words(a, b) || contains_words(b, a)
            }
            (a, b) => a == b,
        }
    }

    /// As a message says it.
    pub(super) fn said(&self, workspace: &Workspace) -> String {
        match self {
            Value::Colour(_, word) | Value::Number(_, word) | Value::Text(_, word) => word.clone(),
            Value::Dead(true) => "dead".to_owned(),
            Value::Dead(false) => "alive".to_owned(),
            Value::Years(years) => years.to_string(),
            Value::Card(card) => card_name(workspace, card),
            Value::Scenes(ids) => ids.join(", "),
        }
    }
}

/// One claim: its subject and value, and where the text says it (the
/// range the other side's fix replaces, in that side's file).
#[derive(Clone, Debug)]
pub(super) struct Claim {
    pub subject: Subject,
    pub value: Value,
    pub range: TextRange,
}

/// A card's name, else its path.
pub(super) fn card_name(workspace: &Workspace, card: &FilePath) -> String {
    workspace.catalog().card_name(card)
}

/// Words that say a character dies.
const DEATH: &[&str] = &[
    "dies", "died", "dead", "killed", "drowned", "drowns", "slain",
];
/// Words that say a character lives.
const LIFE: &[&str] = &["alive", "survives", "survived", "lives"];
/// Categories whose decisions speak of a character's facts.
const FACTUAL: &[&str] = &["character", "continuity", "correction"];

/// A number written in digits or as a word up to twenty.
fn number(word: &str) -> Option<u32> {
    crate::text::number_word(word)
        .or_else(|| (word.len() <= 6).then(|| word.parse().ok()).flatten())
}

/// The words of `text`, lower case, with their ranges.
fn words(text: &str) -> Vec<(TextRange, String)> {
    let mut out = Vec::new();
    let mut start = None;
    for (at, c) in text.char_indices().chain([(text.len(), ' ')]) {
        let inside = c.is_alphanumeric() || c == '-' || c == '\'';
        match (start, inside) {
            (None, true) => start = Some(at),
            (Some(from), false) => {
                let raw = &text[from..at];
                let word = raw.trim_matches(['-', '\'']);
                if !word.is_empty() {
                    // The range is the word's, without the marks trimmed off.
                    let start = from + (raw.len() - raw.trim_start_matches(['-', '\'']).len());
                    out.push((
                        TextRange::new(start, start + word.len()),
                        word.to_lowercase(),
                    ));
                }
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// A noun as counts compare it: lower case, a plural's `s` dropped.
fn singular(noun: &str) -> String {
    let noun = noun.to_lowercase();
    noun.strip_suffix('s')
        .filter(|stem| stem.len() > 2)
        .map_or(noun.clone(), str::to_owned)
}

/// Each number followed by a noun in `text` ("nine stones"), the range
/// being the number's.
fn counts(text: &str) -> Vec<(String, u32, String, TextRange)> {
    let words = words(text);
    words
        .windows(2)
        .filter_map(|pair| {
            let n = number(&pair[0].1)?;
            let noun = &pair[1].1;
            (noun.chars().all(char::is_alphabetic) || noun.contains('-'))
                .then(|| (singular(noun), n, pair[0].1.clone(), pair[0].0))
        })
        .collect()
}

/// What `decision` claims, the ranges within its value.
pub(super) fn of_decision(workspace: &Workspace, decision: &Decision) -> Vec<Claim> {
    let catalog = workspace.catalog();
    let value = decision.value.to_lowercase();
    let mut claims = Vec::new();
    let whole = TextRange::new(0, decision.value.len());
    let character = FACTUAL
        .contains(&decision.category.as_str())
        .then(|| catalog.resolve_card(decision.key.trim(), &[CardKind::Character]))
        .flatten();
    if let Some(card) = character {
        let path = card.path.clone();
        let clauses: Vec<&str> = value
            .split(['.', ';', ',', '!', '?'])
            .flat_map(|sentence| sentence.split(" and "))
            .collect();
        for key in ["eyes", "hair"] {
            let noun = if key == "eyes" { "eye" } else { "hair" };
            let suffix = if key == "eyes" { "-eyed" } else { "-haired" };
            let found = clauses.iter().find_map(|clause| {
                let about = clause.split_whitespace().any(|word| {
                    let word = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '-');
                    word.starts_with(noun) || word.ends_with(suffix)
                });
                let (families, word) = colour_families(key, clause);
                (about && families != 0).then_some((families, word?))
            });
            if let Some((families, word)) = found {
                claims.push(Claim {
                    subject: Subject::Colour(path.clone(), key),
                    value: Value::Colour(families, word),
                    range: whole,
                });
            }
        }
        let said: Vec<(TextRange, String)> = words(&value);
        let (dies, lives) = life(&clauses);
        if dies || lives {
            claims.push(Claim {
                subject: Subject::Life(path.clone()),
                value: Value::Dead(dies),
                range: whole,
            });
        }
        if let Some(years) = age(&said) {
            claims.push(Claim {
                subject: Subject::Age(path.clone()),
                value: Value::Years(years),
                range: whole,
            });
        }
        claims.extend(fields(card, &decision.value));
    }
    let said = format!("{} {}", decision.key, decision.value);
    if let Some(card) = protagonist(workspace, &said) {
        claims.push(Claim {
            subject: Subject::Protagonist,
            value: Value::Card(card),
            range: whole,
        });
    }
    if let Some((beat, scenes)) = beat(&said, decision) {
        claims.push(Claim {
            subject: Subject::Beat(beat),
            value: Value::Scenes(scenes),
            range: whole,
        });
    }
    // A count only of a rule the decision names: its key is the rule's
    // name, or its text holds it.
    let key = normalise(&decision.key);
    let text = normalise(&said);
    for rule in rule_names(workspace) {
        if key == rule || whole_word(&text, &rule) {
            for (noun, n, word, range) in counts(&decision.value) {
                claims.push(Claim {
                    subject: Subject::Count(rule.clone(), noun),
                    value: Value::Number(n, word),
                    range,
                });
            }
        }
    }
    claims
}

/// Lower case, the words only, one space between.
fn normalise(text: &str) -> String {
    words(text)
        .into_iter()
        .map(|(_, word)| word)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The world rules' names, normalised.
fn rule_names(workspace: &Workspace) -> Vec<String> {
    workspace
        .catalog()
        .bible(BibleKind::WorldRules)
        .and_then(|file| {
            let bible = file.bible()?;
            Some(
                bible
                    .rule_names(&file.text)
                    .map(|name| normalise(&name.text))
                    .filter(|name| !name.is_empty())
                    .collect(),
            )
        })
        .unwrap_or_default()
}

/// Fields of a card's front matter compared as words; the others have
/// claims of their own (or are not facts of the story: grammar, lists).
const NOT_FIELDS: &[&str] = &[
    "eyes", "hair", "age", "gender", "sex", "pronouns", "born", "died", "carries", "travel",
    "summary", "words", "target", "id", "title",
];

/// The fields of `card` the decision's `value` gives: "his rank is
/// sergeant", "rank: sergeant", "home was Vel Harbour" (the key's words,
/// then is, was or a colon, then the value to the clause's end); a clause
/// with a negation says nothing.
fn fields(card: &SourceFile, value: &str) -> Vec<Claim> {
    let Some(front) = card.card() else {
        return Vec::new();
    };
    // ASCII lower case keeps every byte where it was.
    let lower = value.to_ascii_lowercase();
    let mut claims = Vec::new();
    for (key, _) in &front.attributes {
        if NOT_FIELDS.contains(&key.as_str()) {
            continue;
        }
        let name = key.replace(['_', '-'], " ").to_ascii_lowercase();
        for (at, _) in lower.match_indices(&name) {
            let before = lower[..at].chars().next_back();
            if before.is_some_and(char::is_alphanumeric) {
                continue;
            }
            let rest = &lower[at + name.len()..];
            let Some(skip) = [" is ", " was ", ": ", " = "]
                .iter()
                .find(|joint| rest.starts_with(*joint))
                .map(|joint| joint.len())
            else {
                continue;
            };
            let start = at + name.len() + skip;
            let end = lower[start..]
                .find(['.', ';', ',', '!', '?'])
                .map_or(lower.len(), |stop| start + stop);
            let said = value[start..end].trim();
            let clause_start = lower[..at]
                .rfind(['.', ';', ',', '!', '?'])
                .map_or(0, |p| p + 1);
            let negated = words(&lower[clause_start..end])
                .iter()
                .any(|(_, w)| w == "not" || w == "never" || w == "no" || w.ends_with("n't"));
            if said.is_empty() || negated {
                continue;
            }
            claims.push(Claim {
                subject: Subject::Field(card.path.clone(), key.clone()),
                value: Value::Text(comparable(said), said.to_owned()),
                range: TextRange::new(start, end),
            });
            break;
        }
    }
    claims
}

/// Words as fields compare them: lower case, no leading article.
fn comparable(text: &str) -> String {
    let words: Vec<String> = words(text).into_iter().map(|(_, word)| word).collect();
    let skip = usize::from(matches!(
        words.first().map(String::as_str),
        Some("a" | "an" | "the")
    ));
    words[skip.min(words.len())..].join(" ")
}

/// Whether `inner`'s words are in `outer` as a run of whole words.
fn contains_words(outer: &str, inner: &str) -> bool {
    !inner.is_empty() && whole_word(outer, inner)
}

/// An age said as "34 years old" or "aged 34".
fn age(words: &[(TextRange, String)]) -> Option<u32> {
    let aged = words.windows(2).find_map(|w| {
        (w[0].1 == "aged" || w[0].1 == "age")
            .then(|| number(&w[1].1))
            .flatten()
    });
    aged.or_else(|| {
        words.windows(3).find_map(|w| {
            ((w[1].1 == "years" || w[1].1 == "year") && w[2].1 == "old")
                .then(|| number(&w[0].1))
                .flatten()
        })
    })
}

/// Whether the clauses say the character dies, or lives: a clause with a
/// word of death (of life), no negation, and no one else's ("her mother
/// died": a possessive before the word makes it someone else's).
fn life(clauses: &[&str]) -> (bool, bool) {
    let says = |list: &[&str]| {
        clauses.iter().any(|clause| {
            let said = words(clause);
            let Some(at) = said.iter().position(|(_, w)| list.contains(&w.as_str())) else {
                return false;
            };
            let negated = said
                .iter()
                .any(|(_, w)| w == "not" || w == "never" || w == "no" || w.ends_with("n't"));
            let possessed = said[..at]
                .iter()
                .any(|(range, w)| w.ends_with("'s") || clause[range.end..].starts_with("’s"));
            !negated && !possessed
        })
    };
    let dies = says(DEATH);
    (dies, !dies && says(LIFE))
}

/// The character `text` makes the protagonist: it says "protagonist" and
/// names exactly one character, and no "not".
fn protagonist(workspace: &Workspace, text: &str) -> Option<FilePath> {
    let said = words(text);
    if !said.iter().any(|(_, w)| w == "protagonist")
        || said
            .iter()
            .any(|(_, w)| w == "not" || w.ends_with("n't") || w == "never")
    {
        return None;
    }
    let catalog = workspace.catalog();
    let mut named: Vec<FilePath> = catalog
        .matcher()
        .find_in(text)
        .into_iter()
        .filter(|card| {
            catalog
                .card(card)
                .and_then(|file| file.card())
                .is_some_and(|card| card.kind == CardKind::Character)
        })
        .collect();
    named.dedup();
    (named.len() == 1).then(|| named.remove(0))
}

/// The beat `text` places and the scenes it places it in: one beat named
/// (by its title or an alias, whole words, any case) and the scene ids
/// written (else the decision's scene, when its key is the beat).
fn beat(text: &str, decision: &Decision) -> Option<(&'static str, Vec<String>)> {
    let lower = text.to_lowercase();
    let mut beats = BibleKind::BeatSheet.parts().iter().filter(|part| {
        std::iter::once(part.title)
            .chain(part.aliases.iter().copied())
            .any(|name| whole_word(&lower, &name.to_lowercase()))
    });
    let part = beats.next()?;
    if beats.next().is_some() {
        return None;
    }
    let mut scenes: Vec<String> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
        .filter(|word| word.starts_with("SCN-"))
        .map(str::to_owned)
        .collect();
    if scenes.is_empty()
        && let Some(scene) = &decision.scene
        && whole_word(&decision.key.to_lowercase(), &part.title.to_lowercase())
    {
        scenes.push(scene.clone());
    }
    (!scenes.is_empty()).then_some((part.title, scenes))
}

/// Whether `name` is in `text` as whole words.
fn whole_word(text: &str, name: &str) -> bool {
    !name.is_empty()
        && text.match_indices(name).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + name.len()..].chars().next();
            !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
        })
}

/// What a character's card claims: its colours, life and age, each with
/// the range of the value in the card (the front matter's end where the
/// card says nothing of it).
pub(super) fn of_card(file: &SourceFile) -> Vec<Claim> {
    let Some(card) = file.card() else {
        return Vec::new();
    };
    if card.kind != CardKind::Character {
        return Vec::new();
    }
    let path = &file.path;
    let mut claims = Vec::new();
    for (key, value) in &card.attributes {
        match key.as_str() {
            "eyes" | "hair" => {
                let key = if key == "eyes" { "eyes" } else { "hair" };
                let (families, _) = colour_families(key, &value.text);
                if families != 0 {
                    claims.push(Claim {
                        subject: Subject::Colour(path.clone(), key),
                        value: Value::Colour(families, value.text.clone()),
                        range: value.range,
                    });
                }
            }
            "age" => {
                if let Ok(years) = value.text.trim().parse() {
                    claims.push(Claim {
                        subject: Subject::Age(path.clone()),
                        value: Value::Years(years),
                        range: value.range,
                    });
                }
            }
            key if !NOT_FIELDS.contains(&key) && !value.text.trim().is_empty() => {
                claims.push(Claim {
                    subject: Subject::Field(path.clone(), key.to_owned()),
                    value: Value::Text(comparable(&value.text), value.text.clone()),
                    range: value.range,
                });
            }
            _ => {}
        }
    }
    let status = file.front_matter.as_ref().and_then(|f| f.get("status"));
    let range = status.map_or_else(
        || {
            file.front_matter
                .as_ref()
                .map_or(TextRange::empty(0), |f| f.range)
        },
        |entry| entry.value.range,
    );
    match card.status {
        LifeStatus::Dead => claims.push(Claim {
            subject: Subject::Life(path.clone()),
            value: Value::Dead(true),
            range,
        }),
        LifeStatus::Alive => claims.push(Claim {
            subject: Subject::Life(path.clone()),
            value: Value::Dead(false),
            range,
        }),
        _ => {}
    }
    claims
}

/// What the Story Bible claims, each with its file: the protagonist
/// (`character:` of `protagonist.md`), each beat's scenes, each world
/// rule's counts.
pub(super) fn of_bible(workspace: &Workspace) -> Vec<(FilePath, Claim)> {
    let catalog = workspace.catalog();
    let mut claims = Vec::new();
    if let Some(file) = catalog.bible(BibleKind::Protagonist)
        && let Some(character) = file.bible().and_then(|bible| bible.character.as_ref())
        && let Some(card) = catalog.resolve_card(&character.text, &[CardKind::Character])
    {
        claims.push((
            file.path.clone(),
            Claim {
                subject: Subject::Protagonist,
                value: Value::Card(card.path.clone()),
                range: character.range,
            },
        ));
    }
    if let Some(file) = catalog.bible(BibleKind::BeatSheet)
        && let Some(bible) = file.bible()
    {
        for part in &bible.parts {
            let Some(section) = part.section.map(|at| &bible.sections[at]) else {
                continue;
            };
            let Some(first) = section.scene_ids.first() else {
                continue;
            };
            let scenes = section.scene_ids.iter().map(|id| id.text.clone()).collect();
            claims.push((
                file.path.clone(),
                Claim {
                    subject: Subject::Beat(part.spec.title),
                    value: Value::Scenes(scenes),
                    range: first.range,
                },
            ));
        }
    }
    if let Some(file) = catalog.bible(BibleKind::WorldRules)
        && let Some(bible) = file.bible()
        && let Some(section) = bible.section("fundamental_rules")
    {
        let names: Vec<crate::index::model::Spanned> = bible.rule_names(&file.text).collect();
        for item in &section.items {
            let Some(name) = names.iter().find(|name| {
                item.range.start <= name.range.start && name.range.end <= item.range.end
            }) else {
                continue;
            };
            let rule = normalise(&name.text);
            let text = item.range.slice(&file.text);
            for (noun, n, word, range) in counts(text) {
                let range =
                    TextRange::new(item.range.start + range.start, item.range.start + range.end);
                claims.push((
                    file.path.clone(),
                    Claim {
                        subject: Subject::Count(rule.clone(), noun),
                        value: Value::Number(n, word),
                        range,
                    },
                ));
            }
        }
    }
    claims
}
