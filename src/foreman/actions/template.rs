//! `write_template` and `update_status`: the Story Bible's templates as the
//! Foreman writes them. A template is changed part by part: a part it has
//! gets its text replaced under its heading, a part it lacks is added under
//! a heading of its own, and everything else of the writer's stays as it is.
//! A placeholder is refused (a beat sheet has no "TBD" beats), and so is
//! `complete` for a template that still misses a part. A part the writer
//! had written is never lost: their text is kept under the new one, in a
//! comment that says when it was replaced, and the action says so.

use serde_json::Value;

use super::ValidAction;
use super::effect::{ActionError, Change, Effect};
use crate::index::bible::{self, BibleKind, PartSpec, normalise_heading};
use crate::index::config::PathsConfig;
use std::sync::Arc;

use crate::index::{BibleStatus, FilePath, SourceFile, Workspace};
use crate::syntax::front_matter::set_field;
use crate::syntax::{BlockKind, MarkdownParser};
use crate::text::{TextRange, apply_edits};

fn kind_of(action: &ValidAction) -> BibleKind {
    BibleKind::parse(action.text("template").unwrap_or_default())
        .expect("the schema allows only templates")
}

/// The part `key` names (`fatal_flaw`, or `Fatal Flaw`, or `opening_image`).
fn part_named(kind: BibleKind, key: &str) -> Option<&'static PartSpec> {
    let wanted = normalise_heading(&key.replace('_', " "));
    kind.parts().iter().find(|part| {
        part.key == key
            || normalise_heading(part.title) == wanted
            || part.aliases.contains(&wanted.as_str())
    })
}

