// Only this line runs at top level: top-level code is main-actor isolated, and closures written
// here would trap when run on a dispatch queue. Everything lives in CountdownBenchKit.
import CountdownBenchKit
import Foundation

exit(BenchCommand.run(arguments: BenchCommand.processArguments()))
