import Glibc

/// Room for one `struct termios` that C may fill completely. Swift's `termios` lays out shorter than glibc's
/// (60 bytes with c_ispeed/c_ospeed), so a Swift `var termios()` handed to tcgetattr is overrun; AddressSanitizer
/// caught exactly that. Heap storage with slack is always large enough.
final class TerminalSettings: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<termios>

    init() {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: 128, alignment: 16)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: 128)
        pointer = raw.bindMemory(to: termios.self, capacity: 1)
    }

    deinit { UnsafeMutableRawPointer(pointer).deallocate() }

    /// Reads `fd`'s settings; false when it is not a terminal.
    func load(from fd: Int32) -> Bool { tcgetattr(fd, pointer) == 0 }

    /// Applies these settings to `fd` at once (TCSANOW: keys typed ahead stay).
    @discardableResult
    func apply(to fd: Int32) -> Bool { tcsetattr(fd, TCSANOW, pointer) == 0 }

    /// A copy whose fields can be changed without touching these.
    func copy() -> TerminalSettings {
        let other = TerminalSettings()
        UnsafeMutableRawPointer(other.pointer).copyMemory(from: pointer, byteCount: 128)
        return other
    }
}
