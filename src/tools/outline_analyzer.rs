//! `outline_analyzer`: the outline's structure, or one scene's beat in it.
//!
//! Arguments: `outline_path` (optional; default the workspace's outline),
//! `scene_id` or `scene_path` (optional; the scene whose beat to give; a path
//! of a scene not yet written names the scene by its file stem), `mode`
//! (`structure` or `beat`; default `beat` when a scene is given, else
//! `structure`; `beat` needs a scene).
//!
//! Reads the outline's headings and scene entries (list items that start
//! with a scene id) as the index holds them. Each entry belongs to the
//! nearest heading above it; entries above every heading belong to an
//! untitled group (title `null`, level 0). Positions are 1-based places
//! among the outline's entries, which is story order.
//!
//! Output: `path`, `mode`, `chapters` ([{title, level, scenes: [ids]}], one
//! per heading in order, plus the untitled group first when it has
//! scenes), `scenes` ([{id, position, beat, sub_beats, chapter (title or
//! null), has_file, path (the scene file or null), words (prose words of
//! the scene file or null)}]), `counts` ({chapters, scenes, drafted,
//! words}), and with a scene `beat` ({scene_id, beat, sub_beats, chapter,
//! position, previous: {id, beat, end} | null, next: {id, beat, start} |
//! null, current: the scene's prose as it stands, or null, scaffold:
//! {path, text} | null}): `end` is the last [`EDGE_WORDS`] words of the
//! previous scene's prose, `start` the first of the next one's (null when
//! not written), `current` at most [`CURRENT_WORDS`] words, so a drafting
//! agent continues from where the story stands and redrafts from the
//! writer's text; `scaffold` the writer's scaffold of the scene
//! (`SCN-x.scaffold.md`), which the drafting agent drafts from. A scene
//! the outline does not list is a bad argument.

use serde_json::{Value, json};

use super::{
    FileRef, Summary, ToolArgs, ToolContext, ToolError, ToolOutput, entry_sub_beats, indexed_file,
    scene_target,
};
use crate::index::{Outline, OutlineEntry, SourceFile, Workspace};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Structure,
    Beat,
}

pub(super) fn run(context: &ToolContext, args: &ToolArgs) -> Result<ToolOutput, ToolError> {
    let workspace = context.workspace;
    let outline_file = match args.path("outline_path")? {
        Some(path) => indexed_file(context, "outline_path", path)?,
        None => workspace.catalog().outline().ok_or_else(|| {
            ToolError::Failed(format!(
                "this workspace has no outline (expected at `{}`)",
                workspace.config().paths.outline
            ))
        })?,
    };
    let Some(outline) = outline_file.outline() else {
        return Err(ToolError::BadArgument {
            name: "outline_path".into(),
            message: format!(
                "`{}` is {}, not the outline",
                outline_file.path,
                super::describe_kind(outline_file)
            ),
        });
    };
    let target = scene_target(context, args)?;
    let mode = match (args.string("mode")?, &target) {
        (Some("structure"), _) => Mode::Structure,
        (Some("beat"), Some(_)) | (None, Some(_)) => Mode::Beat,
        (Some("beat"), None) => {
            return Err(ToolError::BadArgument {
                name: "mode".into(),
                message: "`beat` needs `scene_id` or `scene_path`".into(),
            });
        }
        (None, None) => Mode::Structure,
        (Some(other), _) => {
            return Err(ToolError::BadArgument {
                name: "mode".into(),
                message: format!("`{other}` is not `structure` or `beat`"),
            });
        }
    };

    let scenes: Vec<Value> = outline
        .entries
        .iter()
        .enumerate()
        .map(|(index, entry)| scene_json(workspace, outline_file, outline, index, entry))
        .collect();
    let chapters = chapters_json(outline);
    let drafted = scenes
        .iter()
        .filter(|scene| scene["has_file"] == true)
        .count();
    let words: u64 = scenes
        .iter()
        .filter_map(|scene| scene["words"].as_u64())
        .sum();
    let counts = json!({
        "chapters": outline.headings.len(),
        "scenes": scenes.len(),
        "drafted": drafted,
        "words": words,
    });

    let mut file_refs = Vec::new();
    let mut summary = Summary::new();
    let beat = match (&target, mode) {
        (Some(target), Mode::Beat) => {
            let Some(index) = outline
                .entries
                .iter()
                .position(|entry| entry.scene_id == target.id)
            else {
                return Err(ToolError::BadArgument {
                    name: target.argument.into(),
                    message: format!(
                        "the outline `{}` does not list the scene `{}`",
                        outline_file.path, target.id
                    ),
                });
            };
            let entry = &outline.entries[index];
            file_refs.push(FileRef::span(outline_file, entry.range));
            let beat = beat_json(workspace, outline_file, outline, index, entry);
            describe_beat(&mut summary, &beat, outline.entries.len());
            Some(beat)
        }
        _ => {
            describe_structure(&mut summary, outline_file, &chapters, &scenes, &counts);
            written_as(&mut summary, outline_file);
            None
        }
    };
    file_refs.push(FileRef::whole(outline_file));
    if let Some(file) = target.as_ref().and_then(|target| target.file) {
        file_refs.push(FileRef::span(file, file.head_range()));
    }

    Ok(ToolOutput {
        data: json!({
            "path": outline_file.path.to_string(),
            "mode": match mode { Mode::Structure => "structure", Mode::Beat => "beat" },
            "chapters": chapters,
            "scenes": scenes,
            "counts": counts,
            "beat": beat,
        }),
        summary: summary.finish(),
        file_refs,
    })
}

