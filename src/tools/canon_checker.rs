//! `canon_checker`: the canon a scene draws on, and where the scene
//! contradicts it.
//!
//! Arguments: `scene_path` (required; a scene file, or the path a scene the
//! outline lists will have, whose file stem is its id), `canon_paths`
//! (optional list of card paths; default: the cards the scene involves, as
//! [`canon_for_scene`] finds them: its `pov`, `characters` and `location`,
//! else the cards its outline entry names).
//!
//! Each card is reported with its facts as the index reads them: name,
//! aliases, status, `died_in`, every other scalar front matter key as an
//! attribute (`eyes`, `hair`, `age`…) and the summary (the body's first
//! paragraph). Conflicts are the diagnostics of the continuity checks about
//! canon (`dead-character`, `attribute-mismatch`, `unknown-reference`,
//! `name-typo`) that `check_file` reports for the scene file; for a scene
//! without a file, those it reports on the scene's outline entry.
//!
//! Output: `scene` ({path, id, exists, pov, location, characters, beat}),
//! `cards` ([{path, kind, name, aliases, status, died_in, attributes: {key:
//! value}, summary}]), `conflicts` ([{code, severity, line, end_line,
//! message, quote, related}], lines 1-based, in the scene file or, for a
//! scene without one, the outline).

use serde_json::{Map, Value, json};

use super::{
    FileRef, Finding, SceneTarget, Summary, ToolArgs, ToolContext, ToolError, ToolOutput,
    canon_for_scene, indexed_file, one_line, push_ref, related_refs, scene_target,
};
use crate::checks::{Code, check_file};
use crate::index::{Card, SourceFile, Workspace};

/// The diagnostic codes that concern canon.
const CANON_CODES: &[Code] = &[
    Code::DeadCharacter,
    Code::AttributeMismatch,
    Code::UnknownReference,
    Code::NameTypo,
];

/// The card summary's length in the tool's summary; `data` has all of it.
const CARD_SUMMARY_CHARS: usize = 300;

pub(super) fn run(context: &ToolContext, args: &ToolArgs) -> Result<ToolOutput, ToolError> {
    let workspace = context.workspace;
    args.required_string("scene_path")?;
    let Some(target) = scene_target(context, args)? else {
        return Err(ToolError::Failed("the scene could not be found".into()));
    };

    let canon_paths: Vec<String> = match args.paths("canon_paths")? {
        paths if paths.is_empty() => canon_for_scene(workspace, &target.id),
        paths => paths.into_iter().map(str::to_owned).collect(),
    };
    let mut cards: Vec<(&SourceFile, &Card)> = Vec::new();
    for path in &canon_paths {
        let file = indexed_file(context, "canon_paths", path)?;
        let Some(card) = file.card() else {
            return Err(ToolError::BadArgument {
                name: "canon_paths".into(),
                message: format!(
                    "`{path}` is {}, not a canon card",
                    super::describe_kind(file)
                ),
            });
        };
        cards.push((file, card));
    }

    let mut file_refs = Vec::new();
    let conflicts = conflicts(workspace, &target, &mut file_refs);
    for (file, _) in &cards {
        push_ref(&mut file_refs, FileRef::whole(file));
    }
    let scene = scene_json(&target);
    let cards_json: Vec<Value> = cards
        .iter()
        .map(|(file, card)| card_json(file, card))
        .collect();

    let mut summary = Summary::new();
    describe_scene(&mut summary, &scene);
    summary.line(format!("Canon cards ({}):", cards.len()));
    for (file, card) in &cards {
        describe_card(&mut summary, file, card);
    }
    if conflicts.is_empty() {
        summary.line("Conflicts with canon: none.");
    } else {
        summary.line(format!("Conflicts with canon ({}):", conflicts.len()));
        for conflict in &conflicts {
            summary.line(format!("- {}", conflict.describe()));
        }
    }

    Ok(ToolOutput {
        data: json!({
            "scene": scene,
            "cards": cards_json,
            "conflicts": conflicts.iter().map(Finding::to_json).collect::<Vec<_>>(),
        }),
        summary: summary.finish(),
        file_refs,
    })
}

