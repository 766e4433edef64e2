use std::time::Instant;
use votum_group::{Group, ModpGroup};
fn main() {
    let eg = ModpGroup::rfc3526_2048();
    let mut rng = rand_core::OsRng;
    let base = eg.pow_generator(&eg.random_scalar(&mut rng));
    let s = eg.random_scalar(&mut rng);
    let t = Instant::now(); for _ in 0..100 { std::hint::black_box(eg.pow_secret(&base, &s)); } println!("pow_secret {:.3} ms", t.elapsed().as_secs_f64()*10.0);
    let t = Instant::now(); for _ in 0..100 { std::hint::black_box(eg.pow(&base, &s)); } println!("pow {:.3} ms", t.elapsed().as_secs_f64()*10.0);
    let t = Instant::now(); let tab = eg.secret_table(&base); println!("secret_table build {:.3} ms", t.elapsed().as_secs_f64()*1e3);
    let t = Instant::now(); for _ in 0..100 { std::hint::black_box(eg.pow_secret_with(&tab, &s)); } println!("pow_secret_with {:.3} ms", t.elapsed().as_secs_f64()*10.0);
    let ft = eg.table(&base);
    let t = Instant::now(); for _ in 0..100 { std::hint::black_box(eg.pow_table(&ft, &s)); } println!("pow_table {:.3} ms", t.elapsed().as_secs_f64()*10.0);
    let ig = ModpGroup::chvote_identification(2048).unwrap();
    let si = ig.random_scalar(&mut rng);
    ig.warm();
    let t = Instant::now(); for _ in 0..100 { std::hint::black_box(ig.pow_secret(ig.generator(), &si)); } println!("ig pow_secret g {:.3} ms", t.elapsed().as_secs_f64()*10.0);
    let t = Instant::now(); for _ in 0..100 { std::hint::black_box(ig.pow_generator(&si)); } println!("ig pow_generator {:.3} ms", t.elapsed().as_secs_f64()*10.0);
    let t = Instant::now(); for _ in 0..100 { std::hint::black_box(ig.element(base.value()).is_ok()); } println!("ig member {:.3} ms", t.elapsed().as_secs_f64()*10.0);
}
