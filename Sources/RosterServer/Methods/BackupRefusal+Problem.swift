import RosterCore
import RosterStorage

extension BackupRefusal {
    /// The wire's name for a refused backup target (`admin.backup`'s `path`, `rosterd --backup`): the same
    /// stable string.
    package var problem: ParamProblem {
        switch self {
        case .targetExists: .targetExists
        case .notARegularFile: .notARegularFile
        case .liveDatabase: .liveDatabase
        case .badDirectory: .badDirectory
        }
    }
}
