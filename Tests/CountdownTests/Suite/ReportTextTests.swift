@testable import CountdownConformance
import Testing

/// A text report shows a check's first messages and how many more; the result keeps them all.
@Suite struct ReportTextTests {
    @Test("a check that failed 500 times shows five messages and the count of the rest; the result keeps all 500")
    func fiveAndTheRest() {
        let messages = (1...500).map { "start \($0) broke a promise" }
        let result = CheckResult(id: "start", kind: .contract, verdict: .fail, figure: nil, messages: messages, seconds: 0, time: .real)
        #expect(result.shownMessages == Array(messages.prefix(5)) + ["… and 495 more (every one in the JSON report)"])
        #expect(result.messages.count == 500)
        let report = ConformanceReport(backend: "broken", results: [result])
        #expect(report.description.split(separator: "\n").count == 2 + 6, "\(report.description)")
        let few = CheckResult(id: "start", kind: .contract, verdict: .fail, figure: nil, messages: ["one", "two"], seconds: 0, time: .real)
        #expect(few.shownMessages == ["one", "two"])
    }
}
