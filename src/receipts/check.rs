//! One check made on a reply or a record, as a receipt lists it.

use serde::{Deserialize, Serialize};

/// One check the runner made on a reply, for the receipt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    pub check: String,
    pub passed: bool,
    pub detail: String,
}

impl Check {
    pub fn new(check: &str, passed: bool, detail: impl Into<String>) -> Check {
        Check {
            check: check.to_owned(),
            passed,
            detail: detail.into(),
        }
    }
}
