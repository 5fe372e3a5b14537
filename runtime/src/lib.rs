//! moria runtime
