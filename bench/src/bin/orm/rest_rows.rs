//! The same work over REST on loopback: a moria-http server with `Rest`, one keep-alive client.

use std::fmt::Write as _;
use std::io::{BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use moria_http::client::read_response;
use moria_http::{Router, Server};
use moria_orm::{now_millis, Db, ModTime, Mode, Rest};

use crate::harness::{Bench, Insert, INSERTS};
use crate::report::{median, rate, Line};
use crate::sample::{check, first_name, iso_date, Sample};

/// Largest REST answer the bench reads (the whole table as JSON).
const MAX_REST_BODY: u64 = 1 << 30;

/// A keep-alive HTTP/1.1 client for the REST rows: one request, one response at a time, read by
/// moria-http's response decoder.
struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Client {
    fn connect(addr: SocketAddr) -> Client {
        let s = TcpStream::connect(addr).expect("connect");
        s.set_nodelay(true).expect("nodelay");
        s.set_read_timeout(Some(Duration::from_secs(60)))
            .expect("timeout");
        Client {
            reader: BufReader::new(s.try_clone().expect("clone")),
            writer: s,
        }
    }

    /// Sends one request and returns (status, body).
    fn call(&mut self, method: &str, target: &str, body: &[u8]) -> (u16, Vec<u8>) {
        let mut req = Vec::with_capacity(96 + body.len());
        write!(
            req,
            "{method} {target} HTTP/1.1\r\nHost: bench\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .expect("format");
        req.extend_from_slice(body);
        self.writer.write_all(&req).expect("send");
        let res =
            read_response(&mut self.reader, method == "HEAD", MAX_REST_BODY).expect("response");
        (res.status, res.body)
    }
}

/// A server exposing `Sample` over REST on 127.0.0.1:0, on a fresh database.
fn rest_server(path: &Path, mode: Mode) -> (Server, SocketAddr) {
    let db = Db::builder(path).mode(mode).open().expect("open");
    db.ensure_schema::<Sample>().expect("schema");
    let rest = Rest::new(db, "root").table::<Sample>().max_body(64 << 20);
    let server = Server::builder()
        .listen("127.0.0.1:0")
        .max_body(64 << 20)
        .start(rest.routes(Router::new()))
        .expect("server");
    let addr = server.local_addr();
    (server, addr)
}

fn sample_json(i: usize) -> String {
    format!(
        r#"{{"first_name":{},"last_name":"{}","amount":{},"birth_date":"{}"}}"#,
        serde_json::to_string(&first_name(i)).expect("json"),
        i + 1,
        (i + 1) as f64 * 0.01,
        iso_date(i as i64 + 1)
    )
}

/// REST inserts: one POST per row (Direct), or one `PUT /root/Batch` of SIMPLE rows.
fn rest_insert(addr: SocketAddr, kind: Insert, rows: usize) -> (Duration, Vec<i64>) {
    let mut c = Client::connect(addr);
    let t = Instant::now();
    let ids: Vec<i64> = if kind == Insert::Direct {
        (0..rows)
            .map(|i| {
                let (st, body) = c.call("POST", "/root/Sample", sample_json(i).as_bytes());
                assert_eq!(st, 201);
                let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
                v["id"].as_i64().expect("id")
            })
            .collect()
    } else {
        let mut body = String::with_capacity(rows * 64);
        body.push_str(r#"{"Sample":["#);
        for i in 0..rows {
            if i > 0 {
                body.push(',');
            }
            write!(
                body,
                r#""SIMPLE",[{},"{}",{},"{}",0,0]"#,
                serde_json::to_string(&first_name(i)).expect("json"),
                i + 1,
                (i + 1) as f64 * 0.01,
                iso_date(i as i64 + 1)
            )
            .expect("format");
        }
        body.push_str("]}");
        let (st, out) = c.call("PUT", "/root/Batch", body.as_bytes());
        assert_eq!(st, 200, "{}", String::from_utf8_lossy(&out));
        let v: serde_json::Value = serde_json::from_slice(&out).expect("json");
        v["Sample"]
            .as_array()
            .expect("ids")
            .iter()
            .map(|id| id.as_i64().expect("id"))
            .collect()
    };
    let (st, _) = c.call("GET", &format!("/root/Sample/{}", ids[1]), b"");
    assert_eq!(st, 200);
    (t.elapsed(), ids)
}

/// A JSON object of Sample as the REST layer writes it.
fn check_json(v: &serde_json::Value, i: usize, id: i64, start: i64) {
    let s = Sample {
        id: v["id"].as_i64().expect("id"),
        first_name: v["first_name"].as_str().expect("first").to_owned(),
        amount: v["amount"].as_f64().expect("amount"),
        last_change: ModTime(v["last_change"].as_i64().expect("change")),
        ..Default::default()
    };
    check(&s, i, id, start);
}

fn rest_by_one(addr: SocketAddr, ids: &[i64], start: i64) -> Duration {
    let mut c = Client::connect(addr);
    let t = Instant::now();
    for (i, id) in ids.iter().enumerate() {
        let (st, body) = c.call("GET", &format!("/root/Sample/{id}"), b"");
        assert_eq!(st, 200);
        check_json(&serde_json::from_slice(&body).expect("json"), i, *id, start);
    }
    t.elapsed()
}

/// One compact-JSON GET of every row (mORMot's non-expanded format), parsed and checked.
fn rest_all(addr: SocketAddr, ids: &[i64], start: i64) -> Duration {
    let mut c = Client::connect(addr);
    let t = Instant::now();
    let target = format!("/root/Sample?sort=id&format=compact&limit={}", ids.len());
    let (st, body) = c.call("GET", &target, b"");
    assert_eq!(st, 200);
    let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
    let n = v["fieldCount"].as_u64().expect("fieldCount") as usize;
    let values = v["values"].as_array().expect("values");
    let names = &values[..n];
    let col = |name: &str| names.iter().position(|c| c == name).expect("column");
    let (idc, first, amount, change) = (
        col("id"),
        col("first_name"),
        col("amount"),
        col("last_change"),
    );
    let rows = values[n..].chunks(n);
    assert_eq!(rows.len(), ids.len());
    for (i, r) in rows.enumerate() {
        let s = Sample {
            id: r[idc].as_i64().expect("id"),
            first_name: r[first].as_str().expect("first").to_owned(),
            amount: r[amount].as_f64().expect("amount"),
            last_change: ModTime(r[change].as_i64().expect("change")),
            ..Default::default()
        };
        check(&s, i, ids[i], start);
    }
    t.elapsed()
}

/// REST rows (loopback, keep-alive, one client) for one engine.
pub(crate) fn rest_rows(b: &mut Bench, name: &str, mode: Mode) -> (Line, Line) {
    let mut cols = Vec::new();
    for kind in INSERTS {
        if matches!(kind, Insert::Trans | Insert::BatchTrans) {
            cols.push(0);
            continue;
        }
        cols.push(b.insert_median(mode, kind, |p, rows| {
            let (server, addr) = rest_server(p, mode);
            let (d, ids) = rest_insert(addr, kind, rows);
            server.shutdown();
            server.wait();
            (d, ids.len())
        }));
    }
    let path = b.fresh(mode);
    let (server, addr) = rest_server(&path, mode);
    let start = now_millis();
    let (_, ids) = rest_insert(addr, Insert::Batch, b.args.rows);
    let runs = b.args.runs;
    let med = |f: &dyn Fn() -> Duration| median((0..runs).map(|_| rate(ids.len(), f())).collect());
    let reads = vec![
        med(&|| rest_by_one(addr, &ids, start)),
        med(&|| rest_all(addr, &ids, start)),
    ];
    server.shutdown();
    server.wait();
    let label = format!("{name} (REST)");
    (
        Line {
            label: label.clone(),
            cols,
        },
        Line { label, cols: reads },
    )
}
