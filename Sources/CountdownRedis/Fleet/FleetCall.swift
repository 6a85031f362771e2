#if Redis
import Countdown

/// A call of the fleet, decided before it is made: the requests to send, and what their replies
/// mean (decide, then act). Each call of the API is written once, as a `FleetCall`, and run
/// either by a task (``run()``: it suspends while Redis answers) or by a thread (``wait()``: it
/// blocks), on the same pipes.
///
/// A call once submitted is not withdrawn: a task cancelled while its call is on the wire gets
/// the call's answer, and the fleet holds what that answer says (a start started, a cancel
/// cancelled), never half of it.
indirect enum FleetCall<Answer: Sendable>: Sendable {
    /// Requests for one pipe, sent together.
    typealias Part = (pipe: RedisPipe, requests: [RedisPipe.Request])

    /// Answered without Redis (a key that cannot be, a member shut down, a settings error).
    case answered(Result<Answer, CountdownError>)
    /// The parts' requests, then `then` with every reply in order (parts in order), which
    /// answers or says what to send next. `failed` is told when the replies could not be had,
    /// or one was an error, before the call throws it.
    case send([Part], then: @Sendable ([RedisReply]) throws(CountdownError) -> FleetCall<Answer>, failed: @Sendable (CountdownError) -> Void)

    static func done(_ answer: Answer) -> FleetCall { .answered(.success(answer)) }

    /// One pipe's requests, with nothing to undo when they fail.
    static func send(
        _ pipe: RedisPipe, _ requests: [RedisPipe.Request], then: @escaping @Sendable ([RedisReply]) throws(CountdownError) -> FleetCall
    ) -> FleetCall {
        .send([(pipe, requests)], then: then, failed: { _ in })
    }

    /// The same call, its answer transformed.
    func map<Other: Sendable>(_ transform: @escaping @Sendable (Answer) -> Other) -> FleetCall<Other> {
        switch self {
        case .answered(let result): .answered(result.map(transform))
        case .send(let parts, let then, let failed):
            .send(parts, then: { (replies: [RedisReply]) throws(CountdownError) -> FleetCall<Other> in try then(replies).map(transform) }, failed: failed)
        }
    }

    /// The answer, blocking the calling thread while Redis answers.
    func wait() throws(CountdownError) -> Answer {
        var call = self
        while true {
            switch call {
            case .answered(let result): return try result.get()
            case .send(let parts, let then, let failed):
                let tickets = parts.map { ($0.pipe, $0.pipe.submitWaiting($0.requests)) }
                call = try then(Self.replies(tickets.map { pipe, ticket in pipe.wait(ticket) }, failed))
            }
        }
    }

    /// The answer, suspending the task while Redis answers: no thread waits.
    func run() async throws(CountdownError) -> Answer {
        var call = self
        while true {
            switch call {
            case .answered(let result): return try result.get()
            case .send(let parts, let then, let failed):
                var answers: [PipeTicket.Answers] = []
                var tickets: [PipeTicket] = []
                for part in parts { tickets.append(await part.pipe.submit(part.requests)) }
                for ticket in tickets { answers.append(await ticket.value) }
                call = try then(Self.replies(answers, failed))
            }
        }
    }

    /// Many calls with at most `window` of them on the wire at once, blocking: the answer to
    /// one is worked out while the server runs the next (a batch of starts).
    static func waitAll(_ calls: [FleetCall], window: Int) -> [Result<Answer, CountdownError>] {
        var results: [Result<Answer, CountdownError>] = []
        var sent: [(FleetCall, [(RedisPipe, PipeTicket)])] = []
        var next = 0
        while results.count < calls.count {
            while next < calls.count, sent.count < window {
                if case .send(let parts, _, _) = calls[next] {
                    sent.append((calls[next], parts.map { ($0.pipe, $0.pipe.submitWaiting($0.requests)) }))
                } else {
                    sent.append((calls[next], []))
                }
                next += 1
            }
            let (call, tickets) = sent.removeFirst()
            results.append(Result { () throws(CountdownError) in try call.finish(tickets.map { pipe, ticket in pipe.wait(ticket) }).wait() })
        }
        return results
    }

    /// ``waitAll(_:window:)`` for a task: it suspends.
    static func runAll(_ calls: [FleetCall], window: Int) async -> [Result<Answer, CountdownError>] {
        var results: [Result<Answer, CountdownError>] = []
        var sent: [(FleetCall, [PipeTicket])] = []
        var next = 0
        while results.count < calls.count {
            while next < calls.count, sent.count < window {
                var tickets: [PipeTicket] = []
                if case .send(let parts, _, _) = calls[next] {
                    for part in parts { tickets.append(await part.pipe.submit(part.requests)) }
                }
                sent.append((calls[next], tickets))
                next += 1
            }
            let (call, tickets) = sent.removeFirst()
            var answers: [PipeTicket.Answers] = []
            for ticket in tickets { answers.append(await ticket.value) }
            do {
                results.append(.success(try await call.finish(answers).run()))
            } catch {
                results.append(.failure(error))
            }
        }
        return results
    }

    /// What a sent call becomes once its parts' answers are in.
    private func finish(_ answers: [PipeTicket.Answers]) throws(CountdownError) -> FleetCall {
        guard case .send(_, let then, let failed) = self else { return self }
        return try then(Self.replies(answers, failed))
    }

    /// Every reply, in order; the first failure or error reply, told to `failed`, thrown.
    private static func replies(_ answers: [PipeTicket.Answers], _ failed: (CountdownError) -> Void) throws(CountdownError) -> [RedisReply] {
        var replies: [RedisReply] = []
        for answer in answers.joined() {
            let error: CountdownError
            switch answer {
            case .success(.error(let text)): error = RedisFailure.server(text).countdownError
            case .success(let reply):
                replies.append(reply)
                continue
            case .failure(let failure): error = failure.countdownError
            }
            failed(error)
            throw error
        }
        return replies
    }
}
#endif
