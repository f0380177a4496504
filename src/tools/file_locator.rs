//! `file_locator`: finds the manuscript files a task is about.
//!
//! Arguments: `search_criteria` (text, usually the task description),
//! `scene_path` (optional, always matched first), `scan_mode` (`FAST_SCAN`
//! compares ids, titles, names and file names; `FULL_SCAN` also the text),
//! `max_results` (default 12).
//!
//! A scene named in the task (or `scene_path`) that has no file yet but is in
//! the outline matches the outline, and its outline beat's cards join
//! `canon_paths`.
//!
//! A scene id (`SCN-…`) or a path written in the criteria matches exactly;
//! otherwise each file scores one point per distinct query word (three letters
//! or more, common words left out) found in its id, title, names or file name
//! (and, with `FULL_SCAN`, its text). Output: `matches` (path, kind, id,
//! title, score), `scenes` (matched scene paths in outline order),
//! `outline_path`, `canon_paths` (matched cards and the cards the matched
//! scenes involve), and `counts`.

use serde_json::{Value, json};

use super::{FileRef, ToolArgs, ToolContext, ToolError, ToolOutput, canon_for_scene};
use crate::index::{Catalog, FileContent, SourceFile, Workspace};

const STOP_WORDS: &[&str] = &[
    "the", "and", "for", "with", "from", "into", "that", "this", "scene", "scenes", "draft",
    "write", "check", "review", "chapter", "about", "make", "please", "outline", "canon",
];

const EXACT: u32 = 100;

pub(super) fn run(context: &ToolContext, args: &ToolArgs) -> Result<ToolOutput, ToolError> {
    let criteria = args.string("search_criteria")?.unwrap_or("");
    let scene_path = args.path("scene_path")?;
    let full = full_scan(args)?;
    let max_results = args.usize("max_results")?.unwrap_or(12).max(1);
    let workspace = context.workspace;

    let lowered = criteria.to_lowercase();
    let words = query_words(&lowered);
    let mut scored: Vec<(u32, &SourceFile)> = Vec::new();
    for file in workspace.files() {
        let score = file_score(file, &lowered, &words, scene_path, full);
        if score > 0 {
            scored.push((score, file));
        }
    }
    let unwritten = unwritten_scenes(workspace, &lowered, scene_path);
    if !unwritten.is_empty() {
        promote_outline(&mut scored, workspace.catalog());
    }
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.path.cmp(&b.1.path)));
    scored.truncate(max_results);
    Ok(output(workspace, criteria, &scored, &unwritten))
}

/// Whether `scan_mode` asks for a full scan (the text too), or why the
/// argument is refused.
fn full_scan(args: &ToolArgs) -> Result<bool, ToolError> {
    match args.string("scan_mode")? {
        None | Some("FAST_SCAN") => Ok(false),
        Some("FULL_SCAN") => Ok(true),
        Some(other) => Err(ToolError::BadArgument {
            name: "scan_mode".into(),
            message: format!("`{other}` is not FAST_SCAN or FULL_SCAN"),
        }),
    }
}

/// The distinct words of the lowered criteria worth matching, sorted.
fn query_words(lowered: &str) -> Vec<&str> {
    let mut words: Vec<&str> = lowered
        .split(|c: char| !c.is_alphanumeric() && c != '-')
        .map(|word| word.trim_matches('-'))
        .filter(|word| word.chars().count() >= 3 && !STOP_WORDS.contains(word))
        .collect();
    words.sort_unstable();
    words.dedup();
    words
}

/// A file's score for the query: [`EXACT`] when named by path or scene id,
/// plus two per word in its identity and one per word only in its text.
fn file_score(
    file: &SourceFile,
    lowered: &str,
    words: &[&str],
    scene_path: Option<&str>,
    full: bool,
) -> u32 {
    let mut score = 0;
    let exact_path = scene_path == Some(&*file.path) || lowered.contains(&file.path.to_lowercase());
    let (id, title, names) = identity(file);
    let exact_id = id
        .as_deref()
        .is_some_and(|id| id.starts_with("SCN-") && contains_token(lowered, &id.to_lowercase()));
    if exact_path || exact_id {
        score += EXACT;
    }
    let haystack = format!(
        "{} {} {} {}",
        id.as_deref().unwrap_or(""),
        title.as_deref().unwrap_or(""),
        names.join(" "),
        file.path
    )
    .to_lowercase();
    let body = full.then(|| file.text.to_lowercase());
    for word in words {
        if contains_token(&haystack, word) {
            score += 2;
        } else if body
            .as_deref()
            .is_some_and(|body| contains_token(body, word))
        {
            score += 1;
        }
    }
    score
}

/// The outline's ids of the scenes named in the criteria (or by
/// `scene_path`) that have no file yet.
fn unwritten_scenes(workspace: &Workspace, lowered: &str, scene_path: Option<&str>) -> Vec<String> {
    let catalog = workspace.catalog();
    let mut unwritten: Vec<String> = lowered
        .split(|c: char| !c.is_alphanumeric() && c != '-')
        .filter(|word| word.starts_with("scn-"))
        .filter_map(|word| outline_id(catalog, word))
        .collect();
    if let Some(path) = scene_path
        && workspace.file(path).is_none()
        && let Some(id) = outline_id(catalog, &crate::index::file::file_stem(path).to_lowercase())
    {
        unwritten.push(id);
    }
    unwritten.retain(|id| catalog.scene(id).is_none());
    unwritten
}

