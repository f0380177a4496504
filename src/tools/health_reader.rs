//! `health_reader`: what a model needs to read one scene's part of the
//! story's health (the checks a model runs: A3 timeline semantics, B1
//! fatal-flaw challenges, C2 theme resonance).
//!
//! Arguments: `scene_path` (required).
//!
//! Output: `scene` ({id, title, path, date, time, flashback, position}),
//! `previous` and `next` (the scenes on either side in the outline: {id,
//! date, time, flashback, end or start: their last or first words}, or
//! null), `protagonist` ({name, fatal_flaw, the_lie}, each null where the
//! Story Bible does not say), `theme` ({central_theme, statement}), and
//! `text`: the scene's prose as written (its front matter left out), which
//! every claim of the checks must quote.

use serde_json::{Value, json};

use super::outline_analyzer::{edge, prose_of};
use super::{
    FileRef, Summary, ToolArgs, ToolContext, ToolError, ToolOutput, one_line, require_readable,
    scene_target, story_scenes,
};
use crate::index::bible::{BibleKind, is_placeholder};
use crate::index::{SourceFile, Workspace};

/// Words of a neighbour's edge the prompt sees.
const EDGE_WORDS: usize = 40;

pub(super) fn run(context: &ToolContext, args: &ToolArgs) -> Result<ToolOutput, ToolError> {
    let workspace = context.workspace;
    let Some(target) = scene_target(context, args)? else {
        return Err(ToolArgs::bad("scene_path", "a scene is required"));
    };
    let Some(file) = target.file else {
        return Err(ToolArgs::bad(
            "scene_path",
            format!("{} is not written yet: there is nothing to read", target.id),
        ));
    };
    require_readable(file)?;
    let mut file_refs = vec![FileRef::whole(file)];
    let scenes = story_scenes(workspace);
    let at = scenes
        .iter()
        .position(|scene| scene.entry.scene_id == target.id);
    let neighbour = |index: Option<usize>, from_start: bool| -> Value {
        let Some(scene) = index.and_then(|index| scenes.get(index)) else {
            return Value::Null;
        };
        let id = &scene.entry.scene_id;
        let mut value = timing(id, scene.file.map(|f| &**f));
        if let Some(prose) = prose_of(workspace, id) {
            value[if from_start { "start" } else { "end" }] =
                json!(edge(prose, EDGE_WORDS, from_start));
        }
        value
    };
    let previous = neighbour(at.and_then(|at| at.checked_sub(1)), false);
    let next = neighbour(at.map(|at| at + 1), true);
    for scene in [at.and_then(|at| at.checked_sub(1)), at.map(|at| at + 1)]
        .into_iter()
        .flatten()
        .filter_map(|index| scenes.get(index)?.file)
    {
        file_refs.push(FileRef::whole(scene));
    }
    let (protagonist, theme) = bible(workspace, &mut file_refs);
    let mut scene = timing(&target.id, Some(file));
    scene["title"] = json!(file.scene().and_then(|scene| scene.title.as_ref()));
    scene["path"] = json!(file.path.to_string());
    scene["position"] = json!(at.map(|at| at + 1));
    let data = json!({
        "scene": scene,
        "previous": previous,
        "next": next,
        "protagonist": protagonist,
        "theme": theme,
        "text": prose_of(workspace, &target.id).unwrap_or_default(),
    });
    let summary = describe(&data);
    Ok(ToolOutput {
        data,
        summary,
        file_refs,
    })
}

/// A scene's id, date, time of day and whether it is a flashback.
fn timing(id: &str, file: Option<&SourceFile>) -> Value {
    let scene = file.and_then(SourceFile::scene);
    json!({
        "id": id,
        "date": scene.and_then(|scene| scene.date.as_ref()).map(|date| &date.text),
        "time": scene.and_then(|scene| scene.time.as_ref()).map(|time| &time.text),
        "flashback": scene.is_some_and(|scene| scene.flashback),
    })
}