/// The title of the heading an entry sits under.
fn chapter_title<'a>(outline: &'a Outline, entry: &OutlineEntry) -> Option<&'a str> {
    entry
        .heading
        .and_then(|heading| outline.headings.get(heading))
        .map(|heading| heading.title.as_str())
}

fn scene_json(
    workspace: &Workspace,
    outline_file: &SourceFile,
    outline: &Outline,
    index: usize,
    entry: &OutlineEntry,
) -> Value {
    let file: Option<&SourceFile> = workspace
        .catalog()
        .scene(&entry.scene_id)
        .map(|file| &**file);
    json!({
        "id": entry.scene_id,
        "position": index + 1,
        "beat": entry.beat,
        "sub_beats": entry_sub_beats(outline_file, entry),
        "chapter": chapter_title(outline, entry),
        "has_file": file.is_some(),
        "path": file.map(|file| file.path.to_string()),
        "words": file.and_then(|file| file.scene()).map(|scene| scene.word_count),
    })
}

fn chapters_json(outline: &Outline) -> Vec<Value> {
    let mut chapters = Vec::new();
    let untitled: Vec<&str> = outline
        .entries
        .iter()
        .filter(|entry| entry.heading.is_none())
        .map(|entry| entry.scene_id.as_str())
        .collect();
    if !untitled.is_empty() {
        chapters.push(json!({"title": null, "level": 0, "scenes": untitled}));
    }
    for (index, heading) in outline.headings.iter().enumerate() {
        let scenes: Vec<&str> = outline
            .entries
            .iter()
            .filter(|entry| entry.heading == Some(index))
            .map(|entry| entry.scene_id.as_str())
            .collect();
        chapters.push(json!({"title": heading.title, "level": heading.level, "scenes": scenes}));
    }
    chapters
}

/// Words of a neighbouring scene's prose given at its edge.
pub const EDGE_WORDS: usize = 60;
/// Words of the scene's own prose given at most (the summary's own limit
/// may leave out its last paragraphs, and says so).
pub const CURRENT_WORDS: usize = 600;
/// Characters of an edge kept on its summary line (under the line limit).
const EDGE_CHARS: usize = 560;

/// The prose of scene `id` (its body without front matter), if written.
pub(super) fn prose_of<'w>(workspace: &'w Workspace, id: &str) -> Option<&'w str> {
    let file = workspace.catalog().scene(id)?;
    let body = match &file.front_matter {
        Some(front_matter) => &file.text[front_matter.range.end..],
        None => &file.text[..],
    };
    Some(body.trim()).filter(|body| !body.is_empty())
}

/// The first (`from_start`) or last `count` words of `text`, with an
/// ellipsis where words were left out; whitespace inside kept as written.
pub(super) fn edge(text: &str, count: usize, from_start: bool) -> String {
    let starts: Vec<usize> = text
        .char_indices()
        .filter(|&(at, ch)| {
            !ch.is_whitespace()
                && text[..at]
                    .chars()
                    .next_back()
                    .is_none_or(char::is_whitespace)
        })
        .map(|(at, _)| at)
        .collect();
    if starts.len() <= count {
        return text.to_owned();
    }
    if from_start {
        format!("{} …", text[..starts[count]].trim_end())
    } else {
        format!("… {}", &text[starts[starts.len() - count]..])
    }
}

