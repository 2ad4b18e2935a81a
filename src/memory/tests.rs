use super::*;

/// `n` bytes at `p` hold `f(i)` at byte `i`.
fn filled(p: *const u8, n: usize, f: impl Fn(usize) -> u8) -> bool {
    // SAFETY: the tests' blocks hold `n` bytes at `p`.
    let s = unsafe { std::slice::from_raw_parts(p, n) };
    s.iter().enumerate().all(|(i, &b)| b == f(i))
}

fn fill(p: *mut u8, n: usize, f: impl Fn(usize) -> u8) {
    // SAFETY: the tests' blocks hold `n` bytes at `p`.
    let s = unsafe { std::slice::from_raw_parts_mut(p, n) };
    for (i, b) in s.iter_mut().enumerate() {
        *b = f(i);
    }
}

/// A byte pattern that differs from page to page and within a page.
fn pattern(i: usize) -> u8 {
    (i / 4096 + i * 7) as u8
}

#[test]
fn parse_mib_takes_digits_only() {
    assert_eq!(parse_mib(b"0"), Some(0));
    assert_eq!(parse_mib(b" 512\n"), Some(512));
    assert_eq!(parse_mib(b"2048"), Some(2048));
    assert_eq!(parse_mib(b""), None);
    assert_eq!(parse_mib(b"-1"), None);
    assert_eq!(parse_mib(b"1e3"), None);
    assert_eq!(parse_mib(b"12 34"), None);
    assert_eq!(parse_mib(b"9999999999"), None);
}

#[test]
fn the_cap_is_the_default_unless_set() {
    assert_eq!(cap_bytes(None), DEFAULT_KEEP_MIB << 20);
    assert_eq!(cap_bytes(Some(0)), 0);
    assert_eq!(cap_bytes(Some(1024)), 1 << 30);
    assert_eq!(
        cap_bytes(parse_mib(b"not a number")),
        DEFAULT_KEEP_MIB << 20
    );
    // The default the README documents (and `tests/test_memory_bound.py`).
    assert_eq!(DEFAULT_KEEP_MIB, 256);
}

#[test]
fn a_failed_try_leaves_the_holder_its_lock() {
    let pool = Pool::keeping(0);
    let held = pool.lock();
    assert!(held.is_some());
    assert!(pool.lock().is_none());
    assert!(pool.lock().is_none());
    drop(held);
    assert!(pool.lock().is_some());
}

#[test]
fn rounded_is_whole_huge_pages() {
    assert_eq!(rounded(1), HUGE);
    assert_eq!(rounded(HUGE), HUGE);
    assert_eq!(rounded(HUGE + 1), 2 * HUGE);
    assert_eq!(rounded(LARGE), LARGE);
}

#[cfg(target_os = "linux")]
mod linux {
    use super::*;

    /// `Pool::free` of a block the test no longer uses.
    fn free(pool: &Pool, p: *mut u8, n: usize) {
        // SAFETY: each test frees its own blocks once, after their last use.
        unsafe { pool.free(p, n) }
    }

    /// A fresh block of `len` bytes, freed at once: the pool keeps it whole.
    fn kept_block(pool: &Pool, len: usize) -> *mut u8 {
        let (p, fresh) = pool.alloc(len);
        assert!(!p.is_null() && fresh);
        free(pool, p, len);
        p
    }

    /// `Pool::resize` of a block the test uses only through the result.
    fn resize(pool: &Pool, p: *mut u8, old: usize, new: usize) -> *mut u8 {
        // SAFETY: each test resizes its own block and then uses the result.
        unsafe { pool.resize(p, old, new) }
    }

    const MIB: usize = 1 << 20;

    #[test]
    fn a_freed_block_is_cut_for_the_next_ones() {
        let pool = Pool::keeping(64 * MIB);
        let (a, fresh) = pool.alloc(16 * MIB);
        assert!(!a.is_null() && fresh);
        assert_eq!(a as usize % HUGE, 0);
        fill(a, 16 * MIB, pattern);
        free(&pool, a, 16 * MIB);
        assert_eq!(pool.kept(), 16 * MIB);
        // The smallest kept block that holds it, cut from its start.
        let (b, fresh) = pool.alloc(4 * MIB);
        assert_eq!((b, fresh), (a, false));
        let (c, fresh) = pool.alloc(4 * MIB);
        assert_eq!((c as usize, fresh), (a as usize + 4 * MIB, false));
        assert_eq!(pool.kept(), 8 * MIB);
        // Written and read back, whatever the kernel did with the pages.
        fill(b, 4 * MIB, |i| pattern(i + 1));
        assert!(filled(b, 4 * MIB, |i| pattern(i + 1)));
        // Larger than what is kept: fresh, zeroed.
        let (d, fresh) = pool.alloc(32 * MIB);
        assert!(!d.is_null() && fresh);
        assert!(filled(d, 32 * MIB, |_| 0));
        for (p, n) in [(b, 4 * MIB), (c, 4 * MIB), (d, 32 * MIB)] {
            free(&pool, p, n);
        }
        assert_eq!(pool.kept(), 48 * MIB);
    }

