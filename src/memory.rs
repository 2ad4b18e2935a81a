//! The global allocator: blocks of [`LARGE`] bytes or more are mapped here,
//! 2 MiB-aligned, and a bounded amount of them is kept for reuse once freed
//! (Linux); everything else is the system's `malloc`.
//!
//! Why: the encoded arrays of a large run are hundreds of MB of buffers, and
//! the kernel zeroes every fresh page on its first write.  `malloc` maps
//! blocks that large on their own and unmaps them when freed, so a process
//! that scores large inputs call after call would pay those faults on every
//! call; a kept block is written again without a fault.  2 MiB alignment
//! lets the `MADV_HUGEPAGE` of `core::encode` cover a block whole (a
//! `malloc` block starts anywhere, so its head and tail cannot be huge pages).
//!
//! What is kept: freed large blocks, up to `RANKLENS_KEEP_FREED_MIB` MiB in
//! all (default [`DEFAULT_KEEP_MIB`]; `0` keeps none), in at most [`SLOTS`]
//! blocks, the oldest unmapped first to make room; a block larger than the
//! cap is unmapped at once.  Each kept block is marked `MADV_FREE`: the
//! kernel may take its pages back whenever it needs memory (the block then
//! reads as zeros, as a fresh page), and until then they count in the
//! process's RSS (as `LazyFree` in `/proc/PID/smaps_rollup`).  The default
//! is small because a library should not hold much of its host's memory
//! between calls; a process that scores very large inputs back to back
//! raises it.
//!
//! How: a block to allocate is cut from the smallest kept block large enough
//! (the rest stays kept); a freed block is joined with the kept ones right
//! before and after it; a growing block takes a kept block starting where it
//! ends, else grows in place by `mremap`, else moves by `mremap` (pages and
//! all) to a 2 MiB-aligned place: the start of a kept block large enough, or
//! fresh memory.
//!
//! Invariants: never blocks (the list of kept blocks is taken with a
//! try-lock, and a thread that finds it busy maps or unmaps on its own, so a
//! `fork` while another thread holds it cannot deadlock the child); never
//! allocates (the environment is read by `getenv`); never panics.
//!
//! Rejected:
//! - the system allocator alone: every large call faults its pages in again,
//!   and its large blocks are not 2 MiB-aligned.
//! - mimalloc: a higher peak RSS on the same calls and slower TREC file
//!   loads, for a C dependency (preloaded, its large blocks were 4 KiB pages).
//! - jemalloc with its default decay: too little kept between calls to help.
//! - a cap of gigabytes by default: up to that much of every importing
//!   process's RSS held after its large calls.
//! - a cap stretching to the bytes in use while a call runs: no gain beyond
//!   the noise, for a bound that grows with what the caller holds.
//! - giving kept blocks back after some idle time instead of a byte cap: it
//!   needs a thread or a timer, and an allocator must not start one.

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks of this many bytes or more are mapped here (with an alignment of
/// at most [`HUGE`]); smaller ones are the system's.  Why 4 MiB and not 16:
/// the buffers of 1M judgments are 4-20 MB, and `malloc` gives their pages
/// back too (its heap trimmed, or blocks mapped on their own).
pub const LARGE: usize = 4 << 20;

/// The huge page size, and the alignment and granularity of a large block.
pub const HUGE: usize = 2 << 20;

/// Freed large blocks kept for reuse, MiB, unless `RANKLENS_KEEP_FREED_MIB`
/// says otherwise: enough for the buffers of a few million entries.
pub const DEFAULT_KEEP_MIB: usize = 256;

/// The allocator (see the module note).
pub struct Allocator;

/// Whether a block of `layout` is a large one (mapped here).
#[inline]
fn large(layout: Layout) -> bool {
    cfg!(target_os = "linux") && layout.size() >= LARGE && layout.align() <= HUGE
}

/// `size` rounded up to whole huge pages.
#[inline]
fn rounded(size: usize) -> usize {
    size.div_ceil(HUGE).saturating_mul(HUGE)
}

// SAFETY: small blocks are the system allocator's, with its guarantees;
// large ones are private anonymous mappings of at least their size, aligned
// to 2 MiB (>= their alignment), each handed out once until freed.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if large(layout) {
            POOL.alloc(rounded(layout.size())).0
        } else {
            // SAFETY: as the caller's contract.
            unsafe { System.alloc(layout) }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if large(layout) {
            let (p, fresh) = POOL.alloc(rounded(layout.size()));
            if !p.is_null() && !fresh {
                // SAFETY: `p` holds at least `layout.size()` bytes.
                unsafe { std::ptr::write_bytes(p, 0, layout.size()) };
            }
            p
        } else {
            // SAFETY: as the caller's contract.
            unsafe { System.alloc_zeroed(layout) }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if large(layout) {
            // SAFETY: a block of `POOL` (large), freed by the caller.
            unsafe { POOL.free(ptr, rounded(layout.size())) };
        } else {
            // SAFETY: as the caller's contract.
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let Ok(new) = Layout::from_size_align(new_size, layout.align()) else {
            return std::ptr::null_mut();
        };
        match (large(layout), large(new)) {
            // SAFETY: as the caller's contract.
            (false, false) => unsafe { System.realloc(ptr, layout, new_size) },
            // SAFETY: a block of `POOL` (large), replaced (the caller's).
            (true, true) => unsafe { POOL.resize(ptr, rounded(layout.size()), rounded(new_size)) },
            _ => {
                // Across the threshold: a new block, the bytes copied.
                // SAFETY: `new` is a valid, non-zero layout (the caller's).
                let p = unsafe { self.alloc(new) };
                if !p.is_null() {
                    // SAFETY: both blocks hold the bytes copied; distinct.
                    unsafe {
                        std::ptr::copy_nonoverlapping(ptr, p, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                }
                p
            }
        }
    }
}

/// The allocator's large blocks: mapped here, kept once freed.
static POOL: Pool = Pool::new();

/// Kept blocks at most.
const SLOTS: usize = 32;

/// A kept block: its start and length (`len == 0`: an empty slot), and
/// when it was kept (a counter), so that the oldest goes first.
#[derive(Clone, Copy)]
struct Kept {
    addr: usize,
    len: usize,
    age: u64,
}

/// The kept blocks.
struct List {
    slots: [Kept; SLOTS],
    bytes: usize,
    clock: u64,
}

#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
impl List {
    /// The first `n` bytes of kept block `i` (`n <= its len`) taken out of
    /// the list; their address.
    fn take_front(&mut self, i: usize, n: usize) -> usize {
        let Some(k) = self.slots.get_mut(i) else {
            return 0;
        };
        let addr = k.addr;
        k.addr += n;
        k.len -= n;
        self.bytes -= n;
        addr
    }

    /// Kept block `i` taken out of the list whole (the slot emptied); its
    /// start and length.
    fn take_whole(&mut self, i: usize) -> (usize, usize) {
        let Some(k) = self.slots.get_mut(i) else {
            return (0, 0);
        };
        let (addr, len) = (k.addr, std::mem::take(&mut k.len));
        self.bytes -= len;
        (addr, len)
    }
}

/// Large blocks, mapped 2 MiB-aligned and kept once freed (see the module
/// note); the allocator's one is [`POOL`], tests make their own.
pub struct Pool {
    busy: std::sync::atomic::AtomicBool,
    list: std::cell::UnsafeCell<List>,
    /// The bytes kept at most (`usize::MAX`: not read yet).
    keep: std::sync::atomic::AtomicUsize,
}

// SAFETY: `list` is only touched by the thread that set `busy` ([`Pool::lock`]).
unsafe impl Sync for Pool {}

/// The list of a [`Pool`], held (its `busy` set) while this lives.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
struct Guard<'a>(&'a Pool);

#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
impl Guard<'_> {
    fn list(&mut self) -> &mut List {
        // SAFETY: this thread set `busy` (`Pool::lock`) and holds `&mut self`,
        // so nothing else touches the list.
        unsafe { &mut *self.0.list.get() }
    }
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        self.0
            .busy
            .store(false, std::sync::atomic::Ordering::Release);
    }
}

