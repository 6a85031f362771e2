import CountdownSupport
import Foundation

/// Runs the suspension experiments, up to `jobs` at a time (`countdown-bench suspend --jobs`).
///
/// Each experiment is a worker process of its own, frozen, continued or killed by its own
/// thread, with its own temporary store and clock file: experiments side by side share nothing
/// but the machine, and a worker spends its experiment asleep (the suspend stage used 9 % of one
/// core, one at a time). Each runs on a `Thread` of its own, not on libdispatch's pool, which
/// grows a thread a second while its threads sleep.
enum ExperimentPool {
    /// The results in the experiments' order; the first error, in that order, is thrown once
    /// every experiment has ended.
    static func run(
        _ experiments: [SuspendExperiment], jobs: Int, progress: Progress
    ) throws -> [SuspendExperiment.Result] {
        guard jobs > 1 else {
            return try experiments.map { experiment in
                progress.begin("\(experiment.backend), \(experiment.scenario.name)")
                let result = try experiment.run()
                progress.end(result.verdict)
                return result
            }
        }
        let outcomes = Locked([Int: Result<SuspendExperiment.Result, any Error>]())
        let slots = DispatchSemaphore(value: jobs)
        let finished = DispatchSemaphore(value: 0)
        for (index, experiment) in experiments.enumerated() {
            slots.wait()
            Thread {
                let outcome = Result { try experiment.run() }
                if case .success(let result) = outcome {
                    progress.note("\(experiment.backend), \(experiment.scenario.name): \(result.verdict)")
                }
                outcomes.withLock { $0[index] = outcome }
                slots.signal()
                finished.signal()
            }.start()
        }
        for _ in experiments { finished.wait() }
        let all = outcomes.withLock { $0 }
        return try experiments.indices.map { try all[$0]!.get() }
    }
}
