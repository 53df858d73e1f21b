import RosterCore
import RosterProtocol

/// A method as the dispatcher's table holds it: its spec, how it stands to a change of who the session is, and
/// the code that serves it, bound to its group (`MethodGroup.methods`).
struct Method<Host: CallHost> {
    let spec: MethodSpec
    /// Whether the request waits for a change of who the session is; most do.
    let dependence: SessionDependence
    let serve: (RequestCall<Host>) -> Void
}

/// A group of methods (`session.*`, `contacts.*`, …): a class that serves them, given only its narrow protocol of
/// the daemon, and the table of its entries.
protocol MethodGroup: AnyObject {
    associatedtype Host: CallHost
    /// The group's entries; a handler is handed the group when called, so the table holds no group itself.
    static var table: [MethodEntry<Self>] { get }
}

/// One entry of a group's table: the spec, and the handler that serves a call with the group.
struct MethodEntry<Group: MethodGroup> {
    let spec: MethodSpec
    let handler: (Group, RequestCall<Group.Host>) -> Void
    var dependence: SessionDependence = .identity
}

extension MethodGroup {
    /// The table's entries bound to this group, for the dispatcher. Unowned: whoever owns the group owns the
    /// dispatcher too, and the table must not keep the group alive past it.
    var methods: [Method<Host>] {
        Self.table.map { entry in
            let handler = entry.handler
            return Method(spec: entry.spec, dependence: entry.dependence) { [unowned self] call in handler(self, call) }
        }
    }
}
