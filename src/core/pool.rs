//! The thread pool every parallel step runs on, safe across `fork`.
//!
//! rayon's global pool is made once per process: a child made by `fork`
//! (Python's `multiprocessing` "fork" start method, PyTorch DataLoader
//! workers) inherits it without its threads (`fork` copies only the calling
//! thread), and the first parallel call in the child waits for ever on work
//! no thread takes.  So no parallel step uses the global pool: [`install`]
//! runs on a pool of this module, made again when the process id has changed
//! since it was made (the inherited one is leaked: its threads do not exist
//! in the child, and dropping it would signal them through locks that some
//! parent thread may have held at the fork).
//!
//! Why not `pthread_atfork`: the process id check costs one `getpid` a call
//! and needs no `unsafe` handler that runs in the middle of a `fork`.

use rayon::{ThreadPool, ThreadPoolBuilder};
use std::sync::{Arc, Mutex};

/// The pool of this process: (process id it was made in, pool).
static POOL: Mutex<Option<(u32, Arc<ThreadPool>)>> = Mutex::new(None);

/// `slot`'s value if this process made it.  One made by a parent process
/// (before a `fork`) is leaked and the slot emptied: its threads are not in
/// this one, and dropping it would signal them through locks that some
/// parent thread may have held at the fork.
fn own<T>(slot: &mut Option<(u32, T)>, pid: u32) -> Option<&mut T> {
    if slot.as_ref().is_some_and(|(owner, _)| *owner != pid) {
        if let Some((_, inherited)) = slot.take() {
            std::mem::forget(inherited);
        }
    }
    slot.as_mut().map(|(_, value)| value)
}

/// This process's default pool (rayon's defaults: `RAYON_NUM_THREADS`, else
/// one thread per core), made on first use and again after a `fork`.  The
/// lock is held only to compare the id and clone the handle, never while a
/// pool runs, so a fork from another thread is unlikely to find it held.
fn default_pool() -> Result<Arc<ThreadPool>, String> {
    let pid = std::process::id();
    let mut slot = POOL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(pool) = own(&mut slot, pid) {
        return Ok(Arc::clone(pool));
    }
    let pool = Arc::new(
        ThreadPoolBuilder::new()
            .build()
            .map_err(|e| format!("cannot start the thread pool: {e}"))?,
    );
    *slot = Some((pid, Arc::clone(&pool)));
    Ok(pool)
}

/// Pools of a given number of threads (`threads=`), kept for the next call:
/// (process id they were made in, (threads, pool) most recent first).
static SIZED: Mutex<Option<(u32, Vec<KeptPool>)>> = Mutex::new(None);

/// A kept pool and its number of threads.
type KeptPool = (usize, Arc<ThreadPool>);

/// Sized pools kept at most (the least recently used one is dropped).
const SIZED_KEPT: usize = 4;

/// A pool of `n` threads for this process: the default pool when it exists
/// and has `n` threads (it is not made for this: `threads=1` starts no
/// other thread), else one made on first use and kept (made again after a
/// `fork`, as the default pool).  Why kept: starting and stopping the
/// threads of a pool made for each call costs more than a small call's work,
/// plus the page faults of each new thread's fresh malloc arena.
pub fn sized_pool(n: usize) -> Result<Arc<ThreadPool>, String> {
    let pid = std::process::id();
    {
        let mut slot = POOL.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(pool) = own(&mut slot, pid).filter(|p| p.current_num_threads() == n) {
            return Ok(Arc::clone(pool));
        }
    }
    let mut slot = SIZED.lock().unwrap_or_else(|e| e.into_inner());
    // A parent's pools are dropped from the slot (leaked) first.
    own(&mut slot, pid);
    let (_, pools) = slot.get_or_insert_with(|| (pid, Vec::new()));
    if let Some(at) = pools.iter().position(|(k, _)| *k == n) {
        let hit = pools.remove(at);
        let pool = Arc::clone(&hit.1);
        pools.insert(0, hit);
        return Ok(pool);
    }
    let pool = Arc::new(
        ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .map_err(|e| format!("cannot start {n} threads: {e}"))?,
    );
    pools.insert(0, (n, Arc::clone(&pool)));
    pools.truncate(SIZED_KEPT);
    Ok(pool)
}

/// The default pool's threads.
pub fn threads() -> Result<usize, String> {
    Ok(default_pool()?.current_num_threads())
}

/// Run `op` on this thread, with a scope whose spawned jobs run on the
/// default pool; returns when they are done.  Not from a pool's own thread
/// (a job that thread waits for might be queued behind the wait).
pub fn in_place_scope<'scope, R>(op: impl FnOnce(&rayon::Scope<'scope>) -> R) -> Result<R, String> {
    Ok(default_pool()?.in_place_scope(op))
}

/// Run `f` on the default pool; directly when already on a pool's thread
/// (nested parallel steps stay on the caller's pool).
pub fn install<R: Send>(f: impl FnOnce() -> R + Send) -> Result<R, String> {
    if rayon::current_thread_index().is_some() {
        return Ok(f());
    }
    Ok(default_pool()?.install(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sized_pools_are_kept_and_have_their_threads() {
        for n in [1, 3, 1, 5, 6, 7, 8, 3] {
            let pool = sized_pool(n).unwrap();
            assert_eq!(pool.current_num_threads(), n);
            assert!(Arc::ptr_eq(&pool, &sized_pool(n).unwrap()));
        }
    }

    #[test]
    fn runs_on_a_pool_and_nests() {
        let (outer, inner) = install(|| {
            let outer = rayon::current_thread_index().is_some();
            let inner = install(rayon::current_thread_index).unwrap();
            (outer, inner.is_some())
        })
        .unwrap();
        assert!(outer && inner);
    }

    #[test]
    fn a_new_process_id_gets_a_new_pool() {
        let first = default_pool().unwrap();
        // What a forked child sees: the slot holds another process's pool.
        {
            let mut slot = POOL.lock().unwrap();
            let (_, pool) = slot.take().unwrap();
            *slot = Some((std::process::id().wrapping_add(1), pool));
        }
        let second = default_pool().unwrap();
        assert!(!Arc::ptr_eq(&first, &second));
        assert!(Arc::ptr_eq(&second, &default_pool().unwrap()));
    }
}
