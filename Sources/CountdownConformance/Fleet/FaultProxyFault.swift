extension FaultProxy {
    /// What happens to an answer the fault hits.
    public struct Fault: Sendable, Equatable {
        /// How the answer is kept from the client.
        public enum Action: Sendable, Equatable {
            /// The connection is closed before the answer is passed on (the client reads an end).
            case drop
            /// The connection is reset before the answer is passed on (the client reads a reset).
            case reset
        }

        /// Dropped or reset.
        public var action: Action
        /// The share of answers hit, 0 to 1.
        public var probability: Double
        /// Or every n-th answer of each connection (the n-th, the 2n-th, …): a schedule that
        /// hits every kind of traffic, a connection that carries little as well as a busy one.
        public var every: Int?
        /// Only answers to requests that contain these bytes (nil: every answer).
        public var requestContaining: String?
        /// A request hit once passes when it comes again, byte for byte (a client's resend):
        /// every such call loses its first answer and no other.
        public var onlyTheFirstTime: Bool

        /// A fault: `action`, `probability`, `every`, `requestContaining` and `onlyTheFirstTime`
        /// are the properties of the same names (a probability is clamped to 0…1, `every` to at
        /// least 1).
        public init(
            action: Action, probability: Double = 0, every: Int? = nil, requestContaining: String? = nil, onlyTheFirstTime: Bool = false
        ) {
            self.action = action
            self.probability = min(max(probability, 0), 1)
            self.every = every.map { max($0, 1) }
            self.requestContaining = requestContaining
            self.onlyTheFirstTime = onlyTheFirstTime
        }

        /// Every answer to a request containing `marker` dropped the first time that request is
        /// sent; its resend's answer passes.
        public static func dropFirstAnswers(toRequestsContaining marker: String) -> Fault {
            Fault(action: .drop, every: 1, requestContaining: marker, onlyTheFirstTime: true)
        }

        /// Answers dropped at random, with `probability`, to requests containing `marker` (nil: every request).
        public static func dropAnswers(probability: Double, toRequestsContaining marker: String? = nil) -> Fault {
            Fault(action: .drop, probability: probability, requestContaining: marker)
        }

        /// Every `n`-th answer of each connection dropped, to requests containing `marker` (nil: every request).
        public static func dropAnswers(every n: Int, toRequestsContaining marker: String? = nil) -> Fault {
            Fault(action: .drop, every: n, requestContaining: marker)
        }

        /// Connections reset at random before an answer, with `probability`, to requests containing `marker` (nil: every request).
        public static func resetAnswers(probability: Double, toRequestsContaining marker: String? = nil) -> Fault {
            Fault(action: .reset, probability: probability, requestContaining: marker)
        }

        /// Whether the `count`-th matching request of a connection (from 1) has its answer hit.
        func hits(_ count: Int) -> Bool {
            if let every { return count % every == 0 }
            return probability > 0 && Double.random(in: 0..<1) < probability
        }
    }
}
