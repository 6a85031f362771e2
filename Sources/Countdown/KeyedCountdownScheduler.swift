/// A scheduler whose countdowns live in this process's keyed engine and can be kept in a
/// ``CountdownStore`` across launches: every built-in backend.
///
/// A backend of your own conforms to ``CountdownScheduler`` directly.
public protocol KeyedCountdownScheduler: CountdownScheduler {
    /// Restores every countdown `store` keeps, and from then on writes each change of this
    /// scheduler's countdowns to it: call it once, at launch, before starting any. Returns once
    /// the file holds what was restored (the expired countdowns gone from it).
    ///
    /// A running countdown comes back with the time left until its deadline, decided by the
    /// boot clock when the process was relaunched within the same boot, by the wall clock after
    /// a reboot; a paused one comes back paused. A restored countdown runs with no observer
    /// until a screen attaches to it by its key (``CountdownScheduler/attach(key:observer:)``,
    /// or `start` with its key); one whose deadline passed while the process was not running is
    /// reported in ``CountdownRestoration/expired`` and not restored. A key that already has a
    /// countdown keeps it (``CountdownRestoration/kept``).
    ///
    /// From then on every start, cancel, pause, resume and finish is written in the background:
    /// the call returns at once, and the file holds the change within one write (a finish is
    /// delivered only once the file no longer holds its countdown, the delivery queue free
    /// meanwhile). ``CountdownScheduler/enteredBackground()``, ``waitUntilStored()`` and
    /// ``CountdownScheduler/shutdown()`` return once the file holds every change made before
    /// them. `shutdown()` leaves the store as it was, so that the countdowns come back at the
    /// next launch; ``CountdownScheduler/cancel(key:)`` removes one.
    ///
    /// - Throws: ``CountdownStoreError`` when the file cannot be read, is corrupt, truncated or
    ///   from a newer version, when a stored countdown is refused (above the maximum duration,
    ///   beyond the capacity), or when the store or this scheduler is already attached. Then
    ///   nothing is restored, nothing is attached, and the file is left untouched.
    @discardableResult
    func restore(from store: CountdownStore) throws(CountdownStoreError) -> CountdownRestoration

    /// Returns once the store given to ``restore(from:)`` holds every change made before the
    /// call; at once without a store. `enteredBackground()` and `shutdown()` wait the same
    /// way; call it where the process may end without them (a command-line tool about to exit).
    func waitUntilStored()
}
