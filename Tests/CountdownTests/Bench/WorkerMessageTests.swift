import Testing

@testable import CountdownBenchKit

@Suite struct WorkerMessageTests {
    @Test(arguments: [
        WorkerMessage.ready, .started(index: 3, at: 123_456_789), .event(index: 0, kind: .tick, remaining: 1_800_000_000, at: 42),
        .event(index: 9, kind: .finished, remaining: 0, at: 7), .paused(at: 1), .resumed(at: 2), .done, .unknown("jump now"),
        .background(at: 3), .foreground(at: 4), .restored(index: 2, remaining: 1_200_000_000, at: 5), .expired(index: 1, at: 6),
        .writing(at: 8), .wrote(nanoseconds: 512_000),
    ])
    func aMessageReadsBackAsWritten(_ message: WorkerMessage) {
        #expect(WorkerMessage(line: message.line) == message, "\(message.line)")
    }

    @Test(arguments: ["", "start 1", "event 1 tock 5 6", "event x tick 5 6", "paused soon", "ready now", "restored 1 2", "expired x 3", "writing"])
    func aLineNoWorkerWritesIsNotAMessage(_ line: String) {
        #expect(WorkerMessage(line: line) == nil)
    }
}
