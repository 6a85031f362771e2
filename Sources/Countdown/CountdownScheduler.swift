import Dispatch

/// Runs countdowns identified by keys, and tells each countdown's observer how much time
/// is left: the "Retry in 42 s" button, a sale timer per cell of a list, a rate-limit
/// window per user.
///
/// A countdown belongs to the scheduler, not to the screen that started it: a screen that
/// is created again calls ``start(key:duration:observer:)`` with the same key and is
/// *attached* to the countdown that is still running, with the time that remains.
///
/// Each scheduler has a *tick interval* `T` (fixed when it is made) and a serial
/// *delivery queue* (the main queue, in an app) on which every observer is called.
///
/// A *key* is any non-empty `String`: every Unicode scalar (an embedded NUL too) and any
/// length. Keys are compared as Swift compares strings, by canonical equivalence, so "é"
/// precomposed and "e" followed by a combining acute accent are one key; keys that are not
/// canonically equivalent are different keys, however alike (letter case, surrounding spaces,
/// a long shared prefix, emoji modifiers and variation selectors, compatibility forms as "ﬁ"
/// and "fi").
///
/// ## Implementation requirements
///
/// A conforming type must do all of the following; `CountdownConformance` checks each one.
///
/// 1. **Start.** `start(key:duration:observer:)` with no countdown under `key` starts one and
///    returns ``CountdownStart/started``; the observer receives a first tick carrying the full
///    duration at once (one hop to the delivery queue).
/// 2. **Attach.** With a countdown already under `key`, `start` neither restarts nor extends
///    it. The new observer replaces the old one (which hears nothing more), receives one tick
///    with the current remaining time at once, and `start` returns
///    ``CountdownStart/attached(remaining:)``.
///    ``attach(key:observer:)`` does the same, but only attaches: with no countdown under the
///    key it returns nil and changes nothing (a screen created again must not start one).
/// 3. **Refuse bad input, change nothing.** `start` throws a ``CountdownError`` and leaves
///    every countdown as it was for: an empty key, a duration that is not positive or above
///    ``profile``'s `maximumDuration`, more concurrent countdowns than its declared
///    `capacity`, or a scheduler that was shut down. Exactly the maximum duration is accepted,
///    and so is any positive duration below it, however short. A tick interval that is not
///    positive, or below the backend's minimum, is refused when the scheduler is made.
///    Nothing is ever dropped silently: every accepted start is heard from.
/// 4. **Ticks.** While time remains, a tick at about start + k·T (k = 1, 2, …), never
///    before it. Remaining values never increase, and a tick never carries zero or less.
/// 5. **Finish exactly once, never early.** One ``CountdownEvent/Kind/finished`` event, with
///    remaining zero, never before the deadline (start + duration + time spent paused) as
///    measured by the backend's own notion of time, and nothing after it. When the finish is
///    delivered the key is already free: from inside that callback on, ``remaining(key:)`` is
///    nil, ``activeKeys`` and ``activeCount`` no longer count it, and `start` with it begins a
///    new countdown.
/// 6. **Cancel.** `cancel(key:)` returns whether a countdown was running. No callback for it
///    *begins* after `cancel` returns: not a late tick, not a finish. (A callback that had
///    already begun on the delivery queue when another thread cancelled may still run to its
///    end; called on the delivery queue itself, `cancel` is exact.)
/// 7. **Pause and resume.** While paused no ticks are delivered (not even one decided before
///    the pause and still queued) and ``remaining(key:)`` is
///    frozen; after `resume(key:)` the countdown continues from where it stopped and its
///    deadline moves by the time spent paused. Pausing a paused or unknown key, or resuming
///    a running or unknown one, returns false and changes nothing. Attaching to a paused
///    countdown (`start` on its key, or `attach(key:observer:)`) tells the frozen remaining
///    time and leaves it paused.
/// 8. **Queries.** ``remaining(key:)`` returns the time left (nil for an unknown key);
///    ``activeKeys`` and ``activeCount`` list the running and paused countdowns: `activeKeys`
///    holds each key once, and `activeCount` is its count.
/// 9. **Delivery.** Every observer call happens on the delivery queue, one at a time. An
///    observer may call any method of the scheduler without deadlock.
/// 10. **Thread safety.** Every method may be called from any thread at any time. Concurrent
///     calls on one key behave as if made one at a time, in some order that respects which call
///     returned before another began: of concurrent starts exactly one starts, of concurrent
///     cancels exactly one returns true.
/// 11. **Events.** ``events(key:)`` attaches as ``attach(key:observer:)`` does: its first
///     element is the current remaining time, then the ticks and the finish follow, and the
///     stream ends after the finish, or when the countdown is cancelled, another observer
///     attaches, or the scheduler shuts down. With no countdown under the key the stream ends
///     at once and nothing changes. A consumer whose task is cancelled, or who leaves its loop
///     and lets go of the stream, detaches: the countdown runs on and the scheduler keeps
///     nothing of that consumer (once its delivery queue has run what was already queued).
/// 12. **Lifecycle.** ``enteredBackground()`` and then ``enteredForeground()`` never make a
///     countdown finish before its deadline, never make its remaining time grow, and leave a
///     paused countdown paused with its remaining time frozen. A backend whose notion of time
///     stops while the process is frozen takes off, at the foreground, the time that passed
///     since the background; one that reads a clock needs nothing and may do nothing.
/// 13. **Lifetime.** The scheduler keeps no reference to an observer whose countdown
///     finished, was cancelled or was replaced (once its delivery queue has run what was
///     already queued). ``shutdown()``, or releasing the last reference to the scheduler with
///     no `shutdown()` at all, cancels every countdown, frees every observer and ends every
///     thread the scheduler started.
///
/// A scheduler whose clock a test drives conforms to ``VirtualTimeScheduling`` as well; the
/// conformance suite then judges it in that virtual time.
///
/// What tells the strategies apart — suspension, wall-clock jumps, drift, head-of-line
/// blocking, capacity and cost — is declared in ``profile`` and measured by
/// `countdown-bench`, not required by this protocol.
public protocol CountdownScheduler: AnyObject, Sendable {
    /// What this backend declares about itself.
    var profile: CountdownProfile { get }