/// The writer's scaffold of scene `id` (its body, without its front
/// matter), with its path, when there is one.
fn scaffold_of(workspace: &Workspace, id: &str) -> Option<Value> {
    let file = workspace.scaffold(id)?;
    let body = match &file.front_matter {
        Some(front_matter) => &file.text[front_matter.range.end..],
        None => &file.text[..],
    };
    let body = body.trim();
    (!body.is_empty()).then(|| json!({"path": file.path.to_string(), "text": body}))
}

fn beat_json(
    workspace: &Workspace,
    outline_file: &SourceFile,
    outline: &Outline,
    index: usize,
    entry: &OutlineEntry,
) -> Value {
    let neighbour = |entry: Option<&OutlineEntry>, key: &str, from_start: bool| {
        entry.map(|entry| {
            let text = prose_of(workspace, &entry.scene_id)
                .map(|prose| edge(prose, EDGE_WORDS, from_start));
            json!({"id": entry.scene_id, "beat": entry.beat, key: text})
        })
    };
    let current =
        prose_of(workspace, &entry.scene_id).map(|prose| edge(prose, CURRENT_WORDS, true));
    json!({
        "scene_id": entry.scene_id,
        "beat": entry.beat,
        "sub_beats": entry_sub_beats(outline_file, entry),
        "chapter": chapter_title(outline, entry),
        "position": index + 1,
        "previous": neighbour(index.checked_sub(1).and_then(|i| outline.entries.get(i)), "end", false),
        "next": neighbour(outline.entries.get(index + 1), "start", true),
        "current": current,
        "scaffold": scaffold_of(workspace, &entry.scene_id),
    })
}

fn describe_beat(summary: &mut Summary, beat: &Value, total: usize) {
    let text = |value: &Value| value.as_str().unwrap_or("").to_owned();
    let chapter = match beat["chapter"].as_str() {
        Some(title) => format!(" in “{title}”"),
        None => String::new(),
    };
    summary.line(format!(
        "Scene {} of {total}{chapter}: {}",
        beat["position"],
        text(&beat["scene_id"])
    ));
    summary.line(format!("Beat: {}", text(&beat["beat"])));
    for sub_beat in beat["sub_beats"].as_array().into_iter().flatten() {
        summary.line(format!("  - {}", text(sub_beat)));
    }
    for (label, key, edge, edge_label) in [
        ("Previous", "previous", "end", "It ends"),
        ("Next", "next", "start", "It begins"),
    ] {
        match beat[key].as_object() {
            Some(neighbour) => {
                summary.line(format!(
                    "{label}: {}: {}",
                    neighbour.get("id").map(text).unwrap_or_default(),
                    neighbour.get("beat").map(text).unwrap_or_default()
                ));
                if let Some(prose) = neighbour.get(edge).and_then(Value::as_str) {
                    let prose = one_line(prose);
                    let count = prose.chars().count();
                    let prose = match (count > EDGE_CHARS, edge) {
                        (false, _) => prose,
                        (true, "end") => {
                            let tail: String = prose.chars().skip(count - EDGE_CHARS).collect();
                            format!("…{tail}")
                        }
                        (true, _) => format!("{}…", crate::text::clip(&prose, EDGE_CHARS)),
                    };
                    summary.line(format!("{edge_label}: {prose}"));
                }
            }
            None => summary.line(format!("{label}: none")),
        }
    }
    if let Some(scaffold) = beat["scaffold"].as_object() {
        summary.line(format!(
            "The writer's scaffold of this scene ({}): draft from it, beat by beat:",
            scaffold.get("path").map(text).unwrap_or_default()
        ));
        let body = scaffold.get("text").map(text).unwrap_or_default();
        for line in body
            .lines()
            .map(str::trim_end)
            .filter(|l| !l.trim().is_empty())
        {
            summary.line(line);
        }
    }
    match beat["current"].as_str() {
        Some(prose) => {
            summary.line("The scene as it stands, to redraft:");
            for paragraph in prose.split("\n\n").map(one_line).filter(|p| !p.is_empty()) {
                summary.line(paragraph);
            }
        }
        None => summary.line("The scene as it stands: not written yet"),
    }
}

