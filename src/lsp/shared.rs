//! What the language server's handlers share: its first argument read as its type,
//! the error a bad argument gets, and the one way the server takes a lock.

use std::sync::{Mutex, MutexGuard};

use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::{Error as RpcError, ErrorCode};

/// Takes `mutex`, even if a panic poisoned it: a panic while holding the
/// lock leaves the data as consistent as the panicking step left it, and
/// serving on beats dying.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// An invalid-params error with `message`.
pub fn invalid(message: impl Into<String>) -> RpcError {
    RpcError {
        code: ErrorCode::InvalidParams,
        message: message.into().into(),
        data: None,
    }
}

/// The first argument of a command as `T`, or an error naming the command.
pub fn argument<T: serde::de::DeserializeOwned>(
    command: &str,
    arguments: &[Value],
) -> Result<T, RpcError> {
    let value = arguments.first().cloned().unwrap_or(json!({}));
    serde_json::from_value(value).map_err(|error| invalid(format!("{command}: {error}")))
}
