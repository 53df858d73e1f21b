import RosterRuntime
import RosterStorage

// The data calls as the server makes them: through `ChargedView`, bound to whoever pays for the work. Each call
// hands its charge to this backend's own method of the same name, which admits the work to the queue under that
// payer's and connection's budgets.
extension InMemoryStorage: ChargedStorageCalls {
    public func acting(for charge: QueueCharge) -> ChargedView<InMemoryStorage> { ChargedView(self, charge: charge) }
}
