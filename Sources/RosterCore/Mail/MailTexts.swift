// MailTexts — what each kind of mail says, in each of the daemon's locales.
//
// RULES
//   Every kind has a subject and a body in zh-Hans, en, vi and ko, chosen by exhaustive switches, so a missing
//   text is a compile error rather than a fallback at run time. The words are Swift interpolations of already
//   checked values: the username as registered, the code, its validity in minutes and the recovery link; nothing
//   the user typed is ever read as a template.
//   Each mail says whom it is about (the username), what happened or what to do, and what to do if it was not
//   the reader. The notices carry no code and no link. zh-Hans follows the seeds' plain register (你, 请).

/// A mail's words in one locale: the subject line and the body's text (lines end in "\n").
public struct MailWords: Hashable, Sendable {
    public let subject: String
    public let body: String
}

/// The texts of every kind of mail in every locale.
public enum MailTexts {
    /// What a mail of `kind` about `username` says in `locale`; a code's validity is `minutes`, and a recovery
    /// mail's link is `link` (the other kinds have none and ignore it).
    public static func words(for kind: MailKind, locale: RosterLocale, username: String, minutes: Int,
                             link: String) -> MailWords {
        let name = username
        switch kind {
        case .verification(let code):
            return verification(locale: locale, name: name, code: code.exposed, minutes: minutes)
        case .recovery(let code):
            return recovery(locale: locale, name: name, code: code.exposed, minutes: minutes, link: link)
        case .passwordChanged:
            return passwordChanged(locale: locale, name: name)
        case .emailChanged:
            return emailChanged(locale: locale, name: name)
        case .totpDisabled:
            return totpDisabled(locale: locale, name: name)
        case .recoveryCodesMade:
            return recoveryCodesMade(locale: locale, name: name)
        case .accountDeleted:
            return accountDeleted(locale: locale, name: name)
        }
    }

    private static func verification(locale: RosterLocale, name: String, code: String, minutes: Int) -> MailWords {
        switch locale {
        case .zhHans:
            MailWords(subject: "验证 Roster 账号 \(name) 的邮箱", body: """
                \(name)，你好：

                你的验证码是：

                    \(code)

                请输入这个验证码，确认这个邮箱属于 Roster 账号 \(name)。验证码 \(minutes) 分钟内有效，只能使用一次。

                如果这不是你本人的操作，请忽略这封邮件：这个邮箱不会被验证，账号也不会有任何变化。

                Roster

                """)
        case .en:
            MailWords(subject: "Verify the email address of the Roster account \(name)", body: """
                Hello \(name),

                Your verification code is:

                    \(code)

                Enter it to confirm that this address belongs to the Roster account \(name). The code is valid \
                for \(minutes) minutes and works once.

                If this was not you, ignore this message: the address stays unverified and nothing changes.

                Roster

                """)
        case .vi:
            MailWords(subject: "Xác minh email của tài khoản Roster \(name)", body: """
                Xin chào \(name),

                Mã xác minh của bạn là:

                    \(code)

                Hãy nhập mã này để xác nhận địa chỉ email này thuộc về tài khoản Roster \(name). Mã có hiệu lực \
                trong \(minutes) phút và chỉ dùng được một lần.

                Nếu không phải bạn, hãy bỏ qua thư này: địa chỉ vẫn chưa được xác minh và không có gì thay đổi.

                Roster

                """)
        case .ko:
            MailWords(subject: "Roster 계정 \(name)의 이메일 인증", body: """
                \(name)님, 안녕하세요.

                인증 코드는 다음과 같습니다.

                    \(code)

                이 코드를 입력하면 이 이메일 주소가 Roster 계정 \(name)의 주소로 확인됩니다. 코드는 \(minutes)분 \
                동안 유효하며 한 번만 쓸 수 있습니다.

                본인이 요청하지 않았다면 이 메일을 무시하세요. 주소는 인증되지 않은 채로 남고 아무것도 바뀌지 않습니다.

                Roster

                """)
        }
    }