/// `RANKLENS_KEEP_FREED_MIB`, read by `getenv` (no allocation), if set to a
/// number ([`parse_mib`]).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
#[cfg(unix)]
fn env_mib() -> Option<usize> {
    // SAFETY: a NUL-terminated name; the result, if not null, is a
    // NUL-terminated string, read at once.
    unsafe {
        let v = libc::getenv(c"RANKLENS_KEEP_FREED_MIB".as_ptr());
        if v.is_null() {
            return None;
        }
        parse_mib(std::ffi::CStr::from_ptr(v).to_bytes())
    }
}

#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
#[cfg(not(unix))]
fn env_mib() -> Option<usize> {
    None
}

/// `RANKLENS_KEEP_FREED_MIB`'s value in MiB: decimal digits, blanks around
/// them allowed; `None` for anything else.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub fn parse_mib(s: &[u8]) -> Option<usize> {
    let s = s.trim_ascii();
    if s.is_empty() || s.len() > 9 || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        s.iter()
            .fold(0usize, |a, &d| a * 10 + usize::from(d - b'0')),
    )
}

/// The bytes that may be kept for a `RANKLENS_KEEP_FREED_MIB` of `mib`
/// (`None`: unset or unreadable, the default); never `usize::MAX` (which
/// marks a cap not read yet).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn cap_bytes(mib: Option<usize>) -> usize {
    mib.unwrap_or(DEFAULT_KEEP_MIB)
        .saturating_mul(1 << 20)
        .min(usize::MAX - 1)
}

