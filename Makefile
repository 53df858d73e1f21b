# Roster: `make run` serves, `make test` proves it. Both install what is missing first.
SWIFT ?= swift
PACKAGES := libsystemd-dev libsqlite3-dev libsodium-dev libpwquality-dev cracklib-runtime pkg-config tmux socat
SOCKET_HINT = $${ROSTER_SOCKET:-$$(if [ "$$(id -u)" = 0 ]; then echo /run/roster/roster.sock; else echo "$$XDG_RUNTIME_DIR/roster/roster.sock"; fi)}

.PHONY: all deps build release run test bench clean

all: build

deps:
	@missing=""; \
	for p in $(PACKAGES); do \
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

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

# Issue 8: the standard benchmark set against the C floor (a few minutes; not part of `make test`).
bench: release
	$(CURDIR)/.build/release/roster-bench $(BENCH_ARGS)

clean:
	$(SWIFT) package clean
