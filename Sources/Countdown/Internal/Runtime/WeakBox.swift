import CountdownSupport

/// A weak reference a thread is started with, set once the object it names is made: it lets the
/// thread reach the object without keeping it alive (a scheduler released without a shutdown
/// takes its threads' objects with it). Behind a lock, not `@unchecked`: read once per wake-up,
/// an uncontended lock costs a few nanoseconds.
final class WeakBox<Object: AnyObject & Sendable>: Sendable {
    private struct Reference {
        weak var object: Object?
    }

    private let reference = Locked(Reference())

    var value: Object? {
        get { reference.withLock { $0.object } }
    }

    func set(_ object: Object) {
        reference.withLock { $0.object = object }
    }
}
