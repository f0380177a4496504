//! The book's pictures, drawn by the real binary: the presence chart of
//! Pride and Prejudice rasterised to PNG and looked at (a cell's pixels, and
//! a snapshot of the chart's structure), the timeline with a flashback and
//! a jump back, the beat sheet against the manuscript, a run's steps in
//! time, and the same charts over LSP (`controlRoom.chart`).

use crate::support;
use crate::support::lsp_client;

use std::collections::BTreeMap;
use std::path::Path;

use control_room::ide::charts::png;
use lsp_client::{Client, example_copy};
use serde_json::json;
use support::{control_room, only_run, output_text};

fn corpus() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpora/pride-and-prejudice")
}

/// `(class, x, y, title)` of every `<rect>` of an SVG written by the svg
/// crate (attributes in the order the chart sets them).
fn rects(svg: &str) -> Vec<(String, f32, f32, String)> {
    let attribute = |tag: &str, name: &str| {
        let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
        let end = tag[start..].find('"')? + start;
        Some(tag[start..end].to_owned())
    };
    svg.split("<rect")
        .skip(1)
        .filter_map(|rest| {
            let tag = &rest[..rest.find('>')?];
            let title = rest
                .split_once("<title>")
                .and_then(|(_, after)| after.split_once("</title>"))
                .map(|(title, _)| title.to_owned())
                .unwrap_or_default();
            Some((
                attribute(tag, "class").unwrap_or_default(),
                attribute(tag, "x")?.parse().ok()?,
                attribute(tag, "y")?.parse().ok()?,
                title,
            ))
        })
        .collect()
}

#[test]
fn pride_and_prejudices_presence_chart_rasterised_shows_each_cell_in_its_colour() {
    let out = tempfile::tempdir().unwrap();
    let svg_path = out.path().join("presence.svg");
    let png_path = out.path().join("presence.png");
    for path in [&svg_path, &png_path] {
        let output = control_room(
            &corpus(),
            &["chart", "presence", "-o", path.to_str().unwrap()],
        );
        assert!(output.status.success(), "{}", output_text(&output));
    }
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    let image = std::fs::read(&png_path).unwrap();
    assert!(image.starts_with(b"\x89PNG"));

    // The structure: how many cells of each kind, and who leads the rows.
    let cells = rects(&svg);
    let mut by_class: BTreeMap<&str, usize> = BTreeMap::new();
    for (class, ..) in &cells {
        *by_class.entry(class.as_str()).or_default() += 1;
    }
    let rows: Vec<&str> = svg
        .split("class=\"character\"")
        .skip(1)
        .filter_map(|rest| rest.split_once('>').and_then(|(_, r)| r.split_once('<')))
        .map(|(name, _)| name.trim())
        .take(4)
        .collect();
    insta::assert_snapshot!(
        "pride_and_prejudice_presence_structure",
        format!("rows begin: {rows:?}\ncells by class: {by_class:#?}")
    );

    // The picture: each kind of cell in its colour where the SVG puts it
    // (the command draws twice the SVG's size), the page white elsewhere.
    for (title, colour) in [
        ("Fitzwilliam Darcy in SCN-chapter-34: speaks", "#e69f00"),
        ("Elizabeth Bennet in SCN-chapter-34: speaks", "#e69f00"),
    ] {
        let (_, x, y, _) = cells
            .iter()
            .find(|(.., t)| t == title)
            .unwrap_or_else(|| panic!("no cell {title}"));
        let (px, py) = ((2.0 * (x + 6.0)) as u32, (2.0 * (y + 6.0)) as u32);
        assert_eq!(
            png::pixel(&image, px, py).as_deref(),
            Some(colour),
            "{title}"
        );
    }
    let kinds = [
        ("point-of-view", "#0072b2"),
        ("present", "#009e73"),
        ("only-mentioned", "#56b4e9"),
    ];
    for (class, colour) in kinds {
        if let Some((_, x, y, title)) = cells.iter().find(|(c, ..)| c == &format!("cell {class}")) {
            let (px, py) = ((2.0 * (x + 6.0)) as u32, (2.0 * (y + 6.0)) as u32);
            assert_eq!(
                png::pixel(&image, px, py).as_deref(),
                Some(colour),
                "{title}"
            );
        }
    }
    assert_eq!(png::pixel(&image, 4, 60).as_deref(), Some("#ffffff"));
}

/// The example with its saltmaster's scene marked a flashback (its vigil is
/// already told after the fall, though dated the day before it).
fn example_with_a_flashback(root: &Path) {
    let path = root.join("Story/Scenes/SCN-the-saltmaster.md");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replacen("---\n", "---\nflashback: true\n", 1)).unwrap();
}

