import Foundation

/// The package's files, for the tests that read them (the README, the articles, `.ci/run`,
/// results/).
enum Repository {
    /// The first folder above this file that holds `Package.swift`: a test file may move between
    /// the test folders without counting its depth again.
    static let root: URL = {
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) {
            precondition(folder.path != "/", "no Package.swift above \(#filePath)")
            folder.deleteLastPathComponent()
        }
        return folder
    }()

    /// The text of the file at `path`, from the package's root.
    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }
}
