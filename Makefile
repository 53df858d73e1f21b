# Roster: `make run` serves, `make test` proves it. Both install what is missing first.
SWIFT ?= swift
PACKAGES := libsystemd-dev libsqlite3-dev libsodium-dev libpwquality-dev libpq-dev liboath-dev \
            libqrencode-dev libfido2-dev libcbor-dev cracklib-runtime pkg-config \
            tmux socat \
            systemd python3
PYTHON_PACKAGES := python3-venv python3-setuptools python3-wheel python3-pytest mypy python3-aiohttp python3-selenium \
                   python3-lxml python3-vobject
PYTHON_VENV := .build/python
# What only the tests need: a PostgreSQL server they start themselves in a temporary directory; oathtool, a TOTP
# implementation other than the daemon's own, to compute the tests' codes; zbar-tools, whose zbarimg reads back
# the QR code rosterctl draws; chromium with its chromedriver, the real browser roster-web's pages are tested in; and
# a real mail system to hand mail to: msmtp-mta's /usr/sbin/sendmail, relaying to a throwaway SMTP server on 127.0.0.1
# that python3-aiosmtpd runs (install-missing is noninteractive, so msmtp's debconf question takes its default);
# and two real CardDAV clients for roster-web's /dav/: vdirsyncer, syncing a book both ways, and litmus, the WebDAV
# protocol suite; and radicale, the CardDAV server roster-bench's dav-sync scenario times roster-web beside; and
# python3-hypothesis, which fuzzes roster-web's CardDAV request parsing (tests/test_web_dav_fuzz.py, make fuzz-dav).
# README lists PACKAGES, PYTHON_PACKAGES and TEST_PACKAGES word for word, and DocumentationTests holds it to them.
TEST_PACKAGES := postgresql oathtool zbar-tools chromium chromium-driver msmtp-mta python3-aiosmtpd vdirsyncer litmus radicale \
                 python3-hypothesis
SOCKET_HINT = $${ROSTER_SOCKET:-$$(if [ "$$(id -u)" = 0 ]; then echo /run/roster/roster.sock; else echo "$$XDG_RUNTIME_DIR/roster/roster.sock"; fi)}

.PHONY: all deps test-deps python-deps python-env python-test web-test web python-methods build release run test example-test bench dav-bench-smoke fuzz-dav clean install install-only \
        fuzz fuzz-build fuzz-smoke sanitize

# `make fuzz`: every target below for FUZZ_SECONDS each; `make fuzz-smoke` (part of `make test`): FUZZ_SMOKE_SECONDS,
# which replays each whole corpus first however short it is. Measured on the 2-core machine: the fuzzer build from
# nothing about 80 s (roster-fuzz-parsers 54 s, then roster-fuzz 25 s), the smoke run of every target about 30 s.
FUZZ_SECONDS ?= 600
FUZZ_SMOKE_SECONDS ?= 1
# roster-fuzz-parsers, one target per parser of outside data, each fed straight into its parser (at parser speed);
# `request` is roster-fuzz, the whole request path. Each target's corpus is Fuzz/corpus/<target>/.
FUZZ_PARSER_TARGETS := vcard csv json framer ini conninfo remote base32 notify mail webauthn card
FUZZ_TARGETS := $(FUZZ_PARSER_TARGETS) request

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
MANDIR ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share
SYSCONFDIR ?= /etc
UNITDIR ?= $(LIBDIR)/systemd/system
USERUNITDIR ?= $(LIBDIR)/systemd/user
BUILDDIR ?= .build/release

all: build

# $(call install-missing,PACKAGES): apt-get installs what is missing as root; anyone else gets the exact command.
define install-missing
	@missing=""; \
	for p in $(1); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "Installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else \
	    echo "Missing Debian packages:$$missing"; \
	    echo "Install them with:  sudo apt-get install -y$$missing"; \
	    exit 1; \
	  fi; \
	fi
endef

deps:
	$(call install-missing,$(PACKAGES))