#[test]
fn the_timeline_marks_a_flashback_and_a_scene_that_goes_back_unmarked() {
    let (_dir, root) = example_copy();
    example_with_a_flashback(&root);
    let output = control_room(&root, &["chart", "timeline"]);
    assert!(output.status.success(), "{}", output_text(&output));
    let svg = std::fs::read_to_string(root.join(".control-room/charts/timeline.svg")).unwrap();
    assert!(svg.contains("SCN-the-saltmaster: "), "{svg}");
    assert!(svg.contains("(flashback)</title>"), "{svg}");
    assert!(
        svg.contains("<circle class=\"scene goes-back-in-time--unmarked\""),
        "{svg}"
    );
    assert!(svg.contains("SCN-the-vigil: ") && svg.contains("goes back in time, unmarked"));

    // The editor gets the same chart, with its figures.
    let mut client = Client::spawn(&[]);
    client.initialize(&root, json!({"window": {"workDoneProgress": true}}));
    client.wait_for_index();
    let chart = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.chart", "arguments": [{"kind": "timeline"}]}),
    );
    assert_eq!(chart["flashbacks"], 1);
    assert_eq!(chart["back"], 1);
    assert!(chart["svg"].as_str().unwrap().starts_with("<svg"));
    let beats = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.chart", "arguments": [{"kind": "beats"}]}),
    );
    assert_eq!(beats["beats"], 15);
    let refused = client.request_raw(
        "workspace/executeCommand",
        json!({"command": "controlRoom.chart", "arguments": [{"kind": "run"}]}),
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("needs the run's id")),
        "{refused}"
    );
    // The timeline builds no graph: nothing of it is kept yet.
    let memo = root.join(".control-room/graph/scenes.json");
    assert!(!memo.exists());
    // The presence chart builds it through the session's memo, which the
    // server saves at shutdown for the next start.
    let presence = client.request(
        "workspace/executeCommand",
        json!({"command": "controlRoom.chart", "arguments": [{"kind": "presence"}]}),
    );
    assert!(presence["cells"].as_u64().unwrap() > 0, "{presence}");
    client.shutdown();
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&memo).unwrap()).unwrap();
    assert_eq!(saved["version"], 2);
    assert!(
        saved["scenes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|scene| scene["path"] == "Story/Scenes/SCN-the-gate.md"),
        "{saved}"
    );
}

#[test]
fn the_beats_chart_places_each_linked_beat_where_its_scenes_stand() {
    let (_dir, root) = example_copy();
    let path = root.join("beats.png");
    let output = control_room(&root, &["chart", "beats", "-o", path.to_str().unwrap()]);
    assert!(output.status.success(), "{}", output_text(&output));
    assert!(std::fs::read(&path).unwrap().starts_with(b"\x89PNG"));
    let output = control_room(&root, &["chart", "beats"]);
    assert!(output.status.success(), "{}", output_text(&output));
    let svg = std::fs::read_to_string(root.join(".control-room/charts/beats.svg")).unwrap();
    let expected = rects(&svg)
        .iter()
        .filter(|(class, ..)| class == "expected")
        .count();
    assert_eq!(expected, 15);
    assert!(svg.contains("Catalyst: lands at"), "{svg}");
    assert!(svg.contains("(SCN-the-gate)"), "{svg}");

    // Pride and Prejudice has no beat sheet: the chart says so.
    let output = control_room(&corpus(), &["chart", "beats", "-o", "/dev/null"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output_text(&output).contains("there is no beat sheet"));
}

#[test]
fn a_runs_chart_has_a_bar_for_each_step_in_the_order_it_ran() {
    let (_dir, root) = example_copy();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/scripted/draft-the-reckoning.json");
    let model = format!("scripted:{}", script.display());
    let output = control_room(
        &root,
        &["run", "draft scene SCN-the-reckoning", "--model", &model],
    );
    assert!(output.status.success(), "{}", output_text(&output));
    let run_id = only_run(&root);
    let output = control_room(&root, &["chart", "run", &run_id]);
    assert!(output.status.success(), "{}", output_text(&output));
    let svg = std::fs::read_to_string(root.join(format!(".control-room/charts/run-{run_id}.svg")))
        .unwrap();
    let bars: Vec<(String, f32, f32, String)> = rects(&svg)
        .into_iter()
        .filter(|(class, ..)| class.starts_with("step "))
        .collect();
    assert_eq!(bars.len(), 8, "{svg}");
    assert_eq!(
        bars.iter()
            .filter(|(class, ..)| class == "step tool")
            .count(),
        3
    );
    assert!(bars[0].3.starts_with("discover (tool): "), "{:?}", bars[0]);
    assert!(bars.windows(2).all(|pair| pair[0].2 < pair[1].2));
}
