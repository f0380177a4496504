//! `scene_draft_validator`: whether a scene draft is complete enough to
//! stand in the manuscript.
//!
//! Arguments: `scene_path` (required; a path with no file is not an error:
//! the result says `exists: false` and `valid: false`; a path the index does
//! not hold falls back to the scene file whose id is its file stem).
//!
//! Rules, each a `problem` ({rule, message}) when broken:
//! - `exists`: the scene file exists. Without it no other rule but
//!   `outline` is checked.
//! - `readable`: the file could be read as text.
//! - `front_matter`: the file has front matter, and every value in it could
//!   be read (one problem per unreadable value, with its line).
//! - `outline`: the scene's `id` is listed in the outline (`in_outline`,
//!   `position`: 1-based place in story order).
//! - `pov`: `pov:` is given and is a character card's name, alias or id.
//! - `length`: with a `words:` target, the prose's word count is within
//!   ±20% of it (`within_target`; null without a target).
//! - `body`: the prose has at least one word.
//! - `characters`: each name in `characters:` is a character card, and that
//!   character is named in the prose (the POV character excepted: a
//!   narrator need not name themself).
//! - `beat`: each character the outline entry names is named in the prose
//!   (the POV character excepted).
//!
//! Output: `path`, `exists`, `id`, `in_outline`, `position`, `beat`,
//! `readable`, `front_matter_problems` ([{line, message}]), `pov`,
//! `pov_resolves` (null without a pov), `words`, `target`, `within_target`,
//! `characters` and `beat_characters` ([{name, card, mentioned}]),
//! `problems`, and `valid` (no problems).

use serde_json::{Value, json};

use super::{
    FileRef, SceneTarget, Summary, ToolArgs, ToolContext, ToolError, ToolOutput, cards_in_entry,
    characters_mentioned, line_number, scene_at_path,
};
use crate::index::{CardKind, Catalog, FilePath, OutlineEntry, Scene, SourceFile, Workspace};

/// How far from the `words:` target a draft may be, as a fraction.
const TARGET_TOLERANCE: f64 = 0.2;