    private static func recovery(locale: RosterLocale, name: String, code: String, minutes: Int,
                                 link: String) -> MailWords {
        switch locale {
        case .zhHans:
            MailWords(subject: "找回 Roster 账号 \(name)", body: """
                \(name)，你好：

                有人请求找回 Roster 账号 \(name) 并设置新密码。如果是你本人，请打开这个链接：

                \(link)

                或者在请求的页面输入这个验证码：

                    \(code)

                链接和验证码 \(minutes) 分钟内有效，只能使用一次。

                如果这不是你本人的操作，请忽略这封邮件：你的密码不会改变。

                Roster

                """)
        case .en:
            MailWords(subject: "Recover the Roster account \(name)", body: """
                Hello \(name),

                Someone asked to recover the Roster account \(name) and set a new password. If it was you, \
                open this link:

                \(link)

                or enter this code where you asked:

                    \(code)

                The link and the code are valid for \(minutes) minutes and work once.

                If this was not you, ignore this message: your password stays as it is.

                Roster

                """)
        case .vi:
            MailWords(subject: "Khôi phục tài khoản Roster \(name)", body: """
                Xin chào \(name),

                Có người đã yêu cầu khôi phục tài khoản Roster \(name) và đặt mật khẩu mới. Nếu đó là bạn, hãy \
                mở liên kết này:

                \(link)

                hoặc nhập mã này ở nơi bạn đã yêu cầu:

                    \(code)

                Liên kết và mã có hiệu lực trong \(minutes) phút và chỉ dùng được một lần.

                Nếu không phải bạn, hãy bỏ qua thư này: mật khẩu của bạn vẫn giữ nguyên.

                Roster

                """)
        case .ko:
            MailWords(subject: "Roster 계정 \(name) 복구", body: """
                \(name)님, 안녕하세요.

                Roster 계정 \(name)에 대해 계정 복구와 새 비밀번호 설정이 요청되었습니다. 본인이 요청했다면 이 \
                링크를 여세요.

                \(link)

                또는 요청한 곳에 이 코드를 입력하세요.

                    \(code)

                링크와 코드는 \(minutes)분 동안 유효하며 한 번만 쓸 수 있습니다.

                본인이 요청하지 않았다면 이 메일을 무시하세요. 비밀번호는 그대로 유지됩니다.

                Roster

                """)
        }
    }

    private static func passwordChanged(locale: RosterLocale, name: String) -> MailWords {
        switch locale {
        case .zhHans:
            MailWords(subject: "Roster 账号 \(name) 的密码已更改", body: """
                \(name)，你好：

                Roster 账号 \(name) 的密码刚刚被更改，这个账号的其他登录会话都已退出。

                如果是你本人更改的，无需任何操作。

                如果不是你，说明别人可能知道了你的密码：请立即在登录页面点击“忘记密码？”，或用一个恢复码设置新密码，\
                并告诉你的管理员。

                Roster

                """)
        case .en:
            MailWords(subject: "The password of the Roster account \(name) was changed", body: """
                Hello \(name),

                The password of the Roster account \(name) was just changed, and the account's other sessions \
                were logged out.

                If you changed it, there is nothing to do.

                If you did not, someone else may know your password: set a new one at once with "Forgot \
                password?" on the log-in page or with one of your recovery codes, and tell your administrator.

                Roster

                """)
        case .vi:
            MailWords(subject: "Mật khẩu của tài khoản Roster \(name) đã được thay đổi", body: """
                Xin chào \(name),

                Mật khẩu của tài khoản Roster \(name) vừa được thay đổi, và các phiên đăng nhập khác của tài khoản \
                đã bị đăng xuất.

                Nếu chính bạn đã thay đổi, bạn không cần làm gì thêm.

                Nếu không phải bạn, có thể người khác đã biết mật khẩu của bạn: hãy đặt mật khẩu mới ngay bằng \
                "Quên mật khẩu?" ở trang đăng nhập hoặc bằng một mã khôi phục, và báo cho quản trị viên.

                Roster

                """)
        case .ko:
            MailWords(subject: "Roster 계정 \(name)의 비밀번호가 변경되었습니다", body: """
                \(name)님, 안녕하세요.

                Roster 계정 \(name)의 비밀번호가 방금 변경되었고, 이 계정의 다른 세션은 모두 로그아웃되었습니다.

                직접 변경했다면 따로 할 일은 없습니다.

                직접 변경하지 않았다면 다른 사람이 비밀번호를 알고 있을 수 있습니다. 로그인 페이지의 \
                "비밀번호를 잊으셨나요?"나 복구 코드로 즉시 새 비밀번호를 설정하고 관리자에게 알리세요.

                Roster

                """)
        }
    }

