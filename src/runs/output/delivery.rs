//! Where a finished run's result goes, decided once for every front end.
//!
//! [`decide`] turns a run that ended into plain data: a draft that replaces
//! an existing scene's body, a new scene file, a draft kept beside the scene
//! (`SCN-x.draft-<run>.md`) with the reason, a report only, or nothing with
//! the reason. The command line applies it to the disk ([`apply_on_disk`]);
//! the server turns it into a workspace edit and falls back to the disk
//! here when the editor refuses. Then `runs::report::conclude` anchors the run's
//! findings in the text the writer will see and writes them and the report.
//!
//! Architecture invariant: a writer's text is never overwritten. A scene is
//! replaced only when its text is the text recorded when the run was
//! created ([`SceneMark`]); a new scene file is created only where no file
//! is (create-new, so two runs racing for one new scene cannot both win);
//! anything else goes beside the scene.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use crate::index::{SourceFile, Workspace};
use crate::runs::output::draft;
use crate::runs::output::edits::{self, EditSet};
use crate::runs::recipe::Recipe;
pub use crate::runs::store::SceneMark;
use crate::runs::store::{Cache, CacheSlot, Disk, RunFiles, RunManifest, RunStatus};
use crate::text::TextRange;

use super::{NotWritten, write_guarded};

/// Where a run's result went.
#[derive(Clone, Debug, PartialEq)]
pub enum Delivery {
    /// The recipe only reports.
    Report,
    /// The scene file now holds the draft.
    Scene(String),
    /// The draft was written beside the scene, for this reason.
    Beside { path: String, reason: String },
    /// Nothing was written, for this reason (the run failed, was cancelled…).
    Withheld(String),
    /// The run's edits of the manuscript: those made, and those not made.
    Edits {
        changed: Vec<EditLine>,
        refused: Vec<EditLine>,
    },
}

/// One proposed edit as the report lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct EditLine {
    /// The file it changes (or names).
    pub path: Option<String>,
    /// What it does, in a line.
    pub summary: String,
    /// Why it was proposed, or why it was not made.
    pub note: Option<String>,
}

/// What to do with a draft.
#[derive(Clone, Debug, PartialEq)]
pub enum Placement {
    /// The existing scene's body (`range`, in the text the decision was
    /// made on) becomes `body`; `text` is the whole scene after.
    Replace {
        scene_path: String,
        range: TextRange,
        body: String,
        text: String,
        /// The text the decision was made on.
        base: SceneMark,
    },
    /// A new scene file.
    Create { scene_path: String, text: String },
    /// The draft kept beside the scene, and why.
    Beside {
        scene_path: String,
        path: String,
        text: String,
        reason: String,
    },
}

impl Placement {
    pub fn scene_path(&self) -> &str {
        match self {
            Placement::Replace { scene_path, .. }
            | Placement::Create { scene_path, .. }
            | Placement::Beside { scene_path, .. } => scene_path,
        }
    }

    /// The text of the file the draft becomes.
    pub fn text(&self) -> &str {
        match self {
            Placement::Replace { text, .. }
            | Placement::Create { text, .. }
            | Placement::Beside { text, .. } => text,
        }
    }

    /// The same draft, kept beside the scene because of `reason` (the editor
    /// refused the edit, the file appeared meanwhile…).
    pub fn beside(self, run_id: &str, reason: impl Into<String>) -> Placement {
        match self {
            Placement::Beside { .. } => self,
            Placement::Replace {
                scene_path, text, ..
            }
            | Placement::Create { scene_path, text } => Placement::Beside {
                path: draft::beside_path(&scene_path, run_id),
                scene_path,
                text,
                reason: reason.into(),
            },
        }
    }
}

/// What a run that ended leaves for the manuscript.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// A draft to put in place.
    Draft(Placement),
    /// Edits of the manuscript's files, placed in their current text.
    Edits(EditSet),
    /// The recipe only reports.
    Report,
    /// Nothing is written, for this reason ("because the run was cancelled").
    Withheld(String),
}

