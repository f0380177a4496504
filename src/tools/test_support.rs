//! A small manuscript in a temp dir, and ways to run tools on it.

use std::path::Path;

use serde_json::{Map, Value, json};
use tempfile::TempDir;

use super::{FileRef, ToolContext, ToolError, ToolOutput, sha256_hex};
use crate::index::Workspace;

/// *The Salt Road* in miniature. Planted: an attribute mismatch (gate,
/// line 14), a name typo (saltmaster, line 17), a date out of order
/// (saltmaster, line 6), a dead character in `characters` and speaking
/// (vigil, lines 4 and 13), a zero-tolerance anti-pattern (arrival, line
/// 18), an undated scene (vigil) and a scene with no file (reckoning).
pub(crate) const SALT_ROAD: &[(&str, &str)] = &[
    (
        "Story/SCN-outline.md",
        "# The Salt Road\n\
         \n\
         ## Chapter 1: The Gate\n\
         \n\
         - SCN-the-arrival: Kael reaches the Salt Fortress at nightfall and is refused entry.\n\
         - SCN-the-gate: Iria lets him in against orders.\n  \
           - The Commander catches them at it.\n\
         - SCN-the-saltmaster: Old Tomas shows Kael the cracked ward-stone.\n\
         \n\
         ## Chapter 2: The Tide\n\
         \n\
         - SCN-the-fall: The storm comes in, and the sea takes Tomas off the wall.\n\
         - SCN-the-vigil: Kael and Iria keep the lamp burning.\n\
         - SCN-the-reckoning: Ysolde answers for the barred gate.\n",
    ),
    (
        "Story/Scenes/SCN-the-arrival.md",
        "---\n\
         title: The Arrival\n\
         pov: Kael Maren\n\
         location: The Salt Fortress\n\
         characters: [Kael, Iria]\n\
         date: 1203-04-12\n\
         words: 60\n\
         ---\n\
         \n\
         # The Arrival\n\
         \n\
         The salt road ran eleven miles across the flats, and Kael had walked every one of them. The fortress stood up out of the white like a broken tooth.\n\
         \n\
         \"Gate's closed,\" Iria called down. \"Who's asking?\"\n\
         \n\
         \"Kael Maren. The ward at the ninth waystone is lost, and the sea is coming. If the wards fail, we die.\"\n\
         \n\
         Suddenly the shutter closed.\n",
    ),
    (
        "Story/Scenes/SCN-the-gate.md",
        "---\n\
         title: The Gate\n\
         pov: Iria Vell\n\
         location: The Salt Fortress\n\
         characters: [Iria, Kael, Ysolde]\n\
         date: 1203-04-12\n\
         words: 200\n\
         ---\n\
         \n\
         # The Gate\n\
         \n\
         Iria put her shoulder to the bar and it did not move, so she put her shoulder to it again, and this time it gave with a groan that must have carried all the way to the sea-wall and back.\n\
         \n\
         In the lamplight Kael's blue eyes looked sore and tired. The gate was old. The gate was heavy. The gate was shut.\n\
         \n\
         \"Quickly,\" she said. \"Before I change my mind.\"\n",
    ),
    (
        "Story/Scenes/SCN-the-saltmaster.md",
        "---\n\
         title: The Saltmaster\n\
         pov: Kael Maren\n\
         location: The Salt Fortress\n\
         characters: [Kael, Tomas, Iria]\n\
         date: 1203-04-11\n\
         ---\n\
         \n\
         # The Saltmaster\n\
         \n\
         Old Tomas turned the cracked lantern over without speaking. Iria stood by the door.\n\
         \n\
         \"How long?\" Iria asked.\n\
         \n\
         \"A month. Less, if the tide is high,\" Tomas said. \"I patch it, and I sing to it, and I hope.\"\n\
         \n\
         \"Then we do the same,\" Kale said.\n",
    ),
    (
        "Story/Scenes/SCN-the-fall.md",
        "---\n\
         title: The Fall\n\
         pov: Kael Maren\n\
         location: The Salt Fortress\n\
         characters: [Kael, Tomas, Iria, Ysolde]\n\
         date: 1203-04-14\n\
         words: 40\n\
         ---\n\
         \n\
         # The Fall\n\
         \n\
         The storm came in on the second night, and the sea came with it.\n\
         \n\
         \"Get off the wall,\" Ysolde shouted. \"That's an order.\"\n\
         \n\
         \"Then it won't fail,\" Tomas said, and climbed onto the parapet. The wave took him off the wall, and he was gone. Kael would never forget it.\n",
    ),
    (
        "Story/Scenes/SCN-the-vigil.md",
        "---\n\
         title: The Vigil\n\
         pov: Kael Maren\n\
         characters: [Kael, Iria, Tomas]\n\
         ---\n\
         \n\
         # The Vigil\n\
         \n\
         There was no body. Iria kept the lamp burning until dawn.\n\
         \n\
         \"He taught me to trim a lamp,\" Iria said. \"Who keeps them now?\"\n\
         \n\
         \"We do,\" Tomas said.\n",
    ),
    (
        "Compendium/Characters/CHAR-kael-maren.md",
        "---\n\
         type: character\n\
         name: Kael Maren\n\
         aliases: [Kael, the Warden]\n\
         status: alive\n\
         eyes: grey\n\
         hair: black\n\
         age: 34\n\
         ---\n\
         \n\
         # Kael Maren\n\
         \n\
         A warden of the salt road who keeps the ward-lanterns lit.\n",
    ),
    (
        "Compendium/Characters/CHAR-iria-vell.md",
        "---\n\
         type: character\n\
         name: Iria Vell\n\
         aliases: [Iria]\n\
         eyes: green\n\
         hair: auburn\n\
         age: 27\n\
         ---\n\
         \n\
         Keeper of the great gate.\n",
    ),
    (
        "Compendium/Characters/CHAR-old-tomas.md",
        "---\n\
         type: character\n\
         name: Old Tomas\n\
         aliases: [Tomas]\n\
         status: dead\n\
         died_in: SCN-the-fall\n\
         age: 71\n\
         ---\n\
         \n\
         Saltmaster of the fortress for forty years.\n",
    ),
    (
        "Compendium/Characters/CHAR-ysolde-harrow.md",
        "---\n\
         type: character\n\
         name: Ysolde Harrow\n\
         aliases: [Ysolde, the Commander]\n\
         eyes: brown\n\
         hair: silver\n\
         ---\n\
         \n\
         Commander of the fortress.\n",
    ),
    (
        "Compendium/Locations/LOC-the-salt-fortress.md",
        "---\n\
         type: location\n\
         name: The Salt Fortress\n\
         aliases: [the fortress]\n\
         ---\n\
         \n\
         A grey keep at the end of the salt road.\n",
    ),
    (
        "Compendium/Voice/anti-patterns.md",
        "# Anti-patterns\n\
         \n\
         ## Zero tolerance\n\
         \n\
         - suddenly\n\
         \n\
         ## Deduction\n\
         \n\
         - very\n",
    ),
];

