//! Layer 4 of the context sandwich: the session state as XML (§6 of the
//! agent-instruction spec), built for one pipeline step from the workspace
//! index, the run's task and the knowledge base, and sized by the tier.
//!
//! * minimal: mode, active file, current beat, and the tier's few entries;
//! * medium: adds the active context, the scene's essentials, the
//!   zero-tolerance anti-patterns, and more entries;
//! * full: adds the whole scene context and every anti-pattern.
//!
//! The knowledge base is `.control-room/kb/decisions.jsonl` (one decision
//! per line). Character and constraint decisions always come; the others
//! (world, structure, and the writer's preferences and corrections, which go
//! to `<agent_memory>`) by recency up to the tier's count. A later line with
//! the same category and key supersedes an earlier one.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::index::model::Tolerance;
use crate::index::{Catalog, Scene, Workspace};
use crate::kb::CATEGORIES;
pub use crate::kb::{Decision, KB_FILE, append_decisions, load_decisions};

use super::capabilities::Profile;
use super::escape;
use super::knowledge::{knowledge_context, select_decisions};
use super::registry::Variant;

/// The decisions of an agent's `<action type="save_decision">`s (those with
/// a known category, a key and a value), from `source` (who saved them, the
/// action's own `source` first), about `scene`, at `at`.
pub fn decisions_from_actions(
    actions: &[crate::llm::protocol::Action],
    source: &str,
    scene: Option<&str>,
    at: &str,
) -> Vec<Decision> {
    actions
        .iter()
        .filter(|action| action.kind == "save_decision")
        .filter_map(|action| {
            let param = |name: &str| {
                action
                    .params
                    .iter()
                    .find(|(key, _)| key == name)
                    .map(|(_, value)| value.trim().to_owned())
                    .filter(|value| !value.is_empty())
            };
            let category = param("category").filter(|c| CATEGORIES.contains(&c.as_str()))?;
            Some(Decision {
                category,
                key: param("key")?,
                value: param("value")?,
                source: Some(match param("source") {
                    Some(theirs) => format!("{theirs}; saved by {source}"),
                    None => source.to_owned(),
                }),
                scene: scene.map(str::to_owned),
                created_at: Some(at.to_owned()),
                updated_at: Some(at.to_owned()),
                promoted: false,
            })
        })
        .collect()
}

/// What the state is built from.
pub struct StateInputs<'a> {
    /// The step's mode (`architect`, `director`…), if its template names one.
    pub mode: Option<&'a str>,
    /// The project's mode (`.control-room/mode.json`), when it is known.
    pub project: Option<&'a crate::kb::mode::ModeState>,
    pub step_id: &'a str,
    pub archetype: &'a str,
    pub workspace: Option<&'a Workspace>,
    pub task_args: &'a Map<String, Value>,
    pub decisions: &'a [Decision],
    /// The story's graph kept between builds; `None` builds it afresh.
    pub graph: Option<&'a crate::kb::graph::GraphCache>,
}

fn element(out: &mut String, indent: usize, name: &str, value: &str) {
    let _ = writeln!(
        out,
        "{:indent$}<{name}>{}</{name}>",
        "",
        escape(value.trim())
    );
}

fn arg<'a>(args: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    args.get(name).and_then(Value::as_str)
}

