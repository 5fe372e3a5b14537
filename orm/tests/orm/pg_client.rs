//! The PostgreSQL client against a real server started by the test: connection strings,
//! authentication (SCRAM, MD5, cleartext only over TLS), TLS modes, typed parameters and rows,
//! statement cache, transactions and savepoints, COPY, pipelines, SQLSTATEs, timeouts.

use std::io::{Read, Write};
use std::time::{Duration, Instant, SystemTime};

use moria_orm::pg::{Client, Config, Error, Host, SslMode, TxStatus};

use crate::common;

fn fiber<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    common::runtime().run(f).unwrap()
}

fn connect() -> Client {
    Client::connect_config(&common::pg_server().config("postgres")).unwrap()
}

#[test]
fn connects_by_url_key_value_tcp_and_unix_socket() {
    let srv = common::pg_server();
    let (url, unix) = (srv.url(), srv.unix_url());
    let kv = format!(
        "host=127.0.0.1 port={} user=moria password='{}' dbname=postgres sslmode=disable",
        srv.port(),
        srv.password()
    );
    fiber(move || {
        for target in [url, unix, kv] {
            let mut c = Client::connect(&target).unwrap_or_else(|e| panic!("{target}: {e}"));
            let row = c.query_one("SELECT 1::int8 AS one", &[]).unwrap();
            assert_eq!(row.get::<i64>("one").unwrap(), 1);
            assert!(c.backend_pid() > 0);
            assert!(c.server_param("server_version").is_some());
        }
    });
}

#[test]
fn wrong_password_and_unknown_database_are_clear_errors() {
    let srv = common::pg_server();
    let mut bad_pw = srv.config("postgres");
    bad_pw.password = Some("nope".into());
    let no_db = srv.config("no_such_database");
    let mut no_pw = srv.config("postgres");
    no_pw.password = None;
    fiber(move || {
        let e = Client::connect_config(&bad_pw).unwrap_err();
        assert_eq!(e.code(), "28P01", "{e}");
        assert!(
            e.to_string().contains("password authentication failed"),
            "{e}"
        );
        let e = Client::connect_config(&no_db).unwrap_err();
        assert_eq!(e.code(), "3D000", "{e}");
        assert!(e.to_string().contains("no_such_database"), "{e}");
        let e = Client::connect_config(&no_pw).unwrap_err();
        assert!(matches!(e, Error::Auth(_)), "{e}");
        assert!(e.to_string().contains("none was given"), "{e}");
    });
}

#[test]
fn tls_modes() {
    let srv = common::pg_server();
    let base = srv.config("postgres");
    let cert = srv.certificate();
    fiber(move || {
        for (mode, tls) in [
            (SslMode::Disable, false),
            (SslMode::Prefer, true),
            (SslMode::Require, true),
        ] {
            let cfg = Config {
                sslmode: Some(mode),
                ..base.clone()
            };
            let mut c = Client::connect_config(&cfg).unwrap();
            assert_eq!(c.is_tls(), tls, "{mode:?}");
            let row = c
                .query_one(
                    "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                    &[],
                )
                .unwrap();
            assert_eq!(row.get::<bool>(0).unwrap(), tls);
        }
        // verify-full: the self-signed certificate is trusted only when given as root.
        let full = Config {
            sslmode: Some(SslMode::VerifyFull),
            host: Host::Tcp("localhost".into()),
            ..base.clone()
        };
        let e = Client::connect_config(&full).unwrap_err();
        assert!(matches!(e, Error::Tls(_)), "{e}");
        let full = Config {
            sslrootcert: Some(cert),
            ..full
        };
        assert!(Client::connect_config(&full).unwrap().is_tls());
    });
}

#[test]
fn refused_tls_is_a_clear_error_under_require_and_a_fallback_under_prefer() {
    fiber(|| {
        // A server that refuses TLS: answers 'N' to the SSLRequest.
        let mut l = moria_runtime::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        moria_runtime::spawn(move || {
            while let Ok((mut s, _)) = l.accept() {
                let mut req = [0u8; 8];
                if s.read_exact(&mut req).is_ok() {
                    let _ = s.write_all(b"N");
                }
                // Then wait for the startup message and close.
                let _ = s.read(&mut [0u8; 64]);
            }
        });
        let cfg = Config {
            host: Host::Tcp("127.0.0.1".into()),
            port,
            password: Some("x".into()),
            sslmode: Some(SslMode::Require),
            ..Config::default()
        };
        let e = Client::connect_config(&cfg).unwrap_err();
        assert!(matches!(e, Error::Tls(_)), "{e}");
        assert!(e.to_string().contains("refused TLS"), "{e}");
        let prefer = Config {
            sslmode: Some(SslMode::Prefer),
            ..cfg
        };
        let e = Client::connect_config(&prefer).unwrap_err();
        assert!(
            !matches!(e, Error::Tls(_)),
            "prefer falls back to plain: {e}"
        );
    });
}

