/// What kept a suspend experiment from running (libfaketime missing, a worker that did not
/// start or did not answer), said in one line.
struct SuspendError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