/// The `<session_state>` block for one step at the profile's tier.
pub fn session_state(inputs: &StateInputs, profile: &Profile) -> String {
    let variant = profile.variant;
    let mut out = String::from("<session_state>\n");
    // A step framed by a mode works in it; the Foreman works in the project's.
    let project_mode = inputs.project.map(|project| project.mode);
    let mode = inputs
        .mode
        .and_then(crate::kb::mode::Mode::parse)
        .or(project_mode);
    if let Some(mode) = mode {
        element(&mut out, 2, "current_mode", mode.label());
    }
    if let (Some(project), Some(workspace)) = (inputs.project, inputs.workspace) {
        if Some(project.mode) != mode {
            element(&mut out, 2, "project_mode", project.mode.label());
        }
        let gate = crate::kb::mode::gate(workspace, project, project.mode);
        element(&mut out, 2, "completion_pct", &gate.percent.to_string());
    }
    element(
        &mut out,
        2,
        "current_step",
        &format!("{} ({})", inputs.step_id, inputs.archetype),
    );
    let scene_id = arg(inputs.task_args, "scene_id");
    let scene_path = arg(inputs.task_args, "scene_path");
    let catalog = inputs.workspace.map(Workspace::catalog);
    let scene = catalog
        .zip(scene_id)
        .and_then(|(catalog, id)| catalog.scene(id))
        .and_then(|file| file.scene());
    let beat = catalog
        .zip(scene_id)
        .and_then(|(catalog, id)| current_beat(catalog, id));

    if variant == Variant::T1 {
        // The smallest tier gets the file and the beat as bare elements,
        // without the context blocks around them.
        if let Some(path) = scene_path {
            element(&mut out, 2, "active_file", path);
        }
        if let Some(beat) = &beat {
            element(&mut out, 2, "current_beat", beat);
        }
        // §6.3: the smallest models get the voice's summary alone.
        if let Some((_, gold)) = catalog.and_then(Catalog::voice_gold)
            && mode.is_some_and(drafts)
        {
            element(&mut out, 2, "voice_summary", &gold.summary_or_measured());
        }
    } else {
        active_context(&mut out, scene_path, scene_id, scene, beat.as_deref());
        if let Some(scene) = scene {
            scene_context(&mut out, scene, variant);
        }
        if let Some(catalog) = catalog {
            voice_context(&mut out, catalog, variant, mode);
        }
        if let (Some(workspace), Some(id)) = (inputs.workspace, scene_id)
            && mode == Some(crate::kb::mode::Mode::Director)
        {
            active_scaffold(&mut out, workspace, id, variant);
        }
        if let Some(workspace) = inputs.workspace {
            super::work_order::work_order(&mut out, workspace, mode, variant);
        }
    }

    let limit = profile.spec.knowledge_entries;
    let memory = match inputs.workspace.zip(scene_id) {
        // A scene's step: the scene's part of the story's graph, and the
        // decisions about what is in it.
        Some((workspace, id)) => {
            let around = super::knowledge::SceneSubgraph::of(
                workspace,
                id,
                variant,
                inputs.decisions,
                inputs.graph,
            );
            let (knowledge, memory) = around.select(inputs.decisions, limit);
            around.write(&mut out, &knowledge);
            memory
        }
        None => {
            let (knowledge, memory) = select_decisions(inputs.decisions, limit);
            knowledge_context(&mut out, &knowledge);
            memory
        }
    };
    agent_memory(&mut out, &memory);
    out.push_str("</session_state>");
    out
}

/// The outline beat of the scene `id`, if the outline lists it.
fn current_beat(catalog: &Catalog, id: &str) -> Option<String> {
    let outline = catalog.outline()?.outline()?;
    outline
        .entries
        .iter()
        .find(|entry| entry.scene_id == id)
        .map(|entry| entry.beat.clone())
}

/// Writes `<active_context>` (the file, the scene and its beat) to `out`,
/// unless there is none of them.
fn active_context(
    out: &mut String,
    scene_path: Option<&str>,
    scene_id: Option<&str>,
    scene: Option<&Scene>,
    beat: Option<&str>,
) {
    let mut active = String::new();
    if let Some(path) = scene_path {
        element(&mut active, 4, "file", path);
    }
    if let Some(id) = scene_id {
        let title = scene.and_then(|scene| scene.title.as_deref());
        let shown = match title {
            Some(title) => format!("{id}: {title}"),
            None => id.to_owned(),
        };
        element(&mut active, 4, "scene", &shown);
    }
    if let Some(beat) = beat {
        element(&mut active, 4, "beat", beat);
    }
    if !active.is_empty() {
        out.push_str("  <active_context>\n");
        out.push_str(&active);
        out.push_str("  </active_context>\n");
    }
}

