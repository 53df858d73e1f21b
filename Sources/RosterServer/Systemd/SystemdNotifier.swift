import RosterRuntime
import CSystemd

/// Tells the service manager about our state through `$NOTIFY_SOCKET`; does nothing when it is unset.
public struct SystemdNotifier: Sendable {
    public init() {}

    /// Sends `KEY=value` lines; the return says whether a manager received them.
    @discardableResult
    public func notify(_ state: String) -> Bool {
        sd_notify(0, state) > 0
    }

    public func ready(status: String? = nil) {
        notify(status.map { "READY=1\nSTATUS=\($0)" } ?? "READY=1")
    }

    public func stopping() { notify("STOPPING=1") }

    public func status(_ text: String) { notify("STATUS=\(text)") }
}

extension SystemdNotifier {
    /// Reload start, as `Type=notify-reload` expects; `READY=1` ends it.
    public func reloading(monotonicMicroseconds: Int64) {
        notify("RELOADING=1\nMONOTONIC_USEC=\(monotonicMicroseconds)")
    }
}
