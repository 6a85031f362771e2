/// The keys a run starts its countdowns under.
///
/// Swift stores a string of up to 15 UTF-8 bytes inline; a longer one is a heap object, reference
/// counted, with a pointer to chase when it is hashed and compared. Real keys are longer than
/// that ("sms-code:+8613812345678", "rate-limit:user:123456"), so the default is keys like them.
enum KeyShape: String, Codable, CaseIterable, Sendable {
    /// `countdown-<n>`: 11–16 bytes, inline below n = 100 000.
    case short
    /// Half `sms-code:+86138<8 digits>` (23 bytes), half `rate-limit:user:<10 digits>` (26 bytes).
    case real

    /// The key of the countdown numbered `n`; distinct for distinct `n`.
    func key(_ n: Int) -> String {
        switch self {
        case .short: "countdown-\(n)"
        case .real: n % 2 == 0 ? "sms-code:+86138" + Self.digits(n / 2, 8) : "rate-limit:user:" + Self.digits(n / 2, 10)
        }
    }

    /// What the tables say of them.
    var description: String {
        switch self {
        case .short: "short keys (countdown-<n>, 11–16 bytes)"
        case .real: "real keys (sms-code:+86138… and rate-limit:user:…, 23 and 26 bytes)"
        }
    }

    /// `value` in `width` decimal digits, zeros in front.
    private static func digits(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