    #[test]
    fn blocks_cut_from_one_are_whole_again_once_freed() {
        let pool = Pool::keeping(64 * MIB);
        let x = kept_block(&pool, 48 * MIB);
        let parts: Vec<*mut u8> = (0..3).map(|_| pool.alloc(16 * MIB).0).collect();
        assert_eq!(parts[2] as usize, x as usize + 32 * MIB);
        assert_eq!(pool.kept(), 0);
        // Freed out of order: the middle one joins neither, then both.
        for i in [0, 2, 1] {
            free(&pool, parts[i], 16 * MIB);
        }
        assert_eq!(pool.kept(), 48 * MIB);
        let (y, fresh) = pool.alloc(48 * MIB);
        assert_eq!((y, fresh), (x, false));
        free(&pool, y, 48 * MIB);
    }

    #[test]
    fn the_oldest_blocks_go_past_the_cap() {
        let pool = Pool::keeping(96 * MIB);
        kept_block(&pool, 96 * MIB);
        let parts: Vec<*mut u8> = (0..6).map(|_| pool.alloc(16 * MIB).0).collect();
        assert_eq!(pool.kept(), 0);
        // Pieces 0, 2 and 4 kept apart (1, 3 and 5 in use between them), by
        // a pool that keeps 40 MiB at most: the first goes for the third.
        let small = Pool::keeping(40 * MIB);
        for i in [0, 2, 4] {
            free(&small, parts[i], 16 * MIB);
        }
        assert_eq!(small.kept(), 32 * MIB);
        let (y, fresh) = small.alloc(16 * MIB);
        assert!(!fresh);
        assert!(y == parts[2] || y == parts[4]);
        free(&small, y, 16 * MIB);
        // Larger than the cap: not kept.
        let (big, _) = small.alloc(64 * MIB);
        free(&small, big, 64 * MIB);
        assert_eq!(small.kept(), 32 * MIB);
        for i in [1, 3, 5] {
            free(&pool, parts[i], 16 * MIB);
        }
    }

    #[test]
    fn keeping_nothing_unmaps() {
        let pool = Pool::keeping(0);
        let (a, _) = pool.alloc(16 * MIB);
        fill(a, 16 * MIB, pattern);
        free(&pool, a, 16 * MIB);
        assert_eq!(pool.kept(), 0);
        let (_, fresh) = pool.alloc(16 * MIB);
        assert!(fresh);
    }

    #[test]
    fn a_block_grows_into_kept_room_after_it_in_place() {
        let pool = Pool::keeping(64 * MIB);
        let a = kept_block(&pool, 32 * MIB);
        let (b, _) = pool.alloc(8 * MIB);
        assert_eq!(b, a);
        fill(b, 8 * MIB, pattern);
        let c = resize(&pool, b, 8 * MIB, 20 * MIB);
        assert_eq!(c, b);
        assert!(filled(c, 8 * MIB, pattern));
        assert_eq!(pool.kept(), 12 * MIB);
        fill(c, 20 * MIB, pattern);
        // Shrunk: the tail kept.
        let d = resize(&pool, c, 20 * MIB, 10 * MIB);
        assert_eq!(d, c);
        assert!(filled(d, 10 * MIB, pattern));
        assert_eq!(pool.kept(), 22 * MIB);
        free(&pool, d, 10 * MIB);
    }

