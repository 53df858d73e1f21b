"""roster-web (`python -m roster.web`): the register, log-in, account and contacts pages for browsers, each tab on
its own rosterd connection over a WebSocket; the session token lives only in an HttpOnly cookie."""
