//! A recipe's task patterns: `draft scene` (a substring) or `/draft (a|the)
//! scene/` (a case-insensitive regular expression). The recipe validator
//! rejects a pattern that does not parse; the router measures how much of a
//! task each pattern explains.

/// One entry of a recipe's `task_patterns`.
#[derive(Debug)]
pub enum TaskPattern {
    /// Lowercased text to find anywhere in the description.
    Substring(String),
    /// A case-insensitive regular expression, from `/…/`.
    Regex(regex::Regex),
}

/// Why a task pattern is not usable.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PatternError {
    #[error("a task pattern must be non-empty text")]
    Empty,
    /// The regular expression does not compile; the engine's error says why.
    #[error(transparent)]
    Regex(#[from] regex::Error),
}

impl TaskPattern {
    /// Parses a pattern; `/…/` is a regular expression, anything else a
    /// substring. The error says why a regular expression does not compile.
    pub fn new(pattern: &str) -> Result<TaskPattern, PatternError> {
        let pattern = pattern.trim();
        match pattern
            .strip_prefix('/')
            .and_then(|rest| rest.strip_suffix('/'))
        {
            Some(body) if !body.is_empty() => regex::RegexBuilder::new(body)
                .case_insensitive(true)
                .size_limit(1 << 20)
                .build()
                .map(TaskPattern::Regex)
                .map_err(PatternError::Regex),
            _ if pattern.is_empty() => Err(PatternError::Empty),
            _ => Ok(TaskPattern::Substring(pattern.to_lowercase())),
        }
    }

    /// How many characters of the description the pattern explains, if it
    /// matches at all. `lowered` is the description in lowercase.
    pub fn match_length(&self, description: &str, lowered: &str) -> Option<usize> {
        match self {
            TaskPattern::Substring(needle) => lowered
                .contains(needle.as_str())
                .then(|| needle.chars().count()),
            TaskPattern::Regex(regex) => regex
                .find_iter(description)
                .map(|found| found.as_str().chars().count())
                .filter(|&length| length > 0)
                .max(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::TaskPattern;

    fn length(pattern: &str, description: &str) -> Option<usize> {
        TaskPattern::new(pattern)
            .unwrap()
            .match_length(description, &description.to_lowercase())
    }

    #[test]
    fn substrings_and_slashed_regexes_match_case_insensitively() {
        assert_eq!(length("Draft Scene", "please DRAFT SCENE 3"), Some(11));
        assert_eq!(length("draft scene", "draft the scene"), None);
        assert_eq!(length("/draft (the )?scene/", "Draft the scene"), Some(15));
        // The longest match among several counts.
        assert_eq!(length("/scenes?/", "scene and scenes"), Some(6));
        // A regex that can only match empty text never routes.
        assert_eq!(length("/x*/", "draft"), None);
        // A lone slash, or slashes around nothing, are plain text.
        assert_eq!(length("/", "a/b"), Some(1));
        assert_eq!(length("//", "a//b"), Some(2));
    }

    #[test]
    fn unusable_patterns_say_why() {
        assert!(TaskPattern::new("  ").is_err());
        let error = TaskPattern::new("/draft (scene/").unwrap_err().to_string();
        assert!(error.contains("unclosed group"), "{error}");
    }
}
