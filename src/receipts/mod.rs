//! Receipts of every kind, and the key that signs them (evidence-rules.md,
//! prompt-hardening's contracts A and B): what a tool call or an agent step
//! leaves behind so that a finding, a draft or a decision can be traced to
//! what produced it, and nothing unsigned is believed.
//!
//! - `signing`: the workspace's key and the canonical JSON a signature covers.
//! - `tool`: a phase A tool call's receipt, appended to its session's log.
//! - `audit`: an agent step's task packet and receipt, one file each.
//! - `check`: one check made on a reply, as a receipt lists it.
//!
//! Who fills them is elsewhere: the run's tool and agent steps
//! (`runs::runner`), the conference's rounds, the Foreman's turns; a reply
//! whose own contract is a receipt is held to it by `runs::contract`. The
//! evidence validator verifies tool receipts before a finding is believed.

pub mod audit;
mod check;
mod signing;
mod tool;

pub use check::Check;
pub use signing::{GITIGNORE_FILE, SECRET_FILE, SigningKey, canonical};
pub use tool::{TOOL_RECEIPT_VERSION, ToolReceipt, append, is_receipt_id, load, receipts_path};
