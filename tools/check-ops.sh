#!/bin/sh
# Checks the operations files without systemd as PID 1: unit files, sandbox score, sysusers/tmpfiles
# snippets and man pages. Run from the repository root; exits non-zero on the first failure.
# Any output on stderr from systemd-analyze verify counts as a failure.
set -eu

fail() { echo "check-ops: $*" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/roster-check-ops.XXXXXX")
trap 'rm -rf "$work"' EXIT

# 1. System units, verified inside a scratch root that holds the host's units, kill(1) and a stand-in
#    /usr/bin/rosterd, so the real files are checked as they are and the host is not touched.
root="$work/root"
mkdir -p "$root/usr/lib/systemd" "$root/usr/bin" "$root/etc/systemd/system"
cp -a /usr/lib/systemd/system "$root/usr/lib/systemd/"
ln -s usr/bin "$root/bin"
ln -s usr/lib "$root/lib"
# kill is a shell builtin too, so look for the program itself.
for k in /usr/bin/kill /bin/kill; do [ -x "$k" ] && cp "$k" "$root/usr/bin/kill" && break; done
[ -x "$root/usr/bin/kill" ] || fail "no kill(1) program"
printf '#!/bin/sh\n' > "$root/usr/bin/rosterd"
chmod 755 "$root/usr/bin/rosterd"
# roster-web runs /usr/bin/python3: a stand-in too, so the host's Python is not needed here.
cp "$root/usr/bin/rosterd" "$root/usr/bin/python3"
cp systemd/rosterd.service systemd/rosterd.socket systemd/roster-web.service "$root/etc/systemd/system/"
out=$(systemd-analyze verify --man=no --root="$root" rosterd.service rosterd.socket roster-web.service 2>&1) ||
    fail "verify: $out"
[ -z "$out" ] || fail "verify (system units): $out"
echo "ok: systemd-analyze verify (system units)"

# 1b. The PostgreSQL drop-in example, installed as a drop-in of the same unit, verifies too (its unit,
#     postgresql.service, is a stand-in here: the host need not have PostgreSQL's).
mkdir -p "$root/etc/systemd/system/rosterd.service.d"
cp systemd/rosterd.service.d/postgresql.conf.example "$root/etc/systemd/system/rosterd.service.d/postgresql.conf"
[ -e "$root/usr/lib/systemd/system/postgresql.service" ] ||
    printf '[Service]\nExecStart=/usr/bin/kill -0 1\n' > "$root/etc/systemd/system/postgresql.service"
out=$(systemd-analyze verify --man=no --root="$root" rosterd.service 2>&1) || fail "verify (PostgreSQL drop-in): $out"
[ -z "$out" ] || fail "verify (PostgreSQL drop-in): $out"
rm -r "$root/etc/systemd/system/rosterd.service.d"
echo "ok: systemd-analyze verify (PostgreSQL drop-in)"

# 1c. roster-web runs as that user, in its own group and the group roster, never as a dynamic one.
unit=systemd/roster-web.service
for line in User=roster-web Group=roster-web SupplementaryGroups=roster; do
    grep -qx "$line" "$unit" || fail "$unit: no $line"
done
! grep -q '^DynamicUser=' "$unit" || fail "$unit: DynamicUser= (rosterd trusts roster-web by its name)"
echo "ok: roster-web.service runs as roster-web"

# 2. The sandbox: an overall exposure of 2.0 or less, for rosterd and for roster-web.
for unit in rosterd.service roster-web.service; do
    score=$(systemd-analyze security --offline=true --threshold=20 "systemd/$unit" 2>&1 |
            sed -n "s/.*Overall exposure level for $unit: \([0-9.]*\).*/\1/p")
    [ -n "$score" ] || fail "security: no score for $unit"
    awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }' || fail "security: $unit exposure $score > 2.0"
    echo "ok: systemd-analyze security: exposure $score ($unit)"
done

# 3. User units. "systemd-analyze --user" has no --root, so /usr/bin/rosterd is supplied by an overlay
#    in a private mount namespace (needs root or unprivileged user namespaces); skipped otherwise.
mkdir -p "$work/bin" "$work/xdg"
chmod 700 "$work/xdg"
cp "$root/usr/bin/rosterd" "$work/bin/rosterd"
if unshare -rm true 2>/dev/null || [ "$(id -u)" = 0 ]; then
    [ "$(id -u)" = 0 ] && ns="unshare -m" || ns="unshare -rm"
    out=$($ns sh -c "mount -t overlay overlay -o lowerdir=$work/bin:/usr/bin /usr/bin &&
          XDG_RUNTIME_DIR=$work/xdg systemd-analyze --user verify --man=no \
          systemd/user/rosterd.service systemd/user/rosterd.socket" 2>&1) || fail "verify --user: $out"
    [ -z "$out" ] || fail "verify (user units): $out"
    echo "ok: systemd-analyze --user verify (user units)"
else
    echo "skipped: user units (no mount namespace)"
fi

# 4. sysusers.d and tmpfiles.d into a scratch root, as "make install DESTDIR=" would lay them out.
sys="$work/sys"
install -Dm644 sysusers.d/roster.conf "$sys/usr/lib/sysusers.d/roster.conf"
install -Dm644 tmpfiles.d/roster.conf "$sys/usr/lib/tmpfiles.d/roster.conf"
mkdir -p "$sys/etc"
systemd-sysusers --root="$sys" >/dev/null 2>&1 || fail "systemd-sysusers"
grep -q '^roster:x:[0-9]*:[0-9]*:.*:/var/lib/roster:.*nologin$' "$sys/etc/passwd" || fail "no user roster"
grep -q '^roster:x:' "$sys/etc/group" || fail "no group roster"
# roster-web: a system user of its own (the name rosterd's GatewayUsers= trusts by default), a member of the
# group roster so that it may open the socket, with no home and no shell.
grep -q '^roster-web:x:[0-9]*:[0-9]*:Roster web front end:/:.*nologin$' "$sys/etc/passwd" || fail "no user roster-web"
grep -q '^roster-web:x:' "$sys/etc/group" || fail "no group roster-web"
grep -Eq '^roster:x:[0-9]+:([^,]*,)*roster-web(,.*)?$' "$sys/etc/group" || fail "roster-web is not in the group roster"
if [ "$(id -u)" = 0 ]; then
    systemd-tmpfiles --root="$sys" --create >/dev/null 2>&1 || fail "systemd-tmpfiles"
    uid=$(awk -F: '$1 == "roster" { print $3 ":" $4 }' "$sys/etc/passwd")
    for d in run/roster var/lib/roster; do
        [ "$(stat -c %u:%g "$sys/$d")" = "$uid" ] || fail "/$d is not owned by roster ($uid)"
    done
else
    # Without root the directories are made but cannot be given to roster.
    systemd-tmpfiles --root="$sys" --create >/dev/null 2>&1 || true
fi
[ "$(stat -c %a "$sys/run/roster")" = 750 ] || fail "/run/roster is not 0750"
[ "$(stat -c %a "$sys/var/lib/roster")" = 700 ] || fail "/var/lib/roster is not 0700"
echo "ok: systemd-sysusers and systemd-tmpfiles"

# 5. Man pages render without a single warning.
for page in man/rosterd.8 man/rosterctl.1 man/rosterd.conf.5; do
    out=$(groff -man -ww -z "$page" 2>&1) && [ -z "$out" ] || fail "groff $page: $out"
    if command -v man >/dev/null; then
        out=$(man --warnings -l "$page" 2>&1 >/dev/null) && [ -z "$out" ] || fail "man $page: $out"
    fi
done
echo "ok: man pages"
