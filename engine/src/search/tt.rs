//! Transposition table: buckets of four 16-byte entries, replacement by depth and age.

use crate::chess::types::Move;

/// Score bound stored with an entry.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Bound {
    /// No entry.
    None = 0,
    /// Score is an upper bound (fail low).
    Upper = 1,
    /// Score is a lower bound (fail high).
    Lower = 2,
    /// Exact score (PV node).
    Exact = 3,
}

/// One stored search result.
#[derive(Clone, Copy, Default, Debug)]
#[repr(C)]
pub struct Entry {
    key: u64,
    /// Best (or refutation) move.
    pub mv: Move,
    /// Score, mate scores relative to this node.
    pub score: i16,
    /// Static evaluation.
    pub eval: i16,
    /// Search depth.
    pub depth: u8,
    /// Bound in the low 2 bits, generation in the high 6.
    gen_bound: u8,
}

impl Entry {
    /// The bound of this entry.
    #[must_use]
    pub fn bound(&self) -> Bound {
        match self.gen_bound & 3 {
            1 => Bound::Upper,
            2 => Bound::Lower,
            3 => Bound::Exact,
            _ => Bound::None,
        }
    }
}

const BUCKET: usize = 4;

#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Bucket([Entry; BUCKET]);

/// The table; sized in MiB.
pub struct TranspositionTable {
    buckets: Buckets,
    generation: u8,
}

/// Zeroed buckets in memory aligned to 2 MiB and, on Linux, advised to the kernel as huge-page
/// memory: a probe then seldom misses the processor's address cache (TLB) too, and filling the
/// table takes one page fault per 2 MiB instead of per 4 KiB. Where the kernel gives no huge
/// pages, this is plain memory.
struct Buckets {
    ptr: std::ptr::NonNull<Bucket>,
    len: usize,
}

/// Alignment of the table: one huge page on x86-64 Linux.
const HUGE_PAGE: usize = 2 << 20;

impl Buckets {
    /// `len` zeroed buckets (at least one).
    fn zeroed(len: usize) -> Buckets {
        let len = len.max(1);
        let layout = Self::layout(len);
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { std::alloc::alloc(layout) };
        let Some(ptr) = std::ptr::NonNull::new(raw.cast::<Bucket>()) else {
            std::alloc::handle_alloc_error(layout)
        };
        advise_huge_pages(raw, layout.size());
        // Zeroed only now, after the advice, so that the pages are faulted in large.
        // SAFETY: `raw` holds `len` buckets, and an all-zero bucket is a valid empty bucket.
        unsafe { std::ptr::write_bytes(ptr.as_ptr(), 0, len) };
        Buckets { ptr, len }
    }

    fn layout(len: usize) -> std::alloc::Layout {
        let size = (len * std::mem::size_of::<Bucket>()).next_multiple_of(HUGE_PAGE);
        std::alloc::Layout::from_size_align(size, HUGE_PAGE).expect("table size fits memory")
    }
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(ptr: *mut u8, size: usize) {
    /// `MADV_HUGEPAGE` of Linux's `<sys/mman.h>`.
    const MADV_HUGEPAGE: i32 = 14;
    unsafe extern "C" {
        fn madvise(addr: *mut std::ffi::c_void, length: usize, advice: i32) -> i32;
    }
    // SAFETY: the range is one live allocation; the advice changes no contents, and its
    // failure (no transparent huge pages) leaves ordinary pages.
    let _ = unsafe { madvise(ptr.cast(), size, MADV_HUGEPAGE) };
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_ptr: *mut u8, _size: usize) {}

// SAFETY: `Buckets` owns its memory alone, like the `Vec` it stands for.
unsafe impl Send for Buckets {}
// SAFETY: shared access only reads, as for a `Vec`.
unsafe impl Sync for Buckets {}

impl Drop for Buckets {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr().cast(), Self::layout(self.len)) };
    }
}

