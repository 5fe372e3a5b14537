//! moria-bench's integration tests, one binary: the compare command's command line and the
//! transit peer against an independent join.

mod compare_cli;
mod transit_peer;