struct Problems(Vec<(&'static str, String)>);

impl Problems {
    fn add(&mut self, rule: &'static str, message: impl Into<String>) {
        self.0.push((rule, message.into()));
    }
}

pub(super) fn run(context: &ToolContext, args: &ToolArgs) -> Result<ToolOutput, ToolError> {
    let workspace = context.workspace;
    let path = args
        .path("scene_path")?
        .ok_or_else(|| ToolError::BadArgument {
            name: "scene_path".into(),
            message: "is required".into(),
        })?;
    let target = scene_at_path(workspace, path).map_err(|error| ToolError::BadArgument {
        name: "scene_path".into(),
        message: error.to_string(),
    })?;
    let mut problems = Problems(Vec::new());
    let mut file_refs = Vec::new();
    let outline_file = workspace.catalog().outline();
    if let (Some((_, entry)), Some(outline_file)) = (target.entry, outline_file) {
        file_refs.push(FileRef::span(outline_file, entry.range));
    }

    let mut data = json!({
        "path": target.path,
        "exists": target.file.is_some(),
        "id": target.id,
        "in_outline": target.entry.is_some(),
        "position": target.entry.map(|(position, _)| position),
        "beat": target.entry.map(|(_, entry)| &entry.beat),
        "readable": null,
        "front_matter_problems": [],
        "pov": null,
        "pov_resolves": null,
        "words": null,
        "target": null,
        "within_target": null,
        "characters": [],
        "beat_characters": [],
    });

    match target.file {
        None => problems.add(
            "exists",
            format!("`{path}` does not exist yet: the scene is not written"),
        ),
        Some(file) => {
            file_refs.insert(0, FileRef::whole(file));
            validate_file(workspace, &target, &mut data, &mut problems);
        }
    }
    if target.entry.is_none() {
        problems.add("outline", outline_problem(workspace, &target, path));
    }

    data["problems"] = problems
        .0
        .iter()
        .map(|(rule, message)| json!({"rule": rule, "message": message}))
        .collect();
    data["valid"] = Value::Bool(problems.0.is_empty());
    let summary = describe(&target, &data, &problems);
    Ok(ToolOutput {
        data,
        summary,
        file_refs,
    })
}

fn outline_problem(workspace: &Workspace, target: &SceneTarget, path: &str) -> String {
    let Some(outline) = workspace.catalog().outline() else {
        return format!(
            "the workspace has no outline, so `{}` has no place in story order",
            target.id
        );
    };
    let stem = crate::index::file::file_stem(path);
    if stem != target.id && super::outline_entry(workspace, stem).is_some() {
        return format!(
            "the outline lists `{stem}`, the file's name, but the file's `id:` says `{}`",
            target.id
        );
    }
    format!(
        "`{}` is not listed in the outline `{}`",
        target.id, outline.path
    )
}

/// Checks the scene file of `target` against every rule but `exists` and
/// `outline`, filling in what `data` reports of it.
fn validate_file(
    workspace: &Workspace,
    target: &SceneTarget,
    data: &mut Value,
    problems: &mut Problems,
) {
    let Some(file) = target.file else { return };
    let catalog = workspace.catalog();
    data["readable"] = Value::Bool(file.load_error.is_none());
    if let Some(reason) = &file.load_error {
        problems.add("readable", format!("the file could not be read: {reason}"));
        return;
    }
    let Some(scene) = file.scene() else { return };

    check_front_matter(file, data, problems);
    let pov_card = check_pov(catalog, scene, data, problems);
    check_length(scene, data, problems);
    let cast = Cast {
        catalog,
        mentioned: characters_mentioned(workspace, file)
            .into_iter()
            .map(|found| found.card)
            .collect(),
        pov_card,
    };
    data["characters"] = Value::Array(check_characters(&cast, scene, problems));
    let beat_characters = match target.entry {
        Some((_, entry)) => check_beat(workspace, &cast, entry, problems),
        None => Vec::new(),
    };
    data["beat_characters"] = Value::Array(beat_characters);
}

/// Checks that the file has front matter whose every value could be read.
fn check_front_matter(file: &SourceFile, data: &mut Value, problems: &mut Problems) {
    if file.front_matter.is_none() {
        problems.add(
            "front_matter",
            "the scene has no front matter (a `---` block with `pov`, `characters`, `date`…)",
        );
    }
    let front_matter_problems: Vec<Value> = file
        .problems
        .iter()
        .map(|problem| {
            let line = line_number(file, problem.range.start);
            problems.add("front_matter", format!("line {line}: {}", problem.message));
            json!({"line": line, "message": problem.message})
        })
        .collect();
    data["front_matter_problems"] = Value::Array(front_matter_problems);
}

/// Checks that `pov:` names a character card; returns that card's path.
fn check_pov(
    catalog: &Catalog,
    scene: &Scene,
    data: &mut Value,
    problems: &mut Problems,
) -> Option<FilePath> {
    let pov_card: Option<FilePath> = scene.pov.as_ref().and_then(|pov| {
        catalog
            .resolve_card(&pov.text, &[CardKind::Character])
            .map(|card| card.path.clone())
    });
    match &scene.pov {
        None => problems.add("pov", "no `pov:` names the point-of-view character"),
        Some(pov) if pov_card.is_none() => problems.add(
            "pov",
            format!(
                "`pov: {}` is not the name, alias or id of a character card",
                pov.text
            ),
        ),
        Some(_) => {}
    }
    data["pov"] = json!(scene.pov.as_ref().map(|pov| &pov.text));
    data["pov_resolves"] = json!(scene.pov.as_ref().map(|_| pov_card.is_some()));
    pov_card
}

/// Checks the prose's word count against its `words:` target, and that
/// there is any prose at all.
fn check_length(scene: &Scene, data: &mut Value, problems: &mut Problems) {
    let words = scene.word_count;
    data["words"] = json!(words);
    data["target"] = json!(scene.words_target);
    if let Some(target) = scene.words_target {
        let target = f64::from(target);
        let off = words as f64 - target;
        let within = off.abs() <= target * TARGET_TOLERANCE;
        data["within_target"] = Value::Bool(within);
        if !within {
            let percent = if target > 0.0 {
                (off.abs() / target * 100.0).round()
            } else {
                100.0
            };
            let side = if off > 0.0 { "over" } else { "under" };
            problems.add(
                "length",
                format!(
                    "{words} words, {percent}% {side} the {target}-word target (aim within ±20%)"
                ),
            );
        }
    }
    if words == 0 {
        problems.add("body", "the scene has no prose yet");
    }
}

/// The characters the prose names, to check a scene's cast against.
struct Cast<'a> {
    catalog: &'a Catalog,
    /// The cards of the characters named in the prose.
    mentioned: Vec<FilePath>,
    /// The point-of-view character's card: a narrator need not name themself.
    pov_card: Option<FilePath>,
}

impl Cast<'_> {
    /// Whether the prose names the character of `card`.
    fn is_mentioned(&self, card: &FilePath) -> bool {
        self.mentioned.iter().any(|found| found == card)
    }

    /// Whether the prose should name the character of `card` and does not.
    fn is_missing(&self, card: &FilePath) -> bool {
        !self.is_mentioned(card) && self.pov_card.as_ref() != Some(card)
    }

    /// The display name of `card`'s character, or its path when the card
    /// cannot be read.
    fn card_name(&self, card: &FilePath) -> String {
        self.catalog.card_name(card)
    }
}

