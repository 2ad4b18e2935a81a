//! The producer/consumer pipe of the batch paths that read Python objects:
//! the calling thread reads chunks under the GIL and [`Pipe::put`]s them,
//! one pool thread ([`Pipe::work`]) scores them without it, numbers only,
//! and hands each emptied buffer back ([`Pipe::spare`]) for the next chunk.
//! Used by the Scorer's batch (`scorer::batch`) and the pytrec_eval
//! drop-in's dict path (`dictpath::walk`).
//!
//! Invariants:
//! * one worker, first in first out: the chunks are scored in the order they
//!   were put, so a worker that appends its values keeps the input's order;
//! * the reader may take back a chunk the worker has not taken yet
//!   ([`Pipe::take`]) and score it itself (the Scorer does, when the worker
//!   is preempted on a busy machine; the dict path does not, its values being
//!   appended in order by the worker);
//! * [`Pipe::wait`] returns once the worker has ended, also when it ended by
//!   a panic (the scope then raises it), so a reader never waits forever;
//! * what a job holds and who may read it while the worker runs (borrowed
//!   pointers into Python objects, slices of the output) is the caller's
//!   contract, stated where the job type is defined.
//!
//! What stays with each caller: the scope the worker is spawned in (the
//! default pool, or a sized one), whether the GIL is held while waiting (the
//! dict path keeps it: its chunks borrow the run's keys), the error policy
//! (the Scorer keeps the first row's error, the dict path gives up at the
//! first), and the chunk sizes.
//!
//! Rejected alternatives: a channel for the emptied buffers beside the
//! queue's lock: a second lock (the receiver shared by two threads) for
//! nothing the queue's lock cannot do; a worker per core: the reading, which
//! holds the GIL, is the longer half, and one worker keeps the order free.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};

/// A lock, whatever a panicking holder left (the data stays consistent:
/// each holder only pushes, pops or sets a flag).
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Jobs `J` queued for one worker, and the buffers `B` it hands back.
pub(super) struct Pipe<J, B> {
    state: Mutex<State<J, B>>,
    /// A job queued, or the queue closed.
    ready: Condvar,
    /// The worker has ended.
    ended: Condvar,
}

struct State<J, B> {
    jobs: VecDeque<J>,
    /// Buffers the worker is done with, for reuse.
    spare: Vec<B>,
    /// No job will come: the worker ends once the queue is empty.
    closed: bool,
    /// The worker has ended.
    done: bool,
}

impl<J, B> Default for Pipe<J, B> {
    fn default() -> Self {
        Pipe {
            state: Mutex::new(State {
                jobs: VecDeque::new(),
                spare: Vec::new(),
                closed: false,
                done: false,
            }),
            ready: Condvar::new(),
            ended: Condvar::new(),
        }
    }
}

/// Marks the worker ended when dropped, a panic included.
struct Ended<'a, J, B>(&'a Pipe<J, B>);

impl<J, B> Drop for Ended<'_, J, B> {
    fn drop(&mut self) {
        lock(&self.0.state).done = true;
        self.0.ended.notify_all();
    }
}

impl<J, B> Pipe<J, B> {
    /// Queue `job` for the worker.
    pub(super) fn put(&self, job: J) {
        lock(&self.state).jobs.push_back(job);
        self.ready.notify_one();
    }

    /// The oldest job the worker has not taken, to be done by the caller.
    pub(super) fn take(&self) -> Option<J> {
        lock(&self.state).jobs.pop_front()
    }

    /// A buffer the worker is done with, if any.
    pub(super) fn spare(&self) -> Option<B> {
        lock(&self.state).spare.pop()
    }

    /// No more jobs: the worker ends when the queue is empty.
    pub(super) fn close(&self) {
        lock(&self.state).closed = true;
        self.ready.notify_all();
    }

    /// Wait for the worker to end (after [`Pipe::close`]).
    pub(super) fn wait(&self) {
        let mut s = lock(&self.state);
        while !s.done {
            s = self.ended.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// The worker: `f` on each job in turn, its buffer kept for reuse, until
    /// the queue is closed and empty.
    pub(super) fn work(&self, mut f: impl FnMut(J) -> B) {
        let _ended = Ended(self);
        loop {
            let job = {
                let mut s = lock(&self.state);
                loop {
                    if let Some(job) = s.jobs.pop_front() {
                        break Some(job);
                    }
                    if s.closed {
                        break None;
                    }
                    s = self.ready.wait(s).unwrap_or_else(|e| e.into_inner());
                }
            };
            let Some(job) = job else { return };
            let buffer = f(job);
            lock(&self.state).spare.push(buffer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_are_done_in_order_and_buffers_come_back() {
        let pipe: Pipe<u32, Vec<u32>> = Pipe::default();
        let done = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            s.spawn(|| {
                pipe.work(|j| {
                    lock(&done).push(j);
                    vec![j]
                })
            });
            for j in 0..100 {
                pipe.put(j);
            }
            pipe.close();
            pipe.wait();
        });
        assert_eq!(*lock(&done), (0..100).collect::<Vec<_>>());
        let mut spare = Vec::new();
        while let Some(b) = pipe.spare() {
            spare.extend(b);
        }
        spare.sort_unstable();
        assert_eq!(spare, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn a_job_taken_back_is_not_done_by_the_worker() {
        let pipe: Pipe<u32, u32> = Pipe::default();
        pipe.put(1);
        pipe.put(2);
        assert_eq!(pipe.take(), Some(1));
        pipe.close();
        pipe.work(|j| j * 10);
        pipe.wait();
        assert_eq!(pipe.spare(), Some(20));
        assert_eq!(pipe.spare(), None);
    }

    #[test]
    fn a_panicking_worker_still_ends() {
        let pipe: Pipe<u32, u32> = Pipe::default();
        pipe.put(1);
        pipe.close();
        let panicked = std::thread::scope(|s| {
            let worker = s.spawn(|| pipe.work(|_| panic!("worker")));
            pipe.wait();
            worker.join().is_err()
        });
        assert!(panicked);
    }
}
