//! moria-streams' integration tests, one module per former test file, in one binary (one link
//! instead of seven). Tests that touch the runtime share one configuration:
//! [`common::runtime`]. `file_offload` stays a binary of its own: it needs a single-worker
//! runtime, and the configuration is applied once per process.

mod common;

mod chunked_roundtrip;
mod compress_roundtrip;
mod file_model;
mod pipe_transfer;
mod socket_streams;
mod throttle_clock;
mod transfer_sendfile;
