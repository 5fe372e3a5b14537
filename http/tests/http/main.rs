//! moria-http's integration tests, one module per area, linked as one binary. Real servers on
//! 127.0.0.1:0 (and real peers: nginx, tinyproxy, curl) over raw TCP, TLS and the crate's
//! client. A test that needs a process of its own (the descriptor limit, the transfer counters,
//! the global logger) runs this binary again as a child running that test alone
//! (`common::process`): the access log, the 100 MiB transfer counts, `respond_stream`'s
//! transfer path and the shutdown at the descriptor limit.

mod common;

mod app_access_log;
mod app_compose;
mod app_cookies;
mod app_curl;
mod app_extract;
mod app_layers;
mod body_expect;
mod client_auth;
mod client_basic;
mod client_expect;
mod client_framing;
mod client_ipv6;
mod client_nginx;
mod client_pool;
mod client_proxy;
mod client_redirects;
mod client_tinyproxy;
mod client_tls;
mod connection_parking;
mod connection_paths;
mod h2_attacks;
mod h2_clients;
mod h2_httpwg;
mod h2_httpx;
mod health_probes;
mod metrics_prometheus;
mod multipart_forms;
mod parser_fuzz;
mod protocol_framing;
mod protocol_limits;
mod response_bodies;
mod router_status;
mod server_access_log;
mod server_basic;
mod server_faults;
mod server_lifecycle;
mod server_log_stalled;
mod server_shutdown;
mod static_archives;
mod static_curl;
mod static_load;
mod static_responses;
mod static_traversal;
mod static_uploads;
mod stream_ranges;
mod tls_https;
mod tls_tickets;
mod trace_request_spans;
mod ws_autobahn;
mod ws_handshake;
mod ws_hostile;
mod ws_interop;
mod ws_parked;
mod ws_prepared;
mod ws_quiet;
mod ws_split;
mod ws_stream;
