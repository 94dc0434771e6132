"""The web UI of `lore serve`, at `/`: spaces, facts with their history, notes with search and their
graph, task inboxes and messages. Server-rendered (Jinja2, autoescaped), one small script of our own,
sign-in with a token (or local mode's one-time link) and then a cookie session. `lore.http.web.routes.mount`
adds it to the server's app."""
