//! What a scene's `tracks:` front matter says happens to objects and wounds.
//!
//! ```yaml
//! tracks:
//!   - object: the brass key     # an object…
//!     holder: Kael              # …held by Kael from this scene on (or `given_to:`)
//!   - object: the salt-glass
//!     lost: true                # lost here: nobody holds it (`destroyed: true` too)
//!   - object: the lantern
//!     at: The Salt Fortress     # left at a place: nobody holds it
//!   - wound: left arm           # a wound…
//!     character: Kael           # …to Kael's left arm, here
//!     heals: 3                  # healed three scenes later (`healed: true` ends it early)
//!   - secret: Tomas is the heir # a secret…
//!     words: [heir]             # …that these words give away…
//!     known_by: [Iria]          # …known from here by Iria (a later scene's
//!                               # `known_by: [Kael]` is where Kael learns it)
//! ```
//!
//! A character card's `carries: [the brass key]` says who holds an object
//! before any scene tracks it. An entry that cannot be read is a problem on
//! the file (`front-matter`), and the others still count.

use super::fields::{FieldProblem, Spanned};
use crate::syntax::{FrontMatter, YamlKind, YamlValue};
use crate::text::TextRange;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Tracked {
    Object {
        name: Spanned,
        /// Who holds it from this scene on (`holder:` or `given_to:`).
        holder: Option<Spanned>,
        /// Lost, destroyed or left somewhere: nobody holds it.
        gone: Option<Gone>,
    },
    Wound {
        /// The part wounded, as written ("left arm").
        part: Spanned,
        character: Spanned,
        /// Healed this many scenes later, in outline order.
        heals: Option<u32>,
        /// The wound is healed in this scene.
        healed: bool,
    },
    Secret {
        /// The secret as the writer names it ("Tomas is the heir").
        name: Spanned,
        /// The words that give it away when spoken ("heir"); given where the
        /// secret is introduced, and may be added to later.
        words: Vec<String>,
        /// Who knows it from this scene on.
        known_by: Vec<Spanned>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Gone {
    Lost,
    Destroyed,
    LeftAt(String),
}

/// One entry of `tracks:`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Track {
    pub tracked: Tracked,
    /// The entry in the front matter.
    pub range: TextRange,
    /// Written in `learns:` (a secret someone learns here), not in `tracks:`.
    pub learns: bool,
}

/// Reads `tracks:`; entries it cannot use become problems.
pub fn read_tracks(
    text: &str,
    front: Option<&FrontMatter>,
    problems: &mut Vec<FieldProblem>,
) -> Vec<Track> {
    let Some(entry) = front.and_then(|front| front.get("tracks")) else {
        return Vec::new();
    };
    let items = match &entry.value.kind {
        YamlKind::Sequence(items) => items,
        YamlKind::Null => return Vec::new(),
        _ => {
            problems.push(FieldProblem {
                range: entry.value.range,
                message: "`tracks` should be a list of objects and wounds, like `- object: the brass key` with `holder: Kael`".into(),
            });
            return Vec::new();
        }
    };
    let mut tracks = Vec::new();
    for item in items {
        match read_track(text, item) {
            Ok(track) => tracks.push(track),
            Err(problem) => problems.push(FieldProblem {
                range: entry_range(text, item),
                message: problem.to_string(),
            }),
        }
    }
    tracks
}

/// Why an entry of `tracks:` cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
enum TrackProblem {
    #[error("a `tracks` entry should be a mapping: `- object: …` or `- wound: …`")]
    NotAMapping,
    #[error(
        "`{0}` is not a `tracks` field: objects take holder, given_to, lost, destroyed, at; wounds take character, heals, healed; secrets take words, known_by"
    )]
    UnknownField(String),
    #[error("the wound “{0}” needs `character:`, whose it is")]
    WoundWithoutCharacter(String),
    #[error("`heals: {0}` should be a number of scenes")]
    HealsNotANumber(String),
    #[error("a `tracks` entry needs `object:`, `wound:` or `secret:`")]
    NothingTracked,
}

