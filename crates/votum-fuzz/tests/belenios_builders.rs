#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The Belenios target's archives are well formed, so that its seeds reach the decoder each is
//! meant for: every seed's archive passes V-BEL-01, and a stored ballot cast again passes its checks.

use std::path::Path;

#[test]
fn the_belenios_seeds_reach_their_decoders() {
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/belenios_record");
    for name in [
        "ballot",
        "election",
        "trustees",
        "credentials",
        "partial",
        "shuffle",
    ] {
        let data = std::fs::read(seeds.join(name)).unwrap();
        // the same archive the target builds, verified here to look at the report
        let report = std::panic::catch_unwind(|| votum_fuzz::belenios_record(&data));
        assert!(report.is_ok(), "{name}");
    }
    // a stored ballot, cast first in an archive of the setup alone, passes
    let ballot = std::fs::read(seeds.join("ballot")).unwrap();
    let (report, _) = votum_verify::verify_belenios_archive(
        "seed".into(),
        votum_fuzz::belenios_archive(&ballot).as_slice(),
    );
    assert_eq!(
        report.checks[0].status,
        votum_verify::Status::Pass,
        "{:?}",
        report.checks[0]
    );
    assert_eq!(
        report.checks[4].status,
        votum_verify::Status::Pass,
        "{:?}",
        report.checks[4]
    );
    assert_eq!(
        report.checks[5].status,
        votum_verify::Status::Pass,
        "{:?}",
        report.checks[5]
    );
    let election = std::fs::read(seeds.join("election")).unwrap();
    let (report, _) = votum_verify::verify_belenios_archive(
        "seed".into(),
        votum_fuzz::belenios_archive(&election).as_slice(),
    );
    assert!(report.passed(), "{:?}", report.not_passed());
    // the stored mixnet election's first shuffle, posted again by its trustee, passes its proof
    let shuffle = std::fs::read(seeds.join("shuffle")).unwrap();
    let (report, _) = votum_verify::verify_belenios_archive(
        "seed".into(),
        votum_fuzz::belenios_archive(&shuffle).as_slice(),
    );
    let bel10 = report.checks.iter().find(|c| c.id == "V-BEL-10").unwrap();
    assert_eq!(bel10.status, votum_verify::Status::Pass, "{bel10:?}");
    assert_eq!(bel10.checked, 1);
    assert_eq!(report.checks[0].status, votum_verify::Status::Pass);
}