fn describe_structure(
    summary: &mut Summary,
    outline_file: &SourceFile,
    chapters: &[Value],
    scenes: &[Value],
    counts: &Value,
) {
    summary.line(format!(
        "Outline {}: {} scenes under {} headings, {} drafted ({} words).",
        outline_file.path, counts["scenes"], counts["chapters"], counts["drafted"], counts["words"]
    ));
    for chapter in chapters {
        let ids = chapter["scenes"].as_array().map_or(&[][..], Vec::as_slice);
        match chapter["title"].as_str() {
            Some(title) => summary.line(format!(
                "{} {title}",
                "#".repeat(chapter["level"].as_u64().unwrap_or(1) as usize)
            )),
            None if !ids.is_empty() => summary.line("(before the first heading)"),
            None => {}
        }
        for id in ids {
            let Some(scene) = scenes.iter().find(|scene| scene["id"] == *id) else {
                continue;
            };
            let state = match scene["words"].as_u64() {
                Some(words) => format!("{words} words"),
                None if scene["has_file"] == true => "drafted".to_owned(),
                None => "not written".to_owned(),
            };
            summary.line(format!(
                "{}. {} [{state}]: {}",
                scene["position"],
                scene["id"].as_str().unwrap_or(""),
                scene["beat"].as_str().unwrap_or("")
            ));
        }
    }
}

/// The most of the outline's own text a structure gives, in characters.
const WRITTEN_CHARS: usize = 2_500;

/// The outline file as written, for a step that proposes edits of it by
/// quoting its lines.
fn written_as(summary: &mut Summary, outline_file: &SourceFile) {
    let text = outline_file.text.trim_end();
    let shown = crate::text::clip(text, WRITTEN_CHARS);
    summary.line(format!(
        "The outline file {} as written:",
        outline_file.path
    ));
    summary.line("````markdown");
    for line in shown.lines() {
        summary.line(line);
    }
    if shown.len() < text.len() {
        summary.line("(the rest is left out)");
    }
    summary.line("````");
}

