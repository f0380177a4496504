//! Consolidation: the knowledge base's decisions
//! (`.control-room/kb/decisions.jsonl`) held against the hard facts, which
//! are the canon cards, the Story Bible and the decisions already promoted
//! (`promoted: true`). A decision that contradicts one of them is a
//! diagnostic on the decision, pointing at both sides, with a fix for each
//! side: adopt the decision (the card, the Bible or the older fact changed
//! to what it says, the decision marked promoted) or keep the fact (the
//! decision withdrawn: its line removed, so a decision it had superseded
//! counts again).
//!
//! What is compared is what the text says plainly enough (`claims`): a
//! character's eyes, hair, life and age, and any other field of its card
//! said as "rank is sergeant" (decisions about characters), who
//! the protagonist is, the scenes a beat happens in, how many of a thing a
//! world rule the decision names counts; and a decision that replaces a
//! promoted fact of the same category and key with another value.
//!
//! Decisions already promoted, decisions superseded by a later line, and
//! lines that are not decisions are left alone (the prompts' loader reports
//! the latter).

mod card;
mod claims;

use std::collections::HashMap;

use crate::checks::{FileEdit, Fix, FixKind};
use crate::index::{FilePath, Workspace};
use crate::kb::Decision;
use crate::text::TextRange;
use claims::{Claim, Subject, Value, card_name};

/// The diagnostic code of a decision that contradicts its card.
pub const CONTRADICTS_CARD: &str = "decision-contradicts-card";
/// The diagnostic code of a decision that contradicts the Story Bible.
pub const CONTRADICTS_BIBLE: &str = "decision-contradicts-bible";
/// The diagnostic code of a decision that contradicts a promoted fact.
pub const CONTRADICTS_FACT: &str = "decision-contradicts-fact";

/// A decision at odds with a hard fact.
#[derive(Clone, Debug, PartialEq)]
pub struct Contradiction {
    /// [`CONTRADICTS_CARD`], [`CONTRADICTS_BIBLE`] or [`CONTRADICTS_FACT`].
    pub code: &'static str,
    /// The decision's value in the knowledge base's text.
    pub range: TextRange,
    pub message: String,
    /// The decision's whole line, and who saved it (its `source`).
    pub line: TextRange,
    pub source: Option<String>,
    /// The other side: its file, where it says it, and what it is.
    pub other: FilePath,
    pub other_range: TextRange,
    pub other_label: String,
    /// The decision adopted: the other side changed, the decision promoted.
    pub promotion: Fix,
    /// The other side kept: the decision withdrawn.
    pub withdrawal: Fix,
}

/// One decision of the text: its line and what it is.
struct Line {
    range: TextRange,
    decision: Decision,
    /// Whether a later line has the same category and key.
    superseded: bool,
}

/// The decisions of `text`, each with its line.
fn lines(text: &str) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let range = TextRange::new(start, start + line.trim_end_matches(['\n', '\r']).len());
        start += line.len();
        if let Ok(decision) = serde_json::from_str::<Decision>(range.slice(text)) {
            lines.push(Line {
                range,
                decision,
                superseded: false,
            });
        }
    }
    let mut latest: HashMap<(&str, &str), usize> = HashMap::new();
    let mut superseded = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let key = (line.decision.category.as_str(), line.decision.key.as_str());
        if let Some(before) = latest.insert(key, at) {
            superseded.push(before);
        }
    }
    for at in superseded {
        lines[at].superseded = true;
    }
    lines
}

/// Every contradiction in `text`, the knowledge base at `kb_path`; `now`
/// stamps a promoted decision's `updated_at`.
pub fn contradictions(
    workspace: &Workspace,
    kb_path: &FilePath,
    text: &str,
    now: &str,
) -> Vec<Contradiction> {
    let lines = lines(text);
    let bible = claims::of_bible(workspace);
    // The promoted facts still in force, with what each claims.
    let facts: Vec<(&Line, Vec<Claim>)> = lines
        .iter()
        .filter(|line| line.decision.promoted && !line.superseded)
        .map(|line| (line, claims::of_decision(workspace, &line.decision)))
        .collect();
    let mut found = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        if line.decision.promoted || line.superseded {
            continue;
        }
        let side = Side {
            workspace,
            kb_path,
            text,
            line,
            now,
        };
        let said = claims::of_decision(workspace, &line.decision);
        found.extend(card::against_card(&side, &said));
        for claim in &said {
            for (path, fact) in &bible {
                if fact.subject == claim.subject && !fact.value.agrees(&claim.value) {
                    found.push(side.against_bible(claim, path, fact));
                }
            }
            for (fact_line, fact_claims) in &facts {
                for fact in fact_claims {
                    if fact.subject == claim.subject && !fact.value.agrees(&claim.value) {
                        found.push(side.against_fact(fact_line, Some((claim, fact))));
                    }
                }
            }
        }
        // A promoted fact this decision replaces (the latest promoted line
        // of the same category and key before it) with another value.
        if let Some(replaced) = lines[..at].iter().rev().find(|earlier| {
            earlier.decision.promoted
                && earlier.decision.category == line.decision.category
                && earlier.decision.key == line.decision.key
        }) && replaced.decision.value.trim() != line.decision.value.trim()
        {
            found.push(side.against_fact(replaced, None));
        }
    }
    found
}

