//! The client over IPv6: a server bound on `[::1]:0`, reached by a bracketed URL, with
//! keep-alive reuse. A machine without an IPv6 loopback fails the test with a clear message
//! rather than skipping it.

use crate::common::*;
use moria_http::client::Client;
use moria_http::{HandlerResult, Request, Response, Server};

fn hello(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    res.body(format!(
        "hello {} over {}",
        req.target(),
        req.header_str("host").unwrap_or("-")
    ));
    Ok(())
}

#[test]
fn the_client_reaches_a_server_on_the_ipv6_loopback() {
    if let Err(e) = std::net::TcpListener::bind("[::1]:0") {
        panic!(
            "this machine has no IPv6 loopback (binding [::1]:0 failed: {e}); the client's IPv6 \
             support cannot be tested: enable IPv6 on lo (sysctl net.ipv6.conf.lo.disable_ipv6=0)"
        );
    }
    let server = Server::builder()
        .listen("[::1]:0")
        .shutdown_grace(TEST_GRACE)
        .start(hello)
        .expect("server starts on [::1]");
    let addr = server.local_addr();
    assert!(addr.is_ipv6(), "{addr}");
    let client = Client::new().unwrap();
    let base = format!("http://[::1]:{}", addr.port());
    for i in 0..3 {
        let text = client
            .get(&format!("{base}/{i}"))
            .send()
            .unwrap()
            .text()
            .unwrap();
        assert_eq!(text, format!("hello /{i} over [::1]:{}", addr.port()));
    }
    assert_eq!(server.stats().accepted, 1, "one keep-alive connection");
    stop(&server);
}
