//! `timeline_validator`: the story's dates in outline order, and where they
//! run backwards.
//!
//! Arguments: `scene_path` or `scene_id` (optional: report only that
//! scene's violations; the walk still covers every scene).
//!
//! Walks the scenes the outline lists, in story order (each scene once, at
//! its first entry; scene files the outline does not list are not part of
//! the story's order and are left out). A scene's date is its `date:` read
//! as a story date (year, year-month or year-month-day). Violations are the
//! `timeline-order` diagnostics `check_file` reports: a scene, not a
//! flashback, dated earlier than a scene before it (with the workspace's
//! severity settings; `off` silences them here too).
//!
//! Output: `scenes` ([{id, position (1-based), date (the story date in
//! canonical form, `1203-04-12`, or null), date_written (the `date:` text
//! as written, or null), flashback, path (null without a file)}]),
//! `violations` ([{scene, path, line (1-based), message, quote}]),
//! `undated` (ids of written scenes without a readable date),
//! `without_file` (ids), `span` ({first, last}: the earliest and latest
//! dates outside flashbacks, a date without a month or day counting as the
//! start of its year or month; nulls without dates), and `pass` (no
//! violations).

use serde_json::{Value, json};

use super::{
    FileRef, Finding, Summary, ToolArgs, ToolContext, ToolError, ToolOutput, push_ref,
    related_refs, scene_target, story_scenes,
};
use crate::checks::{Code, check_file};
use crate::index::model::StoryDate;

pub(super) fn run(context: &ToolContext, args: &ToolArgs) -> Result<ToolOutput, ToolError> {
    let workspace = context.workspace;
    let only = scene_target(context, args)?;
    let scenes = story_scenes(workspace);
    let mut file_refs = Vec::new();
    if let Some(outline) = workspace.catalog().outline() {
        file_refs.push(FileRef::whole(outline));
    }

    let mut rows = Vec::new();
    let mut violations = Vec::new();
    let mut undated = Vec::new();
    let mut without_file = Vec::new();
    let mut span: Option<(StoryDate, StoryDate)> = None;
    let order = |date: &StoryDate| (date.year, date.month, date.day);
    for story_scene in &scenes {
        let id = &story_scene.entry.scene_id;
        let file = story_scene.file;
        let scene = file.and_then(|file| file.scene());
        let date = scene.and_then(|scene| scene.story_date);
        let flashback = scene.is_some_and(|scene| scene.flashback);
        rows.push(json!({
            "id": id,
            "position": story_scene.position,
            "date": date.map(|date| date.to_string()),
            "date_written": scene.and_then(|scene| scene.date.as_ref()).map(|date| &date.text),
            "flashback": flashback,
            "path": file.map(|file| file.path.to_string()),
        }));
        let (Some(file), Some(scene)) = (file, scene) else {
            without_file.push(id.clone());
            continue;
        };
        if let Some(written) = &scene.date {
            file_refs.push(FileRef::span(file, written.range));
        }
        match date {
            None => undated.push(id.clone()),
            Some(date) if !flashback => {
                span = Some(match span {
                    None => (date, date),
                    Some((first, last)) => (
                        if order(&date) < order(&first) {
                            date
                        } else {
                            first
                        },
                        if order(&date) > order(&last) {
                            date
                        } else {
                            last
                        },
                    ),
                });
            }
            Some(_) => {}
        }
        if only.as_ref().is_some_and(|only| only.id != *id) {
            continue;
        }
        for diagnostic in check_file(workspace, &file.path) {
            if diagnostic.code != Code::TimelineOrder {
                continue;
            }
            for related in related_refs(workspace, &diagnostic) {
                push_ref(&mut file_refs, related);
            }
            let finding = Finding::new(workspace, file, &diagnostic);
            violations.push(json!({
                "scene": id,
                "path": file.path.to_string(),
                "line": finding.line,
                "message": finding.message,
                "quote": finding.quote,
            }));
        }
    }

    let data = json!({
        "scenes": rows,
        "violations": violations,
        "undated": undated,
        "without_file": without_file,
        "span": {
            "first": span.map(|(first, _)| first.to_string()),
            "last": span.map(|(_, last)| last.to_string()),
        },
        "pass": violations.is_empty(),
    });
    let summary = describe(&data, only.as_ref().map(|only| only.id.as_str()));
    Ok(ToolOutput {
        data,
        summary,
        file_refs,
    })
}

