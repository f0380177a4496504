//! The knowledge base and the agents' findings on the command line, as the
//! editor has them: `remember` ("Remember this" on a passage), `findings`
//! (the findings the editor shows) and `findings dismiss`, `decisions` (the
//! decisions that contradict their card) and `promote` ("Promote to card").

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, bail};

use super::{passage_lines, workspace_root};
use crate::index::Workspace;
use crate::runs::findings::{self, FindingStore};
use crate::runs::prompts::state::{KB_FILE, append_decisions};
use crate::runs::runner::now;
use crate::runs::store::Disk;
use crate::text::{LineIndex, TextRange, apply_edits};

/// `control-room remember PATH[:START-END]`: the passage's decision is
/// appended to the knowledge base; prints it as JSON.
pub fn remember(dir: &Path, spec: &str) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let workspace = Workspace::load(&root);
    let passage = passage_lines(&workspace, spec)?;
    let file = workspace
        .file(&passage.path)
        .with_context(|| format!("{} is not a file of this workspace", passage.path))?;
    let decision = crate::ide::remembered(&workspace, file, passage.range, &now())
        .with_context(|| format!("`{spec}`: the passage is empty"))?;
    append_decisions(&root, &Disk::default(), std::slice::from_ref(&decision))
        .context("cannot write the knowledge base")?;
    println!("{}", serde_json::to_string_pretty(&decision)?);
    Ok(0)
}

/// `control-room findings`: the agents' findings the editor shows (the
/// latest run of each recipe and scene, less the dismissed), one a line.
pub fn list_findings(dir: &Path) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let workspace = Workspace::load(&root);
    let store = FindingStore::load(&root);
    let shown: Vec<_> = store.findings().cloned().collect();
    if shown.is_empty() {
        println!("no findings");
    }
    for finding in shown {
        let line = workspace
            .file(&finding.file)
            .and_then(|file| {
                let at = file.text.find(&finding.quote)?;
                Some(LineIndex::new(&file.text).line_of(at) + 1)
            })
            .map_or(String::new(), |line| format!(":{line}"));
        println!(
            "{}{line}: {}  [{}]",
            finding.file, finding.message, finding.id
        );
    }
    Ok(0)
}

/// `control-room findings dismiss <id>`: the finding is recorded as
/// dismissed; it is not shown again, here or in the editor.
pub fn dismiss(dir: &Path, finding_id: &str) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let store = FindingStore::load(&root);
    let Some(finding) = store.get(finding_id) else {
        bail!("no finding `{finding_id}` is shown; `control-room findings` lists them");
    };
    findings::dismiss(&root, &Disk::default(), finding, &now())
        .context("cannot record the dismissal")?;
    println!("dismissed {finding_id}");
    Ok(0)
}

/// The knowledge base's text and every decision in it that contradicts
/// its card.
fn contradictions(
    workspace: &Workspace,
) -> anyhow::Result<(String, Vec<crate::ide::Contradiction>)> {
    let path = workspace.absolute_path(KB_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => return Err(error).with_context(|| format!("cannot read {KB_FILE}")),
    };
    let found = crate::ide::contradictions(workspace, &KB_FILE.into(), &text, &now());
    Ok((text, found))
}

/// `control-room decisions`: the decisions that contradict a hard fact
/// (their card, the Story Bible, a promoted fact), as
/// `decisions.jsonl:LINE: message [code] (the other side's file:line)`;
/// exit 1 when there is one.
pub fn decisions(dir: &Path) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let workspace = Workspace::load(&root);
    let (text, found) = contradictions(&workspace)?;
    let lines = LineIndex::new(&text);
    for contradiction in &found {
        let line = lines.line_of(contradiction.range.start) + 1;
        let other_line = if &*contradiction.other == KB_FILE {
            lines.line_of(contradiction.other_range.start) + 1
        } else {
            workspace.file(&contradiction.other).map_or(1, |file| {
                LineIndex::new(&file.text).line_of(contradiction.other_range.start) + 1
            })
        };
        println!(
            "{KB_FILE}:{line}: {} [{}] ({} {}:{other_line}); `control-room promote {line}` adopts it, `control-room withdraw {line}` keeps the other",
            contradiction.message,
            contradiction.code,
            contradiction.other_label,
            contradiction.other,
        );
    }
    Ok(i32::from(!found.is_empty()))
}

/// `control-room promote <line>`: the decision on that line of the
/// knowledge base is adopted as the editor's first fix does: the card, the
/// Story Bible or the older fact changed to what it says, and the decision
/// marked promoted.
pub fn promote(dir: &Path, line: usize) -> anyhow::Result<i32> {
    settle(dir, line, "promote")
}

/// `control-room withdraw <line>`: the decision on that line of the
/// knowledge base is withdrawn (its line removed) and the fact it
/// contradicts kept, as the editor's second fix does.
pub fn withdraw(dir: &Path, line: usize) -> anyhow::Result<i32> {
    settle(dir, line, "withdraw")
}

/// The first contradiction of the decision on `line` settled one way.
fn settle(dir: &Path, line: usize, how: &str) -> anyhow::Result<i32> {
    let root = workspace_root(dir)?;
    let workspace = Workspace::load(&root);
    let (text, found) = contradictions(&workspace)?;
    let lines = LineIndex::new(&text);
    let Some(contradiction) = found
        .into_iter()
        .find(|found| lines.line_of(found.range.start) as usize + 1 == line)
    else {
        bail!(
            "line {line} of {KB_FILE} holds no decision that contradicts a card, the Story Bible or a promoted fact; `control-room decisions` lists them"
        );
    };
    let fix = if how == "promote" {
        &contradiction.promotion
    } else {
        &contradiction.withdrawal
    };
    let mut by_file: BTreeMap<String, Vec<(TextRange, String)>> = BTreeMap::new();
    for edit in &fix.edits {
        by_file
            .entry(edit.path.to_string())
            .or_default()
            .push((edit.range, edit.new_text.clone()));
    }
    let disk = Disk::default();
    for (path, mut edits) in by_file {
        let absolute = workspace.absolute_path(&path);
        let current =
            std::fs::read_to_string(&absolute).with_context(|| format!("cannot read {path}"))?;
        let base = if path == KB_FILE {
            text.as_str()
        } else {
            workspace.file(&path).map_or("", |file| &file.text)
        };
        if current != base {
            bail!("{path} changed while it was read; run `control-room {how} {line}` again");
        }
        edits.sort_by_key(|(range, _)| (range.start, range.end));
        disk.write_atomic(&absolute, apply_edits(&current, &edits).as_bytes())
            .with_context(|| format!("cannot write {path}"))?;
        println!("changed {path}");
    }
    Ok(0)
}
