//! Tool receipts (signed with the workspace's key) live in the storage
//! layer, below the engine and the evidence validator alike; the engine
//! names them here.

pub use crate::storage::receipts::*;