/// Raises the outline to an exact match, adding it when it scored nothing.
fn promote_outline<'a>(scored: &mut Vec<(u32, &'a SourceFile)>, catalog: &'a Catalog) {
    // A scene named in the task that has no file yet: the outline that
    // lists it is what there is to read, and its beat names the canon.
    let Some(outline) = catalog.outline() else {
        return;
    };
    match scored
        .iter_mut()
        .find(|(_, file)| file.path == outline.path)
    {
        Some((score, _)) => *score += EXACT,
        None => scored.push((EXACT, outline)),
    }
}

/// What the matched files come to: their entries, the scenes among them
/// with their outline positions, the canon they bring, and what was read.
struct Found {
    matches: Vec<Value>,
    scenes: Vec<(usize, String)>,
    canon_paths: Vec<String>,
    file_refs: Vec<FileRef>,
}

/// The matches' entries, their scenes in outline order, and the canon of
/// the matched cards, scenes and `unwritten` scenes, sorted and deduplicated.
fn found(workspace: &Workspace, scored: &[(u32, &SourceFile)], unwritten: &[String]) -> Found {
    let catalog = workspace.catalog();
    let mut found = Found {
        matches: Vec::new(),
        scenes: Vec::new(),
        canon_paths: Vec::new(),
        file_refs: Vec::new(),
    };
    for (score, file) in scored {
        let (id, title, _) = identity(file);
        found.matches.push(json!({
            "path": file.path.to_string(),
            "kind": kind_name(file),
            "id": id,
            "title": title,
            "score": score,
        }));
        found.file_refs.push(FileRef::span(file, file.head_range()));
        match &file.content {
            FileContent::Scene(scene) => {
                let order = catalog.outline_position(&scene.id).unwrap_or(usize::MAX);
                found.scenes.push((order, file.path.to_string()));
                found
                    .canon_paths
                    .extend(canon_for_scene(workspace, &scene.id));
            }
            FileContent::Card(_) => found.canon_paths.push(file.path.to_string()),
            _ => {}
        }
    }
    found.scenes.sort();
    for id in unwritten {
        found.canon_paths.extend(canon_for_scene(workspace, id));
    }
    found.canon_paths.sort();
    found.canon_paths.dedup();
    found
}

/// The tool's output for the ranked `scored` files.
fn output(
    workspace: &Workspace,
    criteria: &str,
    scored: &[(u32, &SourceFile)],
    unwritten: &[String],
) -> ToolOutput {
    let Found {
        matches,
        scenes,
        canon_paths,
        file_refs,
    } = found(workspace, scored, unwritten);
    let outline_path = workspace
        .catalog()
        .outline()
        .map(|file| file.path.to_string());
    let count = |kind: &str| matches.iter().filter(|m| m["kind"] == kind).count();
    let counts = json!({
        "scenes": count("scene"),
        "outline": count("outline"),
        "cards": count("card"),
        "other": count("other"),
    });
    let summary = summary(&matches, &counts);
    ToolOutput {
        data: json!({
            "query": criteria,
            "matches": matches,
            "scenes": scenes.into_iter().map(|(_, path)| path).collect::<Vec<_>>(),
            "outline_path": outline_path,
            "canon_paths": canon_paths,
            "counts": counts,
        }),
        summary,
        file_refs,
    }
}

/// The summary line of counts by kind, then each match's path.
fn summary(matches: &[Value], counts: &Value) -> String {
    format!(
        "{} files found: {} scenes, {} outline, {} canon cards, {} other{}",
        matches.len(),
        counts["scenes"],
        counts["outline"],
        counts["cards"],
        counts["other"],
        matches
            .iter()
            .map(|m| format!("\n- {}", m["path"].as_str().unwrap_or("")))
            .collect::<String>()
    )
}

/// The outline's spelling of a scene id written in lower case.
fn outline_id(catalog: &Catalog, lowered: &str) -> Option<String> {
    let outline = catalog.outline()?.outline()?;
    outline
        .entries
        .iter()
        .find(|entry| entry.scene_id.to_lowercase() == lowered)
        .map(|entry| entry.scene_id.clone())
}

/// A file's id, title and names, as far as it has them.
fn identity(file: &SourceFile) -> (Option<String>, Option<String>, Vec<String>) {
    match &file.content {
        FileContent::Scene(scene) => (Some(scene.id.clone()), scene.title.clone(), Vec::new()),
        FileContent::Card(card) => (
            Some(card.id.clone()),
            Some(card.display_name().to_owned()),
            card.names().map(|name| name.text.clone()).collect(),
        ),
        _ => (None, None, Vec::new()),
    }
}

fn kind_name(file: &SourceFile) -> &'static str {
    match &file.content {
        FileContent::Scene(_) => "scene",
        FileContent::Outline(_) => "outline",
        FileContent::Card(_) => "card",
        FileContent::Bible(_) => "story bible",
        FileContent::VoiceGold(_) => "voice gold standard",
        FileContent::AntiPatterns(_) | FileContent::Other => "other",
    }
}

/// Whether `needle` occurs in `haystack` with no letter, digit or hyphen on
/// either side.
fn contains_token(haystack: &str, needle: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '-';
    haystack.match_indices(needle).any(|(start, _)| {
        let before = haystack[..start].chars().next_back();
        let after = haystack[start + needle.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

#[cfg(test)]
mod tests {
    use super::contains_token;

    #[test]
    fn tokens_match_whole_words_only() {
        assert!(contains_token("draft scn-the-gate now", "scn-the-gate"));
        assert!(!contains_token("draft scn-the-gate-2 now", "scn-the-gate"));
        assert!(!contains_token("gatehouse", "gate"));
    }
}