/// Checks each name in `characters:`; returns one entry per name with its
/// card and whether the prose names it.
fn check_characters(cast: &Cast, scene: &Scene, problems: &mut Problems) -> Vec<Value> {
    let mut characters = Vec::new();
    for listed in &scene.characters {
        let card = cast
            .catalog
            .resolve_card(&listed.text, &[CardKind::Character])
            .map(|card| card.path.clone());
        match &card {
            None => problems.add(
                "characters",
                format!(
                    "`{}` in `characters` is not the name, alias or id of a character card",
                    listed.text
                ),
            ),
            Some(card) if cast.is_missing(card) => problems.add(
                "characters",
                format!(
                    "{} is listed in `characters` but never named in the prose",
                    cast.card_name(card)
                ),
            ),
            Some(_) => {}
        }
        characters.push(json!({
            "name": listed.text,
            "card": card.as_ref().map(|card| card.to_string()),
            "mentioned": card.as_ref().is_some_and(|card| cast.is_mentioned(card)),
        }));
    }
    characters
}

/// Checks that the prose names each character of the outline beat; returns
/// one entry per character with its card and whether the prose names it.
fn check_beat(
    workspace: &Workspace,
    cast: &Cast,
    entry: &OutlineEntry,
    problems: &mut Problems,
) -> Vec<Value> {
    let mut beat_characters = Vec::new();
    for card in cards_in_entry(workspace, entry, &[CardKind::Character]) {
        if cast.is_missing(&card) {
            problems.add(
                "beat",
                format!(
                    "the outline beat names {}, who is not named in the prose",
                    cast.card_name(&card)
                ),
            );
        }
        beat_characters.push(json!({
            "name": cast.card_name(&card),
            "card": card.to_string(),
            "mentioned": cast.is_mentioned(&card),
        }));
    }
    beat_characters
}

