//! Outputs that become edits of the manuscript: canon updates of the cards,
//! a restructured outline, prose revisions of a scene, foreshadowing
//! passages inserted at their place.
//!
//! A step whose prompt type proposes edits replies with
//! `{"edits": [...]}` (`prompts/schemas/propose_edits.json`): each edit
//! quotes the text it replaces (`find` → `replace`), quotes the passage a
//! new paragraph follows (`after` → `insert`), or sets a card's front
//! matter field (`field` → `value`). [`resolve`] places each one in the
//! file's text as the writer has it *now*, never by line number: an edit
//! whose quote the writer has changed, or that names a file outside its
//! step's reach, is refused with the reason and only reported. What it
//! gives is plain data ([`EditSet`]): the command line writes it
//! ([`apply_on_disk`]), the server sends it as one versioned workspace edit.

mod locate;
mod refusal;

pub use refusal::Refusal;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::index::{FileContent, Workspace};
use crate::runs::contract;
use crate::runs::recipe::{AgentStep, Recipe};
use crate::runs::store::{Cache, CacheSlot, Disk, RunFiles, SceneMark};
use crate::text::TextRange;

use super::{NotWritten, write_guarded};

/// The files a prompt type's edits may touch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Canon cards.
    Cards,
    /// The outline (the default file of an edit).
    Outline,
    /// The scene the run is about (the default file of an edit).
    RunScene,
    /// Any scene.
    Scenes,
}

/// Prompt types whose reply proposes edits, and what they may touch.
const EDIT_PROMPT_TYPES: &[(&str, Reach)] = &[
    ("update_canon", Reach::Cards),
    ("restructure_outline", Reach::Outline),
    ("revise_prose", Reach::RunScene),
    ("draft_foreshadowing", Reach::Scenes),
];

/// What a step of `prompt_type` may edit, if it proposes edits.
pub fn reach_of(prompt_type: &str) -> Option<Reach> {
    EDIT_PROMPT_TYPES
        .iter()
        .find(|(name, _)| *name == prompt_type)
        .map(|(_, reach)| *reach)
}

/// The recipe's steps whose replies are edits.
pub fn edit_steps(recipe: &Recipe) -> impl Iterator<Item = (&AgentStep, Reach)> {
    recipe
        .phase_b
        .iter()
        .filter_map(|step| Some((step, reach_of(&step.prompt_type)?)))
}

/// Whether the recipe's result is edits of the manuscript.
pub fn edits(recipe: &Recipe) -> bool {
    edit_steps(recipe).next().is_some()
}

/// One edit as a step proposed it.
#[derive(Clone, Debug, PartialEq)]
pub struct Proposal {
    pub step_id: String,
    pub reach: Reach,
    /// The file it names, as the reply wrote it.
    pub file: Option<String>,
    pub change: Change,
    pub why: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// The quoted text becomes `replace`.
    Replace { find: String, replace: String },
    /// `insert` becomes a paragraph after the one holding `after`.
    Insert { after: String, insert: String },
    /// A front matter field takes `value`.
    SetField { field: String, value: Value },
    /// None of the three: the edit as the reply gave it, never made.
    Unreadable(String),
}

impl Proposal {
    /// The edit in a line, for the report and the editor.
    pub fn summary(&self) -> String {
        let clip = |text: &str| crate::text::clip(text.trim(), 60).replace('\n', " ");
        match &self.change {
            Change::Replace { find, replace } => {
                format!("“{}” → “{}”", clip(find), clip(replace))
            }
            Change::Insert { after, insert } => {
                format!("after “{}”: “{}”", clip(after), clip(insert))
            }
            Change::SetField { field, value } => format!("`{field}` set to {value}"),
            Change::Unreadable(edit) => clip(edit),
        }
    }
}

