//! Wiping integers that held secrets.
//!
//! `rug::Integer` frees its limbs without clearing them; this is the one place in the
//! workspace that reaches into GMP's memory to overwrite them. Temporaries created inside
//! GMP during an operation are not covered (GMP offers no hook for that).

#![allow(unsafe_code)]

use rug::Integer;

/// Overwrites every allocated limb of `x` with zeros and sets it to 0.
pub fn wipe_integer(x: &mut Integer) {
    // SAFETY: `as_raw_mut` gives the live mpz_t; `d` points to `alloc` limbs owned by `x`.
    // We only write zeros inside that allocation, then mark the value as 0 (size = 0),
    // which is a valid mpz state.
    unsafe {
        let raw = x.as_raw_mut();
        let alloc = usize::try_from((*raw).alloc).unwrap_or(0);
        let limbs = (*raw).d.as_ptr();
        for i in 0..alloc {
            std::ptr::write_volatile(limbs.add(i), 0);
        }
        (*raw).size = 0;
    }
    std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wiped_integer_is_zero_and_usable() {
        let mut x = Integer::from(u128::MAX) << 300u32;
        wipe_integer(&mut x);
        assert_eq!(x, 0);
        x += 5;
        assert_eq!(x, 5);
    }
}