# clients/python: Debian's pytest and mypy, seen from a venv made with Debian's own python3 (not whatever
# python3 is first on PATH), where the package is installed editable without touching the network.
python-deps:
	$(call install-missing,$(PYTHON_PACKAGES))

$(PYTHON_VENV)/installed: clients/python/pyproject.toml
	test -x $(PYTHON_VENV)/bin/python || /usr/bin/python3 -m venv --system-site-packages $(PYTHON_VENV)
	$(PYTHON_VENV)/bin/python -m pip install -q --no-deps --no-build-isolation --no-index -e ./clients/python
	touch $@

python-env: python-deps $(PYTHON_VENV)/installed

# mypy --strict and pytest against the debug rosterd that `swift build` made (the browser tests apart).
python-test: python-env
	cd clients/python && $(CURDIR)/$(PYTHON_VENV)/bin/python -m mypy --strict
	cd clients/python && ROSTERD=$(CURDIR)/.build/debug/rosterd $(CURDIR)/$(PYTHON_VENV)/bin/python -m pytest -q -p no:cacheprovider -m "not browser"

# roster-web's CardDAV request parsing under Hypothesis for FUZZ_SECONDS: passes of 5,000 examples per property,
# each with a new seed (`make test` runs one pass of 300 with the rest of the Python tests).
fuzz-dav: python-env test-deps
	@end=$$(( $$(date +%s) + $(FUZZ_SECONDS) )); pass=0; \
	while [ $$(date +%s) -lt $$end ]; do pass=$$((pass + 1)); \
	  (cd clients/python && ROSTER_DAV_FUZZ_EXAMPLES=5000 $(CURDIR)/$(PYTHON_VENV)/bin/python -m pytest -q \
	    -p no:cacheprovider --hypothesis-seed=$$pass$$$$ tests/test_web_dav_fuzz.py) > /dev/null || \
	  { echo "fuzz-dav: pass $$pass failed; rerun with --hypothesis-seed=$$pass$$$$"; exit 1; }; done; \
	echo "fuzz-dav: $$pass passes of 5000 examples per property, no failure"

# roster-web's pages in Debian's headless chromium (selenium, /usr/bin/chromedriver), against the debug rosterd and
# the real gateway. Screenshots go to .build/web-screenshots; WEB_SCREENSHOTS=docs/screenshots refreshes the README's.
web-test: python-env test-deps
	cd clients/python && ROSTERD=$(CURDIR)/.build/debug/rosterd ROSTER_SCREENSHOTS=$(abspath $(WEB_SCREENSHOTS)) \
	  $(CURDIR)/$(PYTHON_VENV)/bin/python -m pytest -q -p no:cacheprovider -m browser

# rosterd and roster-web in the foreground (Ctrl-C stops both): register, log in and search at
# http://127.0.0.1:8080/ (WEB_ARGS, e.g. --listen 127.0.0.1:9000, go to roster-web).
web: python-env build
	@echo "rosterd listens on $(SOCKET_HINT); roster-web says where it serves the pages (Ctrl-C stops both)"
	@socket="$(SOCKET_HINT)"; \
	  $(CURDIR)/.build/debug/rosterd & daemon=$$!; \
	  trap 'kill $$daemon 2>/dev/null; wait $$daemon' EXIT INT TERM; \
	  for i in $$(seq 200); do [ -S "$$socket" ] && break; kill -0 $$daemon 2>/dev/null || exit 1; sleep 0.05; done; \
	  $(CURDIR)/$(PYTHON_VENV)/bin/python -m roster.web --socket "$$socket" $(WEB_ARGS)

# After a change to the daemon's methods: regenerate the Python clients' methods from its rpc.describe.
python-methods: python-env build
	d=$$(mktemp -d) && (.build/debug/rosterd --socket $$d/s --database $$d/db --config /dev/null & echo $$! > $$d/pid) && \
	  for i in $$(seq 100); do [ -S $$d/s ] && break; sleep 0.05; done && \
	  $(PYTHON_VENV)/bin/python -m roster._generate --socket $$d/s > $$d/generated.py && \
	  mv $$d/generated.py clients/python/src/roster/_generated.py; \
	  status=$$?; kill $$(cat $$d/pid); rm -rf $$d; exit $$status

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

