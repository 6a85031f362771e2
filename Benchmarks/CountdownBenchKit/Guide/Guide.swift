/// The decision table of the README's "Choosing a strategy", as a typed document: what every
/// machine in `results/` measured for each question and backend, each reading with the file it
/// came from. `GuideBuilder` makes it from the result files; `GuideMarkdown` writes it.
struct Guide: Sendable, Equatable {
    /// The machines, in folder order, with what their files recorded of them.
    let machines: [MachineEntry]
    /// The backends, one column each.
    let columns: [String]
    let rows: [Row]
    /// Short statements that carry figures for the prose: one reading per machine each.
    let statements: [Statement]
    /// The same for the Redis strategies, from each machine's `redis/` folder; empty when none has one.
    var fleetStatements: [Statement] = []

    struct MachineEntry: Sendable, Equatable {
        let folder: String
        let summary: String
    }

    /// One question, answered per backend.
    struct Row: Sendable, Equatable {
        let title: String
        /// One per column.
        let cells: [Cell]
    }

    struct Statement: Sendable, Equatable {
        let title: String
        let cell: Cell
    }

    /// What the machines measured for one question and one backend; empty when none did.
    struct Cell: Sendable, Equatable {
        let readings: [Reading]
    }

    /// One machine's answer, in words, with its headline figure where it has one (which is what
    /// a range over several machines is made of) and the files it came from.
    struct Reading: Sendable, Equatable {
        let machine: String
        let text: String
        let magnitude: Magnitude?
        /// Relative to the results folder: `amd-epyc-2-cores/tick-1s/run.json`.
        let files: [String]
    }

    /// A figure in its unit, for ranges over machines.
    struct Magnitude: Sendable, Equatable {
        let value: Double
        let unit: FigureUnit
    }
}
