//! The recipe runs the editor offers where the cursor is: "Draft scene" on
//! an outline entry whose scene has no file or hardly any prose (and as a
//! code lens above it), and on a scene, "Check consistency", "Review prose"
//! (of the scene or the selection), "Validate against the outline" and
//! "Update canon"; in the outline, "Restructure outline". Each is a task
//! description put through the task router, so a project recipe whose
//! pattern matches better takes the action over, and project recipes of
//! their own are offered on scenes too.

use serde_json::{Map, Value, json};

use crate::index::{OutlineEntry, SourceFile, Workspace};
use crate::runs::recipe::Registry;
use crate::runs::router;
use crate::text::TextRange;

/// A scene with no words target counts as short below this many words.
pub const SHORT_SCENE_WORDS: usize = 100;

/// Characters of a selection quoted in a task description.
const SELECTION_CHARS: usize = 4000;

/// A run the writer can start from here.
#[derive(Clone, Debug, PartialEq)]
pub struct RunAction {
    pub title: String,
    pub recipe_id: String,
    /// The task description the run gets.
    pub task: String,
    pub args: Map<String, Value>,
    /// The text the action is about.
    pub range: TextRange,
    /// Whether it is the fix of a `missing-scene` diagnostic at `range`.
    pub drafts_missing_scene: bool,
}

/// Why an outline entry's scene wants drafting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DraftNeed {
    NoFile,
    Empty,
    Short { words: usize },
}

/// Whether the scene `scene_id` wants drafting, and why.
pub fn draft_need(workspace: &Workspace, scene_id: &str) -> Option<DraftNeed> {
    let catalog = workspace.catalog();
    let Some(scene) = catalog.scene(scene_id).and_then(|file| file.scene()) else {
        return catalog
            .scene_files(scene_id)
            .is_empty()
            .then_some(DraftNeed::NoFile);
    };
    let words = scene.word_count;
    let short_below = scene
        .words_target
        .map_or(SHORT_SCENE_WORDS, |target| target as usize / 4);
    if words == 0 {
        Some(DraftNeed::Empty)
    } else if words < short_below {
        Some(DraftNeed::Short { words })
    } else {
        None
    }
}

/// The actions for `range` of `file` (a cursor or a selection).
pub fn run_actions(
    workspace: &Workspace,
    registry: &Registry,
    file: &SourceFile,
    range: TextRange,
) -> Vec<RunAction> {
    let mut actions = Vec::new();
    if let Some(outline) = file.outline() {
        for entry in &outline.entries {
            if entry.range.end < range.start || entry.range.start > range.end {
                continue;
            }
            if let Some(action) = draft_action(workspace, registry, entry) {
                actions.push(action);
            }
        }
        let whole = TextRange::new(0, file.text.len());
        actions.extend(routed(
            workspace,
            registry,
            "Restructure the outline",
            "restructure outline".to_owned(),
            Map::new(),
            whole,
        ));
    }
    if let Some(scene) = file.scene() {
        let id = scene.id.clone();
        let head = file.head_range();
        if let Some(need) = draft_need(workspace, &id) {
            let title = match need {
                DraftNeed::Short { words } => format!("Draft scene {id} ({words} words so far)"),
                _ => format!("Draft scene {id}"),
            };
            actions.extend(routed(
                workspace,
                registry,
                &title,
                format!("draft scene {id}"),
                scene_args(&id),
                head,
            ));
        }
        let selection = (!range.is_empty())
            .then(|| file.text.get(range.start..range.end))
            .flatten()
            .map(str::trim)
            .filter(|text| !text.is_empty());
        let fixed = [
            (
                format!("Check consistency of {id} with canon"),
                format!("check consistency {id}"),
            ),
            match selection {
                Some(text) => (
                    "Review the prose of this passage".to_owned(),
                    format!(
                        "review prose {id}, this passage: “{}”",
                        text.chars().take(SELECTION_CHARS).collect::<String>()
                    ),
                ),
                None => (
                    format!("Review the prose of {id}"),
                    format!("review prose {id}"),
                ),
            },
            (
                format!("Validate {id} against the outline"),
                format!("validate scene {id} against the outline"),
            ),
            (
                format!("Read the story health of {id} (timeline, flaw, theme)"),
                format!("story health {id}"),
            ),
            (
                format!("Update canon cards from {id}"),
                format!("update canon from {id}"),
            ),
        ];
        let mut offered: Vec<String> = actions.iter().map(|a| a.recipe_id.clone()).collect();
        for (title, task) in fixed {
            let mut args = scene_args(&id);
            if task.contains("this passage") {
                args.insert(
                    "selection".into(),
                    json!({"start": range.start, "end": range.end}),
                );
            }
            let at = if range.is_empty() { head } else { range };
            if let Some(action) = routed(workspace, registry, &title, task, args, at) {
                offered.push(action.recipe_id.clone());
                actions.push(action);
            }
        }
        // The project's own recipes, offered by their label.
        for recipe in registry.recipes() {
            if !registry.is_project(&recipe.recipe_id) || offered.contains(&recipe.recipe_id) {
                continue;
            }
            let Some(pattern) = recipe
                .task_patterns
                .iter()
                .find(|pattern| !pattern.trim().starts_with('/'))
            else {
                continue;
            };
            actions.push(RunAction {
                title: format!("{} ({id})", recipe.label),
                recipe_id: recipe.recipe_id.clone(),
                task: format!("{} {id}", pattern.trim()),
                args: scene_args(&id),
                range: head,
                drafts_missing_scene: false,
            });
        }
    }
    actions
}

