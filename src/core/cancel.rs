//! Stopping a long call from another thread: the flag the Python bindings set
//! on Ctrl-C (the core itself knows nothing of signals or of Python).
//!
//! Long loops call [`Cancel::check`] between units of work of bounded size (a
//! query, a block of resamples, a block of lines read), so a call stops within
//! one such unit of the flag being set, with [`Error::Interrupted`].

use crate::core::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A cancellation flag; the default one is never set.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Option<Arc<AtomicBool>>);

impl Cancel {
    /// A flag that [`Cancel::cancel`] can set (on any clone).
    pub fn new() -> Self {
        Cancel(Some(Arc::new(AtomicBool::new(false))))
    }

    /// Ask the calls that hold this flag (or a clone) to stop.
    pub fn cancel(&self) {
        if let Some(f) = &self.0 {
            f.store(true, Ordering::Relaxed);
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// `Err(Error::Interrupted)` once the flag is set.
    #[inline]
    pub fn check(&self) -> Result<()> {
        if self.is_cancelled() {
            Err(Error::Interrupted)
        } else {
            Ok(())
        }
    }
}

/// Options compare equal whatever their flags: a flag is not a setting.
impl PartialEq for Cancel {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_flag() {
        let c = Cancel::new();
        let d = c.clone();
        assert!(d.check().is_ok());
        c.cancel();
        assert_eq!(d.check(), Err(Error::Interrupted));
        let never = Cancel::default();
        never.cancel();
        assert!(never.check().is_ok());
    }
}