/// Decides where the result of `manifest` (a run that ended) goes.
/// `text_of` gives a file's text as the writer has it now (the editor's
/// buffer, else the disk's), `None` when there is no such file;
/// `workspace` gives the outline and cards a new scene's front matter is
/// made from, and the files edits may touch.
pub fn decide(
    workspace: &Workspace,
    recipe: Option<&Recipe>,
    manifest: &RunManifest,
    cache: &Cache,
    text_of: &dyn Fn(&str) -> Option<String>,
) -> Decision {
    let scene_path = manifest
        .task
        .initial_args
        .get("scene_path")
        .and_then(Value::as_str);
    if let Some(recipe) = recipe.filter(|recipe| edits::edits(recipe)) {
        return match manifest.status {
            RunStatus::Done => Decision::Edits(edits::resolve(
                workspace,
                edits::proposals(recipe, cache),
                scene_path,
                text_of,
            )),
            status => withheld(workspace.root(), manifest, status),
        };
    }
    let current = scene_path.and_then(text_of);
    let current = current.as_deref();
    let Some(result_step) = recipe.and_then(draft::result_step) else {
        return match manifest.status {
            RunStatus::Done => Decision::Report,
            status => withheld(workspace.root(), manifest, status),
        };
    };
    let draft = match cache.get(&result_step.output_slot) {
        Some(CacheSlot::Artifact { text, .. }) => Some(text.as_str()),
        _ => None,
    };
    let placed = |draft: &str, scene_path: &str| {
        let brief = recipe.and_then(|recipe| draft::run_draft(recipe, cache).1);
        place(
            workspace,
            manifest,
            scene_path,
            draft,
            brief.as_deref(),
            current,
        )
    };
    let dod_failed = || crate::runs::store::dod_issue(workspace.root(), &manifest.run_id).is_some();
    match (manifest.status, draft, scene_path) {
        (RunStatus::Done, Some(draft), Some(scene_path)) => {
            let placed = placed(draft, scene_path);
            if let (Placement::Replace { .. }, Some(current)) = (&placed, current) {
                keep_replaced(workspace.root(), &manifest.run_id, current);
            }
            Decision::Draft(placed)
        }
        (RunStatus::Done, Some(_), None) => {
            Decision::Withheld("because the task names no scene to put it in".to_owned())
        }
        // A draft that failed its Definition of Done (the continuity
        // verdict among its checks) goes beside the scene, never into it.
        (RunStatus::Failed, Some(draft), Some(scene_path)) if dod_failed() => {
            Decision::Draft(placed(draft, scene_path).beside(
                &manifest.run_id,
                "its Definition of Done failed: see the issue file and the findings",
            ))
        }
        (status, _, _) => withheld(workspace.root(), manifest, status),
    }
}

/// Where a run keeps the scene's text that its draft replaces.
pub const REPLACED_FILE: &str = "scene-before.md";

/// Keeps the scene's text as it is before a draft replaces it, in the run's
/// folder: the one write deciding makes, so that drafting again (or an edit
/// the writer undoes in another client) never loses the earlier words.
fn keep_replaced(root: &Path, run_id: &str, current: &str) {
    let path = RunFiles::new(root, run_id).dir.join(REPLACED_FILE);
    // Best effort: the scene itself is not touched when this fails, and the
    // editor's edit stays undoable.
    let _ = Disk::default().write_atomic(&path, current.as_bytes());
}

fn withheld(root: &Path, manifest: &RunManifest, status: RunStatus) -> Decision {
    Decision::Withheld(
        if status == RunStatus::Cancelled {
            "because the run was cancelled"
        } else if crate::runs::store::dod_issue(root, &manifest.run_id).is_some() {
            "because the Definition of Done failed"
        } else {
            "because the run did not finish"
        }
        .to_owned(),
    )
}

/// Where the draft of a finished drafting run goes, and its text there.
fn place(
    workspace: &Workspace,
    manifest: &RunManifest,
    scene_path: &str,
    draft: &str,
    brief: Option<&str>,
    current: Option<&str>,
) -> Placement {
    let scene_id = manifest
        .task
        .initial_args
        .get("scene_id")
        .and_then(Value::as_str)
        .map_or_else(
            || crate::index::file::file_stem(scene_path).to_owned(),
            str::to_owned,
        );
    let existing = current.map(|text| {
        Arc::new(SourceFile::parse(
            scene_path.into(),
            text.into(),
            &workspace.config().paths,
        ))
    });
    let now = SceneMark::of(current);
    let spliced = |file: &SourceFile| {
        let (range, body) = draft::replacement_body(file, draft);
        (
            range,
            body.clone(),
            format!("{}{body}", &file.text[..range.start]),
        )
    };
    let new_scene = || draft::new_scene_text(workspace, &scene_id, brief, draft);
    let beside = |text: String, reason: &str| Placement::Beside {
        scene_path: scene_path.to_owned(),
        path: draft::beside_path(scene_path, &manifest.run_id),
        text,
        reason: reason.to_owned(),
    };
    let Some(before) = &manifest.scene else {
        // A run made before its scene was recorded: only a missing scene
        // is safe to write.
        return match &existing {
            None => Placement::Create {
                scene_path: scene_path.to_owned(),
                text: new_scene(),
            },
            Some(file) => beside(
                spliced(file).2,
                "the scene's text when the run began was not recorded",
            ),
        };
    };
    match (&existing, before == &now) {
        (Some(file), true) => {
            let (range, body, text) = spliced(file);
            Placement::Replace {
                scene_path: scene_path.to_owned(),
                range,
                body,
                text,
                base: now,
            }
        }
        (None, true) => Placement::Create {
            scene_path: scene_path.to_owned(),
            text: new_scene(),
        },
        (existing, false) => {
            // The writer's changes win: the draft goes beside, made as the
            // scene it would have become.
            let text = match existing.as_deref().filter(|_| before.exists()) {
                Some(file) => spliced(file).2,
                None => new_scene(),
            };
            beside(text, "the scene changed while the run worked")
        }
    }
}