/// The "Draft scene" lenses of an outline: one above each entry whose
/// scene has no file or hardly any prose.
pub fn draft_lenses(
    workspace: &Workspace,
    registry: &Registry,
    file: &SourceFile,
) -> Vec<RunAction> {
    file.outline()
        .map(|outline| {
            outline
                .entries
                .iter()
                .filter_map(|entry| draft_action(workspace, registry, entry))
                .collect()
        })
        .unwrap_or_default()
}

fn draft_action(
    workspace: &Workspace,
    registry: &Registry,
    entry: &OutlineEntry,
) -> Option<RunAction> {
    let id = &entry.scene_id;
    let need = draft_need(workspace, id)?;
    let title = match need {
        DraftNeed::NoFile => format!("Draft scene {id}"),
        DraftNeed::Empty => format!("Draft scene {id} (empty)"),
        DraftNeed::Short { words } => format!("Draft scene {id} ({words} words so far)"),
    };
    let mut action = routed(
        workspace,
        registry,
        &title,
        format!("draft scene {id}"),
        scene_args(id),
        entry.id_range,
    )?;
    action.drafts_missing_scene = need == DraftNeed::NoFile;
    Some(action)
}

fn scene_args(scene_id: &str) -> Map<String, Value> {
    let mut args = Map::new();
    args.insert("scene_id".into(), Value::String(scene_id.to_owned()));
    args
}

/// The action for `task`, if a recipe takes it.
fn routed(
    workspace: &Workspace,
    registry: &Registry,
    title: &str,
    task: String,
    mut args: Map<String, Value>,
    range: TextRange,
) -> Option<RunAction> {
    let routing = router::route(registry, Some(workspace), &task);
    let recipe_id = routing.recipe_id.filter(|_| routing.routable)?;
    for (key, value) in routing.initial_args {
        args.entry(key).or_insert(value);
    }
    Some(RunAction {
        title: title.to_owned(),
        recipe_id,
        task,
        args,
        range,
        drafts_missing_scene: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runs::prompts::Prompts;

    fn example() -> (Workspace, Registry) {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/salt-road");
        let workspace = Workspace::load(&root);
        let registry = Registry::load(&root, &Prompts::load_with(&root, None));
        (workspace, registry)
    }

    #[test]
    fn the_outline_offers_to_draft_what_is_missing_and_to_restructure() {
        let (workspace, registry) = example();
        let outline = workspace.file("Story/SCN-outline.md").unwrap();
        let at = outline.text.find("SCN-the-reckoning").unwrap();
        let actions = run_actions(&workspace, &registry, outline, TextRange::empty(at + 3));
        let titles: Vec<(&str, &str)> = actions
            .iter()
            .map(|a| (a.title.as_str(), a.recipe_id.as_str()))
            .collect();
        assert_eq!(
            titles,
            [
                ("Draft scene SCN-the-reckoning", "creative_draft_scene"),
                ("Restructure the outline", "structural_outline")
            ]
        );
        assert!(actions[0].drafts_missing_scene);
        assert_eq!(
            actions[0].args["scene_path"],
            "Story/Scenes/SCN-the-reckoning.md"
        );
        let lenses = draft_lenses(&workspace, &registry, outline);
        assert_eq!(lenses.len(), 1, "only the reckoning has no prose yet");
    }

    #[test]
    fn a_scene_offers_its_checks_and_a_selection_its_review() {
        let (workspace, registry) = example();
        let scene = workspace.file("Story/Scenes/SCN-the-gate.md").unwrap();
        let actions = run_actions(&workspace, &registry, scene, TextRange::empty(0));
        let recipes: Vec<&str> = actions.iter().map(|a| a.recipe_id.as_str()).collect();
        assert_eq!(
            recipes,
            [
                "analytical_consistency",
                "analytical_prose",
                "analytical_scene_validate",
                "analytical_story_health",
                "structural_canon"
            ]
        );
        let start = scene.text.find("Tomas. He's kept").unwrap();
        let selected = TextRange::new(start, start + 30);
        let actions = run_actions(&workspace, &registry, scene, selected);
        let review = actions
            .iter()
            .find(|a| a.recipe_id == "analytical_prose")
            .unwrap();
        assert_eq!(review.title, "Review the prose of this passage");
        let quoted = format!("“{}”", scene.text[start..start + 30].trim());
        assert!(review.task.ends_with(&quoted), "{}", review.task);
        assert_eq!(review.range, selected);
    }

    #[test]
    fn empty_and_short_scenes_want_drafting() {
        let (mut workspace, _) = example();
        let paths = workspace.config().paths.clone();
        let file = |text: &str| {
            SourceFile::parse("Story/Scenes/SCN-the-gate.md".into(), text.into(), &paths)
        };
        workspace.insert_file(file("---\ntitle: Gate\n---\n\n# The Gate\n"));
        assert_eq!(
            draft_need(&workspace, "SCN-the-gate"),
            Some(DraftNeed::Empty)
        );
        workspace.insert_file(file("---\nwords: 2000\n---\n\nSome three words. "));
        assert_eq!(
            draft_need(&workspace, "SCN-the-gate"),
            Some(DraftNeed::Short { words: 3 })
        );
        assert_eq!(draft_need(&workspace, "SCN-the-arrival"), None);
        assert_eq!(
            draft_need(&workspace, "SCN-nowhere"),
            Some(DraftNeed::NoFile)
        );
    }
}
