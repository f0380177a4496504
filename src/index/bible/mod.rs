//! The Story Bible: the four templates the book's structure stands on before
//! any prose is drafted (the protagonist's profile, the beat sheet, the
//! theme, the world rules), each a Markdown file under `Story/Bible/` with a
//! `status:` in its front matter and one heading per required part.
//!
//! A part is found by its heading, whatever its level, numbering ("3.",
//! "Beat 3:") or share of the book ("(10%)"); its text is the prose under the
//! heading up to the next heading of the same or a higher level. A part
//! whose text is empty or a placeholder ("TBD", "…") is missing: the
//! `story-bible` check says so, and the ARCHITECT gate stays shut until no
//! template misses anything and every one says `status: complete`.

use crate::syntax::{BlockKind, FrontMatter, MarkdownSyntax};
use crate::text::TextRange;

use super::model::{FieldProblem, Fields, Spanned};

/// One of the four templates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BibleKind {
    Protagonist,
    BeatSheet,
    Theme,
    WorldRules,
}

/// A part a template must have.
#[derive(Debug, PartialEq, Eq)]
pub struct PartSpec {
    /// The part's key, as actions and the session state name it (`fatal_flaw`).
    pub key: &'static str,
    /// Its heading as the templates write it.
    pub title: &'static str,
    /// Other headings that mean it, normalised (see [`normalise_heading`]).
    pub aliases: &'static [&'static str],
    /// For a beat: where in the book it lands, as a share from..to in percent.
    pub share: Option<(u8, u8)>,
    /// For a list: how many items it needs at least.
    pub min_items: usize,
}

const fn part(
    key: &'static str,
    title: &'static str,
    aliases: &'static [&'static str],
) -> PartSpec {
    PartSpec {
        key,
        title,
        aliases,
        share: None,
        min_items: 0,
    }
}

const fn beat(
    key: &'static str,
    title: &'static str,
    aliases: &'static [&'static str],
    from: u8,
    to: u8,
) -> PartSpec {
    PartSpec {
        key,
        title,
        aliases,
        share: Some((from, to)),
        min_items: 0,
    }
}

const PROTAGONIST: &[PartSpec] = &[
    part("fatal_flaw", "Fatal Flaw", &["flaw"]),
    part(
        "the_lie",
        "The Lie",
        &[
            "lie",
            "the lie they believe",
            "the lie she believes",
            "the lie he believes",
        ],
    ),
    part(
        "arc_start",
        "Arc Start",
        &["start", "beginning", "arc beginning", "where they start"],
    ),
    part("arc_midpoint", "Arc Midpoint", &["midpoint", "middle"]),
    part(
        "arc_resolution",
        "Arc Resolution",
        &["resolution", "end", "arc end", "where they end"],
    ),
];

/// Blake Snyder's fifteen beats, with where each lands in the book.
const BEATS: &[PartSpec] = &[
    beat("beat_1", "Opening Image", &[], 0, 1),
    beat("beat_2", "Theme Stated", &[], 1, 5),
    beat("beat_3", "Set-Up", &["setup", "set up"], 1, 10),
    beat("beat_4", "Catalyst", &["inciting incident"], 10, 12),
    beat("beat_5", "Debate", &[], 10, 20),
    beat(
        "beat_6",
        "Break into Two",
        &["break into 2", "break into act two"],
        20,
        22,
    ),
    beat("beat_7", "B Story", &[], 22, 25),
    beat(
        "beat_8",
        "Fun and Games",
        &["promise of the premise"],
        20,
        50,
    ),
    beat("beat_9", "Midpoint", &[], 50, 52),
    beat("beat_10", "Bad Guys Close In", &[], 50, 75),
    beat("beat_11", "All Is Lost", &[], 75, 77),
    beat("beat_12", "Dark Night of the Soul", &["dark night"], 75, 80),
    beat(
        "beat_13",
        "Break into Three",
        &["break into 3", "break into act three"],
        80,
        82,
    ),
    beat("beat_14", "Finale", &[], 80, 99),
    beat("beat_15", "Final Image", &["closing image"], 99, 100),
];

const THEME: &[PartSpec] = &[
    part("central_theme", "Central Theme", &["theme"]),
    part(
        "theme_statement",
        "Theme Statement",
        &["statement", "thesis", "theme thesis"],
    ),
];

const WORLD_RULES: &[PartSpec] = &[PartSpec {
    key: "fundamental_rules",
    title: "Fundamental Rules",
    aliases: &["rules", "world rules", "the rules"],
    share: None,
    min_items: 3,
}];

impl BibleKind {
    pub const ALL: [BibleKind; 4] = [
        BibleKind::Protagonist,
        BibleKind::BeatSheet,
        BibleKind::Theme,
        BibleKind::WorldRules,
    ];