fn read_track(text: &str, item: &YamlValue) -> Result<Track, TrackProblem> {
    let YamlKind::Mapping(fields) = &item.kind else {
        return Err(TrackProblem::NotAMapping);
    };
    let scalar = |key: &str| -> Option<Spanned> {
        let (_, value) = fields.iter().find(|(name, _)| name == key)?;
        let written = value.as_scalar_text(text)?.trim();
        (!written.is_empty()).then(|| Spanned {
            text: written.to_owned(),
            range: value.range,
        })
    };
    let flag = |key: &str| {
        fields
            .iter()
            .any(|(name, value)| name == key && value.kind == YamlKind::Bool(true))
    };
    for (key, _) in fields {
        if !matches!(
            key.as_str(),
            "object"
                | "holder"
                | "given_to"
                | "lost"
                | "destroyed"
                | "at"
                | "wound"
                | "character"
                | "heals"
                | "healed"
                | "secret"
                | "words"
                | "known_by"
        ) {
            return Err(TrackProblem::UnknownField(key.clone()));
        }
    }
    let tracked = if let Some(name) = scalar("object") {
        let gone = if flag("destroyed") {
            Some(Gone::Destroyed)
        } else if flag("lost") {
            Some(Gone::Lost)
        } else {
            scalar("at").map(|place| Gone::LeftAt(place.text))
        };
        Tracked::Object {
            name,
            holder: scalar("holder").or_else(|| scalar("given_to")),
            gone,
        }
    } else if let Some(part) = scalar("wound") {
        let character = scalar("character")
            .ok_or_else(|| TrackProblem::WoundWithoutCharacter(part.text.clone()))?;
        let heals = match scalar("heals") {
            Some(heals) => Some(
                heals
                    .text
                    .parse::<u32>()
                    .map_err(|_| TrackProblem::HealsNotANumber(heals.text.clone()))?,
            ),
            None => None,
        };
        Tracked::Wound {
            part,
            character,
            heals,
            healed: flag("healed"),
        }
    } else if let Some(name) = scalar("secret") {
        let list = |key: &str| -> Vec<Spanned> {
            let Some((_, value)) = fields.iter().find(|(field, _)| field == key) else {
                return Vec::new();
            };
            match &value.kind {
                YamlKind::Sequence(items) => items
                    .iter()
                    .filter_map(|item| {
                        let written = item.as_scalar_text(text)?.trim();
                        (!written.is_empty()).then(|| Spanned {
                            text: written.to_owned(),
                            range: item.range,
                        })
                    })
                    .collect(),
                _ => scalar(key).into_iter().collect(),
            }
        };
        let words: Vec<String> = list("words")
            .into_iter()
            .map(|word| word.text.to_lowercase())
            .collect();
        Tracked::Secret {
            name,
            words,
            known_by: list("known_by"),
        }
    } else {
        return Err(TrackProblem::NothingTracked);
    };
    Ok(Track {
        tracked,
        range: entry_range(text, item),
        learns: false,
    })
}

/// Reads `learns:`, the secrets someone learns in this scene: `- Kael: Tomas
/// is the heir`, or `- Tomas is the heir` for the point of view. Each is the
/// secret's `known_by` in this scene, as `tracks:` would say it.
pub fn read_learns(
    text: &str,
    front: Option<&FrontMatter>,
    pov: Option<&Spanned>,
    problems: &mut Vec<FieldProblem>,
) -> Vec<Track> {
    let Some(entry) = front.and_then(|front| front.get("learns")) else {
        return Vec::new();
    };
    let items = match &entry.value.kind {
        YamlKind::Sequence(items) => items.as_slice(),
        YamlKind::Null => return Vec::new(),
        _ => std::slice::from_ref(&entry.value),
    };
    let mut learned = Vec::new();
    let secret = |name: Spanned, who: Spanned, range: TextRange| Track {
        tracked: Tracked::Secret {
            name,
            words: Vec::new(),
            known_by: vec![who],
        },
        range,
        learns: true,
    };
    for item in items {
        let spanned = |value: &YamlValue| {
            let written = value.as_scalar_text(text)?.trim();
            (!written.is_empty()).then(|| Spanned {
                text: written.to_owned(),
                range: value.range,
            })
        };
        match &item.kind {
            YamlKind::Mapping(pairs) => {
                for (who, what) in pairs {
                    let Some(name) = spanned(what) else {
                        problems.push(FieldProblem {
                            range: entry_range(text, item),
                            message: format!(
                                "`learns: - {who}:` should name the secret {who} learns, like `- {who}: Tomas is the heir`"
                            ),
                        });
                        continue;
                    };
                    let who = Spanned {
                        text: who.trim().to_owned(),
                        range: name.range,
                    };
                    learned.push(secret(name, who, entry_range(text, item)));
                }
            }
            _ => match (spanned(item), pov) {
                (Some(name), Some(pov)) => {
                    let range = name.range;
                    learned.push(secret(name, pov.clone(), range));
                }
                (Some(name), None) => problems.push(FieldProblem {
                    range: name.range,
                    message: format!(
                        "`learns: {}` says no one learns it and the scene has no `pov`: write `- Kael: {}`",
                        name.text, name.text
                    ),
                }),
                (None, _) => problems.push(FieldProblem {
                    range: item.range,
                    message: "a `learns` entry should be `- Kael: the secret` or the secret the point of view learns".into(),
                }),
            },
        }
    }
    learned
}

/// Where an entry stands: a mapping's own range may be empty, so it spans
/// its fields, from the first key to the last value.
fn entry_range(text: &str, item: &YamlValue) -> TextRange {
    let YamlKind::Mapping(fields) = &item.kind else {
        return item.range;
    };
    fields
        .iter()
        .map(|(_, value)| value.range)
        .reduce(|all, one| TextRange::new(all.start.min(one.start), all.end.max(one.end)))
        .filter(|range| !range.is_empty())
        .map_or(item.range, |range| {
            let line_start = text[..range.start].rfind('\n').map_or(0, |at| at + 1);
            let key_start = text[line_start..range.start]
                .find(|c: char| c.is_alphanumeric())
                .map_or(range.start, |at| line_start + at);
            TextRange::new(key_start.min(range.start), range.end)
        })
}
