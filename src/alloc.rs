//! The global allocator: mimalloc for every block under 32 MiB, the system's malloc for
//! larger ones.
//!
//! pisces allocates in bursts and frees at exit: the parsed lines of a context, a table
//! per file read, a million responses decoded from the cache. glibc's malloc took a page
//! fault for every 4 KiB of those. In paired runs with mimalloc:
//! - a warm `stats --agent codex` of the benchmark store went from 43,000 page faults to
//!   1,800, at 0.80× the CPU time;
//! - a Codex fork's `path` took 0.87× the time;
//! - Claude Code `leaves` took 0.92×.
//!
//! mimalloc grows a huge block by copying it into a new one, whose pages then fault in one
//! by one. glibc moves the pages instead (`mremap`). On a session that is one 214 MB line,
//! `path` took 0.66 s with mimalloc alone and 0.35 s with glibc, while serde built the
//! line's string by doubling it. So those blocks stay with the system.
//!
//! The `alloc-stats` build counts on top of the system allocator instead (`alloc_stats.rs`).

use std::alloc::{GlobalAlloc, Layout, System};

use mimalloc::MiMalloc;

/// Blocks of this size and up come from the system's malloc.
const HUGE: usize = 32 << 20;

/// mimalloc below [`HUGE`], the system's malloc from it up.
pub struct Alloc;

// SAFETY: each block is allocated, grown and freed by one allocator, chosen by its size:
// Rust passes `dealloc` and `realloc` the layout the block was allocated or last grown
// with, so the size says which allocator holds it. A block whose size crosses `HUGE` is
// moved: allocated by the other, copied, freed by its own.
unsafe impl GlobalAlloc for Alloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for this method is passed on unchanged.
        unsafe {
            match layout.size() >= HUGE {
                true => System.alloc(layout),
                false => MiMalloc.alloc(layout),
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for this method is passed on unchanged.
        unsafe {
            match layout.size() >= HUGE {
                true => System.alloc_zeroed(layout),
                false => MiMalloc.alloc_zeroed(layout),
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the block was allocated by the allocator its size names (see above).
        unsafe {
            match layout.size() >= HUGE {
                true => System.dealloc(ptr, layout),
                false => MiMalloc.dealloc(ptr, layout),
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract is passed on; a block that changes allocators is
        // copied into a new block of the same alignment and freed only once it is copied.
        unsafe {
            match (layout.size() >= HUGE, new_size >= HUGE) {
                (true, true) => System.realloc(ptr, layout, new_size),
                (false, false) => MiMalloc.realloc(ptr, layout, new_size),
                _ => {
                    let new = Layout::from_size_align_unchecked(new_size, layout.align());
                    let moved = self.alloc(new);
                    if !moved.is_null() {
                        std::ptr::copy_nonoverlapping(ptr, moved, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                    moved
                }
            }
        }
    }
}