impl std::ops::Deref for Buckets {
    type Target = [Bucket];
    fn deref(&self) -> &[Bucket] {
        // SAFETY: `len` initialised buckets live at `ptr` for as long as `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for Buckets {
    fn deref_mut(&mut self) -> &mut [Bucket] {
        // SAFETY: as in `deref`, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl TranspositionTable {
    /// A cleared table of `mb` MiB (at least one bucket).
    #[must_use]
    pub fn new(mb: usize) -> TranspositionTable {
        let n = (mb.max(1) << 20) / std::mem::size_of::<Bucket>();
        TranspositionTable {
            buckets: Buckets::zeroed(n),
            generation: 0,
        }
    }

    /// Forget everything (ucinewgame, Clear Hash, bench).
    pub fn clear(&mut self) {
        self.buckets.iter_mut().for_each(|b| *b = Bucket::default());
        self.generation = 0;
    }

    /// Start a new search: older entries become preferred victims.
    pub fn new_search(&mut self) {
        self.generation = self.generation.wrapping_add(4) & 0xfc;
    }

    #[inline(always)]
    fn index(&self, key: u64) -> usize {
        ((key as u128 * self.buckets.len() as u128) >> 64) as usize
    }

    /// Asks the processor to start loading `key`'s bucket into its cache, so that the probe of
    /// a child made now does not wait for memory (a hint: it changes no result).
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let bucket: *const Bucket = &self.buckets[self.index(key)];
            // SAFETY: SSE is part of every x86-64 CPU, and a prefetch reads nothing the program
            // sees; the address is a live bucket's.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(bucket.cast::<i8>()) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    /// Look up a position.
    #[must_use]
    #[inline]
    pub fn probe(&self, key: u64) -> Option<Entry> {
        self.buckets[self.index(key)]
            .0
            .iter()
            .find(|e| e.key == key && e.gen_bound & 3 != 0)
            .copied()
    }

    /// Store a result, replacing the same key or the shallowest/oldest entry of the bucket.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn store(&mut self, key: u64, mv: Move, score: i32, eval: i32, depth: i32, bound: Bound) {
        let generation = self.generation;
        let idx = self.index(key);
        let bucket = &mut self.buckets[idx].0;
        let mut victim = 0;
        let mut worst = i32::MAX;
        for (i, e) in bucket.iter().enumerate() {
            if e.key == key || e.gen_bound & 3 == 0 {
                victim = i;
                break;
            }
            let age = (generation.wrapping_sub(e.gen_bound & 0xfc) >> 2) as i32;
            let worth = e.depth as i32 - 8 * age;
            if worth < worst {
                worst = worth;
                victim = i;
            }
        }
        let e = &mut bucket[victim];
        // Keep an old move when the new result has none for the same position.
        let mv = if mv == Move::NONE && e.key == key {
            e.mv
        } else {
            mv
        };
        if e.key != key
            || bound == Bound::Exact
            || depth + 3 >= e.depth as i32
            || e.gen_bound & 0xfc != generation
        {
            *e = Entry {
                key,
                mv,
                score: score as i16,
                eval: eval as i16,
                depth: depth.clamp(0, 255) as u8,
                gen_bound: generation | bound as u8,
            };
        }
    }

    /// Permille of sampled entries written in the current search (UCI `hashfull`).
    #[must_use]
    pub fn hashfull(&self) -> usize {
        let sample = self.buckets.len().min(250);
        self.buckets[..sample]
            .iter()
            .flat_map(|b| b.0.iter())
            .filter(|e| e.gen_bound & 3 != 0 && e.gen_bound & 0xfc == self.generation)
            .count()
            * 1000
            / (sample * BUCKET)
    }
}

#[cfg(test)]
mod tests {
    use super::TranspositionTable;

    /// The table starts empty and on a huge-page boundary, whatever its size, and its size is
    /// the buckets asked for, not the rounded-up allocation.
    #[test]
    fn a_new_table_is_empty_and_starts_on_a_huge_page() {
        for mb in [1, 3, 16] {
            let table = TranspositionTable::new(mb);
            assert_eq!(table.buckets.len(), (mb << 20) / 64);
            assert_eq!(table.buckets.as_ptr() as usize % super::HUGE_PAGE, 0);
            assert!(
                table
                    .buckets
                    .iter()
                    .all(|b| b.0.iter().all(|e| e.gen_bound == 0))
            );
            assert!(table.probe(0).is_none());
        }
    }

    /// A long game starts more than 64 searches: the 6-bit generation must wrap, not overflow.
    #[test]
    fn generation_wraps_over_a_long_game() {
        let mut table = TranspositionTable::new(1);
        for _ in 0..200 {
            table.new_search();
        }
        assert_eq!(table.generation, (200u32 * 4 % 256) as u8);
    }
}