run: release
	@echo "rosterd listens on $(SOCKET_HINT)"
	@echo "Talk to it from another terminal:"
	@echo "  echo '{\"id\":1,\"method\":\"session.hello\"}' | socat -t 2 - UNIX-CONNECT:$(SOCKET_HINT)"
	@echo "  $(CURDIR)/.build/release/rosterctl call session.hello"
	@echo "Stop it with Ctrl-C."
	exec $(CURDIR)/.build/release/rosterd

test-deps:
	$(call install-missing,$(TEST_PACKAGES))

test: deps test-deps python-env
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	$(MAKE) --no-print-directory fuzz-smoke
	$(MAKE) --no-print-directory example-test
	$(MAKE) --no-print-directory python-test
	$(MAKE) --no-print-directory web-test
	$(MAKE) --no-print-directory dav-bench-smoke

# roster-bench's dav-sync scenario at its --quick size (50 cards, one run) against the debug rosterd: proves that
# Radicale, roster-web, vdirsyncer and tools/dav-phone-sync.py still meet end to end; it times nothing it checks.
dav-bench-smoke:
	$(CURDIR)/.build/debug/roster-bench --quick --only dav-sync --rosterd $(CURDIR)/.build/debug/rosterd

# examples/swift as an outside package uses the RosterClient library product: built against this checkout in its
# own .build (about 1.5 min in a fresh clone on a loaded 2-core machine, most of it RosterCore and RosterProtocol
# again; seconds once built), then run against a throwaway rosterd. Without its build manifest cached: the cache
# missed files added to Roster's own targets since the last build (a merge), and the build failed once.
example-test:
	cd examples/swift && $(SWIFT) build --disable-build-manifest-caching
	sh tools/check-example.sh

# The standard benchmark set against the C floor (a few minutes; not part of `make test`). dav-sync needs
# Radicale and vdirsyncer (TEST_PACKAGES) and roster-web's Debian packages (PYTHON_PACKAGES).
bench: release test-deps python-deps
	$(CURDIR)/.build/release/roster-bench $(BENCH_ARGS)

clean:
	$(SWIFT) package clean

# libFuzzer: each parser target, then the request target (framer, decoder, dispatcher and methods), FUZZ_SECONDS
# each; new inputs that reach new code join Fuzz/corpus/<target>/, which is then minimized (-merge=1). A crash
# fails it, with the input in Fuzz/crashes/ (tools/fuzz.sh says how to read the figures it prints).
fuzz-build: deps
	$(SWIFT) build --sanitize=fuzzer --product roster-fuzz-parsers --scratch-path .build-fuzz
	$(SWIFT) build --sanitize=fuzzer --product roster-fuzz --scratch-path .build-fuzz

fuzz: fuzz-build
	@for target in $(FUZZ_TARGETS); do sh tools/fuzz.sh $$target $(FUZZ_SECONDS) run || exit 1; done

# A few seconds of every target over its committed corpus, which it leaves as it is: a crash once found and kept
# in the corpus can never come back unnoticed.
fuzz-smoke: fuzz-build
	@for target in $(FUZZ_TARGETS); do sh tools/fuzz.sh $$target $(FUZZ_SMOKE_SECONDS) smoke || exit 1; done