/// The edits the run's steps proposed, in step order. A reply that is not
/// the edits object proposes nothing.
pub fn proposals(recipe: &Recipe, cache: &Cache) -> Vec<Proposal> {
    let mut out = Vec::new();
    for (step, reach) in edit_steps(recipe) {
        let Some(CacheSlot::Artifact { text, .. }) = cache.get(&step.output_slot) else {
            continue;
        };
        let Some(value) = contract::stored_json(text) else {
            continue;
        };
        for edit in value["edits"].as_array().into_iter().flatten() {
            let text = |key: &str| edit[key].as_str().map(str::to_owned);
            let change = if let (Some(find), Some(replace)) = (text("find"), text("replace")) {
                Change::Replace { find, replace }
            } else if let (Some(after), Some(insert)) = (text("after"), text("insert")) {
                Change::Insert { after, insert }
            } else if let (Some(field), Some(value)) = (text("field"), edit.get("value")) {
                Change::SetField {
                    field,
                    value: value.clone(),
                }
            } else {
                Change::Unreadable(edit.to_string())
            };
            out.push(Proposal {
                step_id: step.step_id.clone(),
                reach,
                file: text("file").filter(|file| !file.trim().is_empty()),
                change,
                why: text("why").filter(|why| !why.trim().is_empty()),
            });
        }
    }
    out
}

/// The edits of one file, placed in the text they were resolved on.
#[derive(Clone, Debug, PartialEq)]
pub struct FileChange {
    pub path: String,
    /// The text the edits were placed in, and its mark.
    pub before: String,
    pub base: SceneMark,
    /// Byte ranges of that text and what replaces each, in text order.
    pub edits: Vec<(TextRange, String)>,
    /// The file's text after them.
    pub text: String,
    /// The proposals applied, in the same order as `edits`.
    pub applied: Vec<Proposal>,
}

/// A proposal that will not be applied, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Refused {
    pub proposal: Proposal,
    pub reason: Refusal,
}

/// A run's proposed edits, placed or refused.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EditSet {
    pub changes: Vec<FileChange>,
    pub refused: Vec<Refused>,
}

/// Places each proposal in the file's current text (`text_of`: the
/// editor's buffer, else the disk's). `scene_path` is the run's scene.
pub fn resolve(
    workspace: &Workspace,
    proposals: Vec<Proposal>,
    scene_path: Option<&str>,
    text_of: &dyn Fn(&str) -> Option<String>,
) -> EditSet {
    let mut set = EditSet::default();
    // Each file's text, and the proposals placed in it.
    type Placed = Vec<(TextRange, String, Proposal)>;
    let mut by_file: BTreeMap<String, (String, Placed)> = BTreeMap::new();
    for mut proposal in proposals {
        let shaped = match proposal.change {
            Change::Unreadable(_) => Err(Refusal::Shapeless),
            _ => Ok(()),
        };
        let target = shaped.and_then(|()| target(workspace, &proposal, scene_path));
        if let (Ok(path), None) = (&target, &proposal.file) {
            // The file an edit defaults to is named wherever it is shown.
            proposal.file = Some(path.clone());
        }
        let placed = target.and_then(|path| {
            if !by_file.contains_key(&path) {
                let text =
                    text_of(&path).ok_or_else(|| Refusal::Unreadable { path: path.clone() })?;
                by_file.insert(path.clone(), (text, Vec::new()));
            }
            let (text, placed) = by_file.get(&path).expect("inserted above");
            let (range, new_text) = place(text, &proposal.change)?;
            if placed.iter().any(|(other, _, _)| overlaps(*other, range)) {
                return Err(Refusal::Overlaps);
            }
            Ok((path, range, new_text))
        });
        match placed {
            Ok((path, range, new_text)) => {
                let entry = by_file.get_mut(&path).expect("placed in a read file");
                entry.1.push((range, new_text, proposal));
            }
            Err(reason) => set.refused.push(Refused { proposal, reason }),
        }
    }
    for (path, (text, mut placed)) in by_file {
        if placed.is_empty() {
            continue;
        }
        placed.sort_by_key(|(range, _, _)| (range.start, range.end));
        let edits: Vec<(TextRange, String)> = placed
            .iter()
            .map(|(range, new_text, _)| (*range, new_text.clone()))
            .collect();
        set.changes.push(FileChange {
            base: SceneMark::of(Some(&text)),
            text: crate::text::apply_edits(&text, &edits),
            edits,
            applied: placed
                .into_iter()
                .map(|(_, _, proposal)| proposal)
                .collect(),
            path,
            before: text,
        });
    }
    set
}

