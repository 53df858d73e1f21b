import RosterRuntime
import CSystemd
import Glibc

/// Sockets passed by systemd (`LISTEN_FDS`, `LISTEN_FDNAMES`). Such a socket belongs to systemd: the daemon
/// serves it and never unlinks its file.
public enum SocketActivation {
    /// The passed listening socket named `name` (or the first one, when none carries that name), with its path.
    public static func listener(named name: String = "roster") -> UnixListener? {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        let count = sd_listen_fds_with_names(1, &names)
        guard count > 0 else { return nil }
        var chosen = SD_LISTEN_FDS_START
        if let names {
            for index in 0..<Int(count) {
                if let entry = names[index], String(cString: entry) == name {
                    chosen = SD_LISTEN_FDS_START + Int32(index)
                }
            }
            for index in 0..<Int(count) { free(names[index]) }
            free(names)
        }
        return UnixListener(adopting: chosen, path: boundPath(of: chosen) ?? "(socket from systemd)")
    }

    private static func boundPath(of fd: Int32) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { return nil }
        return withUnsafeBytes(of: address.sun_path) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}

extension SystemdNotifier {
    /// The watchdog interval systemd expects pings within, if it set one for us.
    public var watchdogInterval: Duration? {
        var microseconds: UInt64 = 0
        guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
        return .microseconds(Int64(microseconds))
    }

    public func watchdogPing() { notify("WATCHDOG=1") }
}
