import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The machine and build a result was measured on; recorded with every result.
struct Machine: Codable {
    let cpuModel: String
    let cores: Int
    let kernel: String
    let swiftVersion: String
    let buildConfiguration: String

    static var current: Machine {
        Machine(
            cpuModel: cpuModel(), cores: ProcessInfo.processInfo.activeProcessorCount,
            kernel: kernel(), swiftVersion: swiftVersion, buildConfiguration: buildConfiguration)
    }

    static var buildConfiguration: String {
        #if DEBUG
        "debug"
        #else
        "release"
        #endif
    }

    static var isReleaseBuild: Bool { buildConfiguration == "release" }

    /// The compiler this binary was built with (resolved at compile time).
    static var swiftVersion: String {
        #if compiler(>=6.4)
        "6.4 or later"
        #elseif compiler(>=6.3)
        "6.3"
        #elseif compiler(>=6.2)
        "6.2"
        #else
        "6.1"
        #endif
    }

    /// The folder a machine's results go in: its CPU model and cores, lower case, without
    /// trademarks, clock speed or filler ("amd-epyc-2-cores", "intel-xeon-platinum-8375c-2-cores").
    var folderName: String {
        var model = cpuModel
        if let at = model.firstIndex(of: "@") { model = String(model[..<at]) }
        for noise in ["(R)", "(r)", "(TM)", "(tm)"] { model = model.replacingOccurrences(of: noise, with: "") }
        let words = model.lowercased()
            .map { $0.isLetter || $0.isNumber ? String($0) : " " }.joined()
            .split(separator: " ").filter { !["cpu", "processor", "core"].contains($0) }
        return (words + ["\(cores)", "cores"]).joined(separator: "-")
    }

    /// `path` with `{machine}` replaced by this machine's ``folderName``.
    static func expand(_ path: String) -> String {
        path.replacingOccurrences(of: "{machine}", with: current.folderName)
    }

    var summary: String {
        "\(cpuModel), \(cores) cores, Linux \(kernel), Swift \(swiftVersion), \(buildConfiguration) build"
    }

    private static func cpuModel() -> String {
        guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
              let line = info.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
              let value = line.split(separator: ":", maxSplits: 1).last
        else { return "unknown CPU" }
        return value.trimmingCharacters(in: .whitespaces)
    }

    private static func kernel() -> String {
        var name = utsname()
        uname(&name)
        return withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