fn describe(data: &Value, only: Option<&str>) -> String {
    let mut summary = Summary::new();
    let list = |key: &str| data[key].as_array().map_or(&[][..], Vec::as_slice);
    let ids = |key: &str| -> String {
        list(key)
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if list("scenes").is_empty() {
        summary.line("No timeline: the workspace has no outline listing scenes.");
        return summary.finish();
    }
    let span = match (
        data["span"]["first"].as_str(),
        data["span"]["last"].as_str(),
    ) {
        (Some(first), Some(last)) if first == last => format!("all on {first}"),
        (Some(first), Some(last)) => format!("from {first} to {last}"),
        _ => "no dates".to_owned(),
    };
    let violations = list("violations").len();
    let scope = only.map_or_else(String::new, |id| format!(" for {id}"));
    let verdict = match violations {
        0 => format!("No dates out of order{scope}."),
        1 => format!("1 date out of order{scope}."),
        n => format!("{n} dates out of order{scope}."),
    };
    summary.line(format!(
        "Story timeline over {} outline scenes, {span} (flashbacks aside). {verdict}",
        list("scenes").len()
    ));
    if !list("undated").is_empty() {
        summary.line(format!("Undated: {}.", ids("undated")));
    }
    if !list("without_file").is_empty() {
        summary.line(format!("Not written yet: {}.", ids("without_file")));
    }
    for violation in list("violations") {
        summary.line(format!(
            "- {}, line {}: {}",
            violation["scene"].as_str().unwrap_or(""),
            violation["line"],
            violation["message"].as_str().unwrap_or("")
        ));
    }
    summary.line("Order:");
    for scene in list("scenes") {
        let date = match (scene["date"].as_str(), scene["date_written"].as_str()) {
            (Some(date), _) => date.to_owned(),
            (None, Some(written)) => format!("“{written}” (not a date)"),
            (None, None) if scene["path"].is_null() => "not written".to_owned(),
            (None, None) => "undated".to_owned(),
        };
        let flashback = if scene["flashback"] == true {
            " (flashback)"
        } else {
            ""
        };
        summary.line(format!(
            "{}. {}: {date}{flashback}",
            scene["position"],
            scene["id"].as_str().unwrap_or("")
        ));
    }
    summary.finish()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::test_support::{
        file_ref, output, rejected, salt_road, salt_road_output, salt_road_with, scene, scene_id,
        workspace,
    };

    #[test]
    fn dates_in_story_order_with_the_one_out_of_place() {
        let (dir, out) = salt_road_output("timeline_validator", json!({}));
        let data = &out.data;
        let dates: Vec<(&str, Option<&str>)> = data["scenes"]
            .as_array()
            .expect("scenes")
            .iter()
            .map(|s| (s["id"].as_str().unwrap_or(""), s["date"].as_str()))
            .collect();
        assert_eq!(
            dates,
            [
                ("SCN-the-arrival", Some("1203-04-12")),
                ("SCN-the-gate", Some("1203-04-12")),
                ("SCN-the-saltmaster", Some("1203-04-11")),
                ("SCN-the-fall", Some("1203-04-14")),
                ("SCN-the-vigil", None),
                ("SCN-the-reckoning", None),
            ]
        );
        assert_eq!(data["scenes"][2]["position"], 3);
        assert_eq!(data["undated"], json!(["SCN-the-vigil"]));
        assert_eq!(data["without_file"], json!(["SCN-the-reckoning"]));
        assert_eq!(
            data["span"],
            json!({"first": "1203-04-11", "last": "1203-04-14"})
        );
        assert_eq!(data["pass"], false);
        let violation = &data["violations"][0];
        assert_eq!(violation["scene"], "SCN-the-saltmaster");
        assert_eq!(violation["line"], 6);
        assert_eq!(violation["quote"], "1203-04-11");
        assert!(
            violation["message"]
                .as_str()
                .is_some_and(|m| m.contains("1203-04-12"))
        );
        assert_eq!(data["violations"].as_array().map(Vec::len), Some(1));
        assert!(
            out.summary.contains("from 1203-04-11 to 1203-04-14"),
            "{}",
            out.summary
        );
        assert!(out.summary.contains("- SCN-the-saltmaster, line 6:"));
        assert!(out.summary.contains("5. SCN-the-vigil: undated"));
        // The date lines read, and the earlier scene's date the violation cites.
        let date = file_ref(&out, dir.path(), "Story/Scenes/SCN-the-saltmaster.md");
        assert_eq!((date.start_line, date.end_line), (6, 6));
        assert_eq!(date.excerpt, "1203-04-11");
        let earlier = file_ref(&out, dir.path(), "Story/Scenes/SCN-the-arrival.md");
        assert_eq!(earlier.start_line, 6);
        file_ref(&out, dir.path(), "Story/SCN-outline.md");
    }

    #[test]
    fn a_scene_argument_restricts_the_violations() {
        let (_dir, ws) = salt_road();
        let gate = output(&ws, "timeline_validator", scene_id("SCN-the-gate"));
        assert_eq!(gate.data["violations"], json!([]));
        assert_eq!(gate.data["pass"], true);
        assert_eq!(gate.data["scenes"].as_array().map(Vec::len), Some(6));
        assert!(
            gate.summary
                .contains("No dates out of order for SCN-the-gate.")
        );
        let saltmaster = output(
            &ws,
            "timeline_validator",
            scene("Story/Scenes/SCN-the-saltmaster.md"),
        );
        assert_eq!(
            saltmaster.data["violations"].as_array().map(Vec::len),
            Some(1)
        );
    }

    #[test]
    fn flashbacks_are_exempt_and_outside_the_span() {
        let (_dir, ws) = salt_road_with(&[(
            "Story/Scenes/SCN-the-saltmaster.md",
            "---\ndate: 1190-01-01\nflashback: true\n---\n\nLong ago.\n",
        )]);
        let out = output(&ws, "timeline_validator", json!({}));
        assert_eq!(out.data["pass"], true);
        assert_eq!(out.data["scenes"][2]["flashback"], true);
        assert_eq!(out.data["span"]["first"], "1203-04-12");
        assert!(
            out.summary
                .contains("3. SCN-the-saltmaster: 1190-01-01 (flashback)")
        );
    }

    #[test]
    fn a_date_that_is_not_one_is_undated_and_shown_as_written() {
        let (_dir, ws) = salt_road_with(&[(
            "Story/Scenes/SCN-the-vigil.md",
            "---\ndate: the next morning\n---\n\nDawn.\n",
        )]);
        let out = output(&ws, "timeline_validator", json!({}));
        assert_eq!(out.data["scenes"][4]["date"], json!(null));
        assert_eq!(out.data["scenes"][4]["date_written"], "the next morning");
        assert_eq!(out.data["undated"], json!(["SCN-the-vigil"]));
        assert!(out.summary.contains("“the next morning” (not a date)"));
    }

    #[test]
    fn no_outline_means_no_timeline_and_bad_scenes_are_named() {
        let (_dir, ws) = workspace(&[("Story/Scenes/SCN-a.md", "---\ndate: 1203\n---\nText.\n")]);
        let out = output(&ws, "timeline_validator", json!({}));
        assert_eq!(out.data["scenes"], json!([]));
        assert_eq!(out.data["span"], json!({"first": null, "last": null}));
        assert!(out.summary.contains("no outline"));
        assert!(out.file_refs.is_empty());

        let (_dir, ws) = salt_road();
        let (name, _) = rejected(&ws, "timeline_validator", scene_id("SCN-nowhere"));
        assert_eq!(name, "scene_id");
    }
}
