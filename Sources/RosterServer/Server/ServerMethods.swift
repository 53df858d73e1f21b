import RosterCore
import RosterRuntime
import RosterStorage

/// The daemon's method groups, each given its procedures or storage and its own narrow protocol of the daemon
/// (the session book, or the figures), never the server. They are owned here; the dispatcher's table only points
/// at them.
final class ServerMethods {
    let session: SessionMethods<SessionBook>
    let account: AccountMethods<SessionBook>
    let accountLife: AccountLifeMethods<SessionBook>
    let contacts: ContactsMethods<SessionBook>
    let forms: FormMethods<SessionBook>
    let admin: AdminMethods<ServerFigures>
    let adminUsers: AdminUsersMethods<SessionBook>
    let adminAudit: AdminAuditMethods<SessionBook>
    let passkeys: PasskeyMethods<SessionBook>
    let appPasswords: AppPasswordMethods<SessionBook>

    /// `formScheduler` is the forms' clock and timers: the loop, or a manual clock in a test.
    init(storage: any Storage, accounts: AccountProcedures, contacts: ContactsService, formScheduler: any Scheduler,
         sessions: SessionBook, figures: ServerFigures) {
        session = SessionMethods(accounts: accounts, sessions: sessions)
        account = AccountMethods(accounts: accounts, sessions: sessions)
        accountLife = AccountLifeMethods(accounts: accounts, sessions: sessions)
        self.contacts = ContactsMethods(contacts: contacts, output: sessions)
        forms = FormMethods(scheduler: formScheduler, accounts: accounts, contacts: contacts, forms: sessions)
        admin = AdminMethods(storage: storage, figures: figures)
        adminUsers = AdminUsersMethods(accounts: accounts, sessions: sessions)
        adminAudit = AdminAuditMethods(storage: storage, accounts: accounts, desk: sessions)
        passkeys = PasskeyMethods(accounts: accounts, sessions: sessions)
        appPasswords = AppPasswordMethods(accounts: accounts, sessions: sessions)
    }

    /// Every group's methods, bound, for the dispatcher's table (a name given twice keeps the later entry).
    var all: [Method<Connection>] {
        session.methods + admin.methods + adminUsers.methods + adminAudit.methods + forms.methods + account.methods
            + accountLife.methods + contacts.methods + passkeys.methods
            + appPasswords.methods
    }
}