#[test]
fn md5_and_cleartext_authentication() {
    let srv = common::pg_server();
    let admin = srv.config("postgres");
    fiber(move || {
        let mut c = Client::connect_config(&admin).unwrap();
        c.batch_execute(
            "SET password_encryption = 'md5';
             DROP ROLE IF EXISTS moria_md5; CREATE ROLE moria_md5 LOGIN PASSWORD 'md5-pass';
             SET password_encryption = 'scram-sha-256';
             DROP ROLE IF EXISTS moria_clear; CREATE ROLE moria_clear LOGIN PASSWORD 'clear-pass';",
        )
        .unwrap();
        let md5 = Config {
            user: "moria_md5".into(),
            password: Some("md5-pass".into()),
            ..admin.clone()
        };
        let mut c = Client::connect_config(&md5).unwrap();
        assert_eq!(
            c.query_one("SELECT current_user::text", &[])
                .unwrap()
                .get::<String>(0)
                .unwrap(),
            "moria_md5"
        );
        let clear = Config {
            user: "moria_clear".into(),
            password: Some("clear-pass".into()),
            ..admin.clone()
        };
        let e = Client::connect_config(&clear).unwrap_err();
        assert!(matches!(e, Error::Auth(_)), "{e}");
        assert!(e.to_string().contains("cleartext"), "{e}");
        let over_tls = Config {
            sslmode: Some(SslMode::Require),
            ..clear
        };
        let c = Client::connect_config(&over_tls).unwrap();
        assert!(c.is_tls());
    });
}

#[test]
fn typed_parameters_and_rows() {
    fiber(|| {
        let mut c = connect();
        c.batch_execute(
            "DROP TABLE IF EXISTS typed; CREATE TABLE typed(id bigint PRIMARY KEY, \
             small int4, f float8, b bool, t text, bytes bytea, maybe text, at timestamptz)",
        )
        .unwrap();
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let n = c
            .execute(
                "INSERT INTO typed VALUES ($1,$2,$3,$4,$5,$6,$7,$8)",
                &[
                    &7i64,
                    &-3i32,
                    &2.5f64,
                    &true,
                    &"héllo 'quoted'",
                    &vec![0u8, 1, 255],
                    &None::<String>,
                    &at,
                ],
            )
            .unwrap();
        assert_eq!(n, 1);
        let row = c
            .query_one("SELECT * FROM typed WHERE id = $1", &[&7i64])
            .unwrap();
        assert_eq!(row.get::<i64>("id").unwrap(), 7);
        assert_eq!(row.get::<i32>("small").unwrap(), -3);
        assert_eq!(row.get::<f64>("f").unwrap(), 2.5);
        assert!(row.get::<bool>("b").unwrap());
        assert_eq!(row.get::<String>("t").unwrap(), "héllo 'quoted'");
        assert_eq!(row.get::<Vec<u8>>("bytes").unwrap(), [0, 1, 255]);
        assert_eq!(row.get::<Option<String>>("maybe").unwrap(), None);
        assert_eq!(row.get::<SystemTime>("at").unwrap(), at);
        assert!(matches!(row.get::<i64>("nope"), Err(Error::Column(_))));
        assert!(matches!(row.get::<String>("id"), Err(Error::Conversion(_))));
        assert!(matches!(row.get::<i64>("maybe"), Err(Error::Conversion(_))));
        // Wrong parameter count and type are errors; the connection stays usable.
        assert!(matches!(
            c.execute("SELECT $1::int8", &[]),
            Err(Error::Conversion(_))
        ));
        assert!(matches!(
            c.execute("SELECT $1::int8", &[&"text"]),
            Err(Error::Conversion(_))
        ));
        let rows = c.simple_query("SELECT 1 AS a, NULL AS b").unwrap();
        assert_eq!(rows[0].get("a"), Some("1"));
        assert_eq!(rows[0].get("b"), None);
    });
}

