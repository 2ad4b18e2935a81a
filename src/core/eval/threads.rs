//! Which threads run the loops over queries and rows: a pool of the asked
//! size, the default pool, or the calling thread for a call of one task.
//!
//! Invariant: rayon's global pool is never used (a forked child inherits it
//! without its threads, see [`pool`]): loops run on a pool of [`pool`] or,
//! when they hold one task, in order on the calling thread without rayon.

#[cfg(doc)]
use super::SERIAL_ROWS;
use crate::core::error::{Error, Result};
use crate::core::pool;
use rayon::prelude::*;

/// Run `f` on `threads` threads (`None`: the `RANKLENS_NUM_THREADS`
/// environment variable if set, else the default pool of [`pool`], one thread
/// per core, which a forked child makes again), on a pool kept from call to
/// call ([`pool::sized_pool`]).
pub fn with_threads<R: Send>(threads: Option<usize>, f: impl FnOnce() -> R + Send) -> Result<R> {
    match thread_count(threads)? {
        Some(n) => Ok(pool::sized_pool(n).map_err(Error::InvalidInput)?.install(f)),
        None => pool::install(f).map_err(Error::InvalidInput),
    }
}

/// [`with_threads`], or `f` on the calling thread when `one_task`: work that
/// is one task of the pool's loops, which the pool would run on one of its
/// threads after waking it, while the caller waits.  `threads` is checked
/// either way.  Why: the hand-over (waking the pool's thread, asleep between
/// calls) costs several times the work of a small call.  `f` must
/// then not use rayon: its loops run in order when they hold one task
/// ([`try_for_each_row`], `dense::TASK_ROWS`, [`SERIAL_ROWS`]...), else they
/// would start rayon's global pool, which a forked child inherits without
/// its threads ([`pool`]).
pub fn with_threads_or_inline<R: Send>(
    threads: Option<usize>,
    one_task: bool,
    f: impl FnOnce() -> R + Send,
) -> Result<R> {
    if one_task {
        thread_count(threads)?;
        return Ok(f());
    }
    with_threads(threads, f)
}

/// `f(state, r, out_row)` for each row of `out` (`width` values a row,
/// `state` made by `init` once a task), stopping at an error: in order on
/// the calling thread when `serial` (no rayon, so that a binding may call it
/// through [`with_threads_or_inline`]), else on the pool by tasks of
/// `min_rows` rows at least.  The loops over queries and rows whose small
/// calls run where they are called share it.
pub fn try_for_each_row<S, E, F>(
    out: &mut [f64],
    width: usize,
    serial: bool,
    min_rows: usize,
    init: impl Fn() -> S + Sync + Send,
    f: F,
) -> std::result::Result<(), E>
where
    E: Send,
    F: Fn(&mut S, usize, &mut [f64]) -> std::result::Result<(), E> + Sync + Send,
{
    let width = width.max(1);
    if serial {
        let mut s = init();
        out.chunks_mut(width)
            .enumerate()
            .try_for_each(|(r, o)| f(&mut s, r, o))
    } else {
        out.par_chunks_mut(width)
            .enumerate()
            .with_min_len(min_rows.max(1))
            .try_for_each_init(init, |s, (r, o)| f(s, r, o))
    }
}

/// [`try_for_each_row`] of a loop that cannot fail, in order on the calling
/// thread when `out` holds at most `task_rows` rows (one task).
pub fn for_each_row<S, F>(
    out: &mut [f64],
    width: usize,
    task_rows: usize,
    init: impl Fn() -> S + Sync + Send,
    f: F,
) where
    F: Fn(&mut S, usize, &mut [f64]) + Sync + Send,
{
    let serial = out.len() <= task_rows.saturating_mul(width.max(1));
    let done = try_for_each_row(out, width, serial, 1, init, |s, r, o| {
        f(s, r, o);
        Ok::<(), std::convert::Infallible>(())
    });
    match done {
        Ok(()) => {}
        Err(never) => match never {},
    }
}

/// The number of threads [`with_threads`] runs on: `threads`, else the
/// `RANKLENS_NUM_THREADS` environment variable, else `None` (the default
/// pool); an error for 0 or an unreadable variable.
pub fn thread_count(threads: Option<usize>) -> Result<Option<usize>> {
    let n = match threads {
        Some(n) => Some(n),
        None => match std::env::var("RANKLENS_NUM_THREADS") {
            Ok(v) if !v.trim().is_empty() => Some(v.trim().parse::<usize>().map_err(|_| {
                Error::InvalidInput(format!(
                    "RANKLENS_NUM_THREADS must be a positive integer, got {v:?}"
                ))
            })?),
            _ => None,
        },
    };
    match n {
        Some(0) => Err(Error::InvalidInput("threads must be at least 1".into())),
        n => Ok(n),
    }
}
