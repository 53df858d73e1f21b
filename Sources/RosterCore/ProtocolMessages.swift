/// Texts for the failures of the wire and of requests in general, in every locale.
enum ProtocolMessages {
    static let table: [String: [RosterLocale: String]] = [
        "error.parse_error": [
            .zhHans: "请求不是有效的 JSON", .en: "The request is not valid JSON",
            .vi: "Yêu cầu không phải là JSON hợp lệ", .ko: "요청이 올바른 JSON이 아닙니다",
        ],
        "error.invalid_request.batch_unsupported": [
            .zhHans: "不支持批量请求，请每行发送一个对象", .en: "Batches are not supported; send one object per line",
            .vi: "Không hỗ trợ gửi theo lô; hãy gửi mỗi dòng một đối tượng",
            .ko: "일괄 요청은 지원하지 않습니다. 한 줄에 객체 하나씩 보내세요",
        ],
        "error.invalid_request.not_an_object": [
            .zhHans: "请求必须是 JSON 对象", .en: "A request must be a JSON object",
            .vi: "Yêu cầu phải là một đối tượng JSON", .ko: "요청은 JSON 객체여야 합니다",
        ],
        "error.invalid_request.invalid_id": [
            .zhHans: "id 必须是字符串、数字或 null", .en: "The id must be a string, a number or null",
            .vi: "id phải là chuỗi, số hoặc null", .ko: "id는 문자열, 숫자 또는 null이어야 합니다",
        ],
        "error.invalid_request.invalid_version": [
            .zhHans: "jsonrpc 必须是 \"2.0\"", .en: "jsonrpc must be \"2.0\"",
            .vi: "jsonrpc phải là \"2.0\"", .ko: "jsonrpc는 \"2.0\"이어야 합니다",
        ],
        "error.invalid_request.missing_method": [
            .zhHans: "请求缺少 method", .en: "The request has no method",
            .vi: "Yêu cầu thiếu method", .ko: "요청에 method가 없습니다",
        ],
        "error.invalid_request.invalid_method": [
            .zhHans: "method 必须是字符串", .en: "The method must be a string",
            .vi: "method phải là chuỗi", .ko: "method는 문자열이어야 합니다",
        ],
        "error.invalid_request.unknown_member": [
            .zhHans: "请求只能包含 jsonrpc、id、method 和 params", .en: "A request may only hold jsonrpc, id, method and params",
            .vi: "Yêu cầu chỉ được chứa jsonrpc, id, method và params",
            .ko: "요청에는 jsonrpc, id, method, params만 넣을 수 있습니다",
        ],
        "error.invalid_request.duplicate_member": [
            .zhHans: "请求中同一个对象里有重复的键", .en: "The request holds the same key twice in one object",
            .vi: "Yêu cầu có một khóa lặp lại hai lần trong cùng một đối tượng",
            .ko: "요청의 한 객체 안에 같은 키가 두 번 들어 있습니다",
        ],
        "error.request_too_large": [
            .zhHans: "请求超过 {limit} 字节，已丢弃", .en: "The request is longer than {limit} bytes and was discarded",
            .vi: "Yêu cầu dài hơn {limit} byte và đã bị bỏ qua", .ko: "요청이 {limit}바이트를 넘어 버려졌습니다",
        ],
        "error.method_not_found": [
            .zhHans: "没有方法 {method}", .en: "There is no method {method}",
            .vi: "Không có phương thức {method}", .ko: "{method} 메서드가 없습니다",
        ],
        "error.missing_param": [
            .zhHans: "缺少参数 {param}", .en: "The parameter {param} is missing",
            .vi: "Thiếu tham số {param}", .ko: "{param} 매개변수가 없습니다",
        ],
        "error.wrong_type": [
            .zhHans: "参数 {param} 的类型不对", .en: "The parameter {param} has the wrong type",
            .vi: "Tham số {param} sai kiểu", .ko: "{param} 매개변수의 형식이 잘못되었습니다",
        ],
        "error.out_of_range": [
            .zhHans: "参数 {param} 超出范围", .en: "The parameter {param} is out of range",
            .vi: "Tham số {param} nằm ngoài phạm vi cho phép", .ko: "{param} 매개변수가 허용 범위를 벗어났습니다",
        ],
        "error.not_a_time": [
            .zhHans: "参数 {param} 不是 RFC 3339 时间（例如 2026-12-01T19:00:00Z）",
            .en: "The parameter {param} is not an RFC 3339 time such as 2026-12-01T19:00:00Z",
            .vi: "Tham số {param} không phải thời gian RFC 3339 (ví dụ 2026-12-01T19:00:00Z)",
            .ko: "{param} 매개변수가 RFC 3339 시각(예: 2026-12-01T19:00:00Z)이 아닙니다",
        ],
        "error.not_an_address": [
            .zhHans: "参数 {param} 不是 IPv4 或 IPv6 地址（不带端口、方括号或区域，例如 203.0.113.5 或 2001:db8::1）",
            .en: "The parameter {param} is not an IPv4 or IPv6 address without port, brackets or zone, such as "
                + "203.0.113.5 or 2001:db8::1",
            .vi: "Tham số {param} không phải địa chỉ IPv4 hoặc IPv6 (không có cổng, dấu ngoặc vuông hay vùng), "
                + "ví dụ 203.0.113.5 hoặc 2001:db8::1",
            .ko: "{param} 매개변수가 포트, 대괄호, 영역 없는 IPv4 또는 IPv6 주소(예: 203.0.113.5, 2001:db8::1)가 아닙니다",
        ],
        "error.too_long": [
            .zhHans: "参数 {param} 太长", .en: "The parameter {param} is too long",
            .vi: "Tham số {param} quá dài", .ko: "{param} 매개변수가 너무 깁니다",
        ],
        "error.control_character": [
            .zhHans: "参数 {param} 含有控制字符、换行或双向文本控制符",
            .en: "The parameter {param} holds a control character, a line break or a bidi control",
            .vi: "Tham số {param} chứa ký tự điều khiển, dấu xuống dòng hoặc ký tự điều khiển hướng văn bản",
            .ko: "{param} 매개변수에 제어 문자, 줄바꿈 또는 양방향 제어 문자가 들어 있습니다",
        ],
        "error.unknown_param": [
            .zhHans: "未知参数 {param}", .en: "Unknown parameter {param}",
            .vi: "Tham số không xác định {param}", .ko: "알 수 없는 매개변수 {param}",
        ],
        "error.unsupported_locale": [
            .zhHans: "不支持该语言，可用：zh-Hans、en、vi、ko", .en: "Unsupported locale; use zh-Hans, en, vi or ko",
            .vi: "Ngôn ngữ không được hỗ trợ; hãy dùng zh-Hans, en, vi hoặc ko",
            .ko: "지원하지 않는 언어입니다. zh-Hans, en, vi, ko 중 하나를 쓰세요",
        ],
        "error.target_exists": [
            .zhHans: "备份路径已存在，备份从不覆盖文件，请换一个新路径",
            .en: "Something already exists at the backup path; a backup never replaces a file, so choose a new path",
            .vi: "Đường dẫn sao lưu đã tồn tại; bản sao lưu không bao giờ ghi đè tệp, hãy chọn đường dẫn mới",
            .ko: "백업 경로에 이미 무언가가 있습니다. 백업은 파일을 덮어쓰지 않으니 새 경로를 고르세요",
        ],
        "error.not_a_regular_file": [
            .zhHans: "备份路径指向的不是普通文件（目录、设备或其他特殊文件）",
            .en: "The backup path names a directory, a device or another special file, not a regular file",
            .vi: "Đường dẫn sao lưu là thư mục, thiết bị hoặc tệp đặc biệt, không phải tệp thường",
            .ko: "백업 경로가 일반 파일이 아니라 디렉터리, 장치 또는 다른 특수 파일입니다",
        ],
        "error.live_database": [
            .zhHans: "备份路径是正在使用的数据库或其附属文件，已拒绝",
            .en: "The backup path is the live database or one of its files; refused",
            .vi: "Đường dẫn sao lưu là cơ sở dữ liệu đang chạy hoặc một tệp của nó; đã từ chối",
            .ko: "백업 경로가 사용 중인 데이터베이스이거나 그 파일 중 하나여서 거부했습니다",
        ],
        "error.bad_directory": [
            .zhHans: "备份路径所在的目录不存在，或无法在其中创建文件",
            .en: "The backup path's directory does not exist or no file can be created in it",
            .vi: "Thư mục của đường dẫn sao lưu không tồn tại hoặc không thể tạo tệp trong đó",
            .ko: "백업 경로의 디렉터리가 없거나 그 안에 파일을 만들 수 없습니다",
        ],
        "error.unauthenticated": [
            .zhHans: "请先登录", .en: "Log in first", .vi: "Vui lòng đăng nhập trước", .ko: "먼저 로그인하세요",
        ],
        "error.forbidden": [
            .zhHans: "没有权限", .en: "Permission denied", .vi: "Không có quyền", .ko: "권한이 없습니다",
        ],
        "error.unknown_form": [
            .zhHans: "没有表单 {form}", .en: "There is no form {form}",
            .vi: "Không có biểu mẫu {form}", .ko: "{form} 양식이 없습니다",
        ],
        "error.unknown_field": [
            .zhHans: "表单 {form} 没有字段 {field}", .en: "The form {form} has no field {field}",
            .vi: "Biểu mẫu {form} không có trường {field}", .ko: "{form} 양식에 {field} 항목이 없습니다",
        ],
        "error.form_not_open": [
            .zhHans: "表单 {form} 未打开", .en: "The form {form} is not open",
            .vi: "Biểu mẫu {form} chưa được mở", .ko: "{form} 양식이 열려 있지 않습니다",
        ],
        "error.field_disabled": [
            .zhHans: "字段 {field} 尚不可用", .en: "The field {field} is not enabled yet",
            .vi: "Trường {field} chưa được bật", .ko: "{field} 항목은 아직 입력할 수 없습니다",
        ],
        "error.not_submittable": [
            .zhHans: "表单尚未填写完整", .en: "The form is not ready to submit",
            .vi: "Biểu mẫu chưa sẵn sàng để gửi", .ko: "양식을 아직 제출할 수 없습니다",
        ],
        "error.not_found": [
            .zhHans: "未找到", .en: "Not found", .vi: "Không tìm thấy", .ko: "찾을 수 없습니다",
        ],
        "error.wrong_password": [
            .zhHans: "密码错误", .en: "Wrong password", .vi: "Sai mật khẩu", .ko: "비밀번호가 틀렸습니다",
        ],
        "error.invalid_credentials": [
            .zhHans: "用户名或密码错误", .en: "Wrong username or password",
            .vi: "Sai tên đăng nhập hoặc mật khẩu", .ko: "아이디 또는 비밀번호가 틀렸습니다",
        ],
        "error.rate_limited": [
            .zhHans: "尝试次数过多，请 {retry_after_ms} 毫秒后再试",
            .en: "Too many attempts; try again in {retry_after_ms} ms",
            .vi: "Thử quá nhiều lần; hãy thử lại sau {retry_after_ms} ms",
            .ko: "시도가 너무 많습니다. {retry_after_ms}ms 후에 다시 시도하세요",
        ],
        "error.busy": [
            .zhHans: "服务器繁忙，请 {retry_after_ms} 毫秒后再试",
            .en: "The server is busy; try again in {retry_after_ms} ms",
            .vi: "Máy chủ đang bận; hãy thử lại sau {retry_after_ms} ms",
            .ko: "서버가 바쁩니다. {retry_after_ms}ms 후에 다시 시도하세요",
        ],
        "error.answer_too_large": [
            .zhHans: "回答有 {size} 字节，超过此连接可容纳的 {limit} 字节，未发送；请求已执行。请分页请求（如 limit、cursor）",
            .en: "The answer ({size} bytes) is larger than this connection may hold ({limit} bytes) and was not sent; the request was carried out. Ask for less at a time (limit, cursor)",
            .vi: "Câu trả lời ({size} byte) lớn hơn mức kết nối này được giữ ({limit} byte) nên không được gửi; yêu cầu đã được thực hiện. Hãy yêu cầu từng phần (limit, cursor)",
            .ko: "응답({size}바이트)이 이 연결이 보관할 수 있는 크기({limit}바이트)보다 커서 보내지 않았습니다. 요청은 처리되었습니다. 나누어 요청하세요(limit, cursor)",
        ],
        "error.locked": [
            .zhHans: "此账户已被管理员锁定", .en: "An administrator has locked this account",
            .vi: "Quản trị viên đã khóa tài khoản này", .ko: "관리자가 이 계정을 잠갔습니다",
        ],
        "error.code_required": [
            .zhHans: "密码正确，请输入身份验证器上的 6 位验证码", .en: "The password is right; enter the 6-digit code from your authenticator app",
            .vi: "Mật khẩu đúng; hãy nhập mã 6 chữ số từ ứng dụng xác thực", .ko: "비밀번호가 맞습니다. 인증 앱의 6자리 코드를 입력하세요",
        ],
        "error.code_required.passkey": [
            .zhHans: "通行密钥正确，请输入身份验证器上的 6 位验证码",
            .en: "The passkey is right; enter the 6-digit code from your authenticator app",
            .vi: "Khóa truy cập đúng; hãy nhập mã 6 chữ số từ ứng dụng xác thực",
            .ko: "패스키가 맞습니다. 인증 앱의 6자리 코드를 입력하세요",
        ],
        "error.invalid_credentials.passkey": [
            .zhHans: "这个通行密钥不属于此处的任何账户", .en: "This passkey belongs to no account here",
            .vi: "Khóa truy cập này không thuộc tài khoản nào ở đây", .ko: "이 패스키는 여기의 어떤 계정에도 속하지 않습니다",
        ],
        "error.invalid_code": [
            .zhHans: "验证码错误、已使用或已过期", .en: "The code is wrong, used already or expired",
            .vi: "Mã sai, đã dùng hoặc đã hết hạn", .ko: "코드가 틀렸거나 이미 사용되었거나 만료되었습니다",
        ],
        "error.no_email": [
            .zhHans: "此账户没有电子邮箱", .en: "This account has no email address",
            .vi: "Tài khoản này không có địa chỉ email", .ko: "이 계정에는 이메일 주소가 없습니다",
        ],
        "error.mail_unavailable": [
            .zhHans: "此服务器未配置邮件发送", .en: "This server is not set up to send mail",
            .vi: "Máy chủ này chưa được cấu hình để gửi thư", .ko: "이 서버는 메일을 보내도록 설정되어 있지 않습니다",
        ],
        "error.passkey_rejected": [
            .zhHans: "通行密钥未通过验证", .en: "The passkey did not verify",
            .vi: "Khóa truy cập không được xác minh", .ko: "패스키를 확인하지 못했습니다",
        ],
        "error.passkey_rejected.challenge": [
            .zhHans: "通行密钥的请求已过期或已使用，请重试", .en: "This passkey request expired or was used already; try again",
            .vi: "Yêu cầu khóa truy cập đã hết hạn hoặc đã được dùng; hãy thử lại",
            .ko: "이 패스키 요청이 만료되었거나 이미 사용되었습니다. 다시 시도하세요",
        ],
        "error.passkey_rejected.origin": [
            .zhHans: "此网站地址不允许使用通行密钥", .en: "Passkeys are not allowed from this site's address",
            .vi: "Không được dùng khóa truy cập từ địa chỉ trang này", .ko: "이 사이트 주소에서는 패스키를 사용할 수 없습니다",
        ],
        "error.passkey_rejected.rp_id": [
            .zhHans: "此通行密钥属于其他网站", .en: "This passkey belongs to another site",
            .vi: "Khóa truy cập này thuộc về trang khác", .ko: "이 패스키는 다른 사이트의 것입니다",
        ],
        "error.passkey_rejected.type": [
            .zhHans: "这不是此步骤所需的通行密钥应答", .en: "This is not the passkey answer this step needs",
            .vi: "Đây không phải phản hồi khóa truy cập mà bước này cần", .ko: "이 단계에 필요한 패스키 응답이 아닙니다",
        ],
        "error.passkey_rejected.user_present": [
            .zhHans: "身份验证器未确认有人在场（请触摸它）", .en: "The authenticator did not confirm you were there (touch it)",
            .vi: "Thiết bị xác thực không xác nhận có bạn (hãy chạm vào nó)",
            .ko: "인증기가 사용자가 있음을 확인하지 않았습니다(인증기를 터치하세요)",
        ],
        "error.passkey_rejected.signature": [
            .zhHans: "通行密钥的签名无效", .en: "The passkey's signature is not valid",
            .vi: "Chữ ký của khóa truy cập không hợp lệ", .ko: "패스키 서명이 올바르지 않습니다",
        ],
        "error.passkey_rejected.format": [
            .zhHans: "无法读取此通行密钥（不支持的格式或密钥类型）", .en: "This passkey cannot be read (an unsupported format or key type)",
            .vi: "Không đọc được khóa truy cập này (định dạng hoặc loại khóa không được hỗ trợ)",
            .ko: "이 패스키를 읽을 수 없습니다(지원하지 않는 형식 또는 키 유형)",
        ],
        "error.passkey_rejected.duplicate": [
            .zhHans: "此通行密钥已经注册过", .en: "This passkey is registered already",
            .vi: "Khóa truy cập này đã được đăng ký", .ko: "이 패스키는 이미 등록되어 있습니다",
        ],
        "error.passkey_rejected.counter": [
            .zhHans: "此通行密钥的计数器倒退了，可能已被复制；已记录", .en: "This passkey's counter went back: it may have been copied. This was recorded",
            .vi: "Bộ đếm của khóa truy cập này bị lùi: có thể nó đã bị sao chép. Việc này đã được ghi lại",
            .ko: "이 패스키의 카운터가 뒤로 돌아갔습니다. 복제되었을 수 있으며 기록되었습니다",
        ],
        "error.too_many_passkeys": [
            .zhHans: "此账户的通行密钥已达上限，请先删除一个", .en: "This account has as many passkeys as it may hold; remove one first",
            .vi: "Tài khoản này đã có số khóa truy cập tối đa; hãy xóa bớt một khóa",
            .ko: "이 계정은 가질 수 있는 패스키 수의 한도에 도달했습니다. 먼저 하나를 삭제하세요",
        ],
        "error.precondition_failed": [
            .zhHans: "联系人在你上次读取后已被修改，请重新读取后再试", .en: "The contact changed since you read it; read it again and retry",
            .vi: "Liên hệ đã thay đổi kể từ lần bạn đọc; hãy đọc lại rồi thử lại", .ko: "연락처가 마지막으로 읽은 뒤 바뀌었습니다. 다시 읽은 뒤 시도하세요",
        ],
        "error.invalid_uid": [
            .zhHans: "联系人 UID 无效：须为 1–255 字节，不含控制字符和 /", .en: "Invalid contact UID: 1–255 bytes, no control characters and no /",
            .vi: "UID liên hệ không hợp lệ: 1–255 byte, không có ký tự điều khiển và dấu /", .ko: "연락처 UID가 잘못되었습니다. 제어 문자와 /가 없는 1–255바이트여야 합니다",
        ],
        "error.token_expired": [
            .zhHans: "同步令牌已过期，请重新完整同步", .en: "The sync token has expired; sync again from the start",
            .vi: "Mã đồng bộ đã hết hạn; hãy đồng bộ lại từ đầu", .ko: "동기화 토큰이 만료되었습니다. 처음부터 다시 동기화하세요",
        ],
        "error.invalid_token": [
            .zhHans: "同步令牌无效", .en: "Invalid sync token",
            .vi: "Mã đồng bộ không hợp lệ", .ko: "동기화 토큰이 잘못되었습니다",
        ],
        "error.card_too_large": [
            .zhHans: "名片太大（最多 1.5 MiB）", .en: "The card is too large (at most 1.5 MiB)",
            .vi: "Danh thiếp quá lớn (tối đa 1,5 MiB)", .ko: "명함이 너무 큽니다(최대 1.5MiB)",
        ],
        "error.one_card_required": [
            .zhHans: "须恰好包含一张 vCard", .en: "Send exactly one vCard",
            .vi: "Hãy gửi đúng một vCard", .ko: "vCard를 정확히 하나 보내세요",
        ],
        "error.unsupported_version": [
            .zhHans: "只支持 vCard 3.0 和 4.0", .en: "Only vCard 3.0 and 4.0 are supported",
            .vi: "Chỉ hỗ trợ vCard 3.0 và 4.0", .ko: "vCard 3.0과 4.0만 지원합니다",
        ],
        "error.unexpected_line": [
            .zhHans: "名片之外有多余的行", .en: "There are lines outside the card",
            .vi: "Có dòng nằm ngoài danh thiếp", .ko: "명함 밖에 줄이 있습니다",
        ],
        "error.malformed_line": [
            .zhHans: "名片中有格式错误的行", .en: "The card has a malformed line",
            .vi: "Danh thiếp có dòng sai định dạng", .ko: "명함에 형식이 잘못된 줄이 있습니다",
        ],
        "error.missing_end": [
            .zhHans: "名片缺少 END:VCARD", .en: "The card has no END:VCARD",
            .vi: "Danh thiếp thiếu END:VCARD", .ko: "명함에 END:VCARD가 없습니다",
        ],
        "error.name_required": [
            .zhHans: "名片须有 FN 或 N", .en: "The card needs an FN or an N",
            .vi: "Danh thiếp cần có FN hoặc N", .ko: "명함에 FN이나 N이 있어야 합니다",
        ],
        "error.name_too_long": [
            .zhHans: "名片中的姓名太长", .en: "The card's name is too long",
            .vi: "Tên trong danh thiếp quá dài", .ko: "명함의 이름이 너무 깁니다",
        ],
        "error.invalid_phone": [
            .zhHans: "名片中的第一个电话号码无效", .en: "The card's first phone number is invalid",
            .vi: "Số điện thoại đầu tiên trong danh thiếp không hợp lệ", .ko: "명함의 첫 번째 전화번호가 잘못되었습니다",
        ],
        "error.invalid_email": [
            .zhHans: "名片中的第一个邮箱地址无效", .en: "The card's first email address is invalid",
            .vi: "Địa chỉ email đầu tiên trong danh thiếp không hợp lệ", .ko: "명함의 첫 번째 이메일 주소가 잘못되었습니다",
        ],
        "error.note_too_long": [
            .zhHans: "名片中的备注太长", .en: "The card's note is too long",
            .vi: "Ghi chú trong danh thiếp quá dài", .ko: "명함의 메모가 너무 깁니다",
        ],
        "error.too_many_app_passwords": [
            .zhHans: "此账户的应用专用密码已达上限，请先删除一个",
            .en: "This account has as many app passwords as it may hold; remove one first",
            .vi: "Tài khoản này đã có số mật khẩu ứng dụng tối đa; hãy xóa bớt một mật khẩu",
            .ko: "이 계정은 가질 수 있는 앱 비밀번호 수의 한도에 도달했습니다. 먼저 하나를 삭제하세요",
        ],
        "error.no_pending_passkey": [
            .zhHans: "没有等待验证码的通行密钥登录，请重新用通行密钥登录", .en: "No passkey log-in is waiting for a code; log in with the passkey again",
            .vi: "Không có đăng nhập bằng khóa truy cập nào đang chờ mã; hãy đăng nhập lại bằng khóa truy cập",
            .ko: "코드를 기다리는 패스키 로그인이 없습니다. 패스키로 다시 로그인하세요",
        ],
        "error.storage_full": [
            .zhHans: "存储空间已满，未保存", .en: "Storage is full; nothing was saved",
            .vi: "Bộ nhớ đã đầy; chưa lưu gì", .ko: "저장 공간이 가득 차 저장하지 못했습니다",
        ],
        "error.storage_unavailable": [
            .zhHans: "暂时无法连接数据库，未保存，请 {retry_after_ms} 毫秒后再试",
            .en: "The database cannot be reached right now; nothing was saved. Try again in {retry_after_ms} ms",
            .vi: "Tạm thời không kết nối được cơ sở dữ liệu; chưa lưu gì. Hãy thử lại sau {retry_after_ms} ms",
            .ko: "지금은 데이터베이스에 연결할 수 없어 저장하지 못했습니다. {retry_after_ms}ms 후에 다시 시도하세요",
        ],
        "error.internal": [
            .zhHans: "服务器内部错误", .en: "Internal server error",
            .vi: "Lỗi nội bộ của máy chủ", .ko: "서버 내부 오류입니다",
        ],
    ]
}