#[test]
fn statement_cache_reuses_and_evicts() {
    let mut cfg = common::pg_server().config("postgres");
    cfg.statement_cache = 4;
    fiber(move || {
        let mut c = Client::connect_config(&cfg).unwrap();
        for i in 0..10i64 {
            let sql = format!("SELECT $1::int8 + {}", i % 6);
            for _ in 0..3 {
                let r = c.query_one(&sql, &[&i]).unwrap();
                assert_eq!(r.get::<i64>(0).unwrap(), i + i % 6);
            }
            assert!(c.cached_statements() <= 4);
        }
        let prepared: i64 = c
            .query_one("SELECT count(*) FROM pg_prepared_statements", &[])
            .unwrap()
            .get(0)
            .unwrap();
        assert!(
            prepared <= 5,
            "evicted statements are closed on the server: {prepared}"
        );
    });
}

#[test]
fn errors_carry_sqlstate_and_leave_the_connection_usable() {
    fiber(|| {
        let mut c = connect();
        c.batch_execute("DROP TABLE IF EXISTS u; CREATE TABLE u(k int8 UNIQUE)")
            .unwrap();
        c.execute("INSERT INTO u VALUES ($1)", &[&1i64]).unwrap();
        let e = c
            .execute("INSERT INTO u VALUES ($1)", &[&1i64])
            .unwrap_err();
        assert_eq!(e.code(), "23505");
        assert_eq!(e.as_db().unwrap().constraint.as_deref(), Some("u_k_key"));
        assert_eq!(c.batch_execute("SELEC 1").unwrap_err().code(), "42601");
        assert_eq!(
            c.query("SELECT * FROM no_such_table", &[])
                .unwrap_err()
                .code(),
            "42P01"
        );
        assert_eq!(c.query("SELECT 1/0", &[]).unwrap_err().code(), "22012");
        assert_eq!(c.tx_status(), TxStatus::Idle);
        assert_eq!(
            c.query_one("SELECT 2::int8", &[])
                .unwrap()
                .get::<i64>(0)
                .unwrap(),
            2
        );
    });
}

#[test]
fn transactions_and_savepoints() {
    fiber(|| {
        let mut c = connect();
        c.batch_execute("DROP TABLE IF EXISTS tx; CREATE TABLE tx(v int8 UNIQUE)")
            .unwrap();
        {
            let mut tx = c.transaction().unwrap();
            tx.execute("INSERT INTO tx VALUES (1)", &[]).unwrap();
            {
                let mut sp = tx.transaction().unwrap();
                sp.execute("INSERT INTO tx VALUES (2)", &[]).unwrap();
                // A failed statement inside the savepoint; rolling it back saves the outer.
                assert!(sp.execute("INSERT INTO tx VALUES (2)", &[]).is_err());
                assert_eq!(sp.tx_status(), TxStatus::Failed);
            }
            assert_eq!(tx.tx_status(), TxStatus::InTransaction);
            tx.execute("INSERT INTO tx VALUES (3)", &[]).unwrap();
            tx.commit().unwrap();
        }
        {
            let tx = c.transaction().unwrap();
            // dropped: rolled back
            let _ = &tx;
        }
        let mut tx = c.transaction().unwrap();
        tx.execute("INSERT INTO tx VALUES (4)", &[]).unwrap();
        tx.rollback().unwrap();
        let vals: Vec<i64> = c
            .query("SELECT v FROM tx ORDER BY v", &[])
            .unwrap()
            .iter()
            .map(|r| r.get(0).unwrap())
            .collect();
        assert_eq!(vals, [1, 3]);
        assert_eq!(c.tx_status(), TxStatus::Idle);
    });
}

