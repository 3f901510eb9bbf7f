//! Panics of in-process properties, caught with the place they happened.
//!
//! A panicking property is a failing one, and a failure's signature must name the failure,
//! not the input: the shrinker keeps only candidates that fail with the same signature
//! (SPEC §4). A panic's message usually shows the input (`assert_eq!`'s `left: 3`, an index
//! out of bounds with its index), so [`catch`] names a panic by where it happened,
//! `panicked at src/props.rs:40:9` ([`Caught::signature`]), and keeps the message for people
//! ([`Caught::message`]).
//!
//! The place is read by a panic hook that the first [`catch`] installs in front of the
//! process's hook. That hook still runs for every panic, except on a thread inside a quiet
//! catch (a shrinker may provoke thousands of panics). Without a place the signature is the
//! bare word `panicked`, the same for every input: so it is for a panic of another thread
//! that a library raises again on the catching thread with `resume_unwind` (a thread pool's:
//! the hook saw it on that other thread), and for every panic once a program replaces the
//! panic hook after the first catch. A place is taken only for the panic it belongs to: the
//! hook keeps the message with the place, and a caught panic whose message differs (one
//! raised again after the check handled another itself, with `catch_unwind`) gets none.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// Whether this thread is inside a [`catch`].
    static WATCHING: Cell<bool> = const { Cell::new(false) };
    /// Whether this thread is inside a quiet [`catch`].
    static QUIET: Cell<bool> = const { Cell::new(false) };
    /// Where the last watched panic of this thread happened, and its message (when it is
    /// text), to tell it from a panic raised again without the hook.
    static SITE: RefCell<Option<(Option<String>, Option<String>)>> = const { RefCell::new(None) };
}

/// A caught panic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caught {
    /// `FILE:LINE:COLUMN` of the panic, when the hook saw it.
    pub site: Option<String>,
    /// The panic's message (`&str` and `String` payloads), else a word saying there was none.
    pub message: String,
}

impl Caught {
    /// The failure signature: `panicked at FILE:LINE:COLUMN`, or `panicked` without a place.
    pub fn signature(&self) -> String {
        match &self.site {
            Some(site) => format!("panicked at {site}"),
            None => "panicked".to_owned(),
        }
    }

    /// For people: where, and what it said (`panicked at src/p.rs:3:5: assertion failed`).
    pub fn describe(&self) -> String {
        format!("{}: {}", self.signature(), self.message)
    }
}

fn install() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if WATCHING.with(Cell::get) {
                let site = info
                    .location()
                    .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
                let message = info.payload_as_str().map(str::to_owned);
                SITE.with(|s| *s.borrow_mut() = Some((site, message)));
            }
            if !QUIET.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

/// Runs `f`, catching a panic with its place; `quiet` keeps the process's panic hook from
/// printing panics of this thread while `f` runs.
pub fn catch<R>(quiet: bool, f: impl FnOnce() -> R) -> Result<R, Caught> {
    install();
    SITE.with(|s| s.borrow_mut().take());
    let was_watching = WATCHING.with(|w| w.replace(true));
    let was_quiet = QUIET.with(|q| q.replace(quiet));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|q| q.set(was_quiet));
    WATCHING.with(|w| w.set(was_watching));
    let seen = SITE.with(|s| s.borrow_mut().take());
    result.map_err(|payload| {
        let text = text(payload.as_ref());
        Caught {
            // The hook's place, if it saw this panic: the last it saw here said the same.
            site: seen
                .filter(|(_, seen)| seen.as_deref() == text)
                .and_then(|(site, _)| site),
            message: text.map_or_else(
                || "a panic with a non-string payload".to_owned(),
                str::to_owned,
            ),
        }
    })
}

/// The text of a panic payload (`panic!("...")` gives a `&str` or a `String`).
fn text(payload: &(dyn Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_named_by_its_place_and_keeps_its_message() {
        let line = line!() + 1;
        let caught = catch(true, || -> u8 { panic!("input {}", 7) }).unwrap_err();
        let site = format!("{}:{line}:", file!());
        assert!(
            caught
                .signature()
                .starts_with(&format!("panicked at {site}")),
            "{caught:?}"
        );
        assert_eq!(caught.message, "input 7");
        assert_eq!(
            caught.describe(),
            format!("{}: input 7", caught.signature())
        );
        assert_eq!(catch(true, || 5), Ok(5));
    }

    #[test]
    fn a_panic_raised_again_from_another_thread_has_no_place_but_its_message() {
        let caught = catch(true, || {
            let Err(payload) = std::thread::spawn(|| panic!("in a worker {}", 3)).join();
            panic::resume_unwind(payload)
        })
        .unwrap_err();
        assert_eq!(caught.message, "in a worker 3");
        assert_eq!(caught.signature(), "panicked");
    }

    #[test]
    fn a_panic_handled_inside_leaves_no_place_behind() {
        // The check catches a panic of its own and returns: no failure.
        let inner = catch(true, || panic::catch_unwind(|| panic!("handled")).is_err());
        assert_eq!(inner, Ok(true));
        // A later panic that passes no hook here is not named by that old place.
        let caught = catch(true, || panic::resume_unwind(Box::new("bare"))).unwrap_err();
        assert_eq!(caught.site, None);
        assert_eq!(caught.message, "bare");
    }

    #[test]
    fn a_panic_raised_again_after_a_handled_one_is_not_named_by_it() {
        // One catch: the check handles a panic of its own, then raises one from a worker
        // thread again, which no hook here saw.
        let caught = catch(true, || {
            let _ = panic::catch_unwind(|| panic!("handled"));
            let Err(payload) = std::thread::spawn(|| panic!("in a worker")).join();
            panic::resume_unwind(payload)
        })
        .unwrap_err();
        assert_eq!(caught.message, "in a worker");
        assert_eq!(caught.site, None, "{caught:?}");
        // A non-string payload is told from a handled one's too.
        let caught = catch(true, || {
            let _ = panic::catch_unwind(|| panic!("handled"));
            panic::resume_unwind(Box::new(7_u8))
        })
        .unwrap_err();
        assert_eq!(caught.site, None, "{caught:?}");
        assert_eq!(caught.message, "a panic with a non-string payload");
    }

    #[test]
    fn a_panic_handled_inside_a_failing_check_does_not_name_it() {
        // The last panic the hook saw on this thread names the failure: the one that ended it.
        let line = line!() + 3;
        let caught = catch(true, || {
            let _ = panic::catch_unwind(|| panic!("handled"));
            panic!("the failure")
        })
        .unwrap_err();
        assert_eq!(caught.message, "the failure");
        assert!(
            caught
                .signature()
                .starts_with(&format!("panicked at {}:{line}:", file!())),
            "{caught:?}"
        );
    }
}
