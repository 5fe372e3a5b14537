//! mORMot 2's `extdb-bench` on moria-orm: 4 insert modes × 4 SQLite engines, 2 read modes,
//! printed as rows/s in mORMot's layout, beside raw rusqlite doing the same work and the
//! fiber-side `Db` for each dispatch (the design comparison of issue 7), and the same work over
//! REST on loopback (moria-http server, one keep-alive client).
//!
//! Every figure is the median of `--runs` runs, each on a fresh database. Rates are
//! `rows * 1e6 / elapsed_µs`, as mORMot's `TPrecisionTimer.PerSec` computes them.

//!
//! | module | what lives there |
//! |---|---|
//! | `sample` | the `Sample` model, mORMot's row values and their checks |
//! | `harness` | `Bench`: options, fresh databases, insert modes and engines |
//! | `report` | rates, medians and the printed tables |
//! | `conn_rows` | the synchronous `Conn` beside raw rusqlite |
//! | `db_rows` | the fiber-side `Db` per dispatch, the dispatch comparison |
//! | `rest_rows` | the same work over REST on loopback |
//! | `shapes` | batch statement shapes in raw rusqlite |
//! | `baseline` | this machine's cross-thread wake-up cost |
//! | `pg` | the PostgreSQL comparison beside tokio-postgres |
//! | `pg_all` | `--pg-all`: the "All" column alone, like for like, rate and client and server CPU per row beside tokio-postgres |

mod baseline;
mod conn_rows;
mod db_rows;
mod harness;
mod pg;
mod pg_all;
mod report;
mod rest_rows;
mod sample;
mod shapes;

use clap::Parser;
use moria_orm::{rusqlite, Dispatch, Mode};
use moria_runtime::Runtime;

use crate::baseline::baseline;
use crate::conn_rows::engine_rows;
use crate::db_rows::{db_rows, dispatch_compare};
use crate::harness::{Args, Bench, ENGINES};
use crate::pg::pg_compare;
use crate::pg_all::pg_all;
use crate::report::print_table;
use crate::rest_rows::rest_rows;
use crate::shapes::shapes;

fn main() {
    let args = Args::parse();
    if args.baseline {
        baseline(&args);
        return;
    }
    if args.shapes {
        shapes(&args);
        return;
    }
    let dir = args.dir.clone().unwrap_or_else(std::env::temp_dir);
    let rt = Runtime::builder()
        .workers(args.workers)
        .build()
        .expect("runtime");
    let (no_db, no_rest, only_dispatch) = (args.no_db, args.no_rest, args.dispatch);
    let engines: Vec<_> = ENGINES
        .into_iter()
        .filter(|(key, ..)| args.engines.is_empty() || args.engines.iter().any(|e| e == key))
        .collect();
    let mut b = Bench {
        args,
        dir,
        serial: 0,
    };
    if only_dispatch {
        dispatch_compare(&mut b, &rt);
        cleanup(&b);
        return;
    }
    if b.args.pg_all {
        pg_all(&mut b, &rt);
        cleanup(&b);
        return;
    }
    if b.args.pg {
        pg_compare(&mut b, &rt);
        cleanup(&b);
        return;
    }
    println!(
        "moria-orm extdb-bench: {} rows ({} for Direct on file full), median of {} runs, SQLite {}",
        b.args.rows,
        b.args.full_direct_rows,
        b.args.runs,
        rusqlite::version()
    );
    let mut ins = Vec::new();
    let mut reads = Vec::new();
    for (_, name, mode) in engines {
        engine_rows(&mut b, name, mode, &mut ins, &mut reads);
        if !no_db {
            let dispatches: &[Dispatch] = if mode == Mode::Memory {
                &[Dispatch::Inline, Dispatch::Thread, Dispatch::Offload]
            } else {
                &[Dispatch::Thread, Dispatch::Offload]
            };
            for &how in dispatches {
                let (i, r) = db_rows(&mut b, &rt, name, mode, how);
                ins.push(i);
                reads.push(r);
            }
        }
        if !no_rest {
            let (i, r) = rest_rows(&mut b, name, mode);
            ins.push(i);
            reads.push(r);
        }
    }
    print_table(
        "Insertion speed (rows/second)",
        &["Direct", "Batch", "Trans", "Batch Trans"],
        &ins,
    );
    print_table("Read speed (rows/second)", &["By one", "All"], &reads);
    cleanup(&b);
}

/// Removes every database file the run made.
fn cleanup(b: &Bench) {
    for n in 1..=b.serial {
        let p = b.dir.join(format!("orm-bench-{n}.db"));
        for ext in ["", "-wal", "-shm", "-journal"] {
            let _ = std::fs::remove_file(format!("{}{ext}", p.display()));
        }
    }
}