    /// The name actions and `type:` use.
    pub fn id(self) -> &'static str {
        match self {
            BibleKind::Protagonist => "protagonist",
            BibleKind::BeatSheet => "beat_sheet",
            BibleKind::Theme => "theme",
            BibleKind::WorldRules => "world_rules",
        }
    }

    /// The template as a writer names it.
    pub fn title(self) -> &'static str {
        match self {
            BibleKind::Protagonist => "Protagonist Profile",
            BibleKind::BeatSheet => "Beat Sheet",
            BibleKind::Theme => "Theme",
            BibleKind::WorldRules => "World Rules",
        }
    }

    /// The file's name in the Story Bible's folder.
    pub fn file_name(self) -> &'static str {
        match self {
            BibleKind::Protagonist => "protagonist.md",
            BibleKind::BeatSheet => "beat-sheet.md",
            BibleKind::Theme => "theme.md",
            BibleKind::WorldRules => "world-rules.md",
        }
    }

    /// `protagonist`, `beat_sheet`, `beat-sheet`, `Beat Sheet`… → the kind.
    pub fn parse(name: &str) -> Option<BibleKind> {
        let name: String = name
            .trim()
            .chars()
            .map(|c| match c {
                '-' | ' ' => '_',
                c => c.to_ascii_lowercase(),
            })
            .collect();
        Some(match name.as_str() {
            "protagonist" | "protagonist_profile" => BibleKind::Protagonist,
            "beat_sheet" => BibleKind::BeatSheet,
            "theme" => BibleKind::Theme,
            "world_rules" => BibleKind::WorldRules,
            _ => return None,
        })
    }

    /// The parts the template must have, in its order.
    pub fn parts(self) -> &'static [PartSpec] {
        match self {
            BibleKind::Protagonist => PROTAGONIST,
            BibleKind::BeatSheet => BEATS,
            BibleKind::Theme => THEME,
            BibleKind::WorldRules => WORLD_RULES,
        }
    }

    /// The part named `key` (`fatal_flaw`, `beat_9`).
    pub fn part(self, key: &str) -> Option<&'static PartSpec> {
        self.parts().iter().find(|part| part.key == key)
    }
}

/// Where a template stands, as its `status:` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BibleStatus {
    NotStarted,
    InProgress,
    DraftReady,
    Complete,
}

impl BibleStatus {
    pub const NAMES: &'static str = "not_started, in_progress, draft, complete";

    pub fn as_str(self) -> &'static str {
        match self {
            BibleStatus::NotStarted => "not_started",
            BibleStatus::InProgress => "in_progress",
            BibleStatus::DraftReady => "draft",
            BibleStatus::Complete => "complete",
        }
    }

    pub fn parse(name: &str) -> Option<BibleStatus> {
        let name = name.trim().to_ascii_lowercase().replace([' ', '-'], "_");
        Some(match name.as_str() {
            "not_started" | "todo" => BibleStatus::NotStarted,
            "in_progress" | "started" => BibleStatus::InProgress,
            "draft" | "draft_ready" => BibleStatus::DraftReady,
            "complete" | "completed" | "done" => BibleStatus::Complete,
            _ => return None,
        })
    }
}

/// A heading of a template and what is written under it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// The heading's text as written.
    pub title: String,
    /// The heading's text.
    pub heading: TextRange,
    /// From the end of the heading line to the next heading of the same or a
    /// higher level.
    pub body: TextRange,
    /// The prose of the body, comments left out, trimmed.
    pub text: String,
    /// The body's list items at its top level (world rules), each trimmed.
    pub items: Vec<Spanned>,
    /// Scene ids (`SCN-…`) written in the body: the beat sheet's links to
    /// the outline.
    pub scene_ids: Vec<Spanned>,
}

/// A template's required part, and the section that holds it if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub spec: &'static PartSpec,
    /// Index into [`Bible::sections`].
    pub section: Option<usize>,
}

/// Why a required part does not count yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Gap {
    /// No heading names it.
    Absent,
    /// Its heading has nothing under it, or only a placeholder.
    Empty { heading: TextRange },
    /// A list with too few items.
    TooFew { heading: TextRange, have: usize },
}

/// One template read from its file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bible {
    pub kind: BibleKind,
    pub status: Option<(BibleStatus, TextRange)>,
    /// The protagonist's profile: whose it is (`character:`).
    pub character: Option<Spanned>,
    pub sections: Vec<Section>,
    /// The template's parts, in its order.
    pub parts: Vec<Part>,
}

impl Bible {
    /// The status, `not_started` when none is written.
    pub fn status(&self) -> BibleStatus {
        self.status
            .map_or(BibleStatus::NotStarted, |(status, _)| status)
    }

