/// Which scheduler call a randomized operation makes, drawn from a choice in 0..<100 with the
/// mix written once here: start 30 %, attach 10 %, cancel 15 %, pause 15 %, resume 15 %,
/// remaining 15 %.
enum RandomizedCall: Sendable {
    case start, attach, cancel, pause, resume, remaining

    init(choice: Int) {
        switch choice {
        case 0..<30: self = .start
        case 30..<40: self = .attach
        case 40..<55: self = .cancel
        case 55..<70: self = .pause
        case 70..<85: self = .resume
        default: self = .remaining
        }
    }
}
