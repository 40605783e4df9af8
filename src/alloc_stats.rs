//! Heap accounting for the benchmark (`cargo build --release --features alloc-stats`).
//!
//! A [`GlobalAlloc`] that forwards to [`System`] and counts, with relaxed atomics, the
//! bytes currently live, the peak of that and the total ever allocated. [`report`] prints
//! them to stderr as one line, `pisces-alloc: peak=<bytes> total=<bytes>`, which
//! `bench/run.py` reads (`total` counts every allocation plus every growth by realloc).
//! The memory-mapped session file is not heap and is not counted.
//!
//! This module is only compiled with the `alloc-stats` feature, so a normal build has
//! the plain system allocator and no counters at all.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The counting allocator; install it with `#[global_allocator]`.
pub struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static TOTAL: AtomicUsize = AtomicUsize::new(0);

#[inline]
fn grew(by: usize) {
    let now = CURRENT.fetch_add(by, Relaxed) + by;
    PEAK.fetch_max(now, Relaxed);
    TOTAL.fetch_add(by, Relaxed);
}

#[inline]
fn shrank(by: usize) {
    CURRENT.fetch_sub(by, Relaxed);
}

// SAFETY: every call is passed to the system allocator unchanged; only sizes are counted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for this method is passed on to System unchanged.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for this method is passed on to System unchanged.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for this method is passed on to System unchanged.
        unsafe { System.dealloc(ptr, layout) };
        shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract for this method is passed on to System unchanged.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // Counted as the change in size (a moving realloc briefly holds both blocks
            // inside the system allocator; that transient is not counted).
            let old = layout.size();
            if new_size > old {
                grew(new_size - old);
            } else {
                shrank(old - new_size);
            }
        }
        p
    }
}

/// Bytes live now, the peak of that, and the total ever allocated.
pub fn snapshot() -> (usize, usize, usize) {
    (CURRENT.load(Relaxed), PEAK.load(Relaxed), TOTAL.load(Relaxed))
}

/// Prints `pisces-alloc: peak=<bytes> total=<bytes>` to stderr.
pub fn report() {
    let (_, peak, total) = snapshot();
    let _ = writeln!(std::io::stderr().lock(), "pisces-alloc: peak={peak} total={total}");
}