    /// The section of the part `key`.
    pub fn section(&self, key: &str) -> Option<&Section> {
        let part = self.parts.iter().find(|part| part.spec.key == key)?;
        part.section.map(|index| &self.sections[index])
    }

    /// Why `part` does not count, or `None` when it does.
    pub fn gap(&self, part: &Part) -> Option<Gap> {
        let Some(section) = part.section.map(|index| &self.sections[index]) else {
            return Some(Gap::Absent);
        };
        if part.spec.min_items > 0 {
            let have = section
                .items
                .iter()
                .filter(|item| !is_placeholder(&item.text))
                .count();
            return (have < part.spec.min_items).then_some(Gap::TooFew {
                heading: section.heading,
                have,
            });
        }
        is_placeholder(&section.text).then_some(Gap::Empty {
            heading: section.heading,
        })
    }

    /// The parts that do not count yet, with why.
    pub fn gaps(&self) -> Vec<(&'static PartSpec, Gap)> {
        self.parts
            .iter()
            .filter_map(|part| self.gap(part).map(|gap| (part.spec, gap)))
            .collect()
    }

    /// Whether the template is complete: it says so and misses nothing.
    pub fn is_complete(&self) -> bool {
        self.status() == BibleStatus::Complete && self.gaps().is_empty()
    }

    /// The beats that name scene `id`, with their number (1-based).
    pub fn beats_naming<'a>(
        &'a self,
        id: &'a str,
    ) -> impl Iterator<Item = (usize, &'static PartSpec)> + 'a {
        self.parts.iter().enumerate().filter_map(move |(at, part)| {
            let section = &self.sections[part.section?];
            section
                .scene_ids
                .iter()
                .any(|scene| scene.text == id)
                .then_some((at + 1, part.spec))
        })
    }

    /// The world rules' names: each rule's bold lead (`**Salt binds.**`),
    /// with where it is written. A rule without one has no name.
    pub fn rule_names<'a>(&'a self, text: &'a str) -> impl Iterator<Item = Spanned> + 'a {
        self.section("fundamental_rules")
            .into_iter()
            .flat_map(|section| &section.items)
            .filter_map(move |item| bold_lead(text, item.range))
    }
}

/// Whether a part's text says nothing yet.
pub fn is_placeholder(text: &str) -> bool {
    let bare = text
        .trim()
        .trim_matches(|c: char| c.is_ascii_punctuation() || c == '…' || c.is_whitespace());
    matches!(
        bare.to_ascii_lowercase().as_str(),
        "" | "tbd" | "todo" | "tba" | "tk" | "placeholder" | "fill in" | "to do" | "to be decided"
    )
}

/// A heading as parts are matched: lower case, without numbering
/// ("3.", "Beat 3:"), a share of the book ("(10%)"), `&`, hyphens or colons.
pub fn normalise_heading(title: &str) -> String {
    let mut title = title.trim().to_lowercase().replace('&', " and ");
    if let Some(open) = title.find('(')
        && title[open..].contains('%')
    {
        title.truncate(open);
    }
    let words: Vec<String> = title
        .split(|c: char| c.is_whitespace() || matches!(c, '-' | ':' | '—' | '–' | '_' | '/'))
        .map(|word| word.trim_matches(|c: char| c.is_ascii_punctuation() || c == '’'))
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect();
    // "Beat 3", "3." and "3)" number a heading; they are not its name.
    let skip = match words.as_slice() {
        [first, second, ..] if first == "beat" && second.parse::<u8>().is_ok() => 2,
        [first, ..] if first.parse::<u8>().is_ok() => 1,
        _ => 0,
    };
    words[skip..].join(" ")
}

/// The beat numbered in a heading ("Beat 3", "3. Set-Up"), if any.
fn numbered_beat(title: &str) -> Option<u8> {
    let lower = title.trim().to_lowercase();
    let rest = lower.strip_prefix("beat").unwrap_or(&lower).trim_start();
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|n| (1..=15).contains(n))
}

