//! placeholder, replaced by the orm issue
