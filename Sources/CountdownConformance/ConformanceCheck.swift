/// One check of the suite: an id for the command line and reports, and what it verifies.
public struct ConformanceCheck: Sendable, Hashable, Identifiable, CustomStringConvertible {
    /// What a check holds a backend to: the contract, or its own declaration.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// A point of the contract every backend must meet.
        case contract
        /// A profile: the backend must behave as its `CountdownProfile` declares.
        case profile
    }

    /// `start`, `cancel`, `profile.drift`, …
    public let id: String
    /// Whether it judges the contract or the backend's declared profile.
    public let kind: Kind
    /// What is verified, in one line.
    public let summary: String

    /// Why the check needs the real world (real timers, a real clock, a real load), if it
    /// does: a backend that runs in virtual time gets "not applicable" with this reason.
    let needsRealWorld: String?
    let body: @Sendable (CheckContext) throws -> Void

    init(
        _ id: String, _ kind: Kind, _ summary: String, needsRealWorld: String? = nil,
        body: @escaping @Sendable (CheckContext) throws -> Void
    ) {
        self.id = id
        self.kind = kind
        self.summary = summary
        self.needsRealWorld = needsRealWorld
        self.body = body
    }

    public var description: String { id }

    public static func == (a: ConformanceCheck, b: ConformanceCheck) -> Bool { a.id == b.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}
