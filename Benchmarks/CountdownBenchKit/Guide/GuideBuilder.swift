/// Answers the guide's questions from the result files: one reading per machine, question and
/// backend, in words with the figure it rests on, or none where nothing was measured. Nothing
/// here is typed by hand but the questions; every figure comes from a file.
struct GuideBuilder {
    let library: ResultsLibrary

    /// The backends, in the order the README recommends them.
    static let columns = [
        "timestamp(continuous)", "timestamp(continuous~10ms)", "timestamp(wall)", "task", "dispatch-source",
        "dispatch-source(compensated)", "run-loop", "operation-queue",
    ]

    // The runs the questions read, by their path in a machine's folder (the README's
    // regeneration commands write them).
    static let defaultRun = "run.json"
    static let tickSecond = "tick-1s/run.json"
    static let tickSecondTask = "tick-1s-task/run.json"
    static let million = "tick-1s-1m/run.json"
    static let tenMillion = "tick-10s-10m/run.json"
    static let sharedPool = "shared-pool/run.json"
    static let store = "store/run.json"

    func build() -> Guide {
        var guide = Guide(
            machines: machineEntries,
            columns: Self.columns, rows: rows, statements: statements)
        guide.fleetStatements = FleetGuide(library: library).statements
        return guide
    }

    /// Each machine as the guides name it: its folder, and what its files recorded of it.
    var machineEntries: [Guide.MachineEntry] {
        library.machines.map { machine in
            .init(folder: machine.folder, summary: Self.summary(machine.machine) + Self.memory(machine.runs.values.compactMap(\.memory)))
        }
    }

    static func summary(_ machine: Machine?) -> String {
        guard let m = machine else { return "machine not recorded" }
        return "\(m.cpuModel), \(m.cores) cores, Swift \(m.swiftVersion), \(m.buildConfiguration) build"
    }

    /// What a dependent memory load took while the folder's runs were measured: a neighbour that
    /// thrashes the host's cache moves every figure at large N, and shows here first.
    static func memory(_ measured: [MemoryLatency]) -> String {
        MemoryText.range(measured).map { "; a dependent memory load took \($0) while its runs were measured" } ?? ""
    }

    // MARK: - The table

    var rows: [Guide.Row] {
        [
            row("p99 tick lateness, N = 1 000, 10 ms ticks (100 000 events/s)") { m, backend in
                config(m, Self.defaultRun, backend, 1000).map(latencyAndCPU)
            },
            row("p99 tick lateness, N = 10 000, 10 ms ticks (1 000 000 events/s)") { m, backend in
                config(m, Self.defaultRun, backend, 10000).map(latencyAndCPU)
            },
            row("where it stops keeping up, 10 ms ticks (p99 within a 60 Hz frame, every countdown finished)") { m, backend in
                keepsUp(m, backend)
            },
            row("p99 tick lateness, N = 100 000, 1 s ticks") { m, backend in
                tickSecond(m, backend, 100_000).map { c in latency(c, .tickP99) }
            },
            row("CPU per delivered event, N = 100 000, 1 s ticks") { m, backend in
                tickSecond(m, backend, 100_000).map { c in
                    c.with(Self.figure(c.configuration, .cpuPerEvent) + " at " + Self.figure(c.configuration, .cpu) + " of a core",
                           magnitude: Self.magnitude(c.configuration, .cpuPerEvent))
                }
            },
            row("N = 1 000 000, 1 s ticks, starts spread over a tick, alone in its process") { m, backend in
                let file = backend == "task" ? Self.tickSecondTask : Self.million
                return config(m, file, backend, 1_000_000).map { c in
                    c.with(Self.outcome(c.configuration) + "; p99 " + Self.percentile(c.configuration, .tickP99)
                           + "; " + Self.figure(c.configuration, .cpu) + " of a core, " + Self.figure(c.configuration, .cpuPerEvent) + " a delivered event",
                           magnitude: nil)
                }
            },
            // The same run's other half: one thread starting a million as fast as it can, the
            // case where the starts themselves must fit in the time limit.
            row("N = 1 000 000, 1 s ticks, all started at once, alone in its process") { m, backend in
                let file = backend == "task" ? Self.tickSecondTask : Self.million
                return config(m, file, backend, 1_000_000, .burst).map { c in
                    c.with(Self.outcome(c.configuration) + "; p99 " + Self.percentile(c.configuration, .tickP99), magnitude: nil)
                }
            },
            // Ten million: a million events a second while they run, a million finishes a second
            // at the end, and the starts themselves about a tick long.
            row("N = 10 000 000, 10 s ticks, 30 s countdowns, starts spread over a tick, alone in its process") { m, backend in
                config(m, Self.tenMillion, backend, 10_000_000).map { c in
                    var text = Self.outcome(c.configuration) + "; p99 " + Self.percentile(c.configuration, .tickP99)
                        + "; " + Self.figure(c.configuration, .cpuPerEvent) + " a delivered event, "
                        + Self.figure(c.configuration, .rss) + " a countdown"
                    if let longest = c.configuration.repeats.map(\.counts.startPhaseMs).max() {
                        text += "; the starts took " + ReportFormat.milliseconds(longest)
                    }
                    return c.with(text, magnitude: nil)
                }
            },
            row("N = 1 000 000, 1 s ticks, after the other backends in one process") { m, backend in
                config(m, Self.tickSecond, backend, 1_000_000).map { c in
                    c.with(Self.outcome(c.configuration) + "; p99 " + Self.figure(c.configuration, .tickP99), magnitude: nil)
                }
            },
            row("`start` / `cancel` median, 1 000 000 active") { m, backend in
                tickSecond(m, backend, 1_000_000).map { c in
                    var text = Self.figure(c.configuration, .startCall) + " / " + Self.figure(c.configuration, .cancelCall)
                    // Swift's own hash table with the same keys, in the same minute.
                    if c.configuration[.startFloor] != nil, c.configuration[.cancelFloor] != nil {
                        text += " (a `Dictionary`'s insert / remove: " + Self.figure(c.configuration, .startFloor) + " / "
                            + Self.figure(c.configuration, .cancelFloor) + ")"
                    }
                    return c.with(text, magnitude: nil)
                }
            },
            row("memory per countdown, 1 000 000 active") { m, backend in
                tickSecond(m, backend, 1_000_000).map { c in
                    c.with(Self.figure(c.configuration, .rss), magnitude: Self.magnitude(c.configuration, .rss))
                }
            },
            row("beside 20 sleeping operation-queue workers in the process, N = 100, 100 ms ticks, 30 s countdowns") { m, backend in
                besideSleepers(m, backend)
            },
            row("process frozen 650 ms (SIGSTOP)") { m, backend in
                freeze(m, backend) { $0.freezeMs == 650 && $0.pausedResumeAfterMs == nil && $0.notifiesLifecycle != true }
            },
            row("process frozen 2 s, longer than the time left") { m, backend in
                freeze(m, backend) { $0.freezeMs == 2000 && $0.pausedResumeAfterMs == nil && $0.notifiesLifecycle != true }
            },
            row("frozen 650 ms, told `background` before and `foreground` after (lifecycle notifications)") { m, backend in
                freeze(m, backend) { $0.freezeMs == 650 && $0.notifiesLifecycle == true }
            },
            row("frozen 2 s, lifecycle notifications") { m, backend in
                freeze(m, backend) { $0.freezeMs == 2000 && $0.notifiesLifecycle == true }
            },
            row("killed (SIGKILL) and relaunched from a `CountdownStore`: at random points, mid-write, after the deadline, under a wall clock set forward") { m, backend in
                kills(m, backend)
            },
            row("keeping a `CountdownStore`, N = 10 000 countdowns of 3 s at 1 s ticks (against none)") { m, backend in
                store(m, backend, count: 10000)
            },
            row("wall clock set forward in a real process (libfaketime)") { m, backend in
                wallClockJump(m, backend)
            },
            row("wall clock set 1 h forward, injected clock (conformance, profile.wall-clock)") { m, backend in
                check(m, backend, "profile.wall-clock") { $0 }
            },
            row("drift: how far the ticks' grid strays from start + k·T at each tick (conformance, profile.drift)") { m, backend in
                check(m, backend, "profile.drift", Self.driftPerTick)
            },
        ]
    }