/// Writes `<scene_context>` to `out`: the scene's essentials, and at the
/// full tier the rest of its front matter; nothing when it has none.
fn scene_context(out: &mut String, scene: &Scene, variant: Variant) {
    let mut context = String::new();
    if let Some(pov) = &scene.pov {
        element(&mut context, 4, "pov_character", &pov.text);
    }
    if let Some(target) = scene.words_target {
        element(&mut context, 4, "word_target", &target.to_string());
    }
    if variant == Variant::T5 {
        if let Some(location) = &scene.location {
            element(&mut context, 4, "location", &location.text);
        }
        if !scene.characters.is_empty() {
            let names: Vec<&str> = scene.characters.iter().map(|c| c.text.as_str()).collect();
            element(&mut context, 4, "characters_present", &names.join(", "));
        }
        if let Some(date) = &scene.date {
            element(&mut context, 4, "story_date", &date.text);
        }
        if scene.flashback {
            element(&mut context, 4, "flashback", "true");
        }
    }
    if !context.is_empty() {
        out.push_str("  <scene_context>\n");
        out.push_str(&context);
        out.push_str("  </scene_context>\n");
    }
}

/// Whether a mode drafts or revises prose, so that the voice bundle binds it.
fn drafts(mode: crate::kb::mode::Mode) -> bool {
    use crate::kb::mode::Mode;
    matches!(mode, Mode::Director | Mode::Editor)
}

/// Characters of the gold standard's passage a prompt gets (§6.3).
const GOLD_CHARS: usize = 2000;

/// Writes `<voice_context>` to `out`: in DIRECTOR and EDITOR the voice
/// bundle (§6.3: the gold standard's file, its summary, and its passage's
/// first 2,000 characters), and the zero-tolerance anti-patterns, or at the
/// full tier every one; nothing when there is none of them.
fn voice_context(
    out: &mut String,
    catalog: &Catalog,
    variant: Variant,
    mode: Option<crate::kb::mode::Mode>,
) {
    let patterns: Vec<_> = catalog
        .anti_patterns()
        .iter()
        .filter(|p| variant == Variant::T5 || p.tolerance == Tolerance::Zero)
        .collect();
    let bundle = catalog.voice_gold().filter(|_| mode.is_some_and(drafts));
    if patterns.is_empty() && bundle.is_none() {
        return;
    }
    out.push_str("  <voice_context>\n");
    if let Some((file, gold)) = bundle {
        let _ = writeln!(
            out,
            "    <voice_bundle loaded=\"true\" locked=\"{}\">",
            gold.locked
        );
        element(out, 6, "winning_passage_file", &file.path);
        element(out, 6, "voice_summary", &gold.summary_or_measured());
        if let Some(passage) = gold.passage {
            let text = passage.slice(&file.text).trim();
            element(out, 6, "gold_standard", crate::text::clip(text, GOLD_CHARS));
        }
        out.push_str("    </voice_bundle>\n");
    }
    if patterns.is_empty() {
        out.push_str("  </voice_context>\n");
        return;
    }
    out.push_str("    <antipatterns>\n");
    for pattern in patterns {
        let severity = match pattern.tolerance {
            Tolerance::Zero => "zero_tolerance",
            Tolerance::Deduction => "deduction",
        };
        let _ = writeln!(
            out,
            "      <pattern severity=\"{severity}\">{}</pattern>",
            escape(&pattern.phrase)
        );
    }
    out.push_str("    </antipatterns>\n  </voice_context>\n");
}

/// Writes `<active_scaffold>` (§6.4) to `out`: the writer's scaffold of
/// scene `id`, its body cut to the tier's room; nothing without one.
fn active_scaffold(out: &mut String, workspace: &Workspace, id: &str, variant: Variant) {
    let Some(file) = workspace.scaffold(id) else {
        return;
    };
    let body = match &file.front_matter {
        Some(front) => &file.text[front.range.end..],
        None => &file.text[..],
    };
    let room = if variant == Variant::T5 { 6000 } else { 1500 };
    let _ = writeln!(out, "  <active_scaffold scaffold_id=\"{}\">", escape(id));
    element(out, 4, "file", &file.path);
    element(out, 4, "scaffold", crate::text::clip(body.trim(), room));
    out.push_str("  </active_scaffold>\n");
}

/// Writes `<agent_memory>` with one element per decision to `out`, unless
/// there are none.
fn agent_memory(out: &mut String, memory: &[&Decision]) {
    if memory.is_empty() {
        return;
    }
    out.push_str("  <agent_memory>\n");
    for decision in memory {
        element(out, 4, &decision.category, &decision.value);
    }
    out.push_str("  </agent_memory>\n");
}
