//! `$ref` resolution (appendix C of the execution-modes spec): dot traversal,
//! `[N]` indexing, and a root that is `task` or a cache slot. No JSONPath, no
//! filters, no wildcards. A missing value or a `null` anywhere along the path
//! is an error naming the full path and the segment where it broke.

use std::fmt;

use serde_json::{Map, Value};

/// One step of a path: a field or an index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    Field(String),
    Index(usize),
}

impl fmt::Display for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Segment::Field(name) => write!(f, "{name}"),
            Segment::Index(index) => write!(f, "[{index}]"),
        }
    }
}

/// A parsed `$ref` path such as `discovery.matches[0].path`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefPath {
    text: String,
    segments: Vec<Segment>,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RefError {
    #[error("`$ref` path `{path}` is malformed: {reason}")]
    Syntax { path: String, reason: String },
    #[error("`$ref` `{path}` broke at `{segment}`: {reason}")]
    Broken {
        path: String,
        segment: String,
        reason: String,
    },
}

impl RefPath {
    pub fn parse(text: &str) -> Result<RefPath, RefError> {
        let syntax = |reason: &str| RefError::Syntax {
            path: text.to_owned(),
            reason: reason.to_owned(),
        };
        if text.is_empty() {
            return Err(syntax("it is empty"));
        }
        let mut segments = Vec::new();
        for part in text.split('.') {
            let (name, mut rest) = match part.find('[') {
                Some(bracket) => part.split_at(bracket),
                None => (part, ""),
            };
            if name.is_empty() {
                return Err(syntax("every `.` must be between field names"));
            }
            if !name
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
            {
                return Err(syntax(&format!("`{name}` is not a plain field name")));
            }
            segments.push(Segment::Field(name.to_owned()));
            while !rest.is_empty() {
                let Some(close) = rest.find(']') else {
                    return Err(syntax("`[` without `]`"));
                };
                let digits = &rest[1..close];
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(syntax(&format!("`[{digits}]` is not a literal index")));
                }
                let index = digits
                    .parse()
                    .map_err(|_| syntax(&format!("`[{digits}]` is too large")))?;
                segments.push(Segment::Index(index));
                rest = &rest[close + 1..];
                if !rest.is_empty() && !rest.starts_with('[') {
                    return Err(syntax("`]` must be followed by `.`, `[` or the end"));
                }
            }
        }
        Ok(RefPath {
            text: text.to_owned(),
            segments,
        })
    }

    /// The first segment: `task` or a slot name.
    pub fn root(&self) -> &str {
        match &self.segments[0] {
            Segment::Field(name) => name,
            Segment::Index(_) => "",
        }
    }

    /// The field name at `index`, if that segment is a field.
    pub fn field(&self, index: usize) -> Option<&str> {
        match self.segments.get(index)? {
            Segment::Field(name) => Some(name),
            Segment::Index(_) => None,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Follows the path from `root_value` (the value of its first segment).
    pub fn resolve_from<'v>(&self, root_value: Option<&'v Value>) -> Result<&'v Value, RefError> {
        let broken = |segment: &Segment, reason: String| RefError::Broken {
            path: self.text.clone(),
            segment: segment.to_string(),
            reason,
        };
        let mut current = match root_value {
            None => {
                return Err(broken(
                    &self.segments[0],
                    "no such task field or slot".into(),
                ));
            }
            Some(Value::Null) => return Err(broken(&self.segments[0], "it is null".into())),
            Some(value) => value,
        };
        for segment in &self.segments[1..] {
            let next = match (segment, current) {
                (Segment::Field(name), Value::Object(object)) => object
                    .get(name)
                    .ok_or_else(|| broken(segment, "no such field".into()))?,
                (Segment::Index(index), Value::Array(items)) => {
                    items.get(*index).ok_or_else(|| {
                        broken(segment, format!("the list has {} items", items.len()))
                    })?
                }
                (Segment::Field(_), other) => {
                    return Err(broken(segment, format!("{} has no fields", kind(other))));
                }
                (Segment::Index(_), other) => {
                    return Err(broken(segment, format!("{} is not a list", kind(other))));
                }
            };
            if next.is_null() {
                return Err(broken(segment, "it is null".into()));
            }
            current = next;
        }
        Ok(current)
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// What `$ref` roots name: the task and the slots filled so far.
pub trait RefScope {
    /// The value of the root `name` (`task` or a slot), if any.
    fn root(&self, name: &str) -> Option<&Value>;
}

/// Replaces every `{"$ref": …}` in `value` by what it names, recording each
/// path's root in `roots` (for `input_slot_refs`).
pub fn resolve(
    value: &Value,
    scope: &dyn RefScope,
    roots: &mut Vec<String>,
) -> Result<Value, RefError> {
    match value {
        Value::Object(object) => {
            if let Some(Value::String(path)) = object.get("$ref")
                && object.len() == 1
            {
                let path = RefPath::parse(path)?;
                let root = path.root().to_owned();
                let resolved = path.resolve_from(scope.root(&root))?.clone();
                let label = if root == "task" {
                    format!("task.{}", path.field(1).unwrap_or(""))
                } else {
                    root
                };
                if !roots.contains(&label) {
                    roots.push(label);
                }
                return Ok(resolved);
            }
            let mut resolved = Map::new();
            for (key, value) in object {
                resolved.insert(key.clone(), resolve(value, scope, roots)?);
            }
            Ok(Value::Object(resolved))
        }
        Value::Array(items) => items
            .iter()
            .map(|item| resolve(item, scope, roots))
            .collect::<Result<_, _>>()
            .map(Value::Array),
        other => Ok(other.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct Scope(Value);

    impl RefScope for Scope {
        fn root(&self, name: &str) -> Option<&Value> {
            self.0.get(name)
        }
    }

    fn scope() -> Scope {
        Scope(json!({
            "task": {"description": "Draft scene 2", "args": {"scene_path": "Story/Scenes/SCN-a.md", "gone": null}},
            "discovery": {"matches": [{"path": "a.md"}, {"path": "b.md", "tags": [["x", "y"]]}]},
        }))
    }

    fn get(path: &str) -> Result<Value, RefError> {
        let mut roots = Vec::new();
        resolve(&json!({"$ref": path}), &scope(), &mut roots)
    }

    #[test]
    fn dots_and_indexes_walk_the_value() {
        assert_eq!(get("task.description").unwrap(), json!("Draft scene 2"));
        assert_eq!(
            get("task.args.scene_path").unwrap(),
            json!("Story/Scenes/SCN-a.md")
        );
        assert_eq!(get("discovery.matches[1].path").unwrap(), json!("b.md"));
        assert_eq!(get("discovery.matches[1].tags[0][1]").unwrap(), json!("y"));
        assert_eq!(
            get("discovery.matches").unwrap().as_array().unwrap().len(),
            2
        );
    }

    #[test]
    fn a_null_or_missing_segment_names_the_path_and_the_segment() {
        let error = get("task.args.gone").unwrap_err().to_string();
        assert_eq!(error, "`$ref` `task.args.gone` broke at `gone`: it is null");
        let error = get("discovery.matches[5].path").unwrap_err().to_string();
        assert_eq!(
            error,
            "`$ref` `discovery.matches[5].path` broke at `[5]`: the list has 2 items"
        );
        let error = get("outline_beat.scenes").unwrap_err().to_string();
        assert_eq!(
            error,
            "`$ref` `outline_beat.scenes` broke at `outline_beat`: no such task field or slot"
        );
        let error = get("task.description.text").unwrap_err().to_string();
        assert!(
            error.contains("broke at `text`: text has no fields"),
            "{error}"
        );
    }

    #[test]
    fn refs_inside_objects_and_lists_resolve_and_record_their_roots() {
        let mut roots = Vec::new();
        let value = json!({"a": {"$ref": "task.args.scene_path"}, "b": [{"$ref": "discovery.matches[0].path"}, 3], "c": "literal"});
        let resolved = resolve(&value, &scope(), &mut roots).unwrap();
        assert_eq!(
            resolved,
            json!({"a": "Story/Scenes/SCN-a.md", "b": ["a.md", 3], "c": "literal"})
        );
        assert_eq!(roots, ["task.args", "discovery"]);
    }

    #[test]
    fn malformed_paths_are_rejected() {
        for bad in [
            "", "a..b", "a[x]", "a[1", "a[1]b", ".a", "a.b[]", "a b", "a[*]",
        ] {
            assert!(RefPath::parse(bad).is_err(), "{bad:?} should not parse");
        }
        assert!(RefPath::parse("a[0][1].b_c-d").is_ok());
    }
}