fn describe(target: &SceneTarget, data: &Value, problems: &Problems) -> String {
    let mut summary = Summary::new();
    let verdict = match problems.0.len() {
        0 => "valid".to_owned(),
        1 => "1 problem, not valid".to_owned(),
        n => format!("{n} problems, not valid"),
    };
    summary.line(format!("{}: {verdict}.", target.label()));
    if let Some(position) = data["position"].as_u64() {
        summary.line(format!(
            "Outline position {position}; beat: {}",
            data["beat"].as_str().unwrap_or("")
        ));
    }
    if data["exists"] == true {
        let pov = match (data["pov"].as_str(), data["pov_resolves"].as_bool()) {
            (Some(pov), Some(true)) => format!("POV {pov}"),
            (Some(pov), _) => format!("POV {pov} (no such character)"),
            (None, _) => "no POV".to_owned(),
        };
        let length = match data["target"].as_u64() {
            Some(target) => format!("{} words against a target of {target}", data["words"]),
            None => format!("{} words, no target", data["words"]),
        };
        summary.line(format!("{pov}; {length}."));
    }
    for (rule, message) in &problems.0 {
        summary.line(format!("- [{rule}] {message}"));
    }
    summary.finish()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::test_support::{
        bad_argument, file_ref, output, run, salt_road, salt_road_with,
    };

    fn rules(out: &super::ToolOutput) -> Vec<String> {
        out.data["problems"]
            .as_array()
            .expect("problems")
            .iter()
            .map(|problem| problem["rule"].as_str().unwrap_or("").to_owned())
            .collect()
    }

    #[test]
    fn a_good_draft_is_valid() {
        let (dir, ws) = salt_road();
        let out = output(
            &ws,
            "scene_draft_validator",
            json!({"scene_path": "Story/Scenes/SCN-the-arrival.md"}),
        );
        let data = &out.data;
        assert_eq!(data["valid"], true, "{}", out.summary);
        assert_eq!(data["problems"], json!([]));
        assert_eq!(data["exists"], true);
        assert_eq!(data["in_outline"], true);
        assert_eq!(data["position"], 1);
        assert_eq!(data["pov"], "Kael Maren");
        assert_eq!(data["pov_resolves"], true);
        assert_eq!(data["words"], 61);
        assert_eq!(data["target"], 60);
        assert_eq!(data["within_target"], true);
        assert_eq!(
            data["characters"],
            json!([
                {"name": "Kael", "card": "Compendium/Characters/CHAR-kael-maren.md", "mentioned": true},
                {"name": "Iria", "card": "Compendium/Characters/CHAR-iria-vell.md", "mentioned": true},
            ])
        );
        assert_eq!(data["beat_characters"][0]["name"], "Kael Maren");
        assert!(
            out.summary
                .starts_with("SCN-the-arrival (Story/Scenes/SCN-the-arrival.md): valid.")
        );
        let scene = file_ref(&out, dir.path(), "Story/Scenes/SCN-the-arrival.md");
        assert_eq!((scene.start_line, scene.end_line), (1, 18));
        let entry = file_ref(&out, dir.path(), "Story/SCN-outline.md");
        assert_eq!((entry.start_line, entry.end_line), (5, 5));
    }

    #[test]
    fn a_short_draft_missing_a_listed_character_is_not_valid() {
        let (_dir, ws) = salt_road();
        let out = output(
            &ws,
            "scene_draft_validator",
            json!({"scene_path": "Story/Scenes/SCN-the-gate.md"}),
        );
        assert_eq!(out.data["valid"], false);
        assert_eq!(rules(&out), ["length", "characters", "beat"]);
        assert_eq!(out.data["within_target"], false);
        assert_eq!(
            out.data["problems"][0]["message"],
            "70 words, 65% under the 200-word target (aim within ±20%)"
        );
        assert_eq!(out.data["characters"][2]["mentioned"], false);
        assert_eq!(
            out.data["beat_characters"],
            json!([
                {"name": "Iria Vell", "card": "Compendium/Characters/CHAR-iria-vell.md", "mentioned": true},
                {"name": "Ysolde Harrow", "card": "Compendium/Characters/CHAR-ysolde-harrow.md", "mentioned": false},
            ])
        );
        assert!(
            out.summary
                .contains("- [beat] the outline beat names Ysolde Harrow")
        );
    }

    #[test]
    fn the_pov_character_need_not_be_named() {
        // Kael is the POV of the saltmaster scene and only "Kale" is written.
        let (_dir, ws) = salt_road();
        let out = output(
            &ws,
            "scene_draft_validator",
            json!({"scene_path": "Story/Scenes/SCN-the-saltmaster.md"}),
        );
        assert_eq!(out.data["characters"][0]["mentioned"], false);
        assert_eq!(out.data["within_target"], json!(null));
        assert_eq!(out.data["valid"], true, "{}", out.summary);
    }

    #[test]
    fn a_scene_not_written_yet_is_not_an_error() {
        let (dir, ws) = salt_road();
        let out = output(
            &ws,
            "scene_draft_validator",
            json!({"scene_path": "Story/Scenes/SCN-the-reckoning.md"}),
        );
        assert_eq!(out.data["exists"], false);
        assert_eq!(out.data["valid"], false);
        assert_eq!(out.data["in_outline"], true);
        assert_eq!(out.data["position"], 6);
        assert_eq!(rules(&out), ["exists"]);
        assert_eq!(out.file_refs.len(), 1);
        file_ref(&out, dir.path(), "Story/SCN-outline.md");

        let out = output(
            &ws,
            "scene_draft_validator",
            json!({"scene_path": "Story/Scenes/SCN-nowhere.md"}),
        );
        assert_eq!(rules(&out), ["exists", "outline"]);
        assert_eq!(out.data["id"], "SCN-nowhere");
    }

    #[test]
    fn broken_front_matter_and_bad_references_are_problems() {
        let (_dir, ws) = salt_road_with(&[
            (
                "Story/Scenes/SCN-the-vigil.md",
                "---\nid: SCN-the-wake\npov: Nobody\ncharacters: [Iria, Stranger]\nwords: many\n---\n\nIria kept the lamp.\n",
            ),
            ("Story/Scenes/SCN-empty.md", "# Nothing yet\n"),
        ]);
        let out = output(
            &ws,
            "scene_draft_validator",
            json!({"scene_path": "Story/Scenes/SCN-the-vigil.md"}),
        );
        assert_eq!(out.data["id"], "SCN-the-wake");
        assert_eq!(
            out.data["front_matter_problems"],
            json!([{"line": 5, "message": "`words` should be a whole number, not text"}])
        );
        assert_eq!(out.data["pov_resolves"], false);
        assert_eq!(
            rules(&out),
            ["front_matter", "pov", "characters", "outline"]
        );
        assert!(
            out.data["problems"][3]["message"]
                .as_str()
                .is_some_and(|m| m.contains("the outline lists `SCN-the-vigil`, the file's name")),
            "{}",
            out.summary
        );

        let empty = output(
            &ws,
            "scene_draft_validator",
            json!({"scene_path": "Story/Scenes/SCN-empty.md"}),
        );
        assert_eq!(rules(&empty), ["front_matter", "pov", "body", "outline"]);
    }

    #[test]
    fn bad_arguments_are_named() {
        let (_dir, ws) = salt_road();
        let (name, _) = bad_argument(run(&ws, "scene_draft_validator", json!({})));
        assert_eq!(name, "scene_path");
        let (name, message) = bad_argument(run(
            &ws,
            "scene_draft_validator",
            json!({"scene_path": "Compendium/Characters/CHAR-iria-vell.md"}),
        ));
        assert_eq!(name, "scene_path");
        assert!(
            message.contains("a character card, not a scene"),
            "{message}"
        );
    }
}
