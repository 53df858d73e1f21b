/// Texts of form verdicts (`<field>.<code>`) and submit outcomes (`<form>.<code>`) in every locale. The form
/// `password` and the field `password` share a prefix; their codes never meet (the table refuses a key twice).
/// zh-Hans is the seeds' own wording; numbers from the policy are `{min}`/`{max}` placeholders.
enum FormMessages {
    static let table: [String: [RosterLocale: String]] = fieldTexts.merging(submitTexts) { _, _ in
        preconditionFailure("a form message key is defined twice")
    }

    private static let fieldTexts: [String: [RosterLocale: String]] = [
        // username
        "username.empty": [
            .zhHans: "请输入用户名", .en: "Enter a username",
            .vi: "Vui lòng nhập tên đăng nhập", .ko: "아이디를 입력하세요",
        ],
        "username.validating": [
            .zhHans: "校验中…", .en: "Checking…", .vi: "Đang kiểm tra…", .ko: "확인하는 중…",
        ],
        "username.too_short": [
            .zhHans: "用户名长度至少为{min}位", .en: "The username must be at least {min} characters long",
            .vi: "Tên đăng nhập phải có ít nhất {min} ký tự", .ko: "아이디는 {min}자 이상이어야 합니다",
        ],
        "username.too_long": [
            .zhHans: "用户名长度最多为{max}位", .en: "The username must be at most {max} characters long",
            .vi: "Tên đăng nhập chỉ được dài tối đa {max} ký tự", .ko: "아이디는 {max}자 이하여야 합니다",
        ],
        "username.forbidden_characters": [
            .zhHans: "用户名不能包含空格或!@#$%^&*()等特殊字符",
            .en: "The username must not contain spaces or special characters such as !@#$%^&*()",
            .vi: "Tên đăng nhập không được chứa khoảng trắng hay ký tự đặc biệt như !@#$%^&*()",
            .ko: "아이디에는 공백이나 !@#$%^&*() 같은 특수 문자를 쓸 수 없습니다",
        ],
        "username.disallowed_character": [
            .zhHans: "用户名包含不能使用的字符（如表情符号、不可见字符或花体字母）",
            .en: "The username contains a character that usernames cannot hold (such as an emoji, an invisible character or a styled letter)",
            .vi: "Tên đăng nhập chứa ký tự không được dùng (như biểu tượng cảm xúc, ký tự vô hình hoặc chữ kiểu cách)",
            .ko: "아이디에 쓸 수 없는 문자(이모지, 보이지 않는 문자, 장식 글자 등)가 들어 있습니다",
        ],
        "username.bidi_rule": [
            .zhHans: "用户名中从右向左书写的文字排列不符合规则",
            .en: "The username mixes right-to-left text with other characters in a way that is not allowed",
            .vi: "Tên đăng nhập trộn chữ viết từ phải sang trái với ký tự khác theo cách không được phép",
            .ko: "아이디에 오른쪽에서 왼쪽으로 쓰는 문자가 허용되지 않는 방식으로 섞여 있습니다",
        ],
        "username.mixed_script": [
            .zhHans: "用户名不能混用多种文字（例如拉丁字母和西里尔字母）",
            .en: "The username must not mix writing systems (such as Latin and Cyrillic letters)",
            .vi: "Tên đăng nhập không được trộn nhiều hệ chữ viết (ví dụ chữ Latinh và chữ Kirin)",
            .ko: "아이디에 여러 문자 체계(예: 라틴 문자와 키릴 문자)를 섞어 쓸 수 없습니다",
        ],
        "username.taken": [
            .zhHans: "用户名已存在", .en: "This username is already taken",
            .vi: "Tên đăng nhập này đã có người sử dụng", .ko: "이미 사용 중인 아이디입니다",
        ],
        "username.available": [
            .zhHans: "用户名可用", .en: "The username is available",
            .vi: "Tên đăng nhập có thể sử dụng", .ko: "사용할 수 있는 아이디입니다",
        ],
        "username.not_found": [
            .zhHans: "用户名不存在", .en: "There is no such user",
            .vi: "Tên đăng nhập không tồn tại", .ko: "존재하지 않는 아이디입니다",
        ],
        "username.entered": [
            .zhHans: "已输入用户名", .en: "Username entered",
            .vi: "Đã nhập tên đăng nhập", .ko: "아이디를 입력했습니다",
        ],
        "username.check_failed": [
            .zhHans: "用户名检测出错", .en: "The username could not be checked; try again",
            .vi: "Không kiểm tra được tên đăng nhập, vui lòng thử lại", .ko: "아이디를 확인하지 못했습니다. 다시 시도하세요",
        ],
        // password
        "password.empty": [
            .zhHans: "请输入密码", .en: "Enter a password", .vi: "Vui lòng nhập mật khẩu", .ko: "비밀번호를 입력하세요",
        ],
        "password.validating": [
            .zhHans: "校验中…", .en: "Checking…", .vi: "Đang kiểm tra…", .ko: "확인하는 중…",
        ],
        "password.too_short": [
            .zhHans: "密码长度至少为{min}位", .en: "The password must be at least {min} characters long",
            .vi: "Mật khẩu phải có ít nhất {min} ký tự", .ko: "비밀번호는 {min}자 이상이어야 합니다",
        ],
        "password.too_long": [
            .zhHans: "密码长度最多为{max}位", .en: "The password must be at most {max} characters long",
            .vi: "Mật khẩu chỉ được dài tối đa {max} ký tự", .ko: "비밀번호는 {max}자 이하여야 합니다",
        ],
        "password.forbidden_characters": [
            .zhHans: "密码包含不允许使用的字符", .en: "The password contains characters that are not allowed",
            .vi: "Mật khẩu chứa ký tự không được phép dùng", .ko: "비밀번호에 쓸 수 없는 문자가 들어 있습니다",
        ],
        "password.valid": [
            .zhHans: "密码可用", .en: "The password can be used",
            .vi: "Mật khẩu hợp lệ", .ko: "사용할 수 있는 비밀번호입니다",
        ],
        "password.entered": [
            .zhHans: "已输入密码", .en: "Password entered", .vi: "Đã nhập mật khẩu", .ko: "비밀번호를 입력했습니다",
        ],
        "password.check_failed": [
            .zhHans: "密码检测出错", .en: "The password could not be checked; try again",
            .vi: "Không kiểm tra được mật khẩu, vui lòng thử lại", .ko: "비밀번호를 확인하지 못했습니다. 다시 시도하세요",
        ],
        "password.weak": [
            .zhHans: "密码强度太弱", .en: "This password is too weak",
            .vi: "Mật khẩu quá yếu", .ko: "비밀번호가 너무 약합니다",
        ],
        "password.dictionary_word": [
            .zhHans: "密码基于字典中的单词，太容易被猜到",
            .en: "The password is based on a dictionary word and is easy to guess",
            .vi: "Mật khẩu dựa trên một từ trong từ điển nên rất dễ đoán",
            .ko: "사전에 있는 단어를 바탕으로 해서 추측하기 쉬운 비밀번호입니다",
        ],
        "password.contains_username": [
            .zhHans: "密码不能包含用户名", .en: "The password must not contain the username",
            .vi: "Mật khẩu không được chứa tên đăng nhập", .ko: "비밀번호에 아이디가 들어가면 안 됩니다",
        ],
        "password.too_simple": [
            .zhHans: "密码过于简单或有规律", .en: "The password is too simple or predictable",
            .vi: "Mật khẩu quá đơn giản hoặc dễ đoán", .ko: "비밀번호가 너무 단순하거나 규칙적입니다",
        ],
        // confirm
        "confirm.empty": [
            .zhHans: "请再次输入密码", .en: "Enter the password again",
            .vi: "Vui lòng nhập lại mật khẩu", .ko: "비밀번호를 한 번 더 입력하세요",
        ],
        "confirm.mismatch": [
            .zhHans: "两次密码不一样", .en: "The passwords do not match",
            .vi: "Hai mật khẩu không khớp", .ko: "비밀번호가 일치하지 않습니다",
        ],
        "confirm.valid": [
            .zhHans: "密码可用", .en: "The passwords match", .vi: "Hai mật khẩu khớp nhau", .ko: "비밀번호가 일치합니다",
        ],
        // current (the password form: verified only on submit)
        "current.empty": [
            .zhHans: "请输入当前密码", .en: "Enter your current password",
            .vi: "Vui lòng nhập mật khẩu hiện tại", .ko: "현재 비밀번호를 입력하세요",
        ],
        "current.entered": [
            .zhHans: "已输入当前密码", .en: "Current password entered",
            .vi: "Đã nhập mật khẩu hiện tại", .ko: "현재 비밀번호를 입력했습니다",
        ],
        // new (the password form: the register form's password rules, and same_as_current)
        "new.empty": [
            .zhHans: "请输入新密码", .en: "Enter a new password",
            .vi: "Vui lòng nhập mật khẩu mới", .ko: "새 비밀번호를 입력하세요",
        ],
        "new.validating": [
            .zhHans: "校验中…", .en: "Checking…", .vi: "Đang kiểm tra…", .ko: "확인하는 중…",
        ],
        "new.too_short": [
            .zhHans: "新密码长度至少为{min}位", .en: "The new password must be at least {min} characters long",
            .vi: "Mật khẩu mới phải có ít nhất {min} ký tự", .ko: "새 비밀번호는 {min}자 이상이어야 합니다",
        ],
        "new.too_long": [
            .zhHans: "新密码长度最多为{max}位", .en: "The new password must be at most {max} characters long",
            .vi: "Mật khẩu mới chỉ được dài tối đa {max} ký tự", .ko: "새 비밀번호는 {max}자 이하여야 합니다",
        ],
        "new.forbidden_characters": [
            .zhHans: "新密码包含不允许使用的字符", .en: "The new password contains characters that are not allowed",
            .vi: "Mật khẩu mới chứa ký tự không được phép dùng", .ko: "새 비밀번호에 쓸 수 없는 문자가 들어 있습니다",
        ],
        "new.same_as_current": [
            .zhHans: "新密码不能与当前密码相同", .en: "The new password must differ from the current one",
            .vi: "Mật khẩu mới phải khác mật khẩu hiện tại", .ko: "새 비밀번호는 현재 비밀번호와 달라야 합니다",
        ],
        "new.valid": [
            .zhHans: "新密码可用", .en: "The new password can be used",
            .vi: "Mật khẩu mới hợp lệ", .ko: "사용할 수 있는 새 비밀번호입니다",
        ],
        "new.check_failed": [
            .zhHans: "新密码检测出错", .en: "The new password could not be checked; try again",
            .vi: "Không kiểm tra được mật khẩu mới, vui lòng thử lại",
            .ko: "새 비밀번호를 확인하지 못했습니다. 다시 시도하세요",
        ],
        "new.weak": [
            .zhHans: "新密码强度太弱", .en: "This new password is too weak",
            .vi: "Mật khẩu mới quá yếu", .ko: "새 비밀번호가 너무 약합니다",
        ],
        "new.dictionary_word": [
            .zhHans: "新密码基于字典中的单词，太容易被猜到",
            .en: "The new password is based on a dictionary word and is easy to guess",
            .vi: "Mật khẩu mới dựa trên một từ trong từ điển nên rất dễ đoán",
            .ko: "사전에 있는 단어를 바탕으로 해서 추측하기 쉬운 새 비밀번호입니다",
        ],
        "new.contains_username": [
            .zhHans: "新密码不能包含用户名", .en: "The new password must not contain the username",
            .vi: "Mật khẩu mới không được chứa tên đăng nhập", .ko: "새 비밀번호에 아이디가 들어가면 안 됩니다",
        ],
        "new.too_simple": [
            .zhHans: "新密码过于简单或有规律", .en: "The new password is too simple or predictable",
            .vi: "Mật khẩu mới quá đơn giản hoặc dễ đoán", .ko: "새 비밀번호가 너무 단순하거나 규칙적입니다",
        ],
        // code (the login form's one-time code, once the account asked for one)
        "code.empty": [
            .zhHans: "请输入身份验证器上的 6 位验证码", .en: "Enter the 6-digit code from your authenticator app",
            .vi: "Vui lòng nhập mã 6 chữ số từ ứng dụng xác thực",
            .ko: "인증 앱에 표시된 6자리 코드를 입력하세요",
        ],
        "code.not_six_digits": [
            .zhHans: "验证码应为6位数字", .en: "The code is 6 digits",
            .vi: "Mã phải gồm 6 chữ số", .ko: "코드는 6자리 숫자입니다",
        ],
        "code.valid": [
            .zhHans: "已输入验证码", .en: "Code entered", .vi: "Đã nhập mã", .ko: "코드를 입력했습니다",
        ],
        // email
        "email.empty": [
            .zhHans: "邮箱为选填项", .en: "Email is optional",
            .vi: "Email là không bắt buộc", .ko: "이메일은 선택 사항입니다",
        ],
        "email.validating": [
            .zhHans: "校验中…", .en: "Checking…", .vi: "Đang kiểm tra…", .ko: "확인하는 중…",
        ],
        "email.too_long": [
            .zhHans: "邮箱地址最多为{max}个字符", .en: "The email address must be at most {max} characters long",
            .vi: "Địa chỉ email chỉ được dài tối đa {max} ký tự", .ko: "이메일 주소는 {max}자 이하여야 합니다",
        ],
        "email.invalid_email": [
            .zhHans: "邮箱格式不正确", .en: "This is not a valid email address",
            .vi: "Địa chỉ email không hợp lệ", .ko: "올바른 이메일 주소가 아닙니다",
        ],
        "email.taken": [
            .zhHans: "该邮箱已被注册", .en: "This email address is already registered",
            .vi: "Email này đã được đăng ký", .ko: "이미 가입된 이메일입니다",
        ],
        "email.valid": [
            .zhHans: "邮箱可用", .en: "The email address can be used",
            .vi: "Email có thể sử dụng", .ko: "사용할 수 있는 이메일입니다",
        ],
        "email.check_failed": [
            .zhHans: "邮箱检测出错", .en: "The email address could not be checked; try again",
            .vi: "Không kiểm tra được email, vui lòng thử lại", .ko: "이메일을 확인하지 못했습니다. 다시 시도하세요",
        ],
    ]

