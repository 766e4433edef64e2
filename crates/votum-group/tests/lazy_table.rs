#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! The generator's fixed-base table is built lazily, behind a lock, the first time it is used.
//! When that first use happens inside many rayon tasks at once, the build must not deadlock
//! (a worker waiting for the build used to steal a task that waited on the same lock).
//! This file is its own process, so the RFC 3526 group's table is not built yet.

use std::sync::mpsc;
use std::time::Duration;

use rayon::prelude::*;
use votum_group::{Group, ModpGroup};

#[test]
fn first_use_of_the_generator_table_from_a_thread_and_rayon_tasks_at_once_completes() {
    // one plain thread starts the build; rayon workers meanwhile wait on the same lock. The
    // build must not need those workers.
    let (done, finished) = mpsc::channel();
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
    let b = barrier.clone();
    let tx = done.clone();
    std::thread::spawn(move || {
        let g = ModpGroup::eg_4096();
        b.wait();
        let p = g.pow_generator(&g.scalar_from_u64(1));
        tx.send(vec![p]).unwrap();
    });
    std::thread::spawn(move || {
        let g = ModpGroup::eg_4096();
        barrier.wait();
        std::thread::sleep(Duration::from_micros(200));
        let powers: Vec<_> = (1..=16u64)
            .into_par_iter()
            .map(|i| g.pow_generator(&g.scalar_from_u64(i)))
            .collect();
        done.send(powers).unwrap();
    });
    // bounded: a deadlock shows as a failure here, not a hung test run
    let mut results = Vec::new();
    for _ in 0..2 {
        results.push(
            finished
                .recv_timeout(Duration::from_secs(120))
                .expect("the lazily built table deadlocked"),
        );
    }
    results.sort_by_key(Vec::len);
    let g = ModpGroup::eg_4096();
    assert_eq!(results[0], vec![g.generator().clone()]);
    let mut x = g.identity();
    for p in &results[1] {
        x = g.op(&x, g.generator());
        assert_eq!(*p, x);
    }
}