#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
impl Pool {
    /// An empty pool keeping up to `RANKLENS_KEEP_FREED_MIB` (read at its
    /// first free).
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Pool {
        Pool::keeping(usize::MAX)
    }

    /// An empty pool keeping up to `bytes`.
    pub const fn keeping(bytes: usize) -> Pool {
        Pool {
            busy: std::sync::atomic::AtomicBool::new(false),
            list: std::cell::UnsafeCell::new(List {
                slots: [Kept {
                    addr: 0,
                    len: 0,
                    age: 0,
                }; SLOTS],
                bytes: 0,
                clock: 0,
            }),
            keep: std::sync::atomic::AtomicUsize::new(bytes),
        }
    }

    /// The list, if no other thread holds it.  (A `Guard` made only when
    /// the flag was taken: one made and dropped on a failed try would clear
    /// the flag another thread holds.)
    fn lock(&self) -> Option<Guard<'_>> {
        use std::sync::atomic::Ordering;
        self.busy
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
            .then(|| Guard(self))
    }

    /// The bytes kept now.
    #[cfg(test)]
    pub fn kept(&self) -> usize {
        self.lock().map_or(0, |mut g| g.list().bytes)
    }

    /// The bytes that may be kept: `RANKLENS_KEEP_FREED_MIB` read once (by
    /// `getenv`: no allocation), an unreadable value the default.
    fn cap(&self) -> usize {
        use std::sync::atomic::Ordering;
        let k = self.keep.load(Ordering::Relaxed);
        if k != usize::MAX {
            return k;
        }
        let bytes = cap_bytes(env_mib());
        self.keep.store(bytes, Ordering::Relaxed);
        bytes
    }
}

#[cfg(target_os = "linux")]
impl Pool {
    /// A block of `len` bytes (a multiple of `HUGE`): cut from the smallest
    /// kept block that holds it, else fresh; and whether it is fresh
    /// (zeroed).  Null when the system has no memory.
    pub fn alloc(&self, len: usize) -> (*mut u8, bool) {
        if let Some(mut g) = self.lock() {
            let l = g.list();
            let best = l
                .slots
                .iter()
                .enumerate()
                .filter(|(_, k)| k.len >= len && k.len > 0)
                .min_by_key(|(_, k)| k.len)
                .map(|(i, _)| i);
            if let Some(i) = best {
                return (l.take_front(i, len) as *mut u8, false);
            }
        }
        (map(len), true)
    }

    /// Keep the block `ptr..ptr + len` (`len` a multiple of `HUGE`), or
    /// unmap it when it is larger than all that may be kept or the list is
    /// busy; the oldest kept blocks are unmapped to make room.
    ///
    /// # Safety
    /// `ptr..ptr + len` is (part of) a block of this pool that nothing uses
    /// any more.
    pub unsafe fn free(&self, ptr: *mut u8, len: usize) {
        let addr = ptr as usize;
        let cap = self.cap();
        if len == 0 {
            return;
        }
        if len > cap {
            unmap(addr, len);
            return;
        }
        let Some(mut g) = self.lock() else {
            unmap(addr, len);
            return;
        };
        // SAFETY: whole pages of our own mapping; the kernel may drop them
        // (they then read as zeros), which no later use relies on either way.
        unsafe { libc::madvise(ptr as *mut libc::c_void, len, libc::MADV_FREE) };
        let l = g.list();
        // Joined with the kept blocks right before and after it, so that
        // blocks cut from one are whole again for the next, larger, request.
        let (mut addr, mut len) = (addr, len);
        for i in 0..SLOTS {
            let Some(&k) = l.slots.get(i).filter(|k| k.len > 0) else {
                continue;
            };
            if k.addr + k.len == addr {
                addr = k.addr;
            } else if k.addr != addr + len {
                continue;
            }
            len += l.take_whole(i).1;
        }
        loop {
            let empty = l.slots.iter().position(|k| k.len == 0);
            if l.bytes + len <= cap {
                if let Some(k) = empty.and_then(|i| l.slots.get_mut(i)) {
                    l.clock += 1;
                    *k = Kept {
                        addr,
                        len,
                        age: l.clock,
                    };
                    l.bytes += len;
                    return;
                }
            }
            // The oldest kept block goes.
            let oldest = l
                .slots
                .iter()
                .enumerate()
                .filter(|(_, k)| k.len > 0)
                .min_by_key(|(_, k)| k.age)
                .map(|(i, _)| i);
            let Some(i) = oldest else {
                unmap(addr, len);
                return;
            };
            let (a, n) = l.take_whole(i);
            unmap(a, n);
        }
    }