/// `text` on one line: its line breaks and runs of spaces made one space.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::test_support::{
        file_ref, output, rejected, run, salt_road, salt_road_output, scene, scene_id, workspace,
    };

    #[test]
    fn structure_lists_chapters_and_scenes_in_story_order() {
        let (dir, out) = salt_road_output("outline_analyzer", json!({}));
        let data = &out.data;
        assert_eq!(data["path"], "Story/SCN-outline.md");
        assert_eq!(data["mode"], "structure");
        assert_eq!(data["chapters"][0]["title"], "The Salt Road");
        assert_eq!(data["chapters"][0]["scenes"], json!([]));
        assert_eq!(data["chapters"][1]["title"], "Chapter 1: The Gate");
        assert_eq!(data["chapters"][1]["level"], 2);
        assert_eq!(
            data["chapters"][1]["scenes"],
            json!(["SCN-the-arrival", "SCN-the-gate", "SCN-the-saltmaster"])
        );
        assert_eq!(
            data["chapters"][2]["scenes"],
            json!(["SCN-the-fall", "SCN-the-vigil", "SCN-the-reckoning"])
        );
        let scenes = data["scenes"].as_array().expect("scenes");
        assert_eq!(scenes.len(), 6);
        assert_eq!(scenes[1]["id"], "SCN-the-gate");
        assert_eq!(scenes[1]["position"], 2);
        assert_eq!(scenes[1]["beat"], "Iria lets him in against orders.");
        assert_eq!(
            scenes[1]["sub_beats"],
            json!(["The Commander catches them at it."])
        );
        assert_eq!(scenes[1]["chapter"], "Chapter 1: The Gate");
        assert_eq!(scenes[1]["path"], "Story/Scenes/SCN-the-gate.md");
        assert_eq!(scenes[1]["words"], 70);
        assert_eq!(scenes[5]["has_file"], false);
        assert_eq!(scenes[5]["path"], json!(null));
        assert_eq!(scenes[5]["words"], json!(null));
        assert_eq!(data["counts"]["drafted"], 5);
        assert_eq!(data["beat"], json!(null));
        assert!(out.summary.contains("## Chapter 2: The Tide"));
        assert!(
            out.summary
                .contains("6. SCN-the-reckoning [not written]: Ysolde answers")
        );
        let whole = file_ref(&out, dir.path(), "Story/SCN-outline.md");
        assert_eq!((whole.start_line, whole.end_line), (1, 14));
    }

    #[test]
    fn beat_gives_the_scene_and_its_neighbours() {
        let (dir, out) = salt_road_output("outline_analyzer", scene_id("SCN-the-gate"));
        let beat = &out.data["beat"];
        assert_eq!(out.data["mode"], "beat");
        assert_eq!(beat["scene_id"], "SCN-the-gate");
        assert_eq!(beat["position"], 2);
        assert_eq!(beat["chapter"], "Chapter 1: The Gate");
        assert_eq!(beat["previous"]["id"], "SCN-the-arrival");
        assert_eq!(beat["next"]["id"], "SCN-the-saltmaster");
        assert_eq!(
            beat["next"]["beat"],
            "Old Tomas shows Kael the cracked ward-stone."
        );
        assert!(
            out.summary
                .contains("Beat: Iria lets him in against orders.")
        );
        assert!(
            out.summary
                .contains("  - The Commander catches them at it.")
        );
        assert!(
            out.summary
                .contains("Previous: SCN-the-arrival: Kael reaches")
        );
        // The entry's span (with its sub-beat) comes first, then the whole outline.
        assert_eq!(out.file_refs[0].path, "Story/SCN-outline.md");
        assert_eq!(
            (out.file_refs[0].start_line, out.file_refs[0].end_line),
            (6, 7)
        );
        assert!(out.file_refs[0].excerpt.starts_with("- SCN-the-gate: Iria"));
        let scene = file_ref(&out, dir.path(), "Story/Scenes/SCN-the-gate.md");
        assert_eq!(scene.start_line, 10);
    }

    #[test]
    fn a_scene_without_a_file_has_a_beat_by_path_and_the_last_has_no_next() {
        let (_dir, out) = salt_road_output(
            "outline_analyzer",
            scene("Story/Scenes/SCN-the-reckoning.md"),
        );
        assert_eq!(out.data["beat"]["scene_id"], "SCN-the-reckoning");
        assert_eq!(out.data["beat"]["position"], 6);
        assert_eq!(out.data["beat"]["previous"]["id"], "SCN-the-vigil");
        assert_eq!(out.data["beat"]["next"], json!(null));
        assert!(out.summary.contains("Next: none"));
    }

    #[test]
    fn bad_arguments_are_named() {
        let (_dir, ws) = salt_road();
        let (name, message) = rejected(&ws, "outline_analyzer", scene_id("SCN-nowhere"));
        assert_eq!(name, "scene_id");
        assert!(message.contains("SCN-nowhere"));
        let (name, message) = rejected(
            &ws,
            "outline_analyzer",
            json!({"outline_path": "Compendium/Characters/CHAR-kael-maren.md"}),
        );
        assert_eq!(name, "outline_path");
        assert!(message.contains("a character card"), "{message}");
        let (name, _) = rejected(&ws, "outline_analyzer", json!({"mode": "beat"}));
        assert_eq!(name, "mode");
        let (name, _) = rejected(&ws, "outline_analyzer", json!({"mode": "poem"}));
        assert_eq!(name, "mode");
    }

    #[test]
    fn an_orphan_scene_is_not_in_the_outline() {
        let (_dir, ws) = workspace(&[
            ("Story/SCN-outline.md", "- SCN-a: First.\n"),
            ("Story/Scenes/SCN-a.md", "Some prose.\n"),
            ("Story/Scenes/SCN-orphan.md", "More prose.\n"),
        ]);
        let (name, message) =
            rejected(&ws, "outline_analyzer", scene("Story/Scenes/SCN-orphan.md"));
        assert_eq!(name, "scene_path");
        assert!(
            message.contains("does not list the scene `SCN-orphan`"),
            "{message}"
        );
        // Entries above every heading form an untitled group.
        let out = output(&ws, "outline_analyzer", json!({"mode": "structure"}));
        assert_eq!(
            out.data["chapters"],
            json!([{"title": null, "level": 0, "scenes": ["SCN-a"]}])
        );
        assert_eq!(out.data["scenes"][0]["chapter"], json!(null));
        assert_eq!(out.data["scenes"][0]["words"], 2);
    }

    #[test]
    fn a_workspace_without_an_outline_fails_with_a_reason() {
        let (_dir, ws) = workspace(&[("Story/Scenes/SCN-a.md", "Prose.\n")]);
        let error = run(&ws, "outline_analyzer", json!({})).expect_err("no outline");
        assert!(
            error.to_string().contains("Story/SCN-outline.md"),
            "{error}"
        );
    }
}
