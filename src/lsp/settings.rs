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
//! `controlRoom.diagnostics.debounceMs` (or `debounce_ms`) is the delay
//! between the last keystroke and fresh diagnostics, winning over the file's
//! `[diagnostics] debounce_ms`.
//!
//! A part the settings leave out (`diagnostics`, `llm`) keeps what was in
//! force, so an empty `didChangeConfiguration` after `initializationOptions`
//! changes nothing; a part given replaces the whole part.
//!
//! `controlRoom.language.rules` maps harper's rule names to `true` or
//! `false`, over `[language.rules]` (see `language::rules`).
//!
//! `controlRoom.llm` takes the keys of `[llm]` (camelCase or snake_case:
//! `baseUrl`, `apiKeyEnv`…, and `agents`); it is the editor's layer between
//! `control-room.toml` and the `CONTROL_ROOM_LLM_*` variables when the
//! server runs a recipe. A key can only be named by its variable, never given.
//! A `null` or empty value counts as unset, as editors send every declared
//! setting whether the writer set it or not.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::checks::Severity;
use crate::llm::config::{Layer, LlmLayer};

/// Settings read from the editor, and what was wrong with them.
#[derive(Debug, Default, PartialEq)]
pub struct EditorSettings {
    /// Whether the settings have a `diagnostics` part; without one, the
    /// severities and debounce in force stay (Eglot follows its
    /// `initializationOptions` with an empty `didChangeConfiguration`).
    pub diagnostics_given: bool,
    /// Whether the settings have an `llm` part; without one, the layer in
    /// force stays.
    pub llm_given: bool,
    /// Whether the settings have a `language` part.
    pub language_given: bool,
    /// `controlRoom.language.rules`: grammar rules on or off by name.
    pub rules: BTreeMap<String, bool>,
    pub severity: BTreeMap<String, String>,
    /// `controlRoom.llm`, when given and usable.
    pub llm: Option<LlmLayer>,
    /// `controlRoom.diagnostics.debounceMs`, when given.
    pub debounce_ms: Option<u64>,
    pub problems: Vec<String>,
}

/// Ten seconds: a longer wait is surely a slip of the keyboard.
const MAX_DEBOUNCE_MS: u64 = 10_000;

/// `value` with its `null` and empty-string members left out, recursively,
/// and an object left empty by that turned into `null`.
fn without_unset(value: &Value) -> Value {
    match value {
        Value::Object(object) => {
            let kept: serde_json::Map<String, Value> = object
                .iter()
                .map(|(key, value)| (key.clone(), without_unset(value)))
                .filter(|(_, value)| !value.is_null())
                .collect();
            if kept.is_empty() {
                Value::Null
            } else {
                Value::Object(kept)
            }
        }
        Value::String(text) if text.trim().is_empty() => Value::Null,
        other => other.clone(),
    }
}

pub fn read(value: &Value) -> EditorSettings {
    let mut settings = EditorSettings::default();
    let section = value.get("controlRoom").unwrap_or(value);
    settings.llm_given = section.get("llm").is_some();
    settings.diagnostics_given = section.get("diagnostics").is_some();
    read_language(section, &mut settings);
    if let Some(llm) = section
        .get("llm")
        .map(without_unset)
        .filter(|llm| !llm.is_null())
    {
        match Layer::from_json("editor settings (controlRoom.llm)", &llm) {
            Ok(layer) => settings.llm = Some(layer.value),
            Err(error) => settings.problems.push(error.to_string()),
        }
    }
    let diagnostics = section.get("diagnostics");
    let debounce = diagnostics
        .and_then(|d| d.get("debounceMs").or_else(|| d.get("debounce_ms")))
        .filter(|value| !value.is_null());
    if let Some(value) = debounce {
        match value.as_u64() {
            Some(ms) if ms <= MAX_DEBOUNCE_MS => settings.debounce_ms = Some(ms),
            _ => settings.problems.push(format!(
                "controlRoom.diagnostics.debounceMs: {value} is not a number of milliseconds from 0 to {MAX_DEBOUNCE_MS}"
            )),
        }
    }
    let Some(severity) = diagnostics
        .and_then(|d| d.get("severity"))
        .filter(|severity| !severity.is_null())
    else {
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

/// `controlRoom.language.rules`: each rule `true` or `false`.
fn read_language(section: &Value, settings: &mut EditorSettings) {
    let Some(language) = section.get("language") else {
        return;
    };
    settings.language_given = true;
    let Some(rules) = language.get("rules").filter(|rules| !rules.is_null()) else {
        return;
    };
    let Some(entries) = rules.as_object() else {
        settings
            .problems
            .push("controlRoom.language.rules should map rule names to true or false".to_owned());
        return;
    };
    for (rule, value) in entries {
        match value.as_bool() {
            Some(on) => {
                settings.rules.insert(rule.clone(), on);
            }
            None => settings.problems.push(format!(
                "controlRoom.language.rules.{rule}: {value} is not true or false"
            )),
        }
    }
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
    fn grammar_rules_are_read_and_a_value_that_is_not_a_switch_reported() {
        let settings = read(&json!({"controlRoom": {"language": {"rules": {
            "RepeatedWords": false, "OxfordComma": true, "AnA": "no"
        }}}}));
        assert!(settings.language_given);
        assert_eq!(settings.rules.get("RepeatedWords"), Some(&false));
        assert_eq!(settings.rules.get("OxfordComma"), Some(&true));
        assert!(!settings.rules.contains_key("AnA"));
        assert!(
            settings.problems[0].contains("AnA"),
            "{:?}",
            settings.problems
        );
    }

    #[test]
    fn unset_values_are_left_out_and_the_debounce_read() {
        let settings = read(&json!({"controlRoom": {
            "diagnostics": {"debounceMs": 40, "severity": null},
            "llm": {"provider": "openai", "baseUrl": "", "model": null, "agents": {}},
            "server": {"path": "/opt/control-room"},
        }}));
        assert_eq!(settings.problems, Vec::<String>::new());
        assert_eq!(settings.debounce_ms, Some(40));
        let llm = settings.llm.unwrap();
        assert_eq!(llm.provider.as_deref(), Some("openai"));
        assert_eq!(llm.base_url, None);
        let empty = read(&json!({"controlRoom": {"llm": {"model": null}}}));
        assert!(empty.llm.is_none() && empty.problems.is_empty());
        let bad = read(&json!({"diagnostics": {"debounce_ms": -5}}));
        assert_eq!(bad.debounce_ms, None);
        assert!(bad.problems[0].contains("debounceMs"), "{:?}", bad.problems);
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
        let empty = read(&json!({}));
        assert!(!empty.diagnostics_given && !empty.llm_given);
        assert!(nested.diagnostics_given && !nested.llm_given);
    }
}
