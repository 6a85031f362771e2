#if Redis
import Countdown
import CountdownRedis
import Foundation
import Testing

/// The test process's own `redis-server`, on a free loopback port in a temporary directory:
/// started by the first test that needs it, stopped when the process exits. Each test works
/// in a namespace of its own on it.
enum TestRedis {
    private static let started: Result<LocalRedisServer, LocalRedisServer.StartError> = {
        let result = Result { () throws(LocalRedisServer.StartError) in try LocalRedisServer() }
        atexit { TestRedis.stopAtExit() }
        return result
    }()

    private static func stopAtExit() {
        if case .success(let server) = started { server.remove() }
    }

    /// The shared server; a test that needs it fails (it does not skip) when it cannot start:
    /// the Redis trait was asked for, so redis-server must be there.
    static func server() throws -> LocalRedisServer {
        switch started {
        case .success(let server): return server
        case .failure(let error):
            Issue.record("no redis-server for the Redis tests: \(error)")
            throw error
        }
    }

    static func namespace(_ label: String = #function) -> String {
        "test-\(label.prefix { $0 != "(" })-\(UInt32.random(in: 0...UInt32.max))"
    }
}
#endif
