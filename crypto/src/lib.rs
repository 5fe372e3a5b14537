//! placeholder, replaced by the crypto issue
