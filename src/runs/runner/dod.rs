//! The Definition of Done: the recipe's checks on the finished run's slots,
//! and the issue file a failure leaves for the writer.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::RunError;
use super::slots::{Slots, task_value};
use crate::runs::recipe::{DodCheck, Recipe};
use crate::runs::refs::{self, RefPath};
use crate::runs::store::RunManifest;
use crate::storage::Disk;
use crate::tools;

/// The failed checks of the recipe's Definition of Done, in words.
pub(super) fn failures(
    root: &Path,
    recipe: &Recipe,
    manifest: &RunManifest,
    values: &HashMap<String, Value>,
) -> Vec<String> {
    let task = task_value(manifest);
    let scope = Slots {
        task: &task,
        values,
    };
    recipe
        .dod
        .iter()
        .filter_map(|check| dod_failure(check, &scope, root))
        .collect()
}

/// Writes `.control-room/issues/DOD-{runId}.md` and returns its path.
pub(super) fn write_issue(
    root: &Path,
    disk: &Disk,
    manifest: &RunManifest,
    recipe: &Recipe,
    failures: &[String],
) -> Result<String, RunError> {
    let relative = format!(".control-room/issues/DOD-{}.md", manifest.run_id);
    let path: PathBuf = root.join(&relative);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let run_dir = format!(".control-room/runs/{}", manifest.run_id);
    let mut text = format!(
        "# Definition of Done failed: {}\n\n- Run: `{}` ({})\n- Task: {}\n- Finished: {}\n\n## Failed checks\n\n",
        recipe.label,
        manifest.run_id,
        recipe.recipe_id,
        manifest.task.description,
        manifest.updated_at
    );
    for failure in failures {
        text.push_str(&format!("- {failure}\n"));
    }
    text.push_str(&format!(
        "\n## The run's files\n\n- [run.json](../runs/{id}/run.json)\n- [steps.jsonl](../runs/{id}/steps.jsonl)\n- [cache.json](../runs/{id}/cache.json)\n- Receipts: `.control-room/audit/sessions/{session}/tool_receipts.jsonl`\n\nResume the run after fixing what failed with `control-room runs resume {id}` (files in `{run_dir}`).\n",
        id = manifest.run_id,
        session = manifest.session_id,
    ));
    disk.write_atomic(&path, text.as_bytes())?;
    Ok(relative)
}

/// A failed DoD check in words, or `None` when it passes.
fn dod_failure(check: &DodCheck, scope: &Slots, root: &Path) -> Option<String> {
    match check.check.as_str() {
        "slot_not_null" => {
            let slot = check.slot.as_deref().unwrap_or_default();
            match scope.values.get(slot) {
                Some(value) if !value.is_null() && value != &Value::String(String::new()) => None,
                _ => Some(format!("slot_not_null: slot `{slot}` is empty")),
            }
        }
        "slot_min_words" => {
            // A model's talk about the task ("The scene is ready.") is
            // prose to every other check: it is no scene.
            let slot = check.slot.as_deref().unwrap_or_default();
            let least = check.expected.as_ref().and_then(Value::as_u64).unwrap_or(0);
            let words = match scope.values.get(slot) {
                Some(Value::String(text)) => text
                    .split_whitespace()
                    .filter(|word| word.chars().any(char::is_alphanumeric))
                    .count(),
                _ => 0,
            };
            (words < least as usize).then(|| {
                format!("slot_min_words: slot `{slot}` has {words} words, fewer than {least}")
            })
        }
        "slot_field_equals" => {
            let slot = check.slot.as_deref().unwrap_or_default();
            let field = check.field.as_deref().unwrap_or_default();
            let expected = check.expected.clone().unwrap_or(Value::Null);
            let path = match RefPath::parse(&format!("{slot}.{field}")) {
                Ok(path) => path,
                Err(error) => return Some(format!("slot_field_equals: {error}")),
            };
            match path.resolve_from(scope.values.get(slot)) {
                Ok(actual) if *actual == expected => None,
                Ok(actual) => Some(format!(
                    "slot_field_equals: `{slot}.{field}` is {actual}, expected {expected}"
                )),
                Err(error) => Some(format!("slot_field_equals: {error}")),
            }
        }
        "file_exists" => {
            let mut roots = Vec::new();
            let path = check.path.clone().unwrap_or(Value::Null);
            match refs::resolve(&path, scope, &mut roots) {
                Ok(Value::String(path)) => {
                    if tools::check_relative_path(&path).is_err() {
                        Some(format!(
                            "file_exists: `{path}` is not a path inside the workspace"
                        ))
                    } else if root.join(&path).is_file() {
                        None
                    } else {
                        Some(format!("file_exists: `{path}` does not exist"))
                    }
                }
                Ok(other) => Some(format!("file_exists: the path is {other}, not text")),
                Err(error) => Some(format!("file_exists: {error}")),
            }
        }
        other => Some(format!("unknown DoD check `{other}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The defect: a small model's polish step answered "The final scene is
    /// ready and in the original draft." and that one sentence, prose to
    /// every contract check, landed as the scene.
    #[test]
    fn a_draft_of_a_few_words_of_talk_fails_slot_min_words() {
        let check: DodCheck = serde_json::from_value(serde_json::json!({
            "check": "slot_min_words", "slot": "edited_draft", "expected": 100
        }))
        .unwrap();
        let task = Value::Null;
        let failure = |text: &str| {
            let values =
                HashMap::from([("edited_draft".to_owned(), Value::String(text.to_owned()))]);
            let scope = Slots {
                task: &task,
                values: &values,
            };
            dod_failure(&check, &scope, Path::new("."))
        };
        let talk =
            "The final scene is ready and in the original draft.\n\n[Your work, your own story]";
        assert_eq!(
            failure(talk).as_deref(),
            Some("slot_min_words: slot `edited_draft` has 15 words, fewer than 100")
        );
        let scene = "Rain fell on the salt road. ".repeat(20);
        assert_eq!(failure(&scene), None, "a hundred-odd words pass");
        let empty = Slots {
            task: &task,
            values: &HashMap::new(),
        };
        assert!(dod_failure(&check, &empty, Path::new(".")).is_some());
    }

    #[test]
    fn slot_min_words_takes_a_whole_number_of_words() {
        let prompts = crate::runs::prompts::Prompts::bundled();
        let bundled = include_str!("../../../recipes/creative_draft_scene.json");
        let recipe = crate::runs::recipe::parse("creative_draft_scene.json", bundled, &prompts)
            .expect("the bundled recipe is valid");
        assert!(
            recipe
                .dod
                .iter()
                .any(|check| check.check == "slot_min_words"),
            "a drafted scene has a least number of words"
        );
        let wrong = bundled.replace(
            r#""slot": "edited_draft", "expected": 100"#,
            r#""slot": "edited_draft", "expected": "many""#,
        );
        assert_ne!(wrong, bundled);
        let errors = crate::runs::recipe::parse("creative_draft_scene.json", &wrong, &prompts)
            .expect_err("a number of words that is no number is refused");
        assert!(
            errors
                .iter()
                .any(|error| error.pointer.ends_with("/expected") && error.rule == "wrong-type"),
            "{errors:?}"
        );
    }
}