/// Reads a template from its front matter and headings.
pub fn read_bible(
    kind: BibleKind,
    text: &str,
    front: Option<&FrontMatter>,
    syntax: &MarkdownSyntax,
    problems: &mut Vec<FieldProblem>,
) -> Bible {
    let mut fields = Fields {
        text,
        front,
        problems,
    };
    let status =
        fields
            .string("status")
            .and_then(|status| match BibleStatus::parse(&status.text) {
                Some(parsed) => Some((parsed, status.range)),
                None => {
                    fields.problems.push(FieldProblem {
                        range: status.range,
                        message: format!(
                            "`status: {}` is not one of {}",
                            status.text,
                            BibleStatus::NAMES
                        ),
                    });
                    None
                }
            });
    let character = match kind {
        BibleKind::Protagonist => fields.string("character").or_else(|| fields.string("name")),
        _ => None,
    };
    let sections = read_sections(text, syntax);
    let mut parts: Vec<Part> = kind
        .parts()
        .iter()
        .map(|spec| Part {
            spec,
            section: None,
        })
        .collect();
    // Exact titles first, so that a title heading ("# Theme") does not take
    // the part a later heading names exactly ("## Central Theme").
    let normalised: Vec<String> = sections
        .iter()
        .map(|section| normalise_heading(&section.title))
        .collect();
    let mut taken = vec![false; sections.len()];
    for exact in [true, false] {
        for (index, section) in sections.iter().enumerate() {
            if taken[index] {
                continue;
            }
            let name = normalised[index].as_str();
            let by_name = parts.iter().position(|part| {
                part.section.is_none()
                    && if exact {
                        normalise_heading(part.spec.title) == name
                    } else {
                        part.spec.aliases.contains(&name)
                    }
            });
            // "Beat 7" alone names the seventh beat.
            let by_number = || {
                (!exact && kind == BibleKind::BeatSheet && name.is_empty())
                    .then(|| numbered_beat(&section.title))
                    .flatten()
                    .map(|n| usize::from(n) - 1)
                    .filter(|&n| parts[n].section.is_none())
            };
            if let Some(found) = by_name.or_else(by_number) {
                parts[found].section = Some(index);
                taken[index] = true;
            }
        }
    }
    Bible {
        kind,
        status,
        character,
        sections,
        parts,
    }
}

fn read_sections(text: &str, syntax: &MarkdownSyntax) -> Vec<Section> {
    let headings: Vec<(usize, u8)> = syntax
        .blocks
        .iter()
        .enumerate()
        .filter_map(|(index, block)| match block.kind {
            BlockKind::Heading { level } => Some((index, level)),
            _ => None,
        })
        .collect();
    headings
        .iter()
        .enumerate()
        .map(|(at, &(index, level))| {
            let block = &syntax.blocks[index];
            let end = headings[at + 1..]
                .iter()
                .find(|(_, next)| *next <= level)
                .map_or(text.len(), |(next, _)| syntax.blocks[*next].range.start);
            let body = TextRange::new(block.range.end.min(end), end);
            // The body up to its first subheading: a parent's own words.
            let own_end = headings
                .get(at + 1)
                .map_or(end, |(next, _)| syntax.blocks[*next].range.start.min(end));
            let own = TextRange::new(body.start, own_end.max(body.start));
            let prose: Vec<&str> = syntax
                .prose_in(own)
                .map(|range| range.slice(text))
                .collect();
            let items = syntax
                .blocks
                .iter()
                .filter(|item| {
                    item.kind == BlockKind::ListItem
                        && item.range.start >= own.start
                        && item.range.start < own.end
                        && !item.inline.is_empty()
                })
                .scan(None, |depth: &mut Option<u16>, item| {
                    let top = *depth.get_or_insert(item.list_depth);
                    Some((item.list_depth == top).then_some(item))
                })
                .flatten()
                .map(|item| Spanned {
                    text: item.inline.slice(text).trim().to_owned(),
                    range: item.inline,
                })
                .collect();
            Section {
                title: block.inline.slice(text).trim().to_owned(),
                heading: block.inline,
                body,
                text: prose.join(" ").trim().to_owned(),
                items,
                scene_ids: scene_ids_in(text, own),
            }
        })
        .collect()
}

/// The scene ids written in `range` of `text`.
fn scene_ids_in(text: &str, range: TextRange) -> Vec<Spanned> {
    let slice = range.slice(text);
    let mut ids = Vec::new();
    let mut from = 0;
    while let Some(found) = slice[from..].find("SCN-") {
        let start = from + found;
        let before = slice[..start].chars().next_back();
        let rest = &slice[start..];
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_' || c == '.'))
            .unwrap_or(rest.len());
        let id = rest[..len].trim_end_matches(['.', '-']);
        from = start + len.max(4);
        if id.len() > 4 && before.is_none_or(|c| !c.is_alphanumeric()) {
            ids.push(Spanned {
                text: id.to_owned(),
                range: TextRange::new(range.start + start, range.start + start + id.len()),
            });
        }
    }
    ids
}

/// A list item's bold lead (`**Salt binds oaths.** …` → "Salt binds oaths").
fn bold_lead(text: &str, item: TextRange) -> Option<Spanned> {
    let line = item.slice(text);
    let rest = line.strip_prefix("**")?;
    let close = rest.find("**")?;
    let name = rest[..close].trim().trim_end_matches(['.', ':', '!']);
    if name.is_empty() {
        return None;
    }
    let offset = item.start + 2 + rest[..close].find(name)?;
    Some(Spanned {
        text: name.to_owned(),
        range: TextRange::new(offset, offset + name.len()),
    })
}

#[cfg(test)]
mod tests;
