#if Redis
import Countdown

/// A batch of starts decided: those refused before any call (a key or duration not allowed),
/// and the calls that make the rest, each answering for its starts (a script of many starts).
/// Run by a thread (``wait()``) or a task (``run()``), a few calls on the wire at once.
struct FleetBatch: Sendable {
    typealias Answers = [(index: Int, result: Result<CountdownStart, CountdownError>)]

    let count: Int
    var refused: Answers = []
    /// Each call, and the batch's indices it answers for (a call that throws fails them all).
    var calls: [(call: FleetCall<Answers>, indices: [Int])] = []

    /// Two calls on the wire: this member works on one's answers while the server runs the next.
    static let window = 2

    func wait() -> [Result<CountdownStart, CountdownError>] {
        collect(FleetCall.waitAll(calls.map(\.call), window: Self.window))
    }

    func run() async -> [Result<CountdownStart, CountdownError>] {
        collect(await FleetCall.runAll(calls.map(\.call), window: Self.window))
    }

    private func collect(_ results: [Result<Answers, CountdownError>]) -> [Result<CountdownStart, CountdownError>] {
        var all = [Result<CountdownStart, CountdownError>?](repeating: nil, count: count)
        for (index, result) in refused { all[index] = result }
        for ((_, indices), result) in zip(calls, results) {
            switch result {
            case .success(let answers): for (index, answer) in answers { all[index] = answer }
            case .failure(let error): for index in indices { all[index] = .failure(error) }
            }
        }
        return all.map { $0 ?? .failure(.unavailable(.protocol, "a start of the batch was not answered")) }
    }
}
#endif
