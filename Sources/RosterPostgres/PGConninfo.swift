import RosterCore

/// Conninfo strings as they may be shown: a password never reaches a log line or an error message. One masking
/// serves the whole daemon (config, start-up, copies and this module): `Conninfo` in RosterCore.
public enum PGConninfo {
    public static func masked(_ conninfo: String) -> String { Conninfo.masked(conninfo) }
}
