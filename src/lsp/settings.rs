//! Editor settings: the `controlRoom` section a client sends in
//! `initializationOptions` and `workspace/didChangeConfiguration`.
//!
//! Today that is `controlRoom.diagnostics.severity`, a map from diagnostic
//! code to `error`, `warning`, `information`, `hint` or `off`, which takes
//! precedence over `[diagnostics.severity]` in `control-room.toml` (the
//! writer's editor knows their preferences better than the shared file).
//! Both `{"controlRoom": {"diagnostics": …}}` and the bare `{"diagnostics": …}`
//! are accepted. A bad value is reported and left out; it never fails a request.
//!
//! `controlRoom.llm` takes the keys of `[llm]` (camelCase or snake_case:
//! `baseUrl`, `apiKeyEnv`…, and `agents`); it is the editor's layer between
//! `control-room.toml` and the `CONTROL_ROOM_LLM_*` variables when the
//! server runs a recipe. A key can only be named by its variable, never given.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::checks::Severity;
use crate::llm::config::{Layer, LlmLayer};

/// Settings read from the editor, and what was wrong with them.
#[derive(Debug, Default, PartialEq)]
pub struct EditorSettings {
    pub severity: BTreeMap<String, String>,
    /// `controlRoom.llm`, when given and usable.
    pub llm: Option<LlmLayer>,
    pub problems: Vec<String>,
}

pub fn read(value: &Value) -> EditorSettings {
    let mut settings = EditorSettings::default();
    let section = value.get("controlRoom").unwrap_or(value);
    if let Some(llm) = section.get("llm").filter(|llm| !llm.is_null()) {
        match Layer::from_json("editor settings (controlRoom.llm)", llm) {
            Ok(layer) => settings.llm = Some(layer.value),
            Err(error) => settings.problems.push(error.to_string()),
        }
    }
    let Some(severity) = section.get("diagnostics").and_then(|d| d.get("severity")) else {
        return settings;
    };
    let Some(entries) = severity.as_object() else {
        settings.problems.push(
            "controlRoom.diagnostics.severity should map diagnostic codes to severities".to_owned(),
        );
        return settings;
    };
    for (code, value) in entries {
        match value.as_str() {
            Some(name) if name == "off" || Severity::parse(name).is_some() => {
                settings.severity.insert(code.clone(), name.to_owned());
            }
            _ => settings.problems.push(format!(
                "controlRoom.diagnostics.severity.{code}: {value} is not one of error, warning, information, hint, off"
            )),
        }
    }
    settings
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn llm_settings_are_read_and_a_misspelt_key_reported() {
        let good = read(&json!({"controlRoom": {"llm": {
            "provider": "anthropic", "model": "claude-sonnet-4-5", "apiKeyEnv": "ANTHROPIC_API_KEY",
            "agents": {"critic": {"model": "claude-haiku-4-5"}}
        }}}));
        assert_eq!(good.problems, Vec::<String>::new());
        let llm = good.llm.unwrap();
        assert_eq!(llm.model.as_deref(), Some("claude-sonnet-4-5"));
        assert!(llm.agents.contains_key("critic"));
        let bad = read(&json!({"controlRoom": {"llm": {"temprature": 0.2}}}));
        assert!(bad.llm.is_none());
        assert_eq!(bad.problems.len(), 1);
        assert!(
            bad.problems[0].contains("controlRoom.llm") && bad.problems[0].contains("temprature"),
            "{:?}",
            bad.problems
        );
    }

    #[test]
    fn severities_are_read_from_either_shape_and_bad_values_reported() {
        let nested = read(&json!({"controlRoom": {"diagnostics": {"severity": {
            "name-typo": "off", "anti-pattern": "hint", "dead-character": "loud"
        }}}}));
        assert_eq!(
            nested.severity.get("name-typo").map(String::as_str),
            Some("off")
        );
        assert_eq!(
            nested.severity.get("anti-pattern").map(String::as_str),
            Some("hint")
        );
        assert!(!nested.severity.contains_key("dead-character"));
        assert_eq!(nested.problems.len(), 1);
        assert!(nested.problems[0].contains("dead-character"));
        let bare = read(&json!({"diagnostics": {"severity": {"orphan-scene": "error"}}}));
        assert_eq!(bare.severity.len(), 1);
        assert_eq!(read(&json!(null)), EditorSettings::default());
    }
}
