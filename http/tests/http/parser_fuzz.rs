//! Garbage over TCP: hundreds of connections sending random bytes (deterministic PRNG) never
//! crash or wedge the server; every answer is a well-formed status; it still serves afterwards.

use std::io::{Read, Write};

use crate::common::*;
use moria_http::{HandlerResult, Request, Response, Server};

fn ok(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let mut sink = Vec::new();
    req.body().read_to_end(&mut sink)?;
    res.body("ok");
    Ok(())
}

/// xorshift64*: reproducible pseudo-random bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

const SEEDS: [&[u8]; 4] = [
    b"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
    b"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nbody",
    b"POST /y HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nbody\r\n0\r\n\r\n",
    b"HEAD /z HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
];

#[test]
fn random_and_mutated_requests_never_break_the_server() {
    let server = start(Server::builder(), ok);
    let addr = server.local_addr();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for round in 0..300 {
        let mut raw = SEEDS[round % SEEDS.len()].to_vec();
        if round % 3 == 0 {
            raw = (0..(rng.next() % 300)).map(|_| rng.next() as u8).collect();
        } else {
            for _ in 0..(1 + rng.next() % 6) {
                let i = (rng.next() as usize) % raw.len();
                raw[i] = rng.next() as u8;
            }
        }
        let mut s = connect(addr);
        let _ = s.write_all(&raw);
        let _ = s.shutdown(std::net::Shutdown::Write);
        // Whatever it made of the bytes, the server closes once the client is done sending.
        let answer = read_until_closed(&mut s);
        if !answer.is_empty() {
            assert!(
                answer.starts_with(b"HTTP/1.1 "),
                "round {round}: {:?}",
                String::from_utf8_lossy(&answer)
            );
        }
    }
    assert_eq!(get(addr, "/").text().unwrap(), "ok");
    stop(&server);
}
