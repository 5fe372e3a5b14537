//! The runtime's one error type.

use std::io;

/// Everything that can go wrong while configuring or using the runtime.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A configuration value is out of range or malformed.
    #[error("invalid runtime configuration: {0}")]
    InvalidConfig(String),
    /// An environment variable holds a value that cannot be used.
    #[error("environment variable {var}={value:?}: {reason}")]
    InvalidEnv {
        /// The variable's name.
        var: &'static str,
        /// The value found.
        value: String,
        /// Why it was refused.
        reason: String,
    },
    /// The engine was already configured differently; it reads its configuration only once.
    #[error("runtime already configured as {applied}; cannot apply {requested}")]
    AlreadyConfigured {
        /// The configuration in force.
        applied: String,
        /// The configuration that was refused.
        requested: String,
    },
    /// A function run on the offload pool panicked.
    #[error("blocking task panicked: {0}")]
    BlockingPanicked(String),
    /// An I/O error.
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl From<Error> for io::Error {
    fn from(e: Error) -> io::Error {
        match e {
            Error::Io(e) => e,
            other => io::Error::other(other),
        }
    }
}

/// Result alias for runtime operations.
pub type Result<T> = std::result::Result<T, Error>;

/// Turns a panic payload into a readable message.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}
