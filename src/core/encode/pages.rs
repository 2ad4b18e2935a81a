//! Advice to the kernel on large fresh buffers (Linux; nothing elsewhere).
//!
//! Writing fresh memory first costs a page fault per page, and the kernel
//! zeroing the page: for the arrays of a large load, a visible share of its
//! time.  Two remedies, both advice that changes no content and that the
//! kernel may ignore: transparent huge pages on each large buffer
//! ([`advise_huge`]: far fewer faults and TLB misses), and faulting in the
//! room reserved for the rows on another core while the rows are read
//! ([`prefault`]).

/// Ask for transparent huge pages on a large buffer not yet written (Linux,
/// where they are on request: `madvise` mode).  Why: with 4 KiB pages,
/// writing the encoded arrays of a large run first costs a page fault every
/// 4 KiB (each dear under memory cgroup accounting) and TLB misses after;
/// with 2 MiB pages the faults are a few hundred.  Buffers under four huge
/// pages are left alone.  The first call of a process may pay for the kernel
/// compacting memory.  Advice only: ignored where huge pages are off, and
/// never needed for correctness.
pub(super) fn advise_huge<T>(v: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let bytes = v.capacity().saturating_mul(std::mem::size_of::<T>());
        if bytes < 4 * HUGE {
            return;
        }
        let start = v.as_ptr() as usize;
        let (a, b) = (
            (start + HUGE - 1) & !(HUGE - 1),
            (start + bytes) & !(HUGE - 1),
        );
        if b > a {
            // SAFETY: advice on whole pages inside this allocation; it changes
            // no content, and a failure (huge pages unavailable) is harmless.
            unsafe {
                libc::madvise(a as *mut libc::c_void, b - a, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

/// Fault in the pages of `ranges` (address, bytes), in steps that advance
/// through all of them at the same pace (the order in which rows fill them),
/// until done or `stop` is set; returns the bytes faulted in.  Why: the first
/// write of each fresh page of the row buffers costs its zeroing by the
/// kernel (`clear_page_erms`), a large share of a dict load under the GIL;
/// done on another core while the rows are read, it leaves the critical path.
/// Linux only (`MADV_POPULATE_WRITE`, 5.14+; elsewhere or on an older kernel,
/// nothing).  The advice changes no content: a range freed meanwhile (a
/// buffer that grew) is at worst faulted in for nothing.
pub fn prefault(ranges: &[(usize, usize)], stop: &std::sync::atomic::AtomicBool) -> usize {
    #[cfg(target_os = "linux")]
    {
        use std::sync::atomic::Ordering;
        const PAGE: usize = 4096;
        const STEP: usize = 2 << 20;
        let total: usize = ranges.iter().map(|r| r.1).sum();
        let steps = total.div_ceil(STEP).max(1);
        let mut done = 0;
        for i in 0..steps {
            for &(start, len) in ranges {
                if stop.load(Ordering::Relaxed) {
                    return done;
                }
                // Whole pages of this range's i-th share.
                let a = (start + len * i / steps).next_multiple_of(PAGE);
                let b = ((start + len * (i + 1) / steps) / PAGE) * PAGE;
                if b <= a {
                    continue;
                }
                // SAFETY: advice on whole pages; `MADV_POPULATE_WRITE` faults
                // them in as a write would, without writing: no content
                // changes, whatever the range holds.  A failure (an old
                // kernel, a range unmapped meanwhile) is harmless: stop.
                let r = unsafe {
                    libc::madvise(a as *mut libc::c_void, b - a, libc::MADV_POPULATE_WRITE)
                };
                if r != 0 {
                    return done;
                }
                done += b - a;
            }
        }
        done
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (ranges, stop);
        0
    }
}