/// The canon diagnostics of the scene file, or of its outline entry when it
/// has no file; records the spans read.
fn conflicts(
    workspace: &Workspace,
    target: &SceneTarget,
    file_refs: &mut Vec<FileRef>,
) -> Vec<Finding> {
    let (file, within) = match (target.file, target.entry) {
        (Some(file), _) => (&**file, None),
        (None, Some((_, entry))) => match workspace.catalog().outline() {
            Some(outline) => (&**outline, Some(entry.range)),
            None => return Vec::new(),
        },
        (None, None) => return Vec::new(),
    };
    match within {
        Some(range) => file_refs.push(FileRef::span(file, range)),
        None => file_refs.push(FileRef::whole(file)),
    }
    let mut findings = Vec::new();
    for diagnostic in check_file(workspace, &file.path) {
        if !CANON_CODES.contains(&diagnostic.code)
            || within.is_some_and(|range| !range.contains_range(diagnostic.range))
        {
            continue;
        }
        for related in related_refs(workspace, &diagnostic) {
            push_ref(file_refs, related);
        }
        findings.push(Finding::new(workspace, file, &diagnostic));
    }
    findings
}

fn scene_json(target: &SceneTarget) -> Value {
    let scene = target.file.and_then(|file| file.scene());
    json!({
        "path": target.path,
        "id": target.id,
        "exists": target.file.is_some(),
        "pov": scene.and_then(|scene| scene.pov.as_ref()).map(|pov| &pov.text),
        "location": scene.and_then(|scene| scene.location.as_ref()).map(|location| &location.text),
        "characters": scene.map_or_else(Vec::new, |scene| {
            scene.characters.iter().map(|name| name.text.clone()).collect()
        }),
        "beat": target.entry.map(|(_, entry)| &entry.beat),
    })
}

fn card_json(file: &SourceFile, card: &Card) -> Value {
    let attributes: Map<String, Value> = card
        .attributes
        .iter()
        .map(|(key, value)| (key.clone(), Value::String(value.text.clone())))
        .collect();
    json!({
        "path": file.path.to_string(),
        "kind": card.type_name,
        "name": card.display_name(),
        "aliases": card.aliases.iter().map(|alias| &alias.text).collect::<Vec<_>>(),
        "status": card.status.as_str(),
        "died_in": card.died_in.as_ref().map(|scene| &scene.text),
        "attributes": attributes,
        "summary": card.summary,
    })
}

