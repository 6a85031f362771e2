import Foundation

extension CountdownConformance {
    /// How ``CountdownConformance/suspension(relaunch:freeze:)`` starts this very test binary
    /// again, so that it runs the backend in a child process it can freeze: the helper-process
    /// pattern (Go's `os/exec` tests run themselves again with an environment variable that
    /// tells them to act as the worker).
    public struct Relaunch: Sendable {
        /// The executable to start: by default this process's own.
        public var executable: String
        /// What makes it run the one test that calls `suspension(relaunch:)` and nothing else.
        public var arguments: [String]
        /// Set in its environment, beside what it inherits: what it must not be given in its
        /// arguments, which any user of the machine can read (a store's password).
        public var environment: [String: String]

        /// - Parameters:
        ///   - executable: the executable to start; this process's own by default.
        ///   - arguments: what makes it run the one test that calls the suite, and nothing else.
        ///   - environment: set in its environment, beside what it inherits.
        public init(executable: String = Relaunch.currentExecutable, arguments: [String], environment: [String: String] = [:]) {
            self.executable = executable
            self.arguments = arguments
            self.environment = environment
        }

        /// A Swift Testing test, by a `filter` its identifier matches: `"MyTests/frozen"`.
        public static func swiftTesting(_ filter: String) -> Relaunch {
            Relaunch(arguments: ["--testing-library", "swift-testing", "--filter", filter])
        }

        /// An XCTest `testCase`, as the test binary takes it: `"MyTests.SuspensionTests/testFrozen"`.
        public static func xctest(_ testCase: String) -> Relaunch {
            Relaunch(arguments: [testCase])
        }

        /// This process's executable (`/proc/self/exe` on Linux).
        public static var currentExecutable: String {
            #if os(Linux)
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
            #else
            CommandLine.arguments.first ?? ""
            #endif
        }
    }
}
