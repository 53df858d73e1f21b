import CLinux
import Glibc

/// Turns signals into readable bytes on an fd (signalfd), so a `poll` loop handles them between keystrokes
/// instead of in a handler where almost nothing is safe to do.
final class SignalWatch {
    let fileDescriptor: Int32
    private var previousMask = sigset_t()

    init(_ signals: [Int32]) throws(CommandFailure) {
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in signals { sigaddset(&mask, signal) }
        // Blocked first, so a signal between here and the next poll waits on the fd instead of killing us.
        pthread_sigmask(SIG_BLOCK, &mask, &previousMask)
        fileDescriptor = signalfd(-1, &mask, Int32(SFD_CLOEXEC | SFD_NONBLOCK))
        guard fileDescriptor >= 0 else { throw CommandFailure(description: "signalfd failed: \(String(cString: strerror(errno)))") }
    }

    /// The signals that arrived since the last call, in order.
    func take() -> [Int32] {
        var result: [Int32] = []
        var info = signalfd_siginfo()
        while read(fileDescriptor, &info, MemoryLayout<signalfd_siginfo>.size) == MemoryLayout<signalfd_siginfo>.size {
            result.append(Int32(info.ssi_signo))
        }
        return result
    }

    deinit {
        close(fileDescriptor)
        pthread_sigmask(SIG_SETMASK, &previousMask, nil)
    }
}