    #[test]
    fn a_block_that_moves_keeps_its_bytes() {
        let pool = Pool::keeping(256 * MIB);
        // `a` with a block in use right after it: no room to grow in place.
        let x = kept_block(&pool, 32 * MIB);
        let (a, _) = pool.alloc(16 * MIB);
        let (wall, _) = pool.alloc(16 * MIB);
        assert_eq!((a, wall as usize), (x, x as usize + 16 * MIB));
        fill(a, 16 * MIB, pattern);
        // Into the start of a kept block that holds it.
        let (room, _) = pool.alloc(64 * MIB);
        fill(room, 64 * MIB, |i| pattern(i + 3));
        free(&pool, room, 64 * MIB);
        let b = resize(&pool, a, 16 * MIB, 24 * MIB);
        assert_eq!(b, room);
        assert!(filled(b, 16 * MIB, pattern));
        // The kept bytes past the moved ones stay as they were (or zero, if
        // the kernel took the pages back).
        // SAFETY: `b` holds 24 MiB.
        let tail = unsafe { std::slice::from_raw_parts(b.add(16 * MIB), 8 * MIB) };
        assert!(tail
            .iter()
            .enumerate()
            .all(|(i, &v)| v == 0 || v == pattern(16 * MIB + i + 3)));
        fill(b, 24 * MIB, pattern);
        // Into fresh memory: no kept block holds 80 MiB, and the kept one
        // right after `b` is too short.
        let c = resize(&pool, b, 24 * MIB, 80 * MIB);
        assert!(!c.is_null() && c != b);
        assert_eq!(c as usize % HUGE, 0);
        assert!(filled(c, 24 * MIB, pattern));
        // SAFETY: `c` holds 80 MiB.
        let fresh = unsafe { c.add(24 * MIB) };
        assert!(filled(fresh, 56 * MIB, |_| 0));
        free(&pool, c, 80 * MIB);
        free(&pool, wall, 16 * MIB);
    }

    #[test]
    fn the_allocator_keeps_bytes_across_the_threshold() {
        let a = Allocator;
        let small = Layout::from_size_align(4096, 8).unwrap_or(Layout::new::<u8>());
        // SAFETY: non-zero layouts; each block used within its size and
        // freed with the layout it has.
        unsafe {
            let p = a.alloc(small);
            assert!(!p.is_null());
            fill(p, 4096, pattern);
            let q = a.realloc(p, small, LARGE + 5);
            assert!(!q.is_null());
            assert_eq!(q as usize % HUGE, 0);
            assert!(filled(q, 4096, pattern));
            fill(q, LARGE + 5, pattern);
            let big = Layout::from_size_align(LARGE + 5, 8).unwrap_or(small);
            let r = a.realloc(q, big, 3 * LARGE);
            assert!(filled(r, LARGE + 5, pattern));
            let big = Layout::from_size_align(3 * LARGE, 8).unwrap_or(small);
            let s = a.realloc(r, big, 100);
            assert!(filled(s, 100, pattern));
            a.dealloc(s, Layout::from_size_align(100, 8).unwrap_or(small));
        }
    }

    #[test]
    fn zeroed_blocks_are_zero_when_reused() {
        let pool = Pool::keeping(64 * MIB);
        let (a, _) = pool.alloc(16 * MIB);
        fill(a, 16 * MIB, |_| 0xab);
        free(&pool, a, 16 * MIB);
        // Through the allocator's own path for zeroed blocks, on this pool.
        let (b, fresh) = pool.alloc(16 * MIB);
        assert_eq!((b, fresh), (a, false));
        // What `alloc_zeroed` does with a block that is not fresh.
        // SAFETY: `b` holds 16 MiB.
        unsafe { std::ptr::write_bytes(b, 0, 16 * MIB) };
        assert!(filled(b, 16 * MIB, |_| 0));
        free(&pool, b, 16 * MIB);
        // And the allocator itself: a zeroed large vector, freed dirty,
        // then zeroed again (the global pool may hand back that block).
        for _ in 0..3 {
            let mut v = vec![0u64; LARGE / 8 + 1];
            assert!(v.iter().all(|&x| x == 0));
            v.iter_mut().for_each(|x| *x = u64::MAX);
        }
    }
}

/// Threads growing, checking and dropping large vectors at once, through
/// the global allocator (its kept blocks, the try-lock's fallbacks, moves):
/// every vector holds what its thread wrote.
#[test]
fn threads_share_the_kept_blocks_safely() {
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            std::thread::spawn(move || {
                let mut ok = true;
                for round in 0..12u64 {
                    let n = (LARGE / 8) * (1 + ((t + round) % 3) as usize) + 7;
                    let tag = (t << 32) | round;
                    let mut v: Vec<u64> = Vec::with_capacity(n / 2);
                    for i in 0..n as u64 {
                        v.push(tag ^ i);
                    }
                    ok &= v.iter().enumerate().all(|(i, &x)| x == tag ^ i as u64);
                    v.truncate(n / 3);
                    v.shrink_to_fit();
                    ok &= v.iter().enumerate().all(|(i, &x)| x == tag ^ i as u64);
                    let z = vec![0u64; n];
                    ok &= z.iter().all(|&x| x == 0);
                }
                ok
            })
        })
        .collect();
    for h in threads {
        assert!(h.join().unwrap_or(false));
    }
}
