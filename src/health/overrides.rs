//! The writer's overrides of the checks a model reads: "this scene does
//! challenge the flaw", whatever a run said. Kept in
//! `.control-room/health/overrides.jsonl`, one JSON object a line, appended
//! (a later line for the same check and scene replaces an earlier one; a
//! line without a verdict clears the override). A model's later run never
//! replaces one: the report shows the writer's verdict and reason.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::model::ModelCheck;
use crate::storage::Disk;

/// Where the overrides are kept, relative to the root.
pub const OVERRIDES_FILE: &str = ".control-room/health/overrides.jsonl";

/// One override, as a line of the file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Override {
    pub check: ModelCheck,
    /// The scene's id.
    pub scene: String,
    /// The writer's verdict, one of the check's; `None` clears it.
    pub verdict: Option<String>,
    #[serde(default)]
    pub why: String,
    #[serde(default)]
    pub at: String,
}

/// Why an override cannot be kept.
#[derive(Debug, thiserror::Error)]
pub enum OverrideError {
    #[error("`{0}` is not a check a model reads: say A3, B1 or C2")]
    Check(String),
    #[error("`{verdict}` is not a verdict of {check}: say one of {known}")]
    Verdict {
        check: &'static str,
        verdict: String,
        known: String,
    },
    #[error("`{0}` is not a scene of the outline")]
    Scene(String),
    #[error("cannot write {OVERRIDES_FILE}: {0}")]
    Write(#[from] std::io::Error),
}

impl Override {
    /// Checks the verdict against the check's and the scene against
    /// `is_scene`; taking an override back needs neither (its scene may
    /// have left the outline since).
    pub fn validate(&self, is_scene: impl Fn(&str) -> bool) -> Result<(), OverrideError> {
        let Some(verdict) = &self.verdict else {
            return Ok(());
        };
        if !self.check.verdicts().contains(&verdict.as_str()) {
            return Err(OverrideError::Verdict {
                check: self.check.id(),
                verdict: verdict.clone(),
                known: self.check.verdicts().join(", "),
            });
        }
        if !is_scene(&self.scene) {
            return Err(OverrideError::Scene(self.scene.clone()));
        }
        Ok(())
    }
}

/// Keeps the writer's verdict (`None`: takes it back) on `scene` for the
/// check `check` (`A3`, `B1`, `C2`) in the manuscript of `workspace`, with
/// `why`: checked, then appended through `disk`; answers what was kept.
pub fn keep(
    workspace: &crate::index::Workspace,
    disk: &Disk,
    (check, scene): (&str, &str),
    verdict: Option<String>,
    why: &str,
) -> Result<Override, OverrideError> {
    let check = ModelCheck::parse(check).ok_or_else(|| OverrideError::Check(check.to_owned()))?;
    let found = Override {
        check,
        scene: scene.to_owned(),
        verdict,
        why: why.trim().to_owned(),
        at: crate::storage::now(),
    };
    let outline = workspace
        .catalog()
        .outline()
        .and_then(|file| file.outline());
    found.validate(|id| {
        outline.is_some_and(|outline| outline.entries.iter().any(|entry| entry.scene_id == id))
    })?;
    append(workspace.root(), disk, &found)?;
    Ok(found)
}

/// The overrides in force under `root`, by check and scene; a line that is
/// not an override is reported (file and line) and skipped.
pub fn load(root: &Path, problems: &mut Vec<String>) -> BTreeMap<(ModelCheck, String), Override> {
    let mut kept = BTreeMap::new();
    let Ok(text) = std::fs::read_to_string(root.join(OVERRIDES_FILE)) else {
        return kept;
    };
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Override>(line) {
            Ok(found) => {
                let key = (found.check, found.scene.clone());
                if found.verdict.is_some() {
                    kept.insert(key, found);
                } else {
                    kept.remove(&key);
                }
            }
            Err(error) => problems.push(format!("{OVERRIDES_FILE}:{}: {error}", number + 1)),
        }
    }
    kept
}

/// Appends `found` under `root`, through `disk`.
pub fn append(root: &Path, disk: &Disk, found: &Override) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(found).map_err(std::io::Error::other)?;
    line.push(b'\n');
    disk.append_line(&root.join(OVERRIDES_FILE), &line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flaw(scene: &str, verdict: Option<&str>) -> Override {
        Override {
            check: ModelCheck::Flaw,
            scene: scene.into(),
            verdict: verdict.map(str::to_owned),
            why: "she gives up the keys".into(),
            at: "2026-11-27T00:00:00Z".into(),
        }
    }

    #[test]
    fn a_later_override_replaces_one_and_an_empty_verdict_clears_it() {
        let dir = tempfile::tempdir().unwrap();
        let disk = Disk::default();
        append(dir.path(), &disk, &flaw("SCN-a", Some("not challenged"))).unwrap();
        append(dir.path(), &disk, &flaw("SCN-a", Some("challenged"))).unwrap();
        append(dir.path(), &disk, &flaw("SCN-b", Some("challenged"))).unwrap();
        append(dir.path(), &disk, &flaw("SCN-b", None)).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join(OVERRIDES_FILE))
            .and_then(|mut file| std::io::Write::write_all(&mut file, b"{not json\n"))
            .unwrap();
        let mut problems = Vec::new();
        let kept = load(dir.path(), &mut problems);
        assert_eq!(kept.len(), 1);
        let a = &kept[&(ModelCheck::Flaw, "SCN-a".to_owned())];
        assert_eq!(a.verdict.as_deref(), Some("challenged"));
        assert_eq!(problems.len(), 1);
        assert!(problems[0].starts_with(".control-room/health/overrides.jsonl:5:"));
        // A verdict the check does not have, or a scene the outline lacks.
        let wrong = flaw("SCN-a", Some("strong"));
        assert_eq!(
            wrong.validate(|_| true).unwrap_err().to_string(),
            "`strong` is not a verdict of B1: say one of challenged, not challenged, cannot judge"
        );
        assert!(
            flaw("SCN-x", Some("challenged"))
                .validate(|_| false)
                .is_err()
        );
    }
}