/// A part's text as Markdown: prose, or a list.
fn render(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.trim().to_owned()),
        Value::Array(items) => Some(
            items
                .iter()
                .filter_map(Value::as_str)
                .map(|item| format!("- {}", item.trim().trim_start_matches("- ")))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

pub(super) fn write_template(
    action: &ValidAction,
    workspace: &Workspace,
    at: &str,
) -> Result<(String, Effect), ActionError> {
    let kind = kind_of(action);
    let content = action
        .params
        .get("content")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut parts = Vec::new();
    for (key, value) in &content {
        let part = part_named(kind, key).ok_or_else(|| ActionError::NotAPart {
            key: key.clone(),
            template: kind.title(),
            parts: kind.parts().iter().map(|part| part.key).collect(),
        })?;
        let text = render(value).unwrap_or_default();
        if bible::is_placeholder(&text) {
            return Err(ActionError::Placeholder {
                part: part.key,
                text,
            });
        }
        parts.push((part, text));
    }
    let (path, before) = bible_path(workspace, kind);
    let mut text = before
        .as_deref()
        .map_or_else(|| skeleton(kind), str::to_owned);
    let paths = &workspace.config().paths;
    let mut kept = Vec::new();
    for (part, body) in &parts {
        let replaced;
        (text, replaced) = set_part(&path, paths, &text, part, body, at);
        if replaced {
            kept.push(part.key);
        }
    }
    if let Some(status) = action.text("status") {
        text = set_field(
            &text,
            "status",
            status_name(status).unwrap_or("in_progress"),
        );
    }
    if let Some(character) = action
        .text("character")
        .filter(|_| kind == BibleKind::Protagonist)
    {
        text = set_field(&text, "character", character.trim());
    }
    let written: Vec<&str> = parts.iter().map(|(part, _)| part.key).collect();
    if let Some(problem) = complete_but_missing(&path, paths, &text, kind) {
        return Err(problem);
    }
    let kept = if kept.is_empty() {
        String::new()
    } else {
        format!(
            "; your earlier text of {} is kept beneath the new, in a comment",
            kept.join(", ")
        )
    };
    Ok((
        format!(
            "wrote {} of the {} ({path}){kept}",
            written.join(", "),
            kind.title()
        ),
        Effect::Changes(vec![Change {
            path,
            before,
            after: text,
        }]),
    ))
}

pub(super) fn update_status(
    action: &ValidAction,
    workspace: &Workspace,
) -> Result<(String, Effect), ActionError> {
    let kind = kind_of(action);
    let status = status_name(action.text("status").unwrap_or_default()).unwrap_or("in_progress");
    let (path, before) = bible_path(workspace, kind);
    let Some(before) = before else {
        return Err(ActionError::NoTemplate {
            template: kind.title(),
            path: path.to_string(),
        });
    };
    let after = set_field(&before, "status", status);
    if let Some(problem) = complete_but_missing(&path, &workspace.config().paths, &after, kind) {
        return Err(problem);
    }
    Ok((
        format!("the {} is now {status}", kind.title()),
        Effect::Changes(vec![Change {
            path,
            before: Some(before),
            after,
        }]),
    ))
}

/// Why `text` may not say `complete`, if it says so and misses a part.
fn complete_but_missing(
    path: &str,
    paths: &PathsConfig,
    text: &str,
    kind: BibleKind,
) -> Option<ActionError> {
    let file = SourceFile::parse(path.into(), text.into(), paths);
    let bible = file.bible()?;
    let gaps = bible.gaps();
    (bible.status() == crate::index::BibleStatus::Complete && !gaps.is_empty()).then(|| {
        ActionError::Incomplete {
            template: kind.title(),
            missing: gaps.iter().map(|(spec, _)| spec.key).collect(),
        }
    })
}

fn skeleton(kind: BibleKind) -> String {
    format!(
        "---\ntype: {}\nstatus: in_progress\n---\n\n# {}\n",
        kind.id(),
        kind.title()
    )
}

/// `text` with `part` written as `body`: under its heading if it has one
/// (up to the next heading), else as a new section at the end; and whether
/// it replaced the writer's own text there, which is kept beneath `body`
/// in a comment dated `at`.
fn set_part(
    path: &str,
    paths: &PathsConfig,
    text: &str,
    part: &PartSpec,
    body: &str,
    at: &str,
) -> (String, bool) {
    let file = SourceFile::parse(path.into(), text.into(), paths);
    let existing = file.bible().and_then(|bible| {
        let section = bible
            .parts
            .iter()
            .find(|found| found.spec.key == part.key)?
            .section?;
        Some(bible.sections[section].heading)
    });
    match existing {
        Some(heading) => {
            let syntax = MarkdownParser::parse_fresh(text);
            let line_end = text[heading.end..]
                .find('\n')
                .map_or(text.len(), |at| heading.end + at + 1);
            let next = syntax
                .blocks
                .iter()
                .filter(|block| {
                    matches!(block.kind, BlockKind::Heading { .. }) && block.range.start >= line_end
                })
                .map(|block| block.range.start)
                .min()
                .unwrap_or(text.len());
            let old = text[line_end..next].trim();
            let writers = !old.is_empty() && !bible::is_placeholder(old) && old != body.trim();
            let new = if writers {
                // "-->" inside would end the comment early.
                let old = old.replace("-->", "--&gt;");
                format!(
                    "\n{body}\n\n<!-- The Foreman replaced this part on {at}; your text was:\n\n{old}\n-->\n\n"
                )
            } else {
                format!("\n{body}\n\n")
            };
            (
                apply_edits(text, &[(TextRange::new(line_end, next), new)]),
                writers,
            )
        }
        None => {
            let mut out = text.trim_end().to_owned();
            out.push_str(&format!("\n\n## {}\n\n{body}\n", part.title));
            (out, false)
        }
    }
}

/// The Story Bible file of `kind`: the one the index has, or where a new
/// one goes.
fn bible_path(workspace: &Workspace, kind: BibleKind) -> (FilePath, Option<Arc<str>>) {
    match workspace.catalog().bible(kind) {
        Some(file) => (file.path.clone(), Some(file.text.clone())),
        None => (
            format!(
                "{}/{}",
                workspace.config().paths.bible.trim_end_matches('/'),
                kind.file_name()
            )
            .into(),
            None,
        ),
    }
}

/// A status as the templates write it.
fn status_name(name: &str) -> Option<&'static str> {
    BibleStatus::parse(name).map(BibleStatus::as_str)
}
