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
        /// Or about every n-th answer of each connection: the gap before each hit is drawn at
        /// random from 1 to 2n − 1 answers (n on average). A fixed n-th would fall in step with a
        /// client's loop of fixed length and hit one of its calls only: every sixth answer of a
        /// loop of three calls is always the third. A connection that carries little is hit as
        /// well as a busy one.
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

        /// About every `n`-th answer of each connection dropped (gaps drawn at random, ``every``), to requests containing `marker` (nil: every request).
        public static func dropAnswers(every n: Int, toRequestsContaining marker: String? = nil) -> Fault {
            Fault(action: .drop, every: n, requestContaining: marker)
        }

        /// Connections reset at random before an answer, with `probability`, to requests containing `marker` (nil: every request).
        public static func resetAnswers(probability: Double, toRequestsContaining marker: String? = nil) -> Fault {
            Fault(action: .reset, probability: probability, requestContaining: marker)
        }

        /// Whether the next matching request of a connection has its answer hit; `untilHit`
        /// (nil on a new connection) counts down the gap drawn for `every`.
        func hits(_ untilHit: inout Int?) -> Bool {
            guard let every else { return probability > 0 && Double.random(in: 0..<1) < probability }
            var left = untilHit ?? Int.random(in: 1...(2 * every - 1))
            left -= 1
            untilHit = left > 0 ? left : nil
            return left == 0
        }
    }
}
