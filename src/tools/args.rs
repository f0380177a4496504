//! A tool's arguments as a recipe or an agent wrote them: typed accessors
//! whose errors name the argument, and the check that keeps every path
//! argument inside the workspace (arguments are untrusted).

use serde_json::{Map, Value};

use super::{SourceFile, ToolContext, ToolError};

/// A tool's arguments, with typed accessors whose errors name the argument.
pub struct ToolArgs<'a> {
    args: &'a Map<String, Value>,
}

impl<'a> ToolArgs<'a> {
    pub fn new(args: &'a Map<String, Value>) -> Self {
        ToolArgs { args }
    }

    pub(super) fn bad(name: &str, message: impl Into<String>) -> ToolError {
        ToolError::BadArgument {
            name: name.to_owned(),
            message: message.into(),
        }
    }

    /// An optional string (null counts as absent).
    pub fn string(&self, name: &str) -> Result<Option<&'a str>, ToolError> {
        match self.args.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(Self::bad(name, format!("expected text, got {other}"))),
        }
    }

    pub fn required_string(&self, name: &str) -> Result<&'a str, ToolError> {
        self.string(name)?
            .ok_or_else(|| Self::bad(name, "is required"))
    }

    /// An optional non-negative integer.
    pub fn usize(&self, name: &str) -> Result<Option<usize>, ToolError> {
        match self.args.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(number)) => number
                .as_u64()
                .map(|n| Some(n as usize))
                .ok_or_else(|| Self::bad(name, format!("expected a whole number, got {number}"))),
            Some(other) => Err(Self::bad(name, format!("expected a number, got {other}"))),
        }
    }

    /// An optional list of strings; a single string counts as a list of one.
    pub fn strings(&self, name: &str) -> Result<Vec<&'a str>, ToolError> {
        match self.args.get(name) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::String(text)) => Ok(vec![text.as_str()]),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| {
                    item.as_str()
                        .ok_or_else(|| Self::bad(name, format!("expected text items, got {item}")))
                })
                .collect(),
            Some(other) => Err(Self::bad(name, format!("expected a list, got {other}"))),
        }
    }

    /// A workspace-relative path argument, checked: no absolute paths, no `..`,
    /// no backslashes. Whether the file exists is the tool's business.
    pub fn path(&self, name: &str) -> Result<Option<&'a str>, ToolError> {
        let Some(path) = self.string(name)? else {
            return Ok(None);
        };
        check_relative_path(path).map_err(|error| Self::bad(name, error.to_string()))?;
        Ok(Some(path))
    }

    /// Like [`ToolArgs::path`], for an argument the tool cannot do without.
    pub fn required_path(&self, name: &str) -> Result<&'a str, ToolError> {
        self.path(name)?
            .ok_or_else(|| Self::bad(name, "is required"))
    }

    /// Like [`ToolArgs::path`], for each item of a list.
    pub fn paths(&self, name: &str) -> Result<Vec<&'a str>, ToolError> {
        let paths = self.strings(name)?;
        for path in &paths {
            check_relative_path(path).map_err(|error| Self::bad(name, error.to_string()))?;
        }
        Ok(paths)
    }
}

pub use crate::storage::{PathError, check_relative_path};

/// The indexed file at `path`, or an error naming the argument.
pub fn indexed_file<'w>(
    context: &ToolContext<'w>,
    name: &str,
    path: &str,
) -> Result<&'w std::sync::Arc<SourceFile>, ToolError> {
    context.workspace.file(path).ok_or_else(|| {
        ToolArgs::bad(
            name,
            format!("`{path}` is not a manuscript file of this workspace"),
        )
    })
}
