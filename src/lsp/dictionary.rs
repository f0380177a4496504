//! `controlRoom.addToDictionary`: the "Add to dictionary" of a `spelling`
//! diagnostic. The word is appended to the manuscript's dictionary file on
//! disk (the file is the writer's, kept in git like the rest), the
//! workspace takes the new text at once, and diagnostics are published
//! again: the word is no longer flagged anywhere.

use serde::Deserialize;
use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::Error as RpcError;

use super::runs::Context;
use super::shared::{invalid, lock};
use crate::ide::dictionary;
use crate::storage::Disk;

pub const ADD_TO_DICTIONARY: &str = "controlRoom.addToDictionary";

/// What `controlRoom.addToDictionary` takes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AddArgs {
    word: String,
}

/// Adds the word; answers the word and the dictionary's path.
pub fn add(context: &Context, args: AddArgs) -> Result<Value, RpcError> {
    let path = {
        let mut session = lock(&context.session);
        let root = session.workspace.root().to_path_buf();
        let path = session.workspace.dictionary_path().to_owned();
        let text = dictionary::add_word(&Disk::default(), &root, &path, &args.word)
            .map_err(|error| invalid(format!("{ADD_TO_DICTIONARY}: {error}")))?;
        session.workspace.set_dictionary(&text);
        path
    };
    (context.republish)();
    Ok(json!({ "added": args.word, "dictionary": path }))
}

/// Reads the dictionary file again after it changed on disk.
pub fn reload(session: &mut super::session::Session) {
    session.workspace.read_dictionary();
}
