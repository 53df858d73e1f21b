/// rosterctl's own words around the daemon's messages, in the session's locale.
struct FormText {
    let title: String
    let button: String
    let notReady: String
    let help: String
    let cancelled: String
    let labels: [String: String]

    func label(_ field: String) -> String { labels[field] ?? field }

    static func forForm(_ form: String, locale: String) -> FormText {
        let words = Words.forLocale(locale)
        let (title, button, labels): (String, String, [String: String])
        switch form {
        case "register":
            (title, button) = (words.registerTitle, words.registerButton)
            labels = ["username": words.username, "password": words.password, "confirm": words.confirm, "email": words.email]
        case "password":
            (title, button) = (words.passwordTitle, words.passwordButton)
            labels = ["current": words.current, "new": words.new, "confirm": words.confirmNew]
        default:
            (title, button) = (words.loginTitle, words.loginButton)
            labels = ["username": words.usernameOrEmail, "password": words.password, "code": words.code]
        }
        return FormText(title: title, button: button, notReady: words.notReady, help: words.help,
                        cancelled: words.cancelled, labels: labels)
    }

    /// Every word of every form in one locale, so a new form cannot leave a language out.
    private struct Words {
        let registerTitle, registerButton, loginTitle, loginButton, passwordTitle, passwordButton: String
        let username, usernameOrEmail, password, confirm, email, code, current, new, confirmNew: String
        let notReady, help, cancelled: String

        static func forLocale(_ locale: String) -> Words {
            switch locale {
            case "zh-Hans":
                return Words(registerTitle: "注册新账号", registerButton: "注册", loginTitle: "登录", loginButton: "登录",
                             passwordTitle: "修改密码", passwordButton: "修改",
                             username: "用户名", usernameOrEmail: "用户名或邮箱", password: "密码", confirm: "确认密码",
                             email: "邮箱", code: "动态验证码", current: "当前密码", new: "新密码", confirmNew: "确认新密码",
                             notReady: "尚未填写完整", help: "Tab/↑↓ 切换 · Enter 提交 · Esc 取消", cancelled: "已取消")
            case "vi":
                return Words(registerTitle: "Đăng ký tài khoản", registerButton: "Đăng ký", loginTitle: "Đăng nhập",
                             loginButton: "Đăng nhập", passwordTitle: "Đổi mật khẩu", passwordButton: "Đổi",
                             username: "Tên người dùng", usernameOrEmail: "Tên hoặc email", password: "Mật khẩu",
                             confirm: "Nhập lại mật khẩu", email: "Email", code: "Mã xác thực", current: "Mật khẩu hiện tại",
                             new: "Mật khẩu mới", confirmNew: "Nhập lại mật khẩu mới",
                             notReady: "chưa điền đủ", help: "Tab/↑↓ di chuyển · Enter gửi · Esc hủy", cancelled: "Đã hủy")
            case "ko":
                return Words(registerTitle: "회원가입", registerButton: "가입", loginTitle: "로그인", loginButton: "로그인",
                             passwordTitle: "비밀번호 변경", passwordButton: "변경",
                             username: "사용자 이름", usernameOrEmail: "사용자 이름 또는 이메일", password: "비밀번호",
                             confirm: "비밀번호 확인", email: "이메일", code: "인증 코드", current: "현재 비밀번호",
                             new: "새 비밀번호", confirmNew: "새 비밀번호 확인",
                             notReady: "아직 입력이 끝나지 않았습니다", help: "Tab/↑↓ 이동 · Enter 제출 · Esc 취소",
                             cancelled: "취소했습니다")
            default:
                return Words(registerTitle: "Create an account", registerButton: "Register", loginTitle: "Log in",
                             loginButton: "Log in", passwordTitle: "Change the password", passwordButton: "Change",
                             username: "Username", usernameOrEmail: "Username or email", password: "Password",
                             confirm: "Confirm password", email: "Email", code: "One-time code", current: "Current password",
                             new: "New password", confirmNew: "Confirm new password",
                             notReady: "not complete yet", help: "Tab/↑↓ move · Enter submit · Esc cancel", cancelled: "Cancelled")
            }
        }
    }
}