    private static let submitTexts: [String: [RosterLocale: String]] = [
        "register.running": [
            .zhHans: "注册中…", .en: "Signing up…", .vi: "Đang đăng ký…", .ko: "가입하는 중…",
        ],
        "register.succeeded": [
            .zhHans: "注册成功", .en: "Signed up successfully", .vi: "Đăng ký thành công", .ko: "회원가입이 완료되었습니다",
        ],
        "register.failed": [
            .zhHans: "注册失败", .en: "Sign-up failed", .vi: "Đăng ký thất bại", .ko: "회원가입에 실패했습니다",
        ],
        "register.not_submittable": [
            .zhHans: "注册失败：表单尚未填写完整", .en: "Sign-up failed: the form is not complete",
            .vi: "Đăng ký thất bại: biểu mẫu chưa được điền đầy đủ", .ko: "회원가입에 실패했습니다. 양식을 모두 채워 주세요",
        ],
        "register.taken": [
            .zhHans: "注册失败：用户名或邮箱已被使用", .en: "Sign-up failed: the username or email is already taken",
            .vi: "Đăng ký thất bại: tên đăng nhập hoặc email đã có người sử dụng",
            .ko: "회원가입에 실패했습니다. 아이디나 이메일이 이미 사용 중입니다",
        ],
        "register.busy": [
            .zhHans: "注册失败：服务器繁忙，请稍后再试", .en: "Sign-up failed: the server is busy; try again later",
            .vi: "Đăng ký thất bại: máy chủ đang bận, vui lòng thử lại sau",
            .ko: "회원가입에 실패했습니다. 서버가 바쁘니 잠시 후 다시 시도하세요",
        ],
        "register.storage_full": [
            .zhHans: "注册失败：存储空间已满", .en: "Sign-up failed: storage is full",
            .vi: "Đăng ký thất bại: bộ nhớ đã đầy", .ko: "회원가입에 실패했습니다. 저장 공간이 가득 찼습니다",
        ],
        "register.storage_unavailable": [
            .zhHans: "注册失败：暂时无法连接数据库，请稍后再试",
            .en: "Sign-up failed: the database cannot be reached right now; try again later",
            .vi: "Đăng ký thất bại: tạm thời không kết nối được cơ sở dữ liệu, vui lòng thử lại sau",
            .ko: "회원가입에 실패했습니다. 지금은 데이터베이스에 연결할 수 없으니 잠시 후 다시 시도하세요",
        ],
        "login.running": [
            .zhHans: "登录中…", .en: "Logging in…", .vi: "Đang đăng nhập…", .ko: "로그인하는 중…",
        ],
        "login.succeeded": [
            .zhHans: "登录成功", .en: "Logged in successfully", .vi: "Đăng nhập thành công", .ko: "로그인되었습니다",
        ],
        "login.failed": [
            .zhHans: "登录失败", .en: "Login failed", .vi: "Đăng nhập thất bại", .ko: "로그인에 실패했습니다",
        ],
        "login.not_submittable": [
            .zhHans: "请先填写用户名和密码", .en: "Enter your username and password first",
            .vi: "Vui lòng nhập tên đăng nhập và mật khẩu trước", .ko: "아이디와 비밀번호를 먼저 입력하세요",
        ],
        "login.not_found": [
            .zhHans: "用户名不存在", .en: "There is no such user",
            .vi: "Tên đăng nhập không tồn tại", .ko: "존재하지 않는 아이디입니다",
        ],
        "login.wrong_password": [
            .zhHans: "密码错误", .en: "Wrong password", .vi: "Sai mật khẩu", .ko: "비밀번호가 틀렸습니다",
        ],
        "login.invalid_credentials": [
            .zhHans: "用户名或密码错误", .en: "Wrong username or password",
            .vi: "Sai tên đăng nhập hoặc mật khẩu", .ko: "아이디 또는 비밀번호가 틀렸습니다",
        ],
        "login.rate_limited": [
            .zhHans: "尝试次数过多，请稍后再试", .en: "Too many attempts; try again later",
            .vi: "Thử quá nhiều lần, vui lòng thử lại sau", .ko: "시도가 너무 많습니다. 잠시 후 다시 시도하세요",
        ],
        "login.busy": [
            .zhHans: "服务器繁忙，请稍后再试", .en: "The server is busy; try again later",
            .vi: "Máy chủ đang bận, vui lòng thử lại sau", .ko: "서버가 바쁩니다. 잠시 후 다시 시도하세요",
        ],
        "login.storage_unavailable": [
            .zhHans: "登录失败：暂时无法连接数据库，请稍后再试",
            .en: "Login failed: the database cannot be reached right now; try again later",
            .vi: "Đăng nhập thất bại: tạm thời không kết nối được cơ sở dữ liệu, vui lòng thử lại sau",
            .ko: "로그인에 실패했습니다. 지금은 데이터베이스에 연결할 수 없으니 잠시 후 다시 시도하세요",
        ],
        // As the answer's error says them (error.code_required, error.invalid_code), so the two read alike.
        "login.code_required": [
            .zhHans: "密码正确，请输入身份验证器上的 6 位验证码",
            .en: "The password is right; enter the 6-digit code from your authenticator app",
            .vi: "Mật khẩu đúng; hãy nhập mã 6 chữ số từ ứng dụng xác thực",
            .ko: "비밀번호가 맞습니다. 인증 앱의 6자리 코드를 입력하세요",
        ],
        "login.locked": [
            .zhHans: "登录失败：此账户已被管理员锁定", .en: "Login failed: an administrator has locked this account",
            .vi: "Đăng nhập thất bại: quản trị viên đã khóa tài khoản này", .ko: "로그인에 실패했습니다. 관리자가 이 계정을 잠갔습니다",
        ],
        "login.invalid_code": [
            .zhHans: "验证码错误、已使用或已过期", .en: "The code is wrong, used already or expired",
            .vi: "Mã sai, đã dùng hoặc đã hết hạn", .ko: "코드가 틀렸거나 이미 사용되었거나 만료되었습니다",
        ],
        "password.running": [
            .zhHans: "修改密码中…", .en: "Changing the password…", .vi: "Đang đổi mật khẩu…", .ko: "비밀번호를 바꾸는 중…",
        ],
        "password.succeeded": [
            .zhHans: "密码修改成功", .en: "Password changed", .vi: "Đổi mật khẩu thành công", .ko: "비밀번호가 바뀌었습니다",
        ],
        "password.failed": [
            .zhHans: "密码修改失败", .en: "The password could not be changed",
            .vi: "Đổi mật khẩu thất bại", .ko: "비밀번호를 바꾸지 못했습니다",
        ],
        "password.not_submittable": [
            .zhHans: "密码修改失败：表单尚未填写完整", .en: "The password could not be changed: the form is not complete",
            .vi: "Đổi mật khẩu thất bại: biểu mẫu chưa được điền đầy đủ",
            .ko: "비밀번호를 바꾸지 못했습니다. 양식을 모두 채워 주세요",
        ],
        "password.wrong_password": [
            .zhHans: "当前密码错误", .en: "The current password is wrong",
            .vi: "Mật khẩu hiện tại không đúng", .ko: "현재 비밀번호가 틀렸습니다",
        ],
        "password.invalid_credentials": [
            .zhHans: "当前密码错误", .en: "The current password is wrong",
            .vi: "Mật khẩu hiện tại không đúng", .ko: "현재 비밀번호가 틀렸습니다",
        ],
        "password.rate_limited": [
            .zhHans: "尝试次数过多，请稍后再试", .en: "Too many attempts; try again later",
            .vi: "Thử quá nhiều lần, vui lòng thử lại sau", .ko: "시도가 너무 많습니다. 잠시 후 다시 시도하세요",
        ],
        "password.busy": [
            .zhHans: "密码修改失败：服务器繁忙，请稍后再试",
            .en: "The password could not be changed: the server is busy; try again later",
            .vi: "Đổi mật khẩu thất bại: máy chủ đang bận, vui lòng thử lại sau",
            .ko: "비밀번호를 바꾸지 못했습니다. 서버가 바쁘니 잠시 후 다시 시도하세요",
        ],
        "password.storage_full": [
            .zhHans: "密码修改失败：存储空间已满", .en: "The password could not be changed: storage is full",
            .vi: "Đổi mật khẩu thất bại: bộ nhớ đã đầy", .ko: "비밀번호를 바꾸지 못했습니다. 저장 공간이 가득 찼습니다",
        ],
        "password.storage_unavailable": [
            .zhHans: "密码修改失败：暂时无法连接数据库，请稍后再试",
            .en: "The password could not be changed: the database cannot be reached right now; try again later",
            .vi: "Đổi mật khẩu thất bại: tạm thời không kết nối được cơ sở dữ liệu, vui lòng thử lại sau",
            .ko: "비밀번호를 바꾸지 못했습니다. 지금은 데이터베이스에 연결할 수 없으니 잠시 후 다시 시도하세요",
        ],
    ]
}
