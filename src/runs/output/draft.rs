//! What a drafting run leaves in the manuscript: the scene text made from its
//! final draft. A new scene gets front matter filled from its outline entry
//! and the brief (id, title, point of view, location, the characters present,
//! the outline beat); an existing scene keeps its front matter and gets the
//! draft as its body. When the scene changed while the run worked, the draft
//! goes beside it instead (`SCN-x.draft-<run>.md`), which the index keeps out
//! of the manuscript.

use serde_json::Value;

use crate::index::{CardKind, LifeStatus, SourceFile, Workspace};
use crate::runs::recipe::{AgentStep, Recipe};
use crate::runs::store::{Cache, CacheSlot};
use crate::text::TextRange;

/// Prompt types whose reply is a scene's prose.
const SCENE_PROMPT_TYPES: &[&str] = &["draft_scene", "polish_draft"];

/// The step whose output is a recipe's finished scene: its last agent step
/// that writes scene prose. `None` for recipes that only report.
pub fn result_step(recipe: &Recipe) -> Option<&AgentStep> {
    recipe
        .phase_b
        .iter()
        .rev()
        .find(|step| SCENE_PROMPT_TYPES.contains(&step.prompt_type.as_str()))
}

/// A finished run's draft (the result step's text) and the brief it was
/// written from, out of the run's cache.
pub fn run_draft(recipe: &Recipe, cache: &Cache) -> (Option<String>, Option<String>) {
    let text = |slot: &str| match cache.get(slot) {
        Some(CacheSlot::Artifact { text, .. }) => Some(text.clone()),
        _ => None,
    };
    let draft = result_step(recipe).and_then(|step| text(&step.output_slot));
    let brief = recipe
        .phase_b
        .iter()
        .find(|step| step.prompt_type == "refine_brief")
        .and_then(|step| text(&step.output_slot));
    (draft, brief)
}

/// Whether a recipe writes a scene.
pub fn drafts(recipe: &Recipe) -> bool {
    result_step(recipe).is_some()
}

/// The path a draft goes to when it cannot replace its scene.
pub fn beside_path(scene_path: &str, run_id: &str) -> String {
    let (stem, extension) = scene_path
        .rsplit_once('.')
        .filter(|(stem, _)| !stem.ends_with('/') && !stem.is_empty())
        .unwrap_or((scene_path, "md"));
    format!("{stem}.draft-{run_id}.{extension}")
}

pub use crate::index::file::is_beside_draft;

/// Where a new scene's file goes: `{scenes}/{scene_id}.md`.
pub fn new_scene_path(workspace: &Workspace, scene_id: &str) -> String {
    let folder = workspace.config().paths.scenes.trim_end_matches('/');
    format!("{folder}/{scene_id}.md")
}

/// The draft's prose: without a front matter block or a code fence the
/// model may have wrapped it in, ending in one newline.
pub fn draft_body(draft: &str) -> String {
    let mut text = draft.trim();
    if let Some(rest) = text.strip_prefix("```") {
        let inner = rest.split_once('\n').map_or("", |(_, inner)| inner);
        text = inner.trim_end().strip_suffix("```").unwrap_or(inner).trim();
    }
    if let Some(rest) = text.strip_prefix("---\n")
        && let Some(end) = rest.find("\n---")
    {
        text = rest[end + 4..].trim_start_matches(['-']).trim();
    }
    format!("{}\n", text.trim_end())
}

