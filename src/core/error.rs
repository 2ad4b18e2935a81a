//! The one error type of the core. `src/lib.rs` maps it to Python exceptions in
//! one place; nothing in the core panics on user data.

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// Bad input data: the message names the query and document where known.
    InvalidInput(String),
    /// A document listed twice for one query.
    DuplicateDocument { query: String, doc: String },
    /// A score or label that is NaN or infinite.
    NonFinite {
        query: String,
        doc: String,
        what: &'static str,
    },
    /// A metric the kernels do not know, or an invalid parameter.
    InvalidMetric(String),
    /// A malformed line in a file.
    Parse {
        file: String,
        line: u64,
        msg: String,
    },
    /// An I/O failure (file missing, unreadable...).
    Io { file: String, msg: String },
    /// Stopped by the caller through a [`crate::core::cancel::Cancel`] flag.
    Interrupted,
}

pub type Result<T> = std::result::Result<T, Error>;

/// Show an id (raw bytes) readably in messages.
pub fn show(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidInput(m) => write!(f, "{m}"),
            Error::DuplicateDocument { query, doc } => {
                write!(
                    f,
                    "query {query:?}: document {doc:?} is listed more than once"
                )
            }
            Error::NonFinite { query, doc, what } => {
                write!(
                    f,
                    "query {query:?}, document {doc:?}: {what} is NaN or infinite"
                )
            }
            Error::InvalidMetric(m) => write!(f, "{m}"),
            Error::Parse { file, line, msg } => write!(f, "{file}:{line}: {msg}"),
            Error::Io { file, msg } => write!(f, "{file}: {msg}"),
            Error::Interrupted => write!(f, "interrupted"),
        }
    }
}

impl std::error::Error for Error {}
