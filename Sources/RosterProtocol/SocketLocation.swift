/// Where the daemon's socket is when nobody says otherwise; the daemon and its clients agree through this.
public enum SocketLocation {
    public static let systemPath = "/run/roster/roster.sock"

    /// `$ROSTER_SOCKET`, else the system path for root, else `$XDG_RUNTIME_DIR/roster/roster.sock`;
    /// nil when none applies (a user session without XDG_RUNTIME_DIR).
    public static func defaultPath(environment: [String: String], isRoot: Bool) -> String? {
        if let explicit = environment["ROSTER_SOCKET"], !explicit.isEmpty { return explicit }
        if isRoot { return systemPath }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return "\(runtime)/roster/roster.sock" }
        return nil
    }
}
