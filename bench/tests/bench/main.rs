//! moria-bench's integration tests, one binary: the compare command's command line, a short
//! `fuzz_h2` run and the transit peer against an independent join.

mod compare_cli;
mod fuzz_h2_short;
mod transit_peer;