fn overlaps(a: TextRange, b: TextRange) -> bool {
    a.start < b.end && b.start < a.end || a == b
}

/// The workspace path a proposal edits, or why it may not.
fn target(
    workspace: &Workspace,
    proposal: &Proposal,
    scene_path: Option<&str>,
) -> Result<String, Refusal> {
    let named = match (&proposal.file, proposal.reach) {
        (Some(file), _) => file.clone(),
        (None, Reach::RunScene) => scene_path.ok_or(Refusal::NoFileAndNoScene)?.to_owned(),
        (None, Reach::Outline) => workspace
            .files()
            .find(|file| matches!(file.content, FileContent::Outline(_)))
            .ok_or(Refusal::NoFileAndNoOutline)?
            .path
            .to_string(),
        (None, _) => return Err(Refusal::NoFile),
    };
    let shown = crate::text::clip(&named, 120).to_string();
    let Some(path) = contract::normalise(&named) else {
        return Err(Refusal::Outside { path: shown });
    };
    let Some(file) = workspace.file(&path) else {
        return Err(Refusal::NotInManuscript { path: shown });
    };
    let fits = match proposal.reach {
        Reach::Cards => matches!(file.content, FileContent::Card(_)),
        Reach::Outline => matches!(file.content, FileContent::Outline(_)),
        Reach::RunScene => Some(path.as_str()) == scene_path,
        Reach::Scenes => matches!(file.content, FileContent::Scene(_)),
    };
    if !fits {
        let what = match proposal.reach {
            Reach::Cards => "a canon card",
            Reach::Outline => "the outline",
            Reach::RunScene => "the scene the run is about",
            Reach::Scenes => "a scene",
        };
        return Err(Refusal::OutOfReach { path: shown, what });
    }
    Ok(path)
}

/// Where `change` lands in `text`, and the text it puts there.
fn place(text: &str, change: &Change) -> Result<(TextRange, String), Refusal> {
    let body_start = crate::syntax::front_matter::parse(text).map_or(0, |front| front.range.end);
    match change {
        Change::Replace { find, replace } => {
            let range = locate::find_once(text, find)?;
            let new_text = replace.trim().to_owned();
            if range.start < body_start {
                // In the front matter: the result must still read.
                let errors = locate::front_matter_errors(text);
                let after = crate::text::apply_edits(text, &[(range, new_text.clone())]);
                if locate::front_matter_errors(&after) > errors
                    || crate::syntax::front_matter::parse(&after).is_none()
                {
                    return Err(Refusal::BreaksFrontMatter);
                }
            }
            Ok((range, new_text))
        }
        Change::Insert { after, insert } => {
            let range = locate::find_once(text, after)?;
            if range.start < body_start {
                return Err(Refusal::QuoteInFrontMatter);
            }
            let at = locate::paragraph_end(text, range);
            let insert = insert.trim();
            if insert.is_empty() {
                return Err(Refusal::InsertsNothing);
            }
            Ok((TextRange::new(at, at), format!("\n\n{insert}")))
        }
        Change::Unreadable(_) => Err(Refusal::Shapeless),
        Change::SetField { field, value } => {
            let (range, line) = locate::set_field(text, field, value)?;
            let after = crate::text::apply_edits(text, &[(range, line.clone())]);
            if !locate::field_reads_as(&after, field, value, locate::front_matter_errors(text)) {
                return Err(Refusal::FieldUnsafe {
                    field: field.clone(),
                    value: value.to_string(),
                });
            }
            Ok((range, line))
        }
    }
}

/// Where a run keeps the text of each file its edits changed, as it was
/// before them (the command line has no undo).
pub fn before_path(root: &Path, run_id: &str, path: &str) -> std::path::PathBuf {
    RunFiles::new(root, run_id).dir.join("before").join(path)
}

/// What applying an edit set to the files did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    /// The files changed, each with its text now and the edits it took.
    pub changed: Vec<FileChange>,
    /// Edits not applied, and why (those refused when placed included).
    pub refused: Vec<Refused>,
}