/// What one decision's contradictions share.
struct Side<'a> {
    workspace: &'a Workspace,
    kb_path: &'a FilePath,
    text: &'a str,
    line: &'a Line,
    now: &'a str,
}

impl Side<'_> {
    fn decision(&self) -> &Decision {
        &self.line.decision
    }

    /// The range of the decision's value in its line: where its JSON string
    /// sits after its `"value"` key, else the whole line.
    fn value_range(&self) -> TextRange {
        let line = self.line.range;
        let text = line.slice(self.text);
        let encoded = serde_json::to_string(&self.decision().value).unwrap_or_default();
        let after = text.find("\"value\"").unwrap_or(0);
        text[after..].find(&encoded).map_or(line, |at| {
            let start = line.start + after + at;
            TextRange::new(start, start + encoded.len())
        })
    }

    /// The decision's line marked promoted, every other field of it kept
    /// as written (a tool's own fields too).
    fn promote(&self) -> FileEdit {
        let written = self.line.range.slice(self.text);
        let new_text = match serde_json::from_str::<serde_json::Value>(written) {
            Ok(serde_json::Value::Object(mut fields)) => {
                fields.insert("promoted".into(), true.into());
                fields.insert("updated_at".into(), self.now.into());
                serde_json::Value::Object(fields).to_string()
            }
            _ => {
                let mut promoted = self.decision().clone();
                promoted.promoted = true;
                promoted.updated_at = Some(self.now.to_owned());
                serde_json::to_string(&promoted).unwrap_or_default()
            }
        };
        FileEdit {
            path: self.kb_path.clone(),
            range: self.line.range,
            new_text,
        }
    }

    /// The lines before `fact` with its category and key, which it
    /// supersedes.
    fn superseded_by(&self, fact: &Line) -> Vec<TextRange> {
        lines(&self.text[..fact.range.start])
            .into_iter()
            .filter(|earlier| {
                earlier.decision.category == fact.decision.category
                    && earlier.decision.key == fact.decision.key
            })
            .map(|earlier| earlier.range)
            .collect()
    }

    /// A line of the knowledge base removed, with its line break.
    fn remove(&self, line: TextRange) -> FileEdit {
        let end = self.text[line.end..]
            .find('\n')
            .map_or(line.end, |at| line.end + at + 1);
        FileEdit {
            path: self.kb_path.clone(),
            range: TextRange::new(line.start, end),
            new_text: String::new(),
        }
    }

    fn withdrawal(&self, title: &str) -> Fix {
        Fix {
            title: format!("{title}: withdraw this decision"),
            edits: vec![self.remove(self.line.range)],
            kind: FixKind::Correction,
        }
    }

    /// A contradiction of this decision with `other`.
    fn contradiction(
        &self,
        code: &'static str,
        message: String,
        other: Other<'_>,
        promotion: Fix,
        keep: &str,
    ) -> Contradiction {
        Contradiction {
            code,
            range: self.value_range(),
            message,
            line: self.line.range,
            source: self.decision().source.clone(),
            other: other.path.clone(),
            other_range: other.range,
            other_label: other.label.to_owned(),
            promotion,
            withdrawal: self.withdrawal(keep),
        }
    }

    /// The decision's `claim` against the Story Bible's `fact` in `path`.
    fn against_bible(&self, claim: &Claim, path: &FilePath, fact: &Claim) -> Contradiction {
        let workspace = self.workspace;
        let (said, bible_says) = (claim.value.said(workspace), fact.value.said(workspace));
        let (message, new_text) = match &claim.subject {
            Subject::Protagonist => (
                format!(
                    "this decision makes {said} the protagonist, but the Story Bible's protagonist is {bible_says}"
                ),
                said.clone(),
            ),
            Subject::Beat(beat) => (
                format!(
                    "this decision puts the {beat} in {said}, but the beat sheet puts it in {bible_says}"
                ),
                // The beat's first scene id becomes the decision's ids; the
                // beat's other ids go below.
                said.clone(),
            ),
            Subject::Count(_, noun) => (
                format!(
                    "this decision counts {said} of {noun}, but the world rule says {bible_says}"
                ),
                same_case(&said, fact.range.slice(&file_text(workspace, path))),
            ),
            _ => (
                format!("this decision says {said}, but the Story Bible says {bible_says}"),
                said.clone(),
            ),
        };
        let mut edits = vec![FileEdit {
            path: path.clone(),
            range: fact.range,
            new_text,
        }];
        if let Subject::Beat(beat) = &claim.subject {
            edits.extend(other_beat_ids(workspace, path, beat, fact.range));
        }
        edits.push(self.promote());
        let promotion = Fix {
            title: "Write it into the Story Bible".to_owned(),
            edits,
            kind: FixKind::Correction,
        };
        self.contradiction(
            CONTRADICTS_BIBLE,
            message,
            Other {
                path,
                range: fact.range,
                label: "what the Story Bible says",
            },
            promotion,
            "Keep the Story Bible",
        )
    }

    /// The decision against the promoted decision on `fact_line`: a claim
    /// of each that disagree, or `None` when the decision replaces it whole.
    fn against_fact(&self, fact_line: &Line, claims: Option<(&Claim, &Claim)>) -> Contradiction {
        let workspace = self.workspace;
        let number = self.text[..fact_line.range.start].matches('\n').count() + 1;
        let fact = claims.map(|(_, fact)| fact);
        let message = match claims {
            Some((claim, fact)) => format!(
                "{}, but the promoted fact on line {number} says {}",
                claim_said(workspace, claim),
                fact.value.said(workspace)
            ),
            None => format!(
                "this decision replaces the promoted fact on line {number} ({} `{}`: \"{}\") with another",
                fact_line.decision.category, fact_line.decision.key, fact_line.decision.value
            ),
        };
        // Adopting this decision withdraws the fact it contradicts, and the
        // lines of the same category and key the fact had superseded (they
        // would count again); one it replaces is superseded already.
        let mut edits = vec![self.promote()];
        if fact.is_some() {
            for earlier in self.superseded_by(fact_line) {
                edits.push(self.remove(earlier));
            }
            edits.push(self.remove(fact_line.range));
        }
        let promotion = Fix {
            title: if fact.is_some() {
                format!("Promote this decision, withdrawing line {number}")
            } else {
                "Promote this decision in its place".to_owned()
            },
            edits,
            kind: FixKind::Correction,
        };
        self.contradiction(
            CONTRADICTS_FACT,
            message,
            Other {
                path: self.kb_path,
                range: fact_line.range,
                label: "the promoted fact",
            },
            promotion,
            "Keep the promoted fact",
        )
    }
}

