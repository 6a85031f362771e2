import Foundation

/// Progress on stderr: one line rewritten in place on a terminal, a line per step otherwise,
/// nothing with `--no-progress`. It renders the sweep's events; it never feeds the measuring.
struct Progress: Sendable {
    let enabled: Bool
    let isTerminal: Bool

    init(enabled: Bool) {
        self.enabled = enabled
        isTerminal = isatty(STDERR_FILENO) == 1
    }

    func show(_ event: Sweep.Event) {
        switch event {
        case let .began(configurations, repeats, seconds):
            note("\(configurations) configurations × \(repeats) repeat(s), about \(Int(seconds.rounded())) s if every backend keeps up")
        case let .measuringMachine(repeatIndex, wakeUps):
            note("repeat \(repeatIndex): the floor alone (\(wakeUps) wake-ups), then the memory")
        case let .stepBegan(step, number, total, repeatIndex, rounds):
            let roundText = rounds > 1 ? ", \(rounds) rounds" : ""
            begin("[\(number)/\(total)] \(step.id), repeat \(repeatIndex)\(roundText)")
        case let .stepEnded(p99, outcome, seconds):
            let p99Text = p99.map { ReportFormat.value($0.milliseconds, .milliseconds, atLeast: $0.isLowerBound) } ?? "—"
            end("p99 \(p99Text); \(OutcomeText.describe(outcome)) [\(ReportFormat.milliseconds(seconds * 1000))]")
        case let .ended(seconds):
            finish()
            note("measured in \(Int(seconds.rounded())) s")
        }
    }

    func note(_ text: String) {
        guard enabled else { return }
        write((isTerminal ? "\r\u{1B}[K" : "") + "run: \(text)\n")
    }

    func begin(_ text: String) {
        guard enabled else { return }
        write(isTerminal ? "\r\u{1B}[Krun: \(text)…" : "run: \(text): ")
    }

    func end(_ text: String) {
        guard enabled else { return }
        write(isTerminal ? " \(text)" : "\(text)\n")
    }

    func finish() {
        guard enabled, isTerminal else { return }
        write("\r\u{1B}[K")
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