/// A manuscript with `files` written into a temp dir, and its index.
/// Keep the dir alive as long as the workspace is used.
pub(crate) fn workspace(files: &[(&str, &str)]) -> (TempDir, Workspace) {
    let dir = tempfile::tempdir().expect("a temp dir");
    for (path, text) in files {
        let full = dir.path().join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).expect("folders");
        }
        std::fs::write(&full, text).expect("a file");
    }
    let workspace = Workspace::load(dir.path());
    (dir, workspace)
}

/// [`SALT_ROAD`] with `changes`: a file replaced or added by path.
pub(crate) fn salt_road_with(changes: &[(&str, &str)]) -> (TempDir, Workspace) {
    let mut files: Vec<(&str, &str)> = SALT_ROAD
        .iter()
        .filter(|(path, _)| !changes.iter().any(|(changed, _)| changed == path))
        .copied()
        .collect();
    files.extend_from_slice(changes);
    workspace(&files)
}

pub(crate) fn salt_road() -> (TempDir, Workspace) {
    workspace(SALT_ROAD)
}

/// Runs `tool` through the dispatcher with `args` (a JSON object).
pub(crate) fn run(workspace: &Workspace, tool: &str, args: Value) -> Result<ToolOutput, ToolError> {
    let args: Map<String, Value> = match args {
        Value::Object(map) => map,
        other => panic!("tool arguments must be an object, not {other}"),
    };
    super::run(tool, &ToolContext { workspace }, &args)
}

/// Runs `tool`, expecting success.
pub(crate) fn output(workspace: &Workspace, tool: &str, args: Value) -> ToolOutput {
    run(workspace, tool, args).unwrap_or_else(|error| panic!("{tool} failed: {error}"))
}

/// The error's argument name, for a `BadArgument`.
pub(crate) fn bad_argument(result: Result<ToolOutput, ToolError>) -> (String, String) {
    match result {
        Err(ToolError::BadArgument { name, message }) => (name, message),
        other => panic!("expected a bad argument, got {other:?}"),
    }
}

/// Runs `tool` with `args`, expecting a `BadArgument`: its name and message.
pub(crate) fn rejected(workspace: &Workspace, tool: &str, args: Value) -> (String, String) {
    bad_argument(run(workspace, tool, args))
}

/// Runs `tool` on [`SALT_ROAD`], expecting success. The dir comes back
/// with the output so that file references can be checked against it.
pub(crate) fn salt_road_output(tool: &str, args: Value) -> (TempDir, ToolOutput) {
    let (dir, workspace) = salt_road();
    (dir, output(&workspace, tool, args))
}

/// The arguments that name one scene, or any manuscript file, by its path.
pub(crate) fn scene(path: &str) -> Value {
    json!({ "scene_path": path })
}

/// The arguments that name one scene by its outline id.
pub(crate) fn scene_id(id: &str) -> Value {
    json!({ "scene_id": id })
}

/// The code and line of each finding in `findings` (a JSON list), in order.
pub(crate) fn codes_and_lines(findings: &Value) -> Vec<(&str, u64)> {
    findings
        .as_array()
        .expect("a list of findings")
        .iter()
        .map(|finding| {
            (
                finding["code"].as_str().unwrap_or(""),
                finding["line"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

/// The file reference for `path`, checked against the file on disk: its
/// sha256 is the file's and its excerpt starts the span's first line.
pub(crate) fn file_ref<'a>(output: &'a ToolOutput, root: &Path, path: &str) -> &'a FileRef {
    let found = output
        .file_refs
        .iter()
        .find(|file_ref| file_ref.path == path)
        .unwrap_or_else(|| panic!("no file ref for {path} in {:?}", output.file_refs));
    let text = std::fs::read_to_string(root.join(path)).expect("the file");
    assert_eq!(found.sha256.len(), 64);
    assert!(
        found
            .sha256
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
    assert_eq!(
        found.sha256,
        sha256_hex(text.as_bytes()),
        "sha256 of {path}"
    );
    assert!(found.start_line >= 1 && found.start_line <= found.end_line);
    let first_line = text
        .lines()
        .nth(found.start_line as usize - 1)
        .expect("the span's first line exists");
    let excerpt_head: String = found.excerpt.lines().next().unwrap_or("").to_owned();
    assert!(
        first_line.contains(&excerpt_head),
        "excerpt {excerpt_head:?} is on line {} of {path}",
        found.start_line
    );
    found
}
