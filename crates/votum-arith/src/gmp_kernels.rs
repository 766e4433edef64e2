//! GMP's kernels on x86-64 CPUs its fat build does not recognise (ADR 0007).
//!
//! The bundled GMP (6.3.0, built `--enable-fat` by gmp-mpfr-sys) picks its assembly kernels at
//! run time from a table of CPUID family/model numbers. A CPU missing from that table, such as the
//! Rocket Lake Xeons (family 6, model 0xA7) some of this project's machines have, gets the plain
//! x86-64 kernels of 2003: `mpn_addmul_1` without `mulx`/`adcx`, and the generic C
//! `mpn_mul_basecase`, `mpn_sqr_basecase` and `mpn_redc_1` on top of it.
//!
//! [`tune`] checks that GMP did exactly that and that the CPU has BMI2, ADX and AVX2, and if so
//! points GMP's dispatch table at the kernels GMP itself uses for Broadwell and later Intel
//! cores (the `coreibwl` and `coreihwl` directories), which need nothing beyond those features.
//! Thresholds are left alone, so no operation in flight can see inconsistent sizes; every
//! pointer swapped in computes exactly what the one it replaces computes.
//!
//! It touches nothing unless every check holds: the GMP version is 6.3, the table's layout is
//! the one of 6.3's `struct cpuvec_t` (three of its slots hold the addresses expected of a
//! generic choice), and `VOTUM_GMP_KERNELS` is not `gmp`. [`kernels`] says which set is in use.

use std::sync::OnceLock;

/// Which of GMP's kernels this process uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernels {
    /// GMP's own choice for this CPU (it recognised it, or the CPU lacks BMI2/ADX/AVX2, or
    /// `VOTUM_GMP_KERNELS=gmp`).
    Gmp,
    /// GMP had fallen back to its generic x86-64 kernels; its Broadwell kernels are installed.
    Broadwell,
}

impl Kernels {
    pub fn describe(self) -> &'static str {
        match self {
            Kernels::Gmp => "GMP's own choice",
            Kernels::Broadwell => "GMP's Broadwell kernels (GMP did not recognise this CPU)",
        }
    }
}

static CHOSEN: OnceLock<Kernels> = OnceLock::new();

/// Installs the better kernels if GMP fell back to its generic ones (once per process; every
/// [`crate::Modulus`] calls it). Returns which set is in use.
pub fn tune() -> Kernels {
    *CHOSEN.get_or_init(|| {
        if std::env::var("VOTUM_GMP_KERNELS").as_deref() == Ok("gmp") {
            return Kernels::Gmp;
        }
        imp::install()
    })
}

/// Which set is in use (after [`tune`]; `Gmp` before it).
pub fn kernels() -> Kernels {
    CHOSEN.get().copied().unwrap_or(Kernels::Gmp)
}

#[cfg(not(target_arch = "x86_64"))]
mod imp {
    pub(super) fn install() -> super::Kernels {
        super::Kernels::Gmp
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod imp {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use gmp_mpfr_sys::gmp;

    use super::Kernels;

    /// `struct cpuvec_t` of GMP 6.3.0 (gmp-impl.h): 37 function pointers, then 5 thresholds.
    const SLOTS: usize = 42;
    // slot indices, in the struct's order
    const ADD_N: usize = 0;
    const ADDMUL_1: usize = 3;
    const ADDMUL_2: usize = 4;
    const MUL_1: usize = 25;
    const MUL_BASECASE: usize = 26;
    const MULLO_BASECASE: usize = 27;
    const REDC_1: usize = 30;
    const SQR_BASECASE: usize = 33;
    const SUB_N: usize = 34;
    const SUBMUL_1: usize = 36;

    extern "C" {
        static mut __gmpn_cpuvec: [usize; SLOTS];
        // what a generic choice leaves in the table
        fn __gmpn_add_n_x86_64();
        fn __gmpn_addmul_1_x86_64();
        fn __gmpn_mul_basecase_fat();
        fn __gmpn_sqr_basecase_fat();
        fn __gmpn_redc_1_fat();
        // GMP's choice for Broadwell and later (CPUVEC_SETUP_coreihwl, then _coreibwl)
        fn __gmpn_add_n_coreihwl();
        fn __gmpn_sub_n_coreihwl();
        fn __gmpn_addmul_2_coreihwl();
        fn __gmpn_redc_1_coreihwl();
        fn __gmpn_submul_1_coreihwl();
        fn __gmpn_addmul_1_coreibwl();
        fn __gmpn_mul_1_coreibwl();
        fn __gmpn_mul_basecase_coreibwl();
        fn __gmpn_mullo_basecase_coreibwl();
        fn __gmpn_sqr_basecase_coreibwl();
    }

    pub(super) fn install() -> Kernels {
        if (gmp::VERSION, gmp::VERSION_MINOR) != (6, 3)
            || !std::arch::is_x86_feature_detected!("bmi2")
            || !std::arch::is_x86_feature_detected!("adx")
            || !std::arch::is_x86_feature_detected!("avx2")
        {
            return Kernels::Gmp;
        }
        // any mpn call makes GMP fill its table
        let mut r = [0 as gmp::limb_t; 1];
        let one = [1 as gmp::limb_t; 1];
        // SAFETY: one-limb operands and result, all valid for the call.
        unsafe { gmp::mpn_add_n(r.as_mut_ptr(), one.as_ptr(), one.as_ptr(), 1) };
        // SAFETY: the table is a static of GMP's, SLOTS words long in 6.3 (checked above); each
        // slot is an aligned word, viewed atomically so concurrent GMP calls read either the old
        // or the new pointer, both valid kernels for the same operation on this CPU.
        let table: &[AtomicUsize; SLOTS] =
            unsafe { &*(std::ptr::addr_of_mut!(__gmpn_cpuvec) as *const [AtomicUsize; SLOTS]) };
        let slot = |i: usize| table[i].load(Ordering::Acquire);
        let generic = slot(ADD_N) == __gmpn_add_n_x86_64 as *const () as usize
            && slot(ADDMUL_1) == __gmpn_addmul_1_x86_64 as *const () as usize
            && slot(MUL_BASECASE) == __gmpn_mul_basecase_fat as *const () as usize
            && slot(SQR_BASECASE) == __gmpn_sqr_basecase_fat as *const () as usize
            && slot(REDC_1) == __gmpn_redc_1_fat as *const () as usize;
        if !generic {
            return Kernels::Gmp;
        }
        let better: [(usize, usize); 10] = [
            (ADD_N, __gmpn_add_n_coreihwl as *const () as usize),
            (SUB_N, __gmpn_sub_n_coreihwl as *const () as usize),
            (ADDMUL_2, __gmpn_addmul_2_coreihwl as *const () as usize),
            (REDC_1, __gmpn_redc_1_coreihwl as *const () as usize),
            (SUBMUL_1, __gmpn_submul_1_coreihwl as *const () as usize),
            (ADDMUL_1, __gmpn_addmul_1_coreibwl as *const () as usize),
            (MUL_1, __gmpn_mul_1_coreibwl as *const () as usize),
            (
                MUL_BASECASE,
                __gmpn_mul_basecase_coreibwl as *const () as usize,
            ),
            (
                MULLO_BASECASE,
                __gmpn_mullo_basecase_coreibwl as *const () as usize,
            ),
            (
                SQR_BASECASE,
                __gmpn_sqr_basecase_coreibwl as *const () as usize,
            ),
        ];
        for (i, f) in better {
            table[i].store(f, Ordering::Release);
        }
        Kernels::Broadwell
    }
}