/// What a decision contradicts: the file, the range there, and what the
/// writer is told it is.
struct Other<'a> {
    path: &'a FilePath,
    range: TextRange,
    label: &'a str,
}

/// How a message says what a decision claims.
fn claim_said(workspace: &Workspace, claim: &Claim) -> String {
    let said = claim.value.said(workspace);
    match &claim.subject {
        Subject::Colour(card, key) => format!(
            "this decision gives {} {said} {key}",
            card_name(workspace, card)
        ),
        Subject::Life(card) => {
            let verb = if claim.value == Value::Dead(true) {
                "dies"
            } else {
                "lives"
            };
            format!("this decision says {} {verb}", card_name(workspace, card))
        }
        Subject::Age(card) => format!("this decision makes {} {said}", card_name(workspace, card)),
        Subject::Field(card, key) => format!(
            "this decision gives {} `{key}` {said}",
            card_name(workspace, card)
        ),
        Subject::Protagonist => format!("this decision makes {said} the protagonist"),
        Subject::Beat(beat) => format!("this decision puts the {beat} in {said}"),
        Subject::Count(_, noun) => format!("this decision counts {said} of {noun}"),
    }
}

/// The edits that take a beat's scene ids other than its first (at
/// `first`) out of the beat sheet at `path`, each with the ", " or " and "
/// that joins it to the one before.
fn other_beat_ids(
    workspace: &Workspace,
    path: &FilePath,
    beat: &str,
    first: TextRange,
) -> Vec<FileEdit> {
    let Some(file) = workspace.file(path) else {
        return Vec::new();
    };
    let Some(bible) = file.bible() else {
        return Vec::new();
    };
    let section = bible
        .parts
        .iter()
        .find(|part| part.spec.title == beat)
        .and_then(|part| part.section)
        .map(|at| &bible.sections[at]);
    section
        .into_iter()
        .flat_map(|section| &section.scene_ids)
        .filter(|id| id.range != first)
        .map(|id| {
            let before = &file.text[..id.range.start];
            let joint = [", ", " and ", ",", " "]
                .iter()
                .find(|joint| before.ends_with(*joint))
                .map_or(0, |joint| joint.len());
            FileEdit {
                path: path.clone(),
                range: TextRange::new(id.range.start - joint, id.range.end),
                new_text: String::new(),
            }
        })
        .collect()
}

/// The text of `path` as the workspace holds it.
fn file_text(workspace: &Workspace, path: &FilePath) -> String {
    workspace
        .file(path)
        .map_or_else(String::new, |file| file.text.to_string())
}

/// `word` capitalised as `like` is ("Nine" for "nine" at a sentence's start).
fn same_case(word: &str, like: &str) -> String {
    let capital = like.chars().next().is_some_and(char::is_uppercase);
    let mut chars = word.chars();
    match chars.next() {
        Some(first) if capital => first.to_uppercase().chain(chars).collect(),
        _ => word.to_owned(),
    }
}

#[cfg(test)]
mod tests;
