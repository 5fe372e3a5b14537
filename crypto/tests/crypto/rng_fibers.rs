//! `rng` from fibers that migrate between the two workers between draws (a yield and an
//! offload round trip between them): every draw succeeds,
//! no two draws are equal, and fibers really did move (otherwise the test proves nothing).

use std::collections::HashSet;
use std::thread::ThreadId;

use moria_crypto::rng;
use moria_runtime::{blocking, spawn, yield_now};

use crate::common::fiber_runtime;

const FIBERS: usize = 64;
const DRAWS: usize = 500;

/// The worker thread the calling fiber runs on right now (not inlined, so the thread-local
/// read cannot be cached across a yield).
#[inline(never)]
fn thread_now() -> ThreadId {
    std::thread::current().id()
}

/// Draws between yields; returns the draws and how often the fiber changed threads.
fn drawer() -> (Vec<[u8; 24]>, usize) {
    let mut draws = Vec::with_capacity(DRAWS);
    let mut moves = 0;
    let mut on = thread_now();
    for i in 0..DRAWS {
        let mut draw = [0u8; 24];
        draw[..8].copy_from_slice(&rng::u64().unwrap().to_ne_bytes());
        yield_now();
        rng::fill(&mut draw[8..8 + (i % 16)]).unwrap();
        let bound = rng::range(0..1000).unwrap();
        assert!(bound < 1000);
        draws.push(draw);
        let now = thread_now();
        moves += usize::from(now != on);
        on = now;
        // Parked until an offload thread finishes: the fiber resumes on whichever worker
        // picks it up.
        blocking(|| ()).unwrap();
    }
    (draws, moves)
}

#[test]
fn draws_from_migrating_fibers_are_all_distinct() {
    fiber_runtime()
        .run(|| {
            let fibers: Vec<_> = (0..FIBERS).map(|_| spawn(drawer)).collect();
            let mut seen = HashSet::new();
            let mut moves = 0;
            for fiber in fibers {
                let (draws, moved) = fiber.join().unwrap();
                moves += moved;
                for draw in draws {
                    assert!(seen.insert(draw), "a draw came out twice");
                }
            }
            assert_eq!(seen.len(), FIBERS * DRAWS);
            assert!(
                moves > 0,
                "no fiber changed threads: the test proved nothing"
            );
        })
        .unwrap();
}
