import Glibc

/// A failed system call that the caller has to handle (not EINTR, not EAGAIN, not a programming error).
public struct SystemError: Error, CustomStringConvertible, Equatable {
    public let errno: Int32
    public let call: String

    public init(errno: Int32, call: String) {
        self.errno = errno
        self.call = call
    }

    public var description: String { "\(call): \(String(cString: strerror(errno)))" }
}

/// What a non-blocking call did: finished with a value, or would have blocked.
public enum IOResult<Value> {
    case done(Value)
    case wouldBlock
}

/// The single wrapper every system call goes through: EINTR is retried, EAGAIN becomes `.wouldBlock`,
/// EBADF and EFAULT are our bugs, and anything else is thrown with the call's name.
public enum Syscall {
    @inline(__always)
    public static func nonBlocking<T: BinaryInteger>(_ call: String, _ body: () -> T) throws(SystemError) -> IOResult<T> {
        while true {
            let result = body()
            if result >= 0 { return .done(result) }
            let code = Glibc.errno
            switch code {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case EBADF, EFAULT: preconditionFailure("\(call): \(String(cString: strerror(code)))")
            default: throw SystemError(errno: code, call: call)
            }
        }
    }

    /// For calls that never block: EAGAIN is then as much an error as any other.
    @inline(__always)
    @discardableResult
    public static func blocking<T: BinaryInteger>(_ call: String, _ body: () -> T) throws(SystemError) -> T {
        switch try nonBlocking(call, body) {
        case .done(let value): return value
        case .wouldBlock: throw SystemError(errno: EAGAIN, call: call)
        }
    }
}
