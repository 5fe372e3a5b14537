//! placeholder, replaced by the streams issue
