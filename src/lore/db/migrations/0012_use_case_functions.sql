-- The reads that more than one entry point makes, defined once here so that they agree by
-- construction: the hooks call them through psql (no driver), lore.store through psycopg.

-- Tasks in `doing` in a space (whose note is current), most recently changed first, at most
-- `p_limit`, each row with how many there are in all: the handoff's "Doing:" line.
CREATE FUNCTION lore_tasks_doing(p_space text, p_limit integer)
RETURNS TABLE (lineage bigint, title text, updated_at timestamptz, total bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT t.lineage, n.title, t.updated_at, count(*) OVER ()
    FROM tasks t JOIN notes n ON n.lineage = t.lineage AND n.superseded_at IS NULL
    WHERE t.space = p_space AND t.status = 'doing'
    ORDER BY t.updated_at DESC, t.lineage DESC
    LIMIT p_limit
$$;

-- Tasks waiting in a space's inbox with a lineage above `p_after`, oldest first, at most `p_limit`,
-- each row with how many there are in all: what `lore listen` and the per-prompt hook show.
CREATE FUNCTION lore_inbox_since(p_space text, p_after bigint, p_limit integer)
RETURNS TABLE (lineage bigint, space text, status text, title text, body text, from_space text,
               from_source text, from_workspace text, filed_at timestamptz, updated_at timestamptz,
               total bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT n.lineage, n.space, t.status, n.title, n.body, t.from_space, t.from_source, t.from_workspace,
           t.filed_at, t.updated_at, count(*) OVER ()
    FROM tasks t JOIN notes n ON n.lineage = t.lineage AND n.superseded_at IS NULL
    WHERE t.space = p_space AND t.status = 'inbox' AND t.lineage > p_after
    ORDER BY n.lineage
    LIMIT p_limit
$$;

-- Unread messages to a space with an id above `p_after`, oldest first, at most `p_limit`, each row
-- with how many there are in all: what the per-prompt hook shows.
CREATE FUNCTION lore_unread_since(p_space text, p_after bigint, p_limit integer)
RETURNS TABLE (num bigint, to_space text, from_space text, body text, reply_to bigint, thread bigint,
               source text, workspace text, from_session text, sent_at timestamptz,
               read_at timestamptz, read_by text, total bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT m.id, m.to_space, m.from_space, m.body, m.reply_to, m.thread, m.source, m.workspace,
           m.from_session, m.sent_at, m.read_at, m.read_by, count(*) OVER ()
    FROM messages m
    WHERE m.to_space = p_space AND m.read_at IS NULL AND m.id > p_after
    ORDER BY m.id
    LIMIT p_limit
$$;

-- Everything a session start shows, as one JSON document: the facts of `p_spaces` in render order
-- (at most `p_max_rows`) and how many there are, what waits in `p_space`'s inbox, the last handoff
-- at `p_root` within `p_handoff_hours` (0: none) with the tasks in doing, and the space's
-- instruction sections of families other than `p_skip` (NULL: none). The local hook (psql),
-- /api/session-start and `lore session-start` all read it here, and render it with
-- lore.core.render.session_start.
CREATE FUNCTION lore_session_snapshot(
    p_spaces text[], p_workspace text, p_max_rows integer, p_space text, p_root text,
    p_handoff_hours integer, p_doing_max integer, p_skip text[], p_instructions_max integer
) RETURNS json LANGUAGE sql STABLE AS $$
    WITH counts AS (SELECT * FROM lore_inbox_counts(p_space)),
    last AS (
        SELECT h.* FROM lore_handoff_last(p_space, p_root, make_interval(hours => p_handoff_hours)) h
        WHERE p_handoff_hours > 0
    ),
    doing AS (SELECT * FROM lore_tasks_doing(p_space, p_doing_max) WHERE EXISTS (SELECT 1 FROM last))
    SELECT json_build_object(
        'now', now(),
        'total', (SELECT count(*) FROM lore_facts_visible(p_spaces)),
        'facts', coalesce((
            SELECT json_agg(f) FROM (
                SELECT lineage, version_id, space, recorded_at, superseded_at, source, workspace,
                       statement, subject, valid_from, valid_to
                FROM lore_facts_ordered(p_spaces, p_workspace, p_max_rows)) f), '[]'::json),
        'inbox', (SELECT inbox FROM counts),
        'unread', (SELECT unread FROM counts),
        'handoff', (SELECT row_to_json(l) FROM last l),
        'doing', coalesce((SELECT json_agg(json_build_array(d.lineage, d.title)
                                            ORDER BY d.updated_at DESC, d.lineage DESC) FROM doing d),
                          '[]'::json),
        'doing_count', coalesce((SELECT max(d.total) FROM doing d), 0),
        'instructions', coalesce((
            SELECT json_agg(i) FROM lore_instructions_here(p_space, p_skip, p_instructions_max) i
            WHERE p_skip IS NOT NULL), '[]'::json))
$$;
