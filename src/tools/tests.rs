//! Tests of what the tools share: summaries cut to size, and every tool on
//! empty and broken workspaces, on paths that leave the workspace and on
//! arguments of the wrong kind.

use serde_json::json;

use super::test_support::{run, salt_road, workspace};
use super::{MAX_SUMMARY_CHARS, Summary, TOOLS, ToolError};

#[test]
fn summaries_are_cut_at_whole_lines_with_a_note() {
    let mut summary = Summary::new();
    for index in 0..200 {
        summary.line(format!("line {index:03} {}", "x".repeat(40)));
    }
    let text = summary.finish();
    assert!(text.chars().count() <= MAX_SUMMARY_CHARS);
    let lines: Vec<&str> = text.lines().collect();
    let last = lines.last().copied().unwrap_or("");
    assert!(
        last.starts_with("… ") && last.ends_with(" more lines left out"),
        "{last}"
    );
    let kept = lines.len() - 1;
    assert_eq!(last, format!("… {} more lines left out", 200 - kept));
    assert!(lines[..kept].iter().all(|line| line.len() == 49));

    let mut short = Summary::new();
    short.line("one");
    short.line("two");
    assert_eq!(short.finish(), "one\ntwo");

    let mut long_line = Summary::new();
    long_line.line("y".repeat(5_000));
    let text = long_line.finish();
    assert_eq!(text.chars().count(), 600);
    assert!(text.ends_with('…'));
}

/// Every tool on workspaces with nothing, or with nothing usable, answers
/// with data or a named error, never a panic.
#[test]
fn every_tool_copes_with_empty_and_broken_workspaces() {
    let (_dir, empty) = workspace(&[]);
    let (_dir, broken) = workspace(&[
        ("Story/SCN-outline.md", "# Nothing listed\n"),
        ("Story/Scenes/SCN-bin.md", "\u{0}\u{1}binary"),
        (
            "Story/Scenes/SCN-yaml.md",
            "---\npov: [unclosed\ndate: 12/04\n---\n",
        ),
        (
            "Compendium/Characters/CHAR-nameless.md",
            "---\nage: old\n---\n",
        ),
    ]);
    for tool in TOOLS {
        for (label, ws) in [("empty", &empty), ("broken", &broken)] {
            let result = run(ws, tool, json!({}));
            let needs_scene = matches!(
                *tool,
                "canon_checker"
                    | "consistency_checker"
                    | "prose_analyzer"
                    | "scene_draft_validator"
                    | "health_reader"
            );
            match result {
                Ok(out) => {
                    assert!(!needs_scene, "{tool} on {label} ran without a scene");
                    assert!(!out.summary.is_empty(), "{tool} on {label}: no summary");
                }
                Err(ToolError::BadArgument { name, .. }) => {
                    assert!(needs_scene, "{tool} on {label}: bad argument {name}");
                    assert_eq!(name, "scene_path");
                }
                Err(ToolError::Failed(message)) => {
                    assert_eq!(*tool, "outline_analyzer", "{tool} on {label}: {message}");
                }
                Err(other) => panic!("{tool} on {label}: {other}"),
            }
            for scene in ["Story/Scenes/SCN-bin.md", "Story/Scenes/SCN-yaml.md"] {
                // Only that it returns; what it returns is each tool's business.
                let _ = run(
                    ws,
                    tool,
                    json!({"scene_path": scene, "scene_id": "SCN-yaml"}),
                );
            }
        }
    }
    let validated = run(
        &broken,
        "scene_draft_validator",
        json!({"scene_path": "Story/Scenes/SCN-bin.md"}),
    )
    .expect("a draft that cannot be read is a problem, not an error");
    assert_eq!(validated.data["readable"], false);
    assert_eq!(validated.data["valid"], false);
}

#[test]
fn every_path_argument_stays_inside_the_workspace() {
    let (_dir, ws) = salt_road();
    let path_arguments = [
        ("file_locator", "scene_path"),
        ("outline_analyzer", "outline_path"),
        ("outline_analyzer", "scene_path"),
        ("canon_checker", "scene_path"),
        ("consistency_checker", "scene_path"),
        ("prose_analyzer", "scene_path"),
        ("scene_draft_validator", "scene_path"),
        ("timeline_validator", "scene_path"),
        ("stakes_mapper", "scene_path"),
        ("reader_experience_simulator", "scene_path"),
    ];
    for (tool, argument) in path_arguments {
        for escape in [
            "../secret.md",
            "/etc/passwd",
            "Story/../../secret.md",
            "C:\\secret.md",
        ] {
            let error = run(&ws, tool, json!({ argument: escape })).expect_err(escape);
            assert!(
                matches!(&error, ToolError::BadArgument { name, .. } if name == argument),
                "{tool} {argument}={escape}: {error:?}"
            );
        }
    }
    let error = run(
        &ws,
        "canon_checker",
        json!({"scene_path": "Story/Scenes/SCN-the-gate.md", "canon_paths": ["../x.md"]}),
    )
    .expect_err("a canon path outside");
    assert!(matches!(error, ToolError::BadArgument { ref name, .. } if name == "canon_paths"));
}

#[test]
fn unknown_tools_and_argument_kinds_are_errors() {
    let (_dir, ws) = salt_road();
    assert_eq!(
        run(&ws, "crystal_ball", json!({})),
        Err(ToolError::Unknown("crystal_ball".into()))
    );
    let error = run(&ws, "prose_analyzer", json!({"scene_path": 42})).expect_err("a number");
    assert!(matches!(error, ToolError::BadArgument { ref name, .. } if name == "scene_path"));
    let error = run(
        &ws,
        "canon_checker",
        json!({"scene_path": "Story/Scenes/SCN-the-gate.md", "canon_paths": "a\\b.md"}),
    )
    .expect_err("a backslash");
    assert!(matches!(error, ToolError::BadArgument { ref name, .. } if name == "canon_paths"));
}
