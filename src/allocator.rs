//! The kernel's allocator: mimalloc, and when it hands the pages a batch frees back to the
//! system.
//!
//! mimalloc keeps freed pages for the next batch; with the system allocator every batch's
//! columns (several MB each) came back as fresh pages from the kernel, page faults included.
//! By default it still returns them a second after they are freed (its purge delay), so a run
//! of many batches faults them in and zeroes them again and again; a run keeps them
//! ([`set_purge_delay`] with -1) and gives them back when it ends ([`release_freed_pages`]).

use std::os::raw::{c_int, c_long};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc v3's `mi_option_e` (milliseconds; -1: never purge).
/// libmimalloc-sys names no constant for it; a test holds the number to the option's default.
const PURGE_DELAY: c_int = 15;

extern "C" {
    fn mi_option_get(option: c_int) -> c_long;
    fn mi_option_set(option: c_int, value: c_long);
    fn mi_collect(force: bool);
}

/// Set how long freed pages wait before they go back to the system (milliseconds, -1: kept
/// until [`release_freed_pages`]); the setting before.
pub fn set_purge_delay(ms: i64) -> i64 {
    // SAFETY: mimalloc's option calls take any option number it defines, at any time
    unsafe {
        let before = mi_option_get(PURGE_DELAY);
        mi_option_set(PURGE_DELAY, ms as c_long);
        before as i64
    }
}

/// Hand the freed pages back to the system now.
pub fn release_freed_pages() {
    // SAFETY: a collection of this thread's heap and the abandoned pages; no pointer is kept
    unsafe { mi_collect(true) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_number_is_the_purge_delay() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return; // the user's own setting, not the default this test knows it by
        }
        // v3's default purge delay is 1000 ms, and no neighbouring option defaults to 1000
        let before = set_purge_delay(-1);
        assert_eq!(before, 1000);
        assert_eq!(set_purge_delay(before), -1);
        release_freed_pages();
    }
}