    /// The block `ptr` of `old` bytes resized to `new` (both multiples of
    /// `HUGE`), its first `old.min(new)` bytes kept; null (the old block
    /// untouched) when the system has no memory.
    ///
    /// # Safety
    /// `ptr` is a block of this pool of `old` bytes; unless null is
    /// returned, it is no longer used (the returned block replaces it).
    pub unsafe fn resize(&self, ptr: *mut u8, old: usize, new: usize) -> *mut u8 {
        let addr = ptr as usize;
        if new == old {
            return ptr;
        }
        if new < old {
            // SAFETY: the tail past `new`, no longer used (the caller's).
            unsafe { self.free((addr + new) as *mut u8, old - new) };
            return ptr;
        }
        let more = new - old;
        // Room kept right after the block: taken in place.
        if let Some(mut g) = self.lock() {
            let l = g.list();
            if let Some(i) = l
                .slots
                .iter()
                .position(|k| k.len >= more && k.addr == addr + old)
            {
                l.take_front(i, more);
                return ptr;
            }
        }
        // SAFETY: growing our own mapping where the next pages are free
        // (flags 0: never moves; fails when they are not, or when the block
        // spans several mappings).
        let p = unsafe { libc::mremap(ptr as *mut libc::c_void, old, new, 0) };
        if p != libc::MAP_FAILED {
            return ptr;
        }
        // Moved, pages and all, to the start of a kept block that holds it
        // (its first `old` bytes given up for the moved ones, the rest kept
        // as they are), else to fresh memory.
        let (dst, _) = self.alloc(new);
        if dst.is_null() {
            return dst;
        }
        // SAFETY: `dst..dst + new` is ours and unused; `MREMAP_FIXED` unmaps
        // `dst..dst + old` and moves the old pages there, unmapping the old
        // range, as a move does; `dst + old..dst + new` stays as it was.
        let p = unsafe {
            libc::mremap(
                ptr as *mut libc::c_void,
                old,
                old,
                libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
                dst as *mut libc::c_void,
            )
        };
        if p == libc::MAP_FAILED {
            // Copied instead (the old block is still whole).
            // SAFETY: both ranges are ours, distinct, `old <= new` bytes.
            // The old block is then no longer used (the caller's contract).
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, dst, old);
                self.free(ptr, old);
            }
        }
        dst
    }
}

/// `len` fresh bytes (a multiple of `HUGE`) at a 2 MiB-aligned address, or
/// null.
#[cfg(target_os = "linux")]
fn map(len: usize) -> *mut u8 {
    let Some(over) = len.checked_add(HUGE) else {
        return std::ptr::null_mut();
    };
    // SAFETY: a new private anonymous mapping; its unaligned head and its
    // tail past `len` unmapped again, whole pages of it.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            over,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            return std::ptr::null_mut();
        }
        let start = p as usize;
        let a = start.next_multiple_of(HUGE);
        if a > start {
            libc::munmap(p, a - start);
        }
        if start + over > a + len {
            libc::munmap((a + len) as *mut libc::c_void, start + over - (a + len));
        }
        a as *mut u8
    }
}

/// Unmap a range of our own mappings.
#[cfg(target_os = "linux")]
fn unmap(addr: usize, len: usize) {
    // SAFETY: whole pages of our own mappings that nothing refers to.
    unsafe { libc::munmap(addr as *mut libc::c_void, len) };
}

/// Off Linux no block is large ([`large`]): never reached.
#[cfg(not(target_os = "linux"))]
#[allow(dead_code)]
impl Pool {
    fn alloc(&self, _len: usize) -> (*mut u8, bool) {
        (std::ptr::null_mut(), true)
    }

    unsafe fn free(&self, _ptr: *mut u8, _len: usize) {}

    unsafe fn resize(&self, _ptr: *mut u8, _old: usize, _new: usize) -> *mut u8 {
        std::ptr::null_mut()
    }
}

#[cfg(test)]
mod tests;
