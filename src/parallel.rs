//! Work spread over the cores: scoped threads, each given one part, joined
//! in order. One place for the pattern the store's kernel-bound work
//! (listing folders, stat'ing and writing files) shares, so that each
//! caller says only how to cut its work and what a part does.

/// Threads for work spread over the cores: one a core, at most 4; past
/// that the file system's locks, not the cores, bound the kernel's share
/// of it.
pub(crate) fn worker_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(4)
}

/// Runs `work` on each of `parts` on a thread of its own and gives their
/// results in the parts' order, or the first error in that order. A part
/// that panics fails with `panicked()` (a panic is a bug; the command
/// fails rather than the process).
pub(crate) fn each<P, R, E>(
    parts: impl IntoIterator<Item = P>,
    work: impl Fn(P) -> Result<R, E> + Sync,
    panicked: impl Fn() -> E,
) -> Result<Vec<R>, E>
where
    P: Send,
    R: Send,
    E: Send,
{
    let work = &work;
    std::thread::scope(|scope| {
        let workers: Vec<_> = parts
            .into_iter()
            .map(|part| scope.spawn(move || work(part)))
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|_| Err(panicked())))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_the_parts_order_and_the_first_error_wins() {
        let squares = each(0..8u32, |n| Ok::<_, String>(n * n), || "panicked".into());
        assert_eq!(squares, Ok(vec![0, 1, 4, 9, 16, 25, 36, 49]));
        let failed = each(
            0..8u32,
            |n| if n % 3 == 2 { Err(n) } else { Ok(n) },
            || u32::MAX,
        );
        assert_eq!(failed, Err(2));
    }

    #[test]
    fn a_panicking_part_is_an_error_not_a_crash() {
        let r = each(
            [1, 0],
            |n: u32| if n == 0 { panic!("a bug") } else { Ok(n) },
            || "a part panicked",
        );
        assert_eq!(r, Err("a part panicked"));
    }
}
