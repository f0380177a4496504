//! The task router (appendix E of the execution-modes spec): picks a recipe
//! for a task description by its `task_patterns`, deterministically and
//! without a model. A pattern is a case-insensitive substring ("draft scene")
//! or, written between slashes, a case-insensitive regular expression
//! (`/draft (a|the) scene/`). When several recipes match, the longest match
//! wins: a substring's length, or the length of the text a regular expression
//! matched (ties go to the recipe id that sorts first, and the reason says so).
//!
//! It also seeds and completes the run's arguments from what the workspace
//! already knows, so a writer names a scene and nothing else: a scene id
//! (`SCN-…`), a scene path, or "scene N" (the N-th entry of the outline) in the
//! description becomes `scene_path`; `canon_paths` default to the cards of the
//! scene's `pov`, `characters` and `location` (or those its outline beat
//! names).

use serde::Serialize;
use serde_json::{Map, Value};

use crate::index::Workspace;
use crate::runs::recipe::{Registry, TaskPattern};
use crate::tools::{canon_for_scene, check_relative_path};

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RoutingResult {
    pub recipe_id: Option<String>,
    pub initial_args: Map<String, Value>,
    pub routable: bool,
    pub reason: String,
}

/// Routes `description` among the registry's recipes.
pub fn route(
    registry: &Registry,
    workspace: Option<&Workspace>,
    description: &str,
) -> RoutingResult {
    let lowered = description.to_lowercase();
    let mut best: Option<(usize, &str, &str)> = None;
    let mut tied = Vec::new();
    for recipe in registry.recipes() {
        for pattern in &recipe.task_patterns {
            // Patterns were validated when the recipe loaded; one that no
            // longer compiles simply matches nothing.
            let Some(length) = TaskPattern::new(pattern)
                .ok()
                .and_then(|pattern| pattern.match_length(description, &lowered))
            else {
                continue;
            };
            match best {
                Some((best_length, _, _)) if length < best_length => {}
                Some((best_length, best_id, _)) if length == best_length => {
                    if best_id != recipe.recipe_id {
                        tied.push(recipe.recipe_id.clone());
                    }
                }
                _ => {
                    best = Some((length, &recipe.recipe_id, pattern));
                    tied.clear();
                }
            }
        }
    }
    let mut initial_args = Map::new();
    if let Some(workspace) = workspace {
        seed_args(workspace, description, &mut initial_args);
    }
    match best {
        Some((_, recipe_id, pattern)) => {
            let mut reason = format!("the task mentions \"{pattern}\", a pattern of {recipe_id}");
            if !tied.is_empty() {
                reason.push_str(&format!(
                    " (as long as a pattern of {}; the first by id wins)",
                    tied.join(", ")
                ));
            }
            RoutingResult {
                recipe_id: Some(recipe_id.to_owned()),
                initial_args,
                routable: true,
                reason,
            }
        }
        None => RoutingResult {
            recipe_id: None,
            initial_args,
            routable: false,
            reason: format!(
                "no recipe's task patterns occur in \"{description}\"; name the work (e.g. \"draft scene\", \"check consistency\", \"review prose\") or pick a recipe: {}",
                registry
                    .recipes()
                    .map(|r| r.recipe_id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        },
    }
}

/// Finds the scene a description names: an `SCN-` id, a `.md` path of a
/// scene, or "scene N" (1-based outline position).
fn seed_args(workspace: &Workspace, description: &str, args: &mut Map<String, Value>) {
    let words: Vec<&str> = description
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '"' | '“' | '”' | '(' | ')'))
        .map(|word| word.trim_end_matches(['.', ':', '!', '?']))
        .filter(|word| !word.is_empty())
        .collect();
    let id = words
        .iter()
        .find(|word| word.starts_with("SCN-") && word.len() > 4 && !word.ends_with(".md"));
    let path = words
        .iter()
        .find(|word| word.ends_with(".md") && check_relative_path(word).is_ok());
    if let Some(id) = id {
        args.insert("scene_id".into(), Value::String(id.to_string()));
    } else if let Some(path) = path {
        args.insert("scene_path".into(), Value::String(path.to_string()));
    } else if let Some(id) = nth_scene(workspace, &words) {
        args.insert("scene_id".into(), Value::String(id));
    }
    complete_args(workspace, args);
}

/// The scene "scene N" names: the N-th entry of the outline.
fn nth_scene(workspace: &Workspace, words: &[&str]) -> Option<String> {
    let position = words.windows(2).find_map(|pair| {
        pair[0]
            .eq_ignore_ascii_case("scene")
            .then(|| pair[1].parse::<usize>().ok())
            .flatten()
    })?;
    let outline = workspace.catalog().outline()?.outline()?;
    let entry = outline.entries.get(position.checked_sub(1)?)?;
    Some(entry.scene_id.clone())
}

/// Fills `scene_path` from `scene_id` (the scene's file, or where a new scene
/// file would go) and `canon_paths` from the scene, when they are absent.
pub fn complete_args(workspace: &Workspace, args: &mut Map<String, Value>) {
    let catalog = workspace.catalog();
    let scene_id = match (args.get("scene_id"), args.get("scene_path")) {
        (Some(Value::String(id)), _) => Some(id.clone()),
        (_, Some(Value::String(path))) => Some(
            workspace
                .file(path)
                .and_then(|file| file.scene())
                .map(|scene| scene.id.clone())
                .unwrap_or_else(|| crate::index::file::file_stem(path).to_owned()),
        ),
        _ => None,
    };
    let Some(scene_id) = scene_id else { return };
    if !args.contains_key("scene_path") {
        let path = catalog.scene(&scene_id).map_or_else(
            || {
                format!(
                    "{}/{scene_id}.md",
                    workspace.config().paths.scenes.trim_end_matches('/')
                )
            },
            |file| file.path.to_string(),
        );
        args.insert("scene_path".into(), Value::String(path));
    }
    args.entry("scene_id")
        .or_insert_with(|| Value::String(scene_id.clone()));
    if !args.contains_key("canon_paths") {
        let canon = canon_for_scene(workspace, &scene_id);
        args.insert(
            "canon_paths".into(),
            Value::Array(canon.into_iter().map(Value::String).collect()),
        );
    }
}
