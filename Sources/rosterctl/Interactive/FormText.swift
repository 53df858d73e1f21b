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
        let register = form == "register"
        switch locale {
        case "zh-Hans":
            return FormText(title: register ? "注册新账号" : "登录", button: register ? "注册" : "登录", notReady: "尚未填写完整",
                            help: "Tab/↑↓ 切换 · Enter 提交 · Esc 取消", cancelled: "已取消",
                            labels: ["username": register ? "用户名" : "用户名或邮箱", "password": "密码", "confirm": "确认密码",
                                     "email": "邮箱"])
        case "vi":
            return FormText(title: register ? "Đăng ký tài khoản" : "Đăng nhập", button: register ? "Đăng ký" : "Đăng nhập",
                            notReady: "chưa điền đủ", help: "Tab/↑↓ di chuyển · Enter gửi · Esc hủy", cancelled: "Đã hủy",
                            labels: ["username": register ? "Tên người dùng" : "Tên hoặc email", "password": "Mật khẩu",
                                     "confirm": "Nhập lại mật khẩu", "email": "Email"])
        case "ko":
            return FormText(title: register ? "회원가입" : "로그인", button: register ? "가입" : "로그인", notReady: "아직 입력이 끝나지 않았습니다",
                            help: "Tab/↑↓ 이동 · Enter 제출 · Esc 취소", cancelled: "취소했습니다",
                            labels: ["username": register ? "사용자 이름" : "사용자 이름 또는 이메일", "password": "비밀번호",
                                     "confirm": "비밀번호 확인", "email": "이메일"])
        default:
            return FormText(title: register ? "Create an account" : "Log in", button: register ? "Register" : "Log in",
                            notReady: "not complete yet", help: "Tab/↑↓ move · Enter submit · Esc cancel", cancelled: "Cancelled",
                            labels: ["username": register ? "Username" : "Username or email", "password": "Password",
                                     "confirm": "Confirm password", "email": "Email"])
        }
    }
}
