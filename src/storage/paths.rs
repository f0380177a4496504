//! Paths from recipes, agents and the command line are untrusted input:
//! only a workspace-relative path with forward slashes that stays inside
//! the workspace is accepted.

/// Why a path argument is refused. The messages follow the argument's name
/// ("argument `scene_path`: is empty").
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("is empty")]
    Empty,
    #[error("`{0}` must be a path relative to the workspace, with `/`")]
    NotRelative(String),
    #[error("`{0}` leaves the workspace or is malformed")]
    Outside(String),
}

/// Accepts a workspace-relative path with forward slashes that stays inside
/// the workspace.
pub fn check_relative_path(path: &str) -> Result<(), PathError> {
    if path.is_empty() {
        return Err(PathError::Empty);
    }
    if path.starts_with('/') || path.contains('\\') || path.contains(':') {
        return Err(PathError::NotRelative(path.to_owned()));
    }
    if path.split('/').any(|part| part == ".." || part.is_empty()) {
        return Err(PathError::Outside(path.to_owned()));
    }
    Ok(())
}
