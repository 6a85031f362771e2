#if Redis
/// Commands written as Redis' protocol (RESP: `*N`, then `$len` and the bytes of each
/// argument) into one buffer, handed to the connection in one piece: a pipe's write of many
/// calls costs one allocation, where each command passed as an argument vector cost four
/// (perf, 256 callers at once: malloc and free were a tenth of this process's time).
struct RESPWriter {
    private(set) var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(4096) }

    var isEmpty: Bool { bytes.isEmpty }

    mutating func command(_ parts: [String]...) {
        var count = 0
        for part in parts { count += part.count }
        header(UInt8(ascii: "*"), count)
        for part in parts {
            for argument in part {
                var argument = argument
                argument.withUTF8 { utf8 in
                    header(UInt8(ascii: "$"), utf8.count)
                    bytes.append(contentsOf: utf8)
                }
                bytes.append(13)
                bytes.append(10)
            }
        }
    }

    mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    private mutating func header(_ kind: UInt8, _ number: Int) {
        bytes.append(kind)
        if number == 0 {
            bytes.append(UInt8(ascii: "0"))
        } else {
            var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            var n = number, length = 0
            withUnsafeMutableBytes(of: &digits) { buffer in
                while n > 0 {
                    buffer[length] = UInt8(ascii: "0") + UInt8(n % 10)
                    n /= 10
                    length += 1
                }
                for index in stride(from: length - 1, through: 0, by: -1) { bytes.append(buffer[index]) }
            }
        }
        bytes.append(13)
        bytes.append(10)
    }
}
#endif
