/// What `--version`, `session.hello` and `rpc.describe` report.
public enum RosterVersion {
    public static let server = "rosterd"
    public static let version = "0.1.0"
    /// The wire protocol's version; it changes only when a compatible client would break.
    public static let wireProtocol = 1
}