    private static func emailChanged(locale: RosterLocale, name: String) -> MailWords {
        switch locale {
        case .zhHans:
            MailWords(subject: "Roster 账号 \(name) 的邮箱已更改", body: """
                \(name)，你好：

                Roster 账号 \(name) 的邮箱已经改成了另一个地址，这个账号的邮件以后会发往新地址，这个邮箱不会再收到。

                如果是你本人更改的，无需任何操作。

                如果不是你，说明别人可能登录了你的账号：请登录并改回邮箱、更改密码，并告诉你的管理员。如果无法登录，请用\
                一个恢复码找回账号（“忘记密码？”的邮件会发往新地址）。

                Roster

                """)
        case .en:
            MailWords(subject: "The email address of the Roster account \(name) was changed", body: """
                Hello \(name),

                The email address of the Roster account \(name) was changed to another one. The account's mail \
                goes there from now on; this address gets no more of it.

                If you changed it, there is nothing to do.

                If you did not, someone else may be using your account: log in, set your address back, change \
                your password and tell your administrator. If you cannot log in, recover the account with one of \
                your recovery codes ("Forgot password?" would mail the new address).

                Roster

                """)
        case .vi:
            MailWords(subject: "Email của tài khoản Roster \(name) đã được thay đổi", body: """
                Xin chào \(name),

                Địa chỉ email của tài khoản Roster \(name) đã được đổi sang một địa chỉ khác. Từ nay thư của tài \
                khoản sẽ gửi đến địa chỉ mới; địa chỉ này sẽ không nhận thêm thư nào nữa.

                Nếu chính bạn đã thay đổi, bạn không cần làm gì thêm.

                Nếu không phải bạn, có thể người khác đang dùng tài khoản của bạn: hãy đăng nhập, đổi lại địa chỉ, \
                đổi mật khẩu và báo cho quản trị viên. Nếu không đăng nhập được, hãy khôi phục tài khoản bằng một \
                mã khôi phục ("Quên mật khẩu?" sẽ gửi thư đến địa chỉ mới).

                Roster

                """)
        case .ko:
            MailWords(subject: "Roster 계정 \(name)의 이메일 주소가 변경되었습니다", body: """
                \(name)님, 안녕하세요.

                Roster 계정 \(name)의 이메일 주소가 다른 주소로 변경되었습니다. 앞으로 이 계정의 메일은 새 주소로 \
                가며, 이 주소로는 더 이상 가지 않습니다.

                직접 변경했다면 따로 할 일은 없습니다.

                직접 변경하지 않았다면 다른 사람이 계정을 쓰고 있을 수 있습니다. 로그인해서 주소를 되돌리고 \
                비밀번호를 바꾼 뒤 관리자에게 알리세요. 로그인할 수 없다면 복구 코드로 계정을 복구하세요 \
                ("비밀번호를 잊으셨나요?" 메일은 새 주소로 갑니다).

                Roster

                """)
        }
    }

    private static func totpDisabled(locale: RosterLocale, name: String) -> MailWords {
        switch locale {
        case .zhHans:
            MailWords(subject: "Roster 账号 \(name) 已关闭两步验证", body: """
                \(name)，你好：

                Roster 账号 \(name) 的两步验证（TOTP）已经关闭，现在只凭密码就能登录。

                如果是你本人关闭的，无需任何操作。

                如果不是你，说明别人可能知道了你的密码：请立即更改密码、重新开启两步验证，并告诉你的管理员。

                Roster

                """)
        case .en:
            MailWords(subject: "Two-step verification was turned off for the Roster account \(name)", body: """
                Hello \(name),

                Two-step verification (TOTP) was turned off for the Roster account \(name). Logging in now takes \
                the password alone.

                If you turned it off, there is nothing to do.

                If you did not, someone else may know your password: change it at once, turn two-step \
                verification back on and tell your administrator.

                Roster

                """)
        case .vi:
            MailWords(subject: "Xác minh hai bước của tài khoản Roster \(name) đã bị tắt", body: """
                Xin chào \(name),

                Xác minh hai bước (TOTP) của tài khoản Roster \(name) đã bị tắt. Giờ đây chỉ cần mật khẩu là \
                đăng nhập được.

                Nếu chính bạn đã tắt, bạn không cần làm gì thêm.

                Nếu không phải bạn, có thể người khác đã biết mật khẩu của bạn: hãy đổi mật khẩu ngay, bật lại \
                xác minh hai bước và báo cho quản trị viên.

                Roster

                """)
        case .ko:
            MailWords(subject: "Roster 계정 \(name)의 2단계 인증이 해제되었습니다", body: """
                \(name)님, 안녕하세요.

                Roster 계정 \(name)의 2단계 인증(TOTP)이 해제되었습니다. 이제 비밀번호만으로 로그인할 수 있습니다.

                직접 해제했다면 따로 할 일은 없습니다.

                직접 해제하지 않았다면 다른 사람이 비밀번호를 알고 있을 수 있습니다. 즉시 비밀번호를 바꾸고 2단계 \
                인증을 다시 켠 뒤 관리자에게 알리세요.

                Roster

                """)
        }
    }