fn describe_scene(summary: &mut Summary, scene: &Value) {
    let text = |key: &str| scene[key].as_str().map(str::to_owned);
    let id = text("id").unwrap_or_default();
    let place = match text("path") {
        Some(path) if scene["exists"] == true => format!("{id} ({path})"),
        Some(path) => format!("{id} ({path}, not written yet)"),
        None => id,
    };
    summary.line(format!("Scene {place}"));
    if let Some(beat) = text("beat") {
        summary.line(format!("Beat: {beat}"));
    }
    let mut facts = Vec::new();
    if let Some(pov) = text("pov") {
        facts.push(format!("POV {pov}"));
    }
    if let Some(location) = text("location") {
        facts.push(format!("at {location}"));
    }
    let characters: Vec<&str> = scene["characters"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if !characters.is_empty() {
        facts.push(format!("characters {}", characters.join(", ")));
    }
    if !facts.is_empty() {
        summary.line(facts.join("; "));
    }
}

/// One block per card: name and kind, aliases, status, the checked
/// attributes first (eyes, hair, age), the others, and the summary.
fn describe_card(summary: &mut Summary, file: &SourceFile, card: &Card) {
    summary.line(format!(
        "■ {} ({}, {})",
        card.display_name(),
        card.type_name,
        file.path
    ));
    if let Some(aliases) = card.alias_list() {
        summary.line(format!("  aliases: {aliases}"));
    }
    if card.kind == crate::index::CardKind::Character {
        let mut status = format!("  status: {}", card.status.as_str());
        if let Some(died_in) = &card.died_in {
            status.push_str(&format!(" (died in {})", died_in.text));
        }
        summary.line(status);
    }
    const FIRST: &[&str] = &["eyes", "hair", "age"];
    let mut attributes: Vec<&(String, crate::index::model::Spanned)> = card
        .attributes
        .iter()
        .filter(|(key, _)| FIRST.contains(&key.as_str()))
        .collect();
    attributes.sort_by_key(|(key, _)| FIRST.iter().position(|first| first == key));
    attributes.extend(
        card.attributes
            .iter()
            .filter(|(key, _)| !FIRST.contains(&key.as_str())),
    );
    if !attributes.is_empty() {
        let facts: Vec<String> = attributes
            .iter()
            .map(|(key, value)| format!("{key}: {}", value.text))
            .collect();
        summary.line(format!("  {}", facts.join("; ")));
    }
    if let Some(text) = &card.summary {
        let text = one_line(text);
        let cut: String = text.chars().take(CARD_SUMMARY_CHARS).collect();
        let ellipsis = if cut.len() < text.len() { "…" } else { "" };
        summary.line(format!("  summary: {cut}{ellipsis}"));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::test_support::{
        codes_and_lines, file_ref, output, rejected, salt_road, salt_road_output, scene,
    };

    #[test]
    fn cards_of_a_scene_with_their_facts_and_the_conflicts() {
        let (dir, out) = salt_road_output("canon_checker", scene("Story/Scenes/SCN-the-gate.md"));
        let data = &out.data;
        assert_eq!(data["scene"]["id"], "SCN-the-gate");
        assert_eq!(data["scene"]["exists"], true);
        assert_eq!(data["scene"]["pov"], "Iria Vell");
        assert_eq!(data["scene"]["location"], "The Salt Fortress");
        assert_eq!(
            data["scene"]["characters"],
            json!(["Iria", "Kael", "Ysolde"])
        );
        let paths: Vec<&str> = data["cards"]
            .as_array()
            .expect("cards")
            .iter()
            .filter_map(|card| card["path"].as_str())
            .collect();
        assert_eq!(
            paths,
            [
                "Compendium/Characters/CHAR-iria-vell.md",
                "Compendium/Characters/CHAR-kael-maren.md",
                "Compendium/Characters/CHAR-ysolde-harrow.md",
                "Compendium/Locations/LOC-the-salt-fortress.md",
            ]
        );
        let kael = &data["cards"][1];
        assert_eq!(kael["name"], "Kael Maren");
        assert_eq!(kael["kind"], "character");
        assert_eq!(kael["aliases"], json!(["Kael", "the Warden"]));
        assert_eq!(kael["status"], "alive");
        assert_eq!(
            kael["attributes"],
            json!({"eyes": "grey", "hair": "black", "age": "34"})
        );
        assert_eq!(
            kael["summary"],
            "A warden of the salt road who keeps the ward-lanterns lit."
        );
        assert_eq!(data["cards"][3]["kind"], "location");

        let conflicts = data["conflicts"].as_array().expect("conflicts");
        assert_eq!(conflicts.len(), 1, "{conflicts:?}");
        assert_eq!(conflicts[0]["code"], "attribute-mismatch");
        assert_eq!(conflicts[0]["severity"], "warning");
        assert_eq!(conflicts[0]["line"], 14);
        assert_eq!(conflicts[0]["quote"], "blue");

        assert!(out.summary.contains("■ Kael Maren (character"));
        assert!(out.summary.contains("  eyes: grey; hair: black; age: 34"));
        assert!(out.summary.contains("  aliases: Kael, the Warden"));
        assert!(out.summary.contains("line 14, warning attribute-mismatch"));
        let scene = file_ref(&out, dir.path(), "Story/Scenes/SCN-the-gate.md");
        assert_eq!((scene.start_line, scene.end_line), (1, 16));
        file_ref(&out, dir.path(), "Compendium/Characters/CHAR-kael-maren.md");
    }

    #[test]
    fn dead_characters_and_typos_are_conflicts() {
        let (_dir, ws) = salt_road();
        let vigil = output(&ws, "canon_checker", scene("Story/Scenes/SCN-the-vigil.md"));
        assert_eq!(
            codes_and_lines(&vigil.data["conflicts"]),
            [("dead-character", 4), ("dead-character", 13)]
        );
        let tomas = vigil.data["cards"]
            .as_array()
            .expect("cards")
            .iter()
            .find(|card| card["name"] == "Old Tomas")
            .expect("Tomas's card");
        assert_eq!(tomas["status"], "dead");
        assert_eq!(tomas["died_in"], "SCN-the-fall");
        assert!(
            vigil
                .summary
                .contains("status: dead (died in SCN-the-fall)")
        );

        let saltmaster = output(
            &ws,
            "canon_checker",
            scene("Story/Scenes/SCN-the-saltmaster.md"),
        );
        let typo = &saltmaster.data["conflicts"][0];
        assert_eq!(typo["code"], "name-typo");
        assert_eq!(typo["line"], 17);
        assert_eq!(typo["quote"], "Kale");
    }

    #[test]
    fn a_scene_without_a_file_uses_its_outline_entry() {
        let (dir, out) =
            salt_road_output("canon_checker", scene("Story/Scenes/SCN-the-reckoning.md"));
        assert_eq!(out.data["scene"]["exists"], false);
        assert_eq!(out.data["scene"]["id"], "SCN-the-reckoning");
        assert_eq!(
            out.data["scene"]["beat"],
            "Ysolde answers for the barred gate."
        );
        assert_eq!(out.data["cards"][0]["name"], "Ysolde Harrow");
        assert_eq!(out.data["cards"].as_array().map(Vec::len), Some(1));
        assert_eq!(out.data["conflicts"], json!([]));
        let entry = file_ref(&out, dir.path(), "Story/SCN-outline.md");
        assert_eq!((entry.start_line, entry.end_line), (14, 14));
        assert!(out.summary.contains("not written yet"));
    }

    #[test]
    fn canon_paths_choose_the_cards() {
        let (_dir, out) = salt_road_output(
            "canon_checker",
            json!({
                "scene_path": "Story/Scenes/SCN-the-gate.md",
                "canon_paths": ["Compendium/Characters/CHAR-old-tomas.md"],
            }),
        );
        assert_eq!(out.data["cards"].as_array().map(Vec::len), Some(1));
        assert_eq!(out.data["cards"][0]["name"], "Old Tomas");
    }

    #[test]
    fn bad_arguments_are_named() {
        let (_dir, ws) = salt_road();
        let (name, _) = rejected(&ws, "canon_checker", json!({}));
        assert_eq!(name, "scene_path");
        let (name, message) = rejected(&ws, "canon_checker", scene("Story/Scenes/SCN-nowhere.md"));
        assert_eq!(name, "scene_path");
        assert!(message.contains("SCN-nowhere"), "{message}");
        let (name, message) = rejected(
            &ws,
            "canon_checker",
            json!({
                "scene_path": "Story/Scenes/SCN-the-gate.md",
                "canon_paths": ["Story/Scenes/SCN-the-fall.md"],
            }),
        );
        assert_eq!(name, "canon_paths");
        assert!(message.contains("not a canon card"), "{message}");
        let (name, _) = rejected(
            &ws,
            "canon_checker",
            json!({
                "scene_path": "Story/Scenes/SCN-the-gate.md",
                "canon_paths": ["/etc/passwd"],
            }),
        );
        assert_eq!(name, "canon_paths");
    }
}
