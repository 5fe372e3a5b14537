//! placeholder, replaced by the http issue
