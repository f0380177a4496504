//! The handlers, one file per request or notification, laid out like ruff's
//! server: each turns the protocol's params into the core's terms, calls the
//! feature (`ide`, the engine, the session) and turns the answer back.
//! `server.rs` only delegates here.

pub(crate) mod notifications;
pub(crate) mod requests;