    private static func recoveryCodesMade(locale: RosterLocale, name: String) -> MailWords {
        switch locale {
        case .zhHans:
            MailWords(subject: "Roster 账号 \(name) 生成了新的恢复码", body: """
                \(name)，你好：

                Roster 账号 \(name) 刚刚生成了新的恢复码，之前的恢复码全部失效。

                如果是你本人生成的，请把它们保存在安全的地方。

                如果不是你，说明别人可能登录了你的账号：请立即更改密码、重新生成恢复码，并告诉你的管理员。

                Roster

                """)
        case .en:
            MailWords(subject: "New recovery codes were made for the Roster account \(name)", body: """
                Hello \(name),

                New recovery codes were just made for the Roster account \(name). The codes made before no \
                longer work.

                If you made them, keep them somewhere safe.

                If you did not, someone else may be using your account: change your password at once, make new \
                recovery codes and tell your administrator.

                Roster

                """)
        case .vi:
            MailWords(subject: "Mã khôi phục mới đã được tạo cho tài khoản Roster \(name)", body: """
                Xin chào \(name),

                Các mã khôi phục mới vừa được tạo cho tài khoản Roster \(name). Các mã tạo trước đó không còn \
                dùng được nữa.

                Nếu chính bạn đã tạo, hãy cất giữ chúng ở nơi an toàn.

                Nếu không phải bạn, có thể người khác đang dùng tài khoản của bạn: hãy đổi mật khẩu ngay, tạo mã \
                khôi phục mới và báo cho quản trị viên.

                Roster

                """)
        case .ko:
            MailWords(subject: "Roster 계정 \(name)의 새 복구 코드가 만들어졌습니다", body: """
                \(name)님, 안녕하세요.

                Roster 계정 \(name)의 새 복구 코드가 방금 만들어졌습니다. 이전에 만든 코드는 더 이상 쓸 수 없습니다.

                직접 만들었다면 안전한 곳에 보관하세요.

                직접 만들지 않았다면 다른 사람이 계정을 쓰고 있을 수 있습니다. 즉시 비밀번호를 바꾸고 새 복구 코드를 \
                만든 뒤 관리자에게 알리세요.

                Roster

                """)
        }
    }

    private static func accountDeleted(locale: RosterLocale, name: String) -> MailWords {
        switch locale {
        case .zhHans:
            MailWords(subject: "Roster 账号 \(name) 已删除", body: """
                \(name)，你好：

                Roster 账号 \(name) 已经删除，连同它的联系人和登录会话。这个邮箱不会再收到关于它的邮件。

                如果是你本人删除的，或是你请管理员删除的，无需任何操作。

                如果不是，请立即告诉你的管理员。

                Roster

                """)
        case .en:
            MailWords(subject: "The Roster account \(name) was deleted", body: """
                Hello \(name),

                The Roster account \(name) was deleted, with its contacts and sessions. This address gets no more \
                mail about it.

                If you deleted it, or asked your administrator to, there is nothing to do.

                If not, tell your administrator at once.

                Roster

                """)
        case .vi:
            MailWords(subject: "Tài khoản Roster \(name) đã bị xóa", body: """
                Xin chào \(name),

                Tài khoản Roster \(name) đã bị xóa, cùng với danh bạ và các phiên đăng nhập của nó. Địa chỉ này sẽ \
                không nhận thêm thư nào về tài khoản đó nữa.

                Nếu chính bạn đã xóa, hoặc đã nhờ quản trị viên xóa, bạn không cần làm gì thêm.

                Nếu không phải, hãy báo ngay cho quản trị viên.

                Roster

                """)
        case .ko:
            MailWords(subject: "Roster 계정 \(name) 삭제 안내", body: """
                \(name)님, 안녕하세요.

                Roster 계정 \(name)의 연락처와 세션을 포함한 모든 정보가 삭제되었습니다. 이 주소로는 더 이상 이 계정에 \
                관한 메일이 가지 않습니다.

                직접 삭제했거나 관리자에게 삭제를 요청했다면 따로 할 일은 없습니다.

                그렇지 않다면 즉시 관리자에게 알리세요.

                Roster

                """)
        }
    }
}