#[test]
fn copy_from_stdin_loads_rows_and_reports_bad_input() {
    fiber(|| {
        let mut c = connect();
        c.batch_execute("DROP TABLE IF EXISTS cp; CREATE TABLE cp(id int8, name text)")
            .unwrap();
        let mut data = Vec::new();
        for i in 0..50_000 {
            writeln!(data, "{i}\tname {i}").unwrap();
        }
        let n = c
            .copy_in("COPY cp(id, name) FROM STDIN", &mut data.as_slice())
            .unwrap();
        assert_eq!(n, 50_000);
        let count: i64 = c
            .query_one("SELECT count(*) FROM cp", &[])
            .unwrap()
            .get(0)
            .unwrap();
        assert_eq!(count, 50_000);
        let e = c
            .copy_in(
                "COPY cp(id, name) FROM STDIN",
                &mut &b"1\tok\nnot-a-number\tx\n"[..],
            )
            .unwrap_err();
        assert_eq!(e.code(), "22P02", "{e}");
        assert_eq!(c.tx_status(), TxStatus::Idle);
        let count: i64 = c
            .query_one("SELECT count(*) FROM cp", &[])
            .unwrap()
            .get(0)
            .unwrap();
        assert_eq!(count, 50_000, "a failed COPY loads nothing");
    });
}

#[test]
fn pipeline_runs_many_queries_in_one_round_trip_with_errors_isolated() {
    fiber(|| {
        let mut c = connect();
        let ids: Vec<i64> = (1..=20).collect();
        let mut p = c.pipeline();
        for id in &ids {
            p.query(
                "SELECT $1::int8 * 2",
                std::slice::from_ref(id)
                    .iter()
                    .map(|v| v as _)
                    .collect::<Vec<_>>()
                    .leak(),
            );
        }
        p.query("SELECT 1/0", &[]);
        p.query("SELECT 'after'::text", &[]);
        let results = p.run().unwrap();
        assert_eq!(results.len(), 22);
        for (i, r) in results[..20].iter().enumerate() {
            let rows = r.as_ref().unwrap();
            assert_eq!(rows[0].get::<i64>(0).unwrap(), 2 * (i as i64 + 1));
        }
        assert_eq!(results[20].as_ref().unwrap_err().code(), "22012");
        assert_eq!(
            results[21].as_ref().unwrap()[0].get::<String>(0).unwrap(),
            "after"
        );
        // Cached now: the second run is one round trip.
        let mut p = c.pipeline();
        p.query("SELECT 'after'::text", &[]);
        assert_eq!(p.run().unwrap().len(), 1);
    });
}

#[test]
fn timeout_cancels_the_statement_on_the_server() {
    fiber(|| {
        let mut c = connect();
        let pid = c.backend_pid();
        c.set_query_timeout(Some(Duration::from_millis(300)));
        let t = Instant::now();
        let e = c.query("SELECT pg_sleep(30)", &[]).unwrap_err();
        assert!(matches!(e, Error::Timeout(_)), "{e}");
        assert_eq!(e.code(), "57014");
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        c.set_query_timeout(None);
        // The same connection works, and the server is no longer running the sleep.
        let mut other = connect();
        let active: i64 = other
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND query LIKE '%pg_sleep(30)%' AND state = 'active'",
                &[&pid],
            )
            .unwrap()
            .get(0)
            .unwrap();
        assert_eq!(active, 0);
        assert_eq!(
            c.query_one("SELECT 5::int8", &[])
                .unwrap()
                .get::<i64>(0)
                .unwrap(),
            5
        );
        // Server-side statement_timeout: the SQLSTATE is the server's.
        c.batch_execute("SET statement_timeout = 100").unwrap();
        let e = c.query("SELECT pg_sleep(5)", &[]).unwrap_err();
        assert_eq!(e.code(), "57014");
        assert!(matches!(e, Error::Db(_)));
    });
}

#[test]
fn oversized_statements_are_refused_without_breaking_the_connection() {
    fiber(|| {
        let mut c = connect();
        // More parameters than the protocol can carry (65535).
        let sql: String = format!(
            "SELECT 1 WHERE 1 IN ({})",
            (1..=70_000)
                .map(|i| format!("${i}"))
                .collect::<Vec<_>>()
                .join(",")
        );
        let e = c.query(&sql, &[]).unwrap_err();
        assert!(!c.is_broken(), "{e}");
        // An expression nested deeper than the server allows.
        let deep = format!("SELECT {}1{}", "(".repeat(100_000), ")".repeat(100_000));
        let e = c.batch_execute(&deep).unwrap_err();
        // "stack depth limit exceeded" (54001) or the parser's "memory exhausted" (42601).
        assert!(matches!(e.code(), "54001" | "42601"), "{e}");
        assert_eq!(
            c.query_one("SELECT 1::int8", &[])
                .unwrap()
                .get::<i64>(0)
                .unwrap(),
            1
        );
    });
}