/// What applying a placement did: where the draft went, and the text of the
/// file it is in.
#[derive(Clone, Debug, PartialEq)]
pub struct Applied {
    pub delivery: Delivery,
    /// (workspace-relative path, its text) of each file the result is in.
    pub landed: Vec<(String, String)>,
}

impl Applied {
    /// A decision that writes nothing.
    pub fn nothing(decision: &Decision) -> Applied {
        Applied {
            delivery: match decision {
                Decision::Withheld(reason) => Delivery::Withheld(reason.clone()),
                _ => Delivery::Report,
            },
            landed: Vec::new(),
        }
    }

    /// What applying a run's edits did.
    pub fn edits(outcome: edits::Outcome) -> Applied {
        let line =
            |proposal: &edits::Proposal, path: Option<String>, note: Option<String>| EditLine {
                path,
                summary: proposal.summary(),
                note,
            };
        let mut changed = Vec::new();
        let mut landed = Vec::new();
        for change in outcome.changed {
            changed.extend(
                change
                    .applied
                    .iter()
                    .map(|p| line(p, Some(change.path.clone()), p.why.clone())),
            );
            landed.push((change.path, change.text));
        }
        let refused = outcome
            .refused
            .iter()
            .map(|r| {
                line(
                    &r.proposal,
                    r.proposal.file.clone(),
                    Some(r.reason.to_string()),
                )
            })
            .collect();
        Applied {
            delivery: Delivery::Edits { changed, refused },
            landed,
        }
    }
}

/// Applies `placement` to the files (the command line; the server for a
/// client that cannot create files, and for a draft kept beside). A
/// replacement is made only if the disk still has the text it was decided
/// on; a new file only where none is; otherwise the draft goes beside.
pub fn apply_on_disk(root: &Path, disk: &Disk, run_id: &str, placement: Placement) -> Applied {
    let base = match &placement {
        Placement::Replace { base, .. } => base.clone(),
        Placement::Create { .. } => SceneMark::of(None),
        Placement::Beside { .. } => return write_beside(root, disk, placement),
    };
    let path = root.join(placement.scene_path());
    let reason = match write_guarded(disk, &path, &base, placement.text()) {
        Ok(()) => return landed(placement),
        Err(NotWritten::Changed) => "the scene changed while the run worked".to_owned(),
        Err(NotWritten::Appeared) => "the scene file appeared while the run worked".to_owned(),
        Err(NotWritten::Io(error)) => format!("the scene cannot be written ({error})"),
    };
    write_beside(root, disk, placement.beside(run_id, reason))
}

/// The command line's delivery: decides where the run's draft goes with the
/// scene as the disk has it, and puts it there.
pub fn deliver_to_disk(
    workspace: &Workspace,
    recipe: Option<&Recipe>,
    manifest: &RunManifest,
    cache: &Cache,
) -> Applied {
    let root = workspace.root();
    let text_of = |path: &str| std::fs::read_to_string(root.join(path)).ok();
    match decide(workspace, recipe, manifest, cache, &text_of) {
        Decision::Draft(placement) => {
            apply_on_disk(root, &Disk::default(), &manifest.run_id, placement)
        }
        Decision::Edits(set) => Applied::edits(edits::apply_on_disk(
            root,
            &Disk::default(),
            &manifest.run_id,
            set,
        )),
        other => Applied::nothing(&other),
    }
}

fn landed(placement: Placement) -> Applied {
    let path = placement.scene_path().to_owned();
    Applied {
        delivery: Delivery::Scene(path.clone()),
        landed: vec![(path, placement.text().to_owned())],
    }
}

/// Writes a draft kept beside its scene.
fn write_beside(root: &Path, disk: &Disk, placement: Placement) -> Applied {
    let Placement::Beside {
        path, text, reason, ..
    } = placement
    else {
        unreachable!("only a draft kept beside is written beside");
    };
    let absolute = root.join(&path);
    if let Some(parent) = absolute.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    match disk.write_atomic(&absolute, text.as_bytes()) {
        Ok(()) => Applied {
            delivery: Delivery::Beside {
                path: path.clone(),
                reason,
            },
            landed: vec![(path, text)],
        },
        Err(error) => Applied {
            delivery: Delivery::Withheld(format!(
                "because {reason}, and {path} cannot be written ({error}); the draft is in the run's cache.json"
            )),
            landed: Vec::new(),
        },
    }
}
