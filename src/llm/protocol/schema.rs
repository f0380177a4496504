//! A reply meant to be JSON, against its schema: the ways it breaks it,
//! worded for the model to read back (each with where, a JSON pointer), the
//! schemas compiled once.

use serde_json::Value;

/// Schema errors quoted back to the model, at most.
const MAX_SCHEMA_ERRORS: usize = 5;

/// The ways `value` breaks `schema`, each with where (a JSON pointer), at
/// most [`MAX_SCHEMA_ERRORS`]; a schema that does not compile is one error.
pub fn schema_errors(schema: &Value, value: &Value) -> Vec<String> {
    match compiled(schema) {
        Ok(validator) => validator_errors(&validator, value),
        Err(error) => vec![format!("the schema itself is invalid: {error}")],
    }
}

/// The schemas compiled so far, by their text: a step's schema is checked
/// at every reply of every run, and compiling it cost more than a check.
/// Emptied when it holds [`COMPILED_KEPT`] (a writer editing a recipe's
/// schema makes a new one at each save).
static COMPILED: std::sync::LazyLock<
    std::sync::Mutex<std::collections::HashMap<String, std::sync::Arc<jsonschema::Validator>>>,
> = std::sync::LazyLock::new(Default::default);
const COMPILED_KEPT: usize = 64;

fn compiled(
    schema: &Value,
) -> Result<std::sync::Arc<jsonschema::Validator>, jsonschema::ValidationError<'static>> {
    let text = schema.to_string();
    let lock = || {
        COMPILED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    if let Some(validator) = lock().get(&text) {
        return Ok(validator.clone());
    }
    let validator =
        std::sync::Arc::new(jsonschema::validator_for(schema).map_err(|error| error.to_owned())?);
    let mut kept = lock();
    if kept.len() >= COMPILED_KEPT {
        kept.clear();
    }
    kept.insert(text, validator.clone());
    Ok(validator)
}

/// As [`schema_errors`] with the schema compiled already.
pub fn validator_errors(validator: &jsonschema::Validator, value: &Value) -> Vec<String> {
    validator
        .iter_errors(value)
        .take(MAX_SCHEMA_ERRORS)
        .map(|error| {
            let at = error.instance_path().to_string();
            let at = if at.is_empty() { "/".to_owned() } else { at };
            format!("at {at}: {error}")
        })
        .collect()
}