impl Outcome {
    /// None of `set`'s edits applied, all for `reason` (the editor refused
    /// them…), beside those refused when placed.
    pub fn none_applied(set: EditSet, reason: Refusal) -> Outcome {
        let mut refused = set.refused;
        for change in set.changes {
            refused.extend(change.applied.into_iter().map(|proposal| Refused {
                proposal,
                reason: reason.clone(),
            }));
        }
        Outcome {
            changed: Vec::new(),
            refused,
        }
    }
}

/// Writes each file's edits (the command line; the server when the editor
/// cannot take them): only where the disk still has the text they were
/// placed in, each file whole and at once, its earlier text kept in the run.
pub fn apply_on_disk(root: &Path, disk: &Disk, run_id: &str, set: EditSet) -> Outcome {
    let mut outcome = Outcome {
        changed: Vec::new(),
        refused: set.refused,
    };
    for change in set.changes {
        let absolute = root.join(&change.path);
        let reason = match write_guarded(disk, &absolute, &change.base, &change.text) {
            Ok(()) => {
                keep_before(root, disk, run_id, &change.path, Some(&change.before));
                None
            }
            Err(NotWritten::Changed | NotWritten::Appeared) => Some(Refusal::ChangedMeanwhile {
                path: change.path.clone(),
            }),
            Err(NotWritten::Io(error)) => Some(Refusal::Unwritable {
                path: change.path.clone(),
                why: error.to_string(),
            }),
        };
        match reason {
            None => outcome.changed.push(change),
            Some(reason) => outcome
                .refused
                .extend(change.applied.into_iter().map(|proposal| Refused {
                    proposal,
                    reason: reason.clone(),
                })),
        }
    }
    outcome
}

/// Keeps a file's text before a run's edits change it, in the run's
/// folder. Best effort: the file itself is written or left alone either way.
pub fn keep_before(root: &Path, disk: &Disk, run_id: &str, path: &str, text: Option<&str>) {
    let kept = before_path(root, run_id, path);
    if let Some(parent) = kept.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let _ = disk.write_atomic(&kept, text.unwrap_or_default().as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proposal(file: &str, change: Change) -> Proposal {
        Proposal {
            step_id: "update".into(),
            reach: Reach::Cards,
            file: Some(file.into()),
            change,
            why: None,
        }
    }

    fn replace(find: &str, replace: &str) -> Change {
        Change::Replace {
            find: find.into(),
            replace: replace.into(),
        }
    }

    #[test]
    fn overlapping_edits_escaping_paths_and_broken_front_matter_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let card = "Compendium/Characters/CHAR-kael.md";
        std::fs::create_dir_all(root.join("Compendium/Characters")).unwrap();
        std::fs::create_dir_all(root.join("Story")).unwrap();
        let text = "---\nname: Kael\neyes: grey\n---\nA warden of the salt road.\n";
        std::fs::write(root.join(card), text).unwrap();
        let workspace = Workspace::load(root);
        let text_of = |path: &str| std::fs::read_to_string(root.join(path)).ok();
        let set = resolve(
            &workspace,
            vec![
                proposal(card, replace("warden of the salt", "keeper of the salt")),
                proposal(card, replace("of the salt road", "of the sea road")),
                proposal(card, replace("eyes: grey", "eyes: [grey")),
                proposal("../outside.md", replace("anything", "else")),
                proposal(card, Change::Unreadable("{\"why\": \"x\"}".into())),
            ],
            None,
            &text_of,
        );
        let reasons: Vec<&Refusal> = set.refused.iter().map(|r| &r.reason).collect();
        assert_eq!(
            reasons,
            [
                &Refusal::Overlaps,
                &Refusal::BreaksFrontMatter,
                &Refusal::Outside {
                    path: "../outside.md".to_owned()
                },
                &Refusal::Shapeless,
            ]
        );
        assert_eq!(set.changes.len(), 1);
        assert_eq!(
            set.changes[0].text,
            "---\nname: Kael\neyes: grey\n---\nA keeper of the salt road.\n"
        );
        assert_eq!(set.changes[0].before, text);
    }
}
