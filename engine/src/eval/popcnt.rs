//! Population count and the one-time CPU check that picks the hardware-POPCNT evaluation.
//!
//! `popcount` is `#[inline(always)]`: inside `coherent_evaluate_popcnt` (compiled with
//! `target_feature(enable = "popcnt")`) it becomes the POPCNT instruction; in the generic fallback it
//! becomes the software bit-twiddling sequence. Never call it through a non-inlined helper from the
//! evaluation, or the fast path falls back to software and the build-shape gate fails the build.

use std::sync::OnceLock;

/// Number of set bits, as `i32` because evaluation arithmetic is signed.
#[must_use]
#[inline(always)]
pub fn popcount(b: u64) -> i32 {
    b.count_ones() as i32
}

static HAS_POPCNT: OnceLock<bool> = OnceLock::new();

/// True when the running CPU has hardware POPCNT (checked once, then cached).
#[must_use]
#[inline]
pub fn has_hardware_popcnt() -> bool {
    *HAS_POPCNT.get_or_init(detect)
}

#[cfg(target_arch = "x86_64")]
fn detect() -> bool {
    std::arch::is_x86_feature_detected!("popcnt")
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> bool {
    false
}