    // MARK: - Statements for the prose

    var statements: [Guide.Statement] {
        [
            statement("`timestamp(continuous)` against `dispatch-source`, one tick a second, N = 100 000") { m in
                versus(m, ("timestamp(continuous)", Self.tickSecond), ("dispatch-source", Self.tickSecond), count: 100_000)
            },
            statement("`timestamp(continuous~10ms)` (a 10 ms tolerance) against `timestamp(continuous)`, one tick a second, N = 10 000") { m in
                versus(m, ("timestamp(continuous~10ms)", Self.tickSecond), ("timestamp(continuous)", Self.tickSecond), count: 10000)
            },
            statement("the same at N = 100 000") { m in
                versus(m, ("timestamp(continuous~10ms)", Self.tickSecond), ("timestamp(continuous)", Self.tickSecond), count: 100_000)
            },
            statement("`task` against `timestamp(continuous)`, one tick a second, N = 100 000") { m in
                versus(m, ("task", Self.tickSecondTask), ("timestamp(continuous)", Self.tickSecond), count: 100_000)
            },
            statement("`run-loop` against `timestamp(continuous)`, one tick a second, N = 10 000") { m in
                versus(m, ("run-loop", Self.tickSecond), ("timestamp(continuous)", Self.tickSecond), count: 10000)
            },
            statement("a `CountdownStore`'s cost as N grows (`timestamp(continuous)`, countdowns of 3 s at 1 s ticks)") { m in
                storeGrowth(m)
            },
        ]
    }

    // MARK: - Answers

    /// A configuration found in a machine's file, with what a reading of it needs.
    struct Found {
        let machine: String
        let file: String
        let configuration: RunDocument.Configuration

        func with(_ text: String, magnitude: Guide.Magnitude?) -> Guide.Reading {
            Guide.Reading(machine: machine, text: text, magnitude: magnitude, files: ["\(machine)/\(file)"])
        }
    }

    func row(_ title: String, _ answer: (MachineResults, String) -> Guide.Reading?) -> Guide.Row {
        Guide.Row(title: title, cells: Self.columns.map { backend in
            Guide.Cell(readings: library.machines.compactMap { answer($0, backend) })
        })
    }

    func statement(_ title: String, _ answer: (MachineResults) -> Guide.Reading?) -> Guide.Statement {
        Guide.Statement(title: title, cell: Guide.Cell(readings: library.machines.compactMap(answer)))
    }
}