/// The protagonist (name, fatal flaw, the lie) and the theme (central
/// theme, statement) as the Story Bible says them.
fn bible(workspace: &Workspace, file_refs: &mut Vec<FileRef>) -> (Value, Value) {
    let catalog = workspace.catalog();
    let part = |kind: BibleKind, key: &str| -> Option<String> {
        let bible = catalog.bible(kind)?.bible()?;
        let text = bible.section(key)?.text.trim();
        (!text.is_empty() && !is_placeholder(text)).then(|| text.to_owned())
    };
    for kind in [BibleKind::Protagonist, BibleKind::Theme] {
        if let Some(file) = catalog.bible(kind) {
            file_refs.push(FileRef::whole(file));
        }
    }
    let name = catalog
        .bible(BibleKind::Protagonist)
        .and_then(|file| file.bible())
        .and_then(|bible| bible.character.as_ref())
        .map(|character| {
            catalog
                .resolve_card(&character.text, &[crate::index::CardKind::Character])
                .and_then(|card| card.card())
                .map_or_else(
                    || character.text.clone(),
                    |card| card.display_name().to_owned(),
                )
        });
    (
        json!({
            "name": name,
            "fatal_flaw": part(BibleKind::Protagonist, "fatal_flaw"),
            "the_lie": part(BibleKind::Protagonist, "the_lie"),
        }),
        json!({
            "central_theme": part(BibleKind::Theme, "central_theme"),
            "statement": part(BibleKind::Theme, "theme_statement"),
        }),
    )
}

fn describe(data: &Value) -> String {
    let mut summary = Summary::new();
    let text = |value: &Value| value.as_str().map(one_line);
    let when = |scene: &Value| -> String {
        let mut when = match (text(&scene["date"]), text(&scene["time"])) {
            (Some(date), Some(time)) => format!("{date}, {time}"),
            (Some(date), None) => date,
            (None, Some(time)) => format!("undated, {time}"),
            (None, None) => "undated".to_owned(),
        };
        if scene["flashback"] == true {
            when.push_str(" (a flashback)");
        }
        when
    };
    let scene = &data["scene"];
    let title = text(&scene["title"]).map_or_else(String::new, |title| format!(" “{title}”"));
    summary.line(format!(
        "Scene {}{title}: {}.",
        text(&scene["id"]).unwrap_or_default(),
        when(scene)
    ));
    for (key, label, edge, edge_label) in [
        ("previous", "Before it", "end", "It ends"),
        ("next", "After it", "start", "It begins"),
    ] {
        let neighbour = &data[key];
        if neighbour.is_null() {
            summary.line(format!("{label}: nothing."));
            continue;
        }
        let mut line = format!(
            "{label}: {}, {}.",
            text(&neighbour["id"]).unwrap_or_default(),
            when(neighbour)
        );
        if let Some(words) = text(&neighbour[edge]) {
            line.push_str(&format!(" {edge_label}: {words}"));
        }
        summary.line(line);
    }
    let said = |value: &Value| text(value).unwrap_or_else(|| "not written".to_owned());
    let protagonist = &data["protagonist"];
    summary.line(format!(
        "Protagonist: {}. Fatal flaw: {}. The lie: {}.",
        said(&protagonist["name"]),
        said(&protagonist["fatal_flaw"]),
        said(&protagonist["the_lie"])
    ));
    summary.line(format!(
        "Theme: {}. Theme statement: {}.",
        said(&data["theme"]["central_theme"]),
        said(&data["theme"]["statement"])
    ));
    summary.line("The scene's text:");
    for paragraph in data["text"].as_str().unwrap_or("").split("\n\n") {
        let paragraph = one_line(paragraph);
        if !paragraph.is_empty() {
            summary.line(paragraph);
        }
    }
    summary.finish()
}

#[cfg(test)]
mod tests {
    use crate::tools::test_support::{output, run};
    use serde_json::json;

    #[test]
    fn a_scene_comes_with_its_neighbours_times_the_flaw_and_the_theme() {
        let workspace = crate::index::Workspace::load(&crate::index::test_support::example_root());
        let out = output(
            &workspace,
            "health_reader",
            json!({"scene_path": "Story/Scenes/SCN-the-gate.md"}),
        );
        assert_eq!(out.data["scene"]["id"], "SCN-the-gate");
        assert!(out.data["previous"]["id"].is_string(), "{}", out.data);
        assert!(out.data["next"]["start"].is_string(), "{}", out.data);
        assert_eq!(out.data["protagonist"]["name"], "Kael Maren");
        assert!(
            out.data["protagonist"]["fatal_flaw"].is_string(),
            "{}",
            out.data
        );
        assert!(
            out.data["theme"]["statement"]
                .as_str()
                .unwrap()
                .starts_with("What we guard alone we lose")
        );
        assert!(out.summary.contains("The scene's text:"), "{}", out.summary);
        assert!(out.summary.contains("Fatal flaw: "), "{}", out.summary);
        // A scene nobody wrote has nothing to read.
        let unwritten = run(
            &workspace,
            "health_reader",
            json!({"scene_path": "Story/Scenes/SCN-the-reckoning.md"}),
        );
        assert!(unwritten.is_err());
    }
}
