@testable import Countdown
@testable import CountdownBenchKit
import CountdownConformance
import CountdownSupport
import Dispatch
import Foundation
import Synchronization
import Testing

// Aimed at `keys`, `distinct-keys`, `bad-input` and `edges`: what a key and a duration are.

final class AcceptsEmptyKey: Forwarding, @unchecked Sendable {
    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        try inner.start(key: key.isEmpty ? "(empty)" : key, duration: duration, observer: observer)
    }
}

/// Answers `.started` for a key with any non-ASCII character, and never runs it.
final class IgnoresNonASCIIKeys: Forwarding, @unchecked Sendable {
    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        if !key.unicodeScalars.allSatisfy(\.isASCII) { return .started }
        return try inner.start(key: key, duration: duration, observer: observer)
    }
}

/// Keys its countdowns by a key's Unicode scalars, not by the String: "é" precomposed and
/// decomposed become two countdowns.
final class ComparesKeysByScalars: Forwarding, @unchecked Sendable {
    private let originals = Locked<[String: String]>([:])

    private func inner(_ key: String) -> String {
        let mangled = key.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: ".")
        originals.withLock { $0[mangled] = key }
        return mangled
    }

    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        guard !key.isEmpty else { throw .emptyKey }
        return try inner.start(key: inner(key), duration: duration) { event in
            observer(CountdownEvent(key: key, kind: event.kind, remaining: event.remaining))
        }
    }

    override func attach(key: String, observer: @escaping CountdownObserver) -> Duration? {
        inner.attach(key: inner(key)) { observer(CountdownEvent(key: key, kind: $0.kind, remaining: $0.remaining)) }
    }

    override func cancel(key: String) -> Bool { inner.cancel(key: inner(key)) }
    override func pause(key: String) -> Bool { inner.pause(key: inner(key)) }
    override func resume(key: String) -> Bool { inner.resume(key: inner(key)) }
    override func remaining(key: String) -> Duration? { inner.remaining(key: inner(key)) }
    override var activeKeys: [String] {
        let keys = inner.activeKeys
        return originals.withLock { originals in keys.map { originals[$0] ?? $0 } }
    }
}

/// Treats a key as a C string: everything after a NUL is lost, so "sms\0one" and "sms\0two"
/// are one countdown.
final class TruncatesKeysAtNUL: Forwarding, @unchecked Sendable {
    private func truncated(_ key: String) -> String {
        let prefix = key.prefix { $0 != "\0" }
        return prefix.isEmpty ? key : String(prefix)
    }

    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        try inner.start(key: truncated(key), duration: duration, observer: observer)
    }
    override func cancel(key: String) -> Bool { inner.cancel(key: truncated(key)) }
    override func remaining(key: String) -> Duration? { inner.remaining(key: truncated(key)) }
}

/// Takes keys that are different strings for one, by folding each before it reaches the real
/// backend; events carry the folded key back, as such a backend would.
final class MergesKeys: Forwarding, @unchecked Sendable {
    private let fold: @Sendable (String) -> String

    init(_ inner: any CountdownScheduler, fold: @escaping @Sendable (String) -> String) {
        self.fold = fold
        super.init(inner)
    }

    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        try inner.start(key: fold(key), duration: duration, observer: observer)
    }

    override func attach(key: String, observer: @escaping CountdownObserver) -> Duration? {
        inner.attach(key: fold(key), observer: observer)
    }

    override func cancel(key: String) -> Bool { inner.cancel(key: fold(key)) }
    override func pause(key: String) -> Bool { inner.pause(key: fold(key)) }
    override func resume(key: String) -> Bool { inner.resume(key: fold(key)) }
    override func remaining(key: String) -> Duration? { inner.remaining(key: fold(key)) }

    static let caseInsensitive: @Sendable (String) -> String = { $0.lowercased() }
    static let trimmed: @Sendable (String) -> String = { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    static let first255Bytes: @Sendable (String) -> String = { String(decoding: $0.utf8.prefix(255), as: UTF8.self) }
    /// Emoji modifiers (skin tones) and variation selectors dropped.
    static let withoutModifiers: @Sendable (String) -> String = { key in
        var scalars = String.UnicodeScalarView()
        for scalar in key.unicodeScalars
        where !(0x1F3FB...0x1F3FF).contains(scalar.value) && !(0xFE00...0xFE0F).contains(scalar.value) {
            scalars.append(scalar)
        }
        return String(scalars)
    }
    static let compatibilityFolded: @Sendable (String) -> String = { $0.precomposedStringWithCompatibilityMapping }
}

/// Refuses exactly the maximum duration (an off-by-one: `>=` where `>` was meant).
final class RefusesTheMaximum: Forwarding, @unchecked Sendable {
    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        let maximum = inner.profile.maximumDuration
        if duration >= maximum { throw .durationAboveMaximum(duration, maximum: maximum) }
        return try inner.start(key: key, duration: duration, observer: observer)
    }
}

/// Answers `.started` for a countdown shorter than a tick, and never runs it.
final class DropsSubTickDurations: Forwarding, @unchecked Sendable {
    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        if duration > .zero && duration < inner.tickInterval { return .started }
        return try inner.start(key: key, duration: duration, observer: observer)
    }
}