    /// The interval between ticks, `T`.
    var tickInterval: Duration { get }

    /// The serial queue on which observers are called.
    var deliveryQueue: DispatchQueue { get }

    /// Starts a countdown of `duration` under `key`, or attaches `observer` to the one already
    /// running (which keeps its own deadline).
    ///
    /// - Throws: ``CountdownError``; when it throws, nothing has changed.
    @discardableResult
    func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart

    /// Attaches `observer` to the countdown running under `key`, as `start` would, but never
    /// starts one.
    /// - Returns: the remaining time told to the observer, or nil (changing nothing) when no
    ///   countdown runs under `key`.
    @discardableResult
    func attach(key: String, observer: @escaping CountdownObserver) -> Duration?

    /// The events of the countdown under `key`, as an asynchronous sequence: what a view's
    /// `.task { for await event in scheduler.events(key:) { … } }` or a server's request
    /// handler iterates.
    ///
    /// Attaches at once, as ``attach(key:observer:)`` does, replacing the countdown's observer:
    /// the first element is the remaining time. The stream ends after the finish, or when the
    /// countdown is cancelled, another observer attaches or the scheduler shuts down; with no
    /// countdown under `key` it ends at once. Cancelling the task that iterates, or leaving the
    /// loop once nothing else holds the stream (as in `for await e in scheduler.events(key:)`),
    /// detaches and leaves the countdown running.
    func events(key: String) -> AsyncStream<CountdownEvent>

    /// Stops the countdown under `key` without a finish event.
    /// - Returns: whether a countdown (running or paused) was there.
    @discardableResult
    func cancel(key: String) -> Bool

    /// Freezes the countdown under `key`.
    /// - Returns: false, changing nothing, when the key is unknown or already paused.
    @discardableResult
    func pause(key: String) -> Bool

    /// Continues the paused countdown under `key` from where it stopped.
    /// - Returns: false, changing nothing, when the key is unknown or not paused.
    @discardableResult
    func resume(key: String) -> Bool

    /// The time left on the countdown under `key`, or nil when there is none.
    /// Zero when the deadline has passed and the finish is on its way.
    func remaining(key: String) -> Duration?

    /// The keys of the running and paused countdowns, in no particular order.
    var activeKeys: [String] { get }

    /// How many countdowns are running or paused.
    var activeCount: Int { get }

    /// The app went to the background: call it from `didEnterBackgroundNotification` (or the
    /// scene's `.background` phase). From here on the process may be frozen at any moment.
    ///
    /// A backend that counts ticks notes the time, as the articles' fix did; one that reads a
    /// clock does nothing. A second call before ``enteredForeground()`` keeps the first one's
    /// time. A scheduler that keeps its countdowns in a file returns once the file holds every
    /// change: the system may kill the suspended process without another word.
    func enteredBackground()

    /// The app is coming back: call it from `willEnterForegroundNotification` (or the scene's
    /// `.active` phase). A backend that counts ticks takes off the time that passed since
    /// ``enteredBackground()`` and missed ticks did not count, and tells each observer the
    /// corrected remaining time at once (a countdown whose deadline passed meanwhile finishes).
    /// Without a call to ``enteredBackground()`` first, nothing happens.
    func enteredForeground()

    /// Cancels every countdown, refuses new ones, and ends the threads the scheduler
    /// started. Idempotent; also done when the scheduler is released.
    func shutdown()
}