/// The text of a new scene file for `scene_id`, from its outline entry,
/// the brief and the draft.
pub fn new_scene_text(
    workspace: &Workspace,
    scene_id: &str,
    brief: Option<&str>,
    draft: &str,
) -> String {
    let body = draft_body(draft);
    let catalog = workspace.catalog();
    let beat = catalog.outline().and_then(|outline| {
        outline
            .outline()?
            .entries
            .iter()
            .find(|entry| entry.scene_id == scene_id)
            .map(|entry| entry.beat.trim().to_owned())
    });
    let title = body
        .lines()
        .find_map(|line| line.strip_prefix("# "))
        .map(|title| title.trim().to_owned())
        .filter(|title| !title.is_empty())
        .unwrap_or_else(|| title_from_id(scene_id));

    // Cards named in the brief's "POV:" / "Location:" lines win; otherwise
    // the first character and place the beat or the draft mentions.
    let card_name = |reference: &str, kind: CardKind| {
        catalog
            .resolve_card(reference.trim(), &[kind])
            .and_then(|file| file.card())
            .and_then(|card| card.name.as_ref())
            .map(|name| name.text.clone())
    };
    let labelled = |label: &str| brief.and_then(|brief| labelled_value(brief, label));
    let in_beat = beat
        .as_deref()
        .map(|beat| mentioned(workspace, beat))
        .unwrap_or_default();
    let in_draft = mentioned(workspace, &body);
    let first_of = |kind: CardKind| {
        in_beat
            .iter()
            .chain(&in_draft)
            .find(|(card_kind, _, _)| *card_kind == kind)
            .map(|(_, name, _)| name.clone())
    };
    let pov = labelled("POV")
        .and_then(|pov| card_name(&pov, CardKind::Character))
        .or_else(|| first_of(CardKind::Character));
    // A place the draft merely mentions is often elsewhere ("he told them
    // about the flats"): only the brief, the beat, or the scene before it
    // in the outline set where this one happens.
    let location = labelled("Location")
        .or_else(|| labelled("Setting"))
        .and_then(|place| card_name(&place, CardKind::Location))
        .or_else(|| {
            in_beat
                .iter()
                .find(|(kind, _, _)| *kind == CardKind::Location)
                .map(|(_, name, _)| name.clone())
        })
        .or_else(|| previous_location(workspace, scene_id));
    let mut characters: Vec<String> = Vec::new();
    for (kind, name, dead) in pov
        .iter()
        .map(|pov| (CardKind::Character, pov.clone(), false))
        .chain(in_draft.iter().cloned())
    {
        // The dead appear in a new scene only as memories; listing them as
        // present would be a continuity error of our own making.
        if kind == CardKind::Character && !dead && !characters.contains(&name) {
            characters.push(name);
        }
    }

    let mut front = String::from("---\n");
    front.push_str(&format!("id: {scene_id}\n"));
    front.push_str(&format!("title: {}\n", yaml_scalar(&title)));
    if let Some(pov) = &pov {
        front.push_str(&format!("pov: {}\n", yaml_scalar(pov)));
    }
    if let Some(location) = &location {
        front.push_str(&format!("location: {}\n", yaml_scalar(location)));
    }
    if !characters.is_empty() {
        let list: Vec<String> = characters.iter().map(|name| yaml_item(name)).collect();
        front.push_str(&format!("characters: [{}]\n", list.join(", ")));
    }
    if let Some(beat) = beat.filter(|beat| !beat.is_empty()) {
        front.push_str(&format!("summary: {}\n", yaml_scalar(&beat)));
    }
    front.push_str("---\n\n");
    front + &body
}

/// The location of the nearest scene before `scene_id` in the outline that
/// names one, as its card's name.
fn previous_location(workspace: &Workspace, scene_id: &str) -> Option<String> {
    let catalog = workspace.catalog();
    let outline = catalog.outline()?.outline()?;
    let at = outline
        .entries
        .iter()
        .position(|entry| entry.scene_id == scene_id)?;
    outline.entries[..at].iter().rev().find_map(|entry| {
        let place = catalog.scene(&entry.scene_id)?.scene()?.location.clone()?;
        catalog
            .resolve_card(&place.text, &[CardKind::Location])
            .and_then(|file| file.card())
            .and_then(|card| card.name.as_ref())
            .map(|name| name.text.clone())
    })
}

/// For an existing scene: the range after its front matter (the whole text
/// when it has none) and the draft that replaces it.
pub fn replacement_body(file: &SourceFile, draft: &str) -> (TextRange, String) {
    let start = file
        .front_matter
        .as_ref()
        .map_or(0, |front| front.range.end);
    let mut body = draft_body(draft);
    if start > 0 {
        body.insert(0, '\n');
    }
    (TextRange::new(start, file.text.len()), body)
}

/// `the-reckoning` from `SCN-the-reckoning`, as a title: "The Reckoning".
fn title_from_id(scene_id: &str) -> String {
    let slug = scene_id.strip_prefix("SCN-").unwrap_or(scene_id);
    slug.split(['-', '_'])
        .filter(|word| !word.is_empty())
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().collect::<String>() + chars.as_str()
            })
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The value after `Label:` in a brief, up to the end of its sentence or line.
fn labelled_value(brief: &str, label: &str) -> Option<String> {
    let lowered = brief.to_lowercase();
    let needle = format!("{}:", label.to_lowercase());
    let at = lowered.find(&needle)?;
    // Only at the start of the brief, a line or a sentence.
    let before = brief[..at].trim_end_matches([' ', '*', '-']);
    if !(before.is_empty() || before.ends_with(['\n', '.'])) {
        return None;
    }
    let rest = brief[at + needle.len()..].trim_start();
    let end = rest.find(['\n', '.', ';', '(']).unwrap_or(rest.len());
    let value = rest[..end].trim().trim_matches('*').trim();
    (!value.is_empty()).then(|| value.to_owned())
}

