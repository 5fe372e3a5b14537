//! The example programs' tests, one module per program, linked as one binary: each starts the
//! debug build of its example (`CARGO_BIN_EXE_*`) and talks to it over loopback.

mod common;

mod chat_browser;
mod fileserver_auth;
mod fileserver_browser;
mod fileserver_h2_browser;
mod fileserver_memory;
mod fileserver_observability;
mod mutual_tls;
mod techempower;
mod transit;
mod tunnel;
mod wget_fileserver;