# The whole suite under ThreadSanitizer and AddressSanitizer; the exit code decides (TSan can print "passed" and fail).
# TSan goes on past a report so that one run lists them all: each instrumented process (the test runner and every
# rosterd it starts) writes its reports to a fresh directory in /tmp, printed at the end, and any report fails the
# target. That directory is sticky and writable by all because some tests run rosterd and rosterctl as nobody, who
# cannot reach into a checkout in a private directory (such as a fresh `mktemp -d` clone).
# Leak checking is off: the daemon's long-lived singletons (loop, server, pool threads) are still allocated at
# exit by design, and XCTest's runner leaks a few hundred bytes of its own; memory errors are all still fatal.
sanitize: deps test-deps
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	reports=$$(mktemp -d /tmp/roster-tsan.XXXXXX) && chmod 1777 $$reports && \
	TSAN_OPTIONS="halt_on_error=0 log_path=$$reports/tsan" $(SWIFT) test --skip-build --sanitize=thread \
	  --scratch-path .build-tsan; status=$$?; \
	  if ls $$reports/tsan.* >/dev/null 2>&1; then \
	    cat $$reports/tsan.*; \
	    echo "ThreadSanitizer reports in $$reports (one file per process):"; \
	    grep -h '^SUMMARY:' $$reports/tsan.* | sort | uniq -c | sort -rn; \
	    exit 1; \
	  fi; \
	  rmdir $$reports; exit $$status
	$(SWIFT) build --build-tests --sanitize=address --scratch-path .build-asan
	ASAN_OPTIONS=detect_leaks=0 $(SWIFT) test --skip-build --sanitize=address --scratch-path .build-asan

# The units name /usr/bin/rosterd (and roster-web's /usr/lib/roster/python, where the Python package `roster` goes)
# so they verify as they are in the repo; installing rewrites those paths.
install: release install-only

install-only:
	install -Dm755 $(BUILDDIR)/rosterd $(DESTDIR)$(BINDIR)/rosterd
	install -Dm755 $(BUILDDIR)/rosterctl $(DESTDIR)$(BINDIR)/rosterctl
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(USERUNITDIR)
	sed 's|/usr/bin/rosterd|$(BINDIR)/rosterd|' systemd/rosterd.service > $(DESTDIR)$(UNITDIR)/rosterd.service
	sed 's|/usr/bin/rosterd|$(BINDIR)/rosterd|' systemd/user/rosterd.service > $(DESTDIR)$(USERUNITDIR)/rosterd.service
	chmod 644 $(DESTDIR)$(UNITDIR)/rosterd.service $(DESTDIR)$(USERUNITDIR)/rosterd.service
	install -m644 systemd/rosterd.socket $(DESTDIR)$(UNITDIR)/rosterd.socket
	sed 's|/usr/lib/roster/python|$(LIBDIR)/roster/python|' systemd/roster-web.service > $(DESTDIR)$(UNITDIR)/roster-web.service
	chmod 644 $(DESTDIR)$(UNITDIR)/roster-web.service
	cd clients/python/src && find roster -type f \( -name '*.py' -o -name py.typed -o -path 'roster/web/pages/*' \
	  -o -path 'roster/web/static/*' \) ! -path '*__pycache__*' -exec install -Dm644 {} $(DESTDIR)$(LIBDIR)/roster/python/{} \;
	install -m644 systemd/user/rosterd.socket $(DESTDIR)$(USERUNITDIR)/rosterd.socket
	install -Dm644 sysusers.d/roster.conf $(DESTDIR)$(LIBDIR)/sysusers.d/roster.conf
	install -Dm644 tmpfiles.d/roster.conf $(DESTDIR)$(LIBDIR)/tmpfiles.d/roster.conf
	install -d $(DESTDIR)$(SYSCONFDIR)/roster/rosterd.conf.d
	test -e $(DESTDIR)$(SYSCONFDIR)/roster/rosterd.conf || \
	  install -m644 conf/rosterd.conf $(DESTDIR)$(SYSCONFDIR)/roster/rosterd.conf
	install -Dm644 man/rosterd.8 $(DESTDIR)$(MANDIR)/man8/rosterd.8
	install -Dm644 man/rosterctl.1 $(DESTDIR)$(MANDIR)/man1/rosterctl.1
	install -Dm644 man/rosterd.conf.5 $(DESTDIR)$(MANDIR)/man5/rosterd.conf.5
	install -Dm644 shell/rosterctl.bash $(DESTDIR)$(DATADIR)/bash-completion/completions/rosterctl