/// The cards `text` mentions, in order of first mention: kind, card name,
/// whether the character is dead.
fn mentioned(workspace: &Workspace, text: &str) -> Vec<(CardKind, String, bool)> {
    let parsed = SourceFile::parse("draft.md".into(), text.into(), &workspace.config().paths);
    let catalog = workspace.catalog();
    let mut found: Vec<(CardKind, String, bool)> = Vec::new();
    for mention in catalog.matcher().find(text, &parsed.syntax) {
        let Some(card) = catalog.card(&mention.card).and_then(|file| file.card()) else {
            continue;
        };
        let Some(name) = card.name.as_ref().map(|name| name.text.clone()) else {
            continue;
        };
        if !found.iter().any(|(_, known, _)| *known == name) {
            found.push((card.kind, name, card.status == LifeStatus::Dead));
        }
    }
    found
}

/// A YAML scalar: plain when that is safe, else double-quoted (JSON's
/// escaping is valid YAML).
fn yaml_scalar(text: &str) -> String {
    yaml_value(text, false)
}

/// As [`yaml_scalar`], for an item of a `[…]` list, where commas and
/// brackets end a plain value.
fn yaml_item(text: &str) -> String {
    yaml_value(text, true)
}

fn yaml_value(text: &str, flow: bool) -> String {
    let plain = !text.is_empty()
        && !text.starts_with([
            '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%',
            '@', '`', ' ',
        ])
        && !text.contains(": ")
        && !text.contains(" #")
        && !text.ends_with([' ', ':'])
        && !matches!(
            text.to_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "null" | "~" | "on" | "off"
        )
        && text.parse::<f64>().is_err()
        && !text.contains(['\n', '"'])
        && !(flow && text.contains([',', '[', ']', '{', '}']));
    if plain {
        text.to_owned()
    } else {
        Value::String(text.to_owned()).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> Workspace {
        Workspace::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/salt-road"),
        )
    }

    #[test]
    fn a_new_scene_gets_front_matter_from_its_outline_entry_and_brief() {
        let workspace = example();
        let brief =
            "POV: Kael Maren. Goal: Ysolde must answer for the gate. Canon: Old Tomas is dead.";
        let draft = "<ignored>```markdown\n# The Reckoning\n\nKael watched Ysolde by the gate. He had crossed the flats. He remembered Tomas.\n```";
        let text = new_scene_text(&workspace, "SCN-the-reckoning", Some(brief), &draft[9..]);
        assert_eq!(
            text,
            "---\nid: SCN-the-reckoning\ntitle: The Reckoning\npov: Kael Maren\nlocation: The Salt Fortress\ncharacters: [Kael Maren, Ysolde Harrow]\nsummary: Ysolde answers for the barred gate, and Kael takes the road back to the ninth waystone.\n---\n\n# The Reckoning\n\nKael watched Ysolde by the gate. He had crossed the flats. He remembered Tomas.\n"
        );
        let parsed = SourceFile::parse(
            "Story/Scenes/SCN-the-reckoning.md".into(),
            text.into(),
            &workspace.config().paths,
        );
        assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
        assert_eq!(
            parsed.scene().unwrap().pov.as_ref().unwrap().text,
            "Kael Maren"
        );
    }

    #[test]
    fn an_existing_scene_keeps_its_front_matter() {
        let workspace = example();
        let file = workspace.file("Story/Scenes/SCN-the-gate.md").unwrap();
        let (range, body) = replacement_body(file, "---\ntitle: x\n---\nNew prose.");
        assert_eq!(
            &file.text[..range.start],
            &file.text[..file.front_matter.as_ref().unwrap().range.end]
        );
        assert_eq!(range.end, file.text.len());
        assert_eq!(body, "\nNew prose.\n");
    }

    #[test]
    fn drafts_beside_the_scene_are_named_for_their_run_and_known_as_such() {
        let path = beside_path("Story/Scenes/SCN-the-gate.md", "run_0123456789ab");
        assert_eq!(path, "Story/Scenes/SCN-the-gate.draft-run_0123456789ab.md");
        assert!(is_beside_draft(&path));
        assert!(!is_beside_draft("Story/Scenes/SCN-the-gate.md"));
        assert!(!is_beside_draft("Story/Scenes/SCN-draft-run.md"));
    }

    #[test]
    fn awkward_values_are_quoted() {
        assert_eq!(yaml_scalar("Kael Maren"), "Kael Maren");
        assert_eq!(
            yaml_scalar("Gate: the reckoning"),
            "\"Gate: the reckoning\""
        );
        assert_eq!(yaml_scalar("1203"), "\"1203\"");
        assert_eq!(yaml_scalar("yes"), "\"yes\"");
        assert_eq!(yaml_scalar("\"Quoted\""), "\"\\\"Quoted\\\"\"");
        assert_eq!(yaml_scalar("one, two"), "one, two");
        assert_eq!(yaml_item("one, two"), "\"one, two\"");
    }
}
