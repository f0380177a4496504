//! The registry: the bundled recipes, shadowed by the project's own recipe
//! files (or their unsaved text in an editor), with the errors of those that
//! did not load.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::{BUNDLED, PROJECT_DIR, Recipe, RecipeError, RecipeRule, parse};
use crate::runs::prompts::Prompts;

/// The recipes a workspace can run: bundled ones shadowed by project ones.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    recipes: BTreeMap<String, Recipe>,
    errors: Vec<RecipeError>,
    /// Ids defined by the project's own recipe files.
    project: BTreeSet<String>,
}

impl Registry {
    /// Loads the bundled recipes and those under `root/.control-room/recipes`.
    pub fn load(root: &Path, templates: &Prompts) -> Registry {
        Registry::load_with_open(root, templates, &BTreeMap::new())
    }

    /// Like [`Registry::load`], but the text of recipe files open in an
    /// editor (keyed by workspace path, `.control-room/recipes/x.json`) wins
    /// over what is on disk, and open files not yet saved count too.
    pub fn load_with_open(
        root: &Path,
        templates: &Prompts,
        open: &BTreeMap<String, String>,
    ) -> Registry {
        let mut registry = Registry::default();
        for (name, text) in BUNDLED {
            registry.add(&format!("recipes/{name}"), text, templates);
        }
        let on_disk = std::fs::read_dir(root.join(PROJECT_DIR))
            .map(|entries| {
                entries
                    .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                    .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
                    .filter_map(|path| {
                        let name = path.file_name()?.to_str()?;
                        Some(format!("{PROJECT_DIR}/{name}"))
                    })
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        let files: BTreeSet<String> = on_disk.into_iter().chain(open.keys().cloned()).collect();
        // Which project file defined each recipe id first.
        let mut defined_by: BTreeMap<String, String> = BTreeMap::new();
        for file in files {
            let text = match open.get(&file) {
                Some(text) => text.clone(),
                None => match std::fs::read_to_string(root.join(&file)) {
                    Ok(text) => text,
                    Err(error) => {
                        registry.errors.push(RecipeError {
                            file,
                            pointer: String::new(),
                            rule: RecipeRule::Unreadable.code(),
                            message: format!("cannot read: {error}"),
                            line_column: None,
                        });
                        continue;
                    }
                },
            };
            match parse(&file, &text, templates) {
                Ok(recipe) => match defined_by.get(&recipe.recipe_id) {
                    Some(first) => registry.errors.push(RecipeError {
                        message: format!(
                            "recipe id `{}` is already defined by {first}; this file is not loaded",
                            recipe.recipe_id
                        ),
                        file,
                        pointer: "/recipe_id".into(),
                        rule: RecipeRule::DuplicateRecipeId.code(),
                        line_column: None,
                    }),
                    None => {
                        defined_by.insert(recipe.recipe_id.clone(), file);
                        registry.project.insert(recipe.recipe_id.clone());
                        registry.recipes.insert(recipe.recipe_id.clone(), recipe);
                    }
                },
                Err(errors) => registry.errors.extend(errors),
            }
        }
        registry
    }

    fn add(&mut self, file: &str, text: &str, templates: &Prompts) {
        match parse(file, text, templates) {
            Ok(recipe) => {
                self.recipes.insert(recipe.recipe_id.clone(), recipe);
            }
            Err(errors) => self.errors.extend(errors),
        }
    }

    pub fn get(&self, recipe_id: &str) -> Option<&Recipe> {
        self.recipes.get(recipe_id)
    }

    pub fn recipes(&self) -> impl Iterator<Item = &Recipe> {
        self.recipes.values()
    }

    /// Whether `recipe_id` is defined by a file of the project (new, or
    /// replacing a bundled recipe).
    pub fn is_project(&self, recipe_id: &str) -> bool {
        self.project.contains(recipe_id)
    }

    /// Problems in recipe files; those recipes were not loaded.
    pub fn errors(&self) -> &[RecipeError] {
        &self.errors
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::Map;

    use crate::runs::prompts::{PromptBuilder, PromptInputs, Prompts, SlotKind, SlotText};

    /// Every agent step of every bundled recipe assembles at every tier
    /// from exactly the slots the recipe gives it.
    #[test]
    fn every_recipe_step_assembles_at_every_tier() {
        let prompts = Prompts::bundled();
        let registry = super::Registry::load(Path::new("/nonexistent"), &prompts);
        assert!(registry.errors().is_empty());
        let args = Map::new();
        let mut assembled = 0;
        for recipe in registry.recipes() {
            for agent in &recipe.phase_b {
                for tier in ["minimal", "medium", "full"] {
                    let slots = agent
                        .input_slots
                        .iter()
                        .map(|name| SlotText {
                            name,
                            text: format!("TEXT OF {name}"),
                            kind: SlotKind::Artifact,
                        })
                        .collect();
                    let inputs = PromptInputs {
                        task_description: "Draft SCN-the-gate",
                        task_args: &args,
                        slots,
                        model: None,
                        max_tokens: None,
                        tier: Some(tier),
                        context_window: None,
                        chars_per_token: None,
                        workspace: None,
                        history: &[],
                        follow_up: &[],
                        packet: None,
                        graph: None,
                    };
                    let assembly =
                        prompts
                            .build(agent.prompt_step(), &inputs)
                            .unwrap_or_else(|e| {
                                panic!("{}/{} at {tier}: {e}", recipe.recipe_id, agent.step_id)
                            });
                    let user = &assembly.messages[1].content;
                    assert!(!user.contains("{{"), "{}: {user}", agent.prompt_type);
                    assert!(
                        agent
                            .input_slots
                            .iter()
                            .any(|name| user.contains(&format!("TEXT OF {name}"))),
                        "{}/{} injects none of its inputs",
                        recipe.recipe_id,
                        agent.step_id
                    );
                    assembled += 1;
                }
            }
        }
        assert!(assembled >= 3 * 18, "{assembled}");
    }
}
